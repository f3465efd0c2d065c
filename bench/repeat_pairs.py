#!/usr/bin/env python3
"""Verdicts across repeats, measured on the simulator: pairs of runs with `--repeats N`, compared
with `compare BASELINE CANDIDATE` (Welch's test over the repeats, every stage a side).

- unchanged: both runs of a pair against a simulator with the same time to first token (20 ms),
  each pair with its own seed (the same workload on both sides of a pair, as a run repeated
  tomorrow is): the verdict should be `no significant change`;
- TTFT +10 %: the candidate's simulator answers its first token 10 % later: `regression`;
- TTFT +1 %: a change below the noise 3 repeats can resolve: `inconclusive`, naming ttft_p50 and
  the change it would take.

Every run is a fresh model-sim and one runner run of the stages (default one, 40 req/s, 100
requests a repeat); the unchanged pairs repeat it 10 times, the slowed ones 3. Prints a table;
writes bench/results/repeat-pairs/repeat-pairs.json (every comparison).

Usage:
    python3 bench/repeat_pairs.py --pairs 20
    python3 bench/repeat_pairs.py --pairs 20 --reuse   # compare the same runs again
    python3 bench/repeat_pairs.py --pairs 20 --arrival constant --cooldown 1s
Needs the runner jar (make build) and model-sim (built by e2e/scripts/provision-model-sim.sh).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noise_floor as nf  # noqa: E402
import peer_bench as pb  # noqa: E402

TTFT_MS = nf.TTFT_MS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=20, help="unchanged pairs")
    ap.add_argument("--changed-pairs", type=int, default=3, help="pairs per slowdown (10 %% and 1 %%)")
    ap.add_argument("--repeats", type=int, default=10, help="repeats of the unchanged pairs' runs")
    ap.add_argument("--changed-repeats", type=int, default=3, help="repeats of the slowed pairs' runs")
    ap.add_argument("--rates", default="40")
    ap.add_argument("--prompts", type=int, default=100, help="requests per stage and repeat")
    ap.add_argument("--arrival", default="poisson", help="the runner's --arrival (poisson, constant)")
    ap.add_argument("--cooldown", default=None, help="the runner's --cooldown between repeats (its default: 5s)")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out", default="repeat-pairs", help="folder under bench/results")
    ap.add_argument("--reuse", action="store_true", help="compare the runs an earlier call left")
    a = ap.parse_args()
    nf.REUSE = a.reuse
    out = pb.RESULTS / a.out
    extra = ("--arrival", a.arrival) + (("--cooldown", a.cooldown) if a.cooldown else ())
    rows = []
    plan = [("unchanged", 1.0, a.pairs, a.repeats), ("ttft +10 %", 1.10, a.changed_pairs, a.changed_repeats),
            ("ttft +1 %", 1.01, a.changed_pairs, a.changed_repeats)]
    for kind, factor, pairs, repeats in plan:
        for p in range(pairs):
            seed = 100 + len(rows)
            tag = f"{kind.replace(' ', '').replace('%', 'pct')}-{p + 1}"
            base = nf.one_run(out / "runs" / tag / "baseline", TTFT_MS, a.rates, a.prompts, a.timeout,
                              seed, repeats, extra)
            cand = nf.one_run(out / "runs" / tag / "candidate", round(TTFT_MS * factor, 3), a.rates,
                              a.prompts, a.timeout, seed, repeats, extra)
            result = nf.compare([base], cand, out / "compare" / tag)
            rows.append({"candidate": kind, "pair": p + 1, "seed": seed, "repeats": repeats, **result})
            pb.log(f"{kind} #{p + 1}: {result['verdict']} (ttft_p50 {nf.pct(result['ttft_p50_change'])},"
                   f" detects ±{nf.pct(result['ttft_p50_detectable'], sign=False)})")
    (out / "repeat-pairs.json").write_text(json.dumps(
        {"repeats": a.repeats, "changed_repeats": a.changed_repeats, "arrival": a.arrival, "cooldown": a.cooldown, "rates": a.rates, "prompts": a.prompts, "rows": rows}, indent=2))
    print("| candidate | repeats a side | pairs | verdicts | TTFT p50 change, stage 1 (min to max) "
          "| detectable TTFT p50 change (min to max) |")
    print("|---|---|---|---|---|---|")
    for kind, _, _, repeats in plan:
        mine = [r for r in rows if r["candidate"] == kind]
        if not mine:
            continue
        verdicts = ", ".join(f"{v} {n}" for v, n in Counter(r["verdict"] for r in mine).most_common())
        changes = [r["ttft_p50_change"] for r in mine if r["ttft_p50_change"] is not None]
        detect = [r["ttft_p50_detectable"] for r in mine if r["ttft_p50_detectable"] is not None]
        print(f"| {kind} | {repeats} | {len(mine)} | {verdicts} | "
              f"{span(changes)} | {span(detect, sign=False)} |")


def span(values: list[float], sign: bool = True) -> str:
    if not values:
        return "-"
    return f"{nf.pct(min(values), sign)} to {nf.pct(max(values), sign)}"


if __name__ == "__main__":
    main()
