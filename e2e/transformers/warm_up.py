"""Warms a freshly started `transformers serve` up: python warm_up.py BASE_URL MODEL.

The first requests load the model and build the continuous-batching cache, so one request of each
kind (completion, streamed completion, streamed chat) goes first, then a concurrent batch of 4,
before anything is measured. Only OpenAI's own fields are sent: the server refuses any other with
HTTP 422.
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
    prompt = " ".join(["the model server"] * 20)
    done = []
    for path, body in (
        ("/v1/completions", {"prompt": prompt, "max_tokens": 8}),
        ("/v1/completions", {"prompt": prompt, "max_tokens": 8, "stream": True}),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": prompt}], "max_tokens": 8, "stream": True},
        ),
    ):
        t0 = time.monotonic()
        post(base + path, dict(body, model=model))
        done.append(f"{path}{' (stream)' if body.get('stream') else ''} {time.monotonic() - t0:.1f} s")
    errors = []

    def one():
        try:
            post(base + "/v1/completions", {"model": model, "prompt": prompt, "max_tokens": 16})
        except Exception as e:  # reported below; the script fails
            errors.append(e)

    t0 = time.monotonic()
    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"warm-up batch of 4: {errors[0]}")
    done.append(f"4 concurrent {time.monotonic() - t0:.1f} s")
    print("[transformers-serve] warm-up: " + ", ".join(done), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1].rstrip("/"), sys.argv[2])
