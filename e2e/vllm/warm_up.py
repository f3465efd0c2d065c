"""Warms a freshly started vLLM server up: python warm_up.py BASE_URL MODEL.

The first request after start is slow (~15 s with --enforce-eager: kernels load) and the first
batch of each new shape may stall, so one request of each kind (completion, streamed completion,
chat) goes first, then concurrent batches of 4 and 16, before anything is measured.
"""

import json
import sys
import threading
import time
import urllib.request


def post(url, body):
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=180) as r:
        r.read()


def main(base, model):
    prompt = " ".join(["the model server"] * 40)
    done = []
    for path, body in (
        ("/v1/completions", {"prompt": prompt, "max_tokens": 8}),
        ("/v1/completions", {"prompt": prompt, "max_tokens": 16, "stream": True}),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": prompt}], "max_tokens": 8}),
    ):
        t0 = time.monotonic()
        post(base + path, dict(body, model=model, ignore_eos=True))
        done.append(f"{path}{' (stream)' if body.get('stream') else ''} {time.monotonic() - t0:.1f} s")
    for n in (4, 16):
        errors = []

        def one():
            try:
                post(base + "/v1/completions", {"model": model, "prompt": prompt, "max_tokens": 32, "ignore_eos": True})
            except Exception as e:  # reported below; the script fails
                errors.append(e)

        t0 = time.monotonic()
        threads = [threading.Thread(target=one) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise SystemExit(f"warm-up batch of {n}: {errors[0]}")
        done.append(f"{n} concurrent {time.monotonic() - t0:.1f} s")
    print("[vllm-cpu] warm-up: " + ", ".join(done), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1].rstrip("/"), sys.argv[2])
