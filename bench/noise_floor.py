#!/usr/bin/env python3
"""A noise floor from earlier runs, measured on the simulator: what `compare` says about a new
run judged against the last run alone (request by request) and against the last N runs pooled
(`compare NIGHT1 ... NIGHTN NEW`, what a BenchmarkSchedule's `noiseFloorRuns` does).

Every "night" is a fresh model-sim (20 ms to the first token, 5 ms between tokens) and one runner
run of the same sweep. Then unchanged runs and runs against a simulator whose first token is 10 %
later (22 ms) are each compared both ways, and the verdicts counted. `--wander PCT` makes the
target itself wander between runs, as a real server does (clocks, placement, neighbours): each
run's simulator gets a time to first token drawn around its nominal one with that standard
deviation (seeded), the noise a comparison with one earlier run cannot see.

Usage:
    python3 bench/noise_floor.py --nights 7 --candidates 5
    python3 bench/noise_floor.py --nights 7 --candidates 5 --reuse   # compare the same runs again
    python3 bench/noise_floor.py --nights 7 --candidates 5 --wander 3 --out noise-floor-wander
Prints a table; writes bench/results/noise-floor/noise-floor.json (every comparison).
Needs the runner jar (make build) and model-sim (built by e2e/scripts/provision-model-sim.sh).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_bench as pb  # noqa: E402

TTFT_MS, ITL_MS = 20.0, 5.0

# --reuse: compare the runs an earlier call left instead of running them again (a change of
# compare's rules measured on the same runs).
REUSE = False


def one_run(d: Path, ttft_ms: float, rates: str, prompts: int, timeout: float, seed: int = 1,
            repeats: int = 1, extra: tuple[str, ...] = ()) -> Path:
    """One runner run of the sweep (every stage `repeats` times) against a fresh simulator; returns
    its result directory (with --reuse, the one an earlier call left, run again only when it is
    missing)."""
    d.mkdir(parents=True, exist_ok=True)
    out = d / "out"
    if REUSE and any(out.glob("*.json")):
        return out
    with pb.Simulator(ttft_ms=ttft_ms, itl_ms=ITL_MS) as sim:
        cmd = [pb.java_21()] + pb.RUNNER_IMAGE_FLAGS + [
            "-jar", str(pb.runner_snapshot()), "run", "--base-url", sim.url, "--backend", "vllm",
            "--model", pb.MODEL, "--ignore-eos", "--progress", "none", "--result-dir", str(out),
            "--dataset-name", "random", "--random-input-len", str(pb.INPUT_LEN),
            "--random-output-len", "16", "--request-rate", rates, "--num-prompts", str(prompts),
            "--seed", str(seed), "--num-warmups", "10"] + (["--repeats", str(repeats)] if repeats > 1 else []) + list(extra)
        res = pb.timed(cmd, d, timeout)
    if res["rc"] != 0:
        raise RuntimeError(f"run in {d} failed: {res} {(d / 'stderr.txt').read_text()[-2000:]}")
    return out


def compare(baselines: list[Path], candidate: Path, d: Path) -> dict:
    """`compare` of the candidate against the baselines; the verdict and TTFT p50 of stage 1."""
    d.mkdir(parents=True, exist_ok=True)
    report = d / "comparison.json"
    cmd = [pb.java_21(), "-jar", str(pb.runner_snapshot()), "compare"] + [str(b) for b in baselines] + [
        str(candidate), "--output", str(report)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"compare failed: {proc.stdout}{proc.stderr}")
    doc = json.loads(report.read_text())
    ttft = doc["stages"][0]["metrics"].get("ttft_p50", {})
    worse = [f"stage {s['stage']} {name}" for s in doc["stages"] for name, m in s["metrics"].items()
             if m.get("significant") and m.get("worse") == "candidate"]
    return {"verdict": doc["verdict"], "significantly_worse": worse,
            "ttft_p50_change": ttft.get("change"),
            "ttft_p50_test": ttft.get("test"), "ttft_p50_detectable": ttft.get("detectable_change"),
            "notes": doc.get("notes", [])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nights", type=int, default=7)
    ap.add_argument("--candidates", type=int, default=5)
    ap.add_argument("--rates", default="20,40")
    ap.add_argument("--prompts", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--wander", type=float, default=0,
                    help="SD in %% of each run's time to first token around its nominal one")
    ap.add_argument("--out", default="noise-floor", help="folder under bench/results")
    ap.add_argument("--reuse", action="store_true",
                    help="compare the runs an earlier call left (same --nights/--candidates)")
    a = ap.parse_args()
    global REUSE
    REUSE = a.reuse
    out = pb.RESULTS / a.out
    draw = random.Random(11)

    def ttft(nominal: float) -> float:
        return round(nominal * (1 + draw.gauss(0, a.wander / 100)), 3) if a.wander else nominal

    nights = []
    for n in range(a.nights):
        nights.append(one_run(out / "runs" / f"night-{n + 1}", ttft(TTFT_MS), a.rates, a.prompts, a.timeout))
        pb.log(f"night {n + 1} done")
    rows = []
    for kind, nominal in (("unchanged", TTFT_MS), ("ttft +10 %", TTFT_MS * 1.1)):
        for c in range(a.candidates):
            tag = f"{'same' if nominal == TTFT_MS else 'slower'}-{c + 1}"
            cand = one_run(out / "runs" / tag, ttft(nominal), a.rates, a.prompts, a.timeout)
            alone = compare([nights[-1]], cand, out / "compare" / tag / "last-night")
            pooled = compare(nights, cand, out / "compare" / tag / "pooled")
            rows.append({"candidate": kind, "run": c + 1, "last_night": alone, "pooled": pooled})
            pb.log(f"{kind} #{c + 1}: last night {alone['verdict']}, pooled {pooled['verdict']}")
    (out / "noise-floor.json").write_text(json.dumps(
        {"nights": a.nights, "rates": a.rates, "prompts": a.prompts, "wander_pct": a.wander,
         "rows": rows}, indent=2))
    print(f"| candidate | against the last night alone: verdict (TTFT p50 change) "
          f"| against {a.nights} nights pooled: verdict (TTFT p50 change, detectable) "
          f"| significantly worse, pooled (tails decide only with --tails) |")
    print("|---|---|---|---|")
    for r in rows:
        al, po = r["last_night"], r["pooled"]
        print(f"| {r['candidate']} #{r['run']} | {al['verdict']} ({pct(al['ttft_p50_change'])}) | "
              f"{po['verdict']} ({pct(po['ttft_p50_change'])}, ±{pct(po['ttft_p50_detectable'], sign=False)}) | "
              f"{', '.join(po['significantly_worse']) or '-'} |")


def pct(v, sign: bool = True) -> str:
    if v is None:
        return "-"
    return f"{100 * v:+.1f} %" if sign else f"{100 * v:.1f} %"


if __name__ == "__main__":
    main()
