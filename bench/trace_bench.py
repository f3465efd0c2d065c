#!/usr/bin/env python3
"""Trace replay on one CPU: the runner replays a 10,000-request Mooncake-layout trace at its
recorded rate, beside a constant-rate run of the same number of requests at the same mean rate,
alternating, each client pinned to CPU 0 and model-sim to CPU 1 (the `pinned` set-up of
peer_bench.py).

The trace is generated here, seeded: Poisson arrivals at RATE req/s (bursty by nature, unlike the
constant schedule), every request 32 input tokens in two 16-token blocks, the first of 20 shared
"system prompts", and 64 output tokens (the peer benchmark's lengths).

Usage:
    python3 bench/trace_bench.py --rate 1000 --requests 10000 --repeats 3
Prints a table; writes bench/results/trace/trace-bench-RATE.json (one entry per run).
Needs the runner jar (make build) and model-sim (built by e2e/scripts/provision-model-sim.sh).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_bench as pb  # noqa: E402


def write_trace(path: Path, rate: float, requests: int, seed: int) -> float:
    """A Mooncake-layout trace of Poisson arrivals; returns its span in seconds."""
    rng = random.Random(seed)
    t = 0.0
    with path.open("w") as f:
        for i in range(requests):
            f.write(json.dumps({
                "timestamp": round(t * 1000, 3),
                "input_length": pb.INPUT_LEN,
                "output_length": pb.OUTPUT_LEN,
                "hash_ids": [rng.randrange(20), 1000 + i],
            }) + "\n")
            t += rng.expovariate(rate)
    return t


def number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def run(kind: str, sim: pb.Simulator, trace: Path, rate: float, requests: int, d: Path,
        timeout: float) -> dict:
    d.mkdir(parents=True, exist_ok=True)
    java = pb.java_21()
    jar = pb.runner_snapshot()
    common = [java] + pb.RUNNER_IMAGE_FLAGS + ["-jar", str(jar), "run", "--base-url", sim.url,
                                               "--backend", "vllm", "--model", pb.MODEL, "--ignore-eos",
                                               "--progress", "none", "--result-dir", str(d / "out")]
    if kind == "trace":
        cmd = common + ["--dataset-name", "trace", "--dataset-path", str(trace), "--trace-block-size", "16"]
    else:
        cmd = common + ["--dataset-name", "random", "--random-input-len", str(pb.INPUT_LEN),
                        "--random-output-len", str(pb.OUTPUT_LEN), "--arrival", "constant",
                        "--request-rate", str(rate), "--num-prompts", str(requests)]
    res = pb.timed(cmd, d, timeout)
    files = sorted((d / "out").glob("*.json")) if (d / "out").exists() else []
    if files:
        m = json.loads(files[-1].read_text()).get("metrics", {})
        res.update(
            completed=m.get("completed"),
            request_rate=number(m.get("request_rate")),
            achieved_rate=pb.find_metric(m, "achieved_rate"),
            p50_lag_ms=pb.find_metric(m, "_schedule_lag_ms", prefer=("median_",)),
            p99_lag_ms=pb.find_metric(m, "_schedule_lag_ms", prefer=("p99_",)),
            max_lag_ms=pb.find_metric(m, "_schedule_lag_ms", prefer=("max_",)),
        )
    res["kind"] = kind
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=1000)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--client-cpu", default="0")
    ap.add_argument("--server-cpu", default="1")
    a = ap.parse_args()
    pb.PIN_CLIENT, pb.PIN_SERVER = a.client_cpu, a.server_cpu
    out = pb.RESULTS / "trace"
    out.mkdir(parents=True, exist_ok=True)
    trace = out / "trace.jsonl"
    span = write_trace(trace, a.rate, a.requests, seed=7)
    pb.log(f"trace: {a.requests} requests over {span:.2f} s (recorded mean {a.requests / span:.1f} req/s)")
    runs = []
    for r in range(a.repeats):
        for kind in ("trace", "constant"):
            with pb.Simulator() as sim:
                res = run(kind, sim, trace, a.rate, a.requests, out / "runs" / f"{kind}-{r}", a.timeout)
            res["repeat"] = r
            pb.log(f"{kind} #{r}: rc={res['rc']} completed={res.get('completed')} "
                   f"p99 lag={res.get('p99_lag_ms')} ms achieved={res.get('achieved_rate')}")
            runs.append(res)
    (out / f"trace-bench-{a.rate:g}.json").write_text(json.dumps(
        {"rate": a.rate, "requests": a.requests, "trace_span_s": span, "runs": runs}, indent=2, default=str))
    print("| run | requests | nominal req/s | achieved req/s | p50 / p99 / max schedule lag (ms) |")
    print("|---|---|---|---|---|")
    for res in runs:
        print(f"| {res['kind']} #{res['repeat'] + 1} | {res.get('completed')} | {pb.fmt(res.get('request_rate'), 1)} | "
              f"{pb.fmt(res.get('achieved_rate'), 1)} | {pb.fmt(res.get('p50_lag_ms'), 2)} / "
              f"{pb.fmt(res.get('p99_lag_ms'), 2)} / {pb.fmt(res.get('max_lag_ms'), 2)} |")


if __name__ == "__main__":
    main()
