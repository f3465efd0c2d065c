#!/usr/bin/env python3
"""Heap over a long CLI run: does the runner's live heap stay flat once its sample caps are full?

Runs the runner jar for --duration seconds at --rate req/s (constant arrivals, streaming, 32 input /
64 output tokens, ignore_eos) against model-sim on loopback, with a JFR recording, and once a minute
asks the runner JVM for a full collection (`jcmd <pid> GC.run`) followed by `GC.heap_info`, so the
heap used right after that collection is the live set, not whatever garbage the young generation
held. A run stage keeps exact samples up to --sample-cap per metric and histograms after that, so
the live set may grow during the first minutes (TTFT and E2E reach a cap of 100,000 after 100 s at
1,000 req/s) and must not grow after it.

  python3 bench/heap_soak.py                      # 600 s at 1,000 req/s, results under bench/results/
  python3 bench/heap_soak.py --duration 120 --rate 500

Writes summary.json (per-minute live heap, JFR after-GC heap per minute, the runner's achieved
rate and completed count) and the JFR recording into the result directory; prints a table.
Only loopback is used; the run is bounded by --duration plus a hard timeout.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_bench import MODEL, REPO, RUNNER_JAR, Simulator, java_21  # noqa: E402


def jcmd(java: str) -> str:
    return str(Path(java).parent / "jcmd")


def live_heap_bytes(java: str, pid: int) -> int | None:
    """Heap used after a full collection, from the JVM's own GC.heap_info."""
    subprocess.run([jcmd(java), str(pid), "GC.run"], capture_output=True, text=True, timeout=60)
    info = subprocess.run([jcmd(java), str(pid), "GC.heap_info"], capture_output=True, text=True,
                          timeout=60).stdout
    # G1 (JDK 25): "garbage-first heap   total reserved 6172672K, committed 28672K, used 2914K [...]";
    # older JDKs and other collectors print "total 262144K, used 21834K".
    m = re.search(r"heap\s+total\b[^\n]*?\bused\s+(\d+)K", info)
    return int(m.group(1)) * 1024 if m else None


def class_histogram(java: str, pid: int, path: Path) -> list[str]:
    """The live classes after the probe's full collection: what the live set is made of."""
    text = subprocess.run([jcmd(java), str(pid), "GC.class_histogram", "-all"], capture_output=True,
                          text=True, timeout=120).stdout
    path.write_text(text)
    return [line.strip() for line in text.splitlines() if re.match(r"\s*\d+:\s+\d+\s+\d+\s", line)][:10]


def jfr_after_gc(java: str, recording: Path, started: float) -> list[tuple[float, int]]:
    """(seconds since start, heap used after GC) for every collection JFR saw."""
    out = subprocess.run([str(Path(java).parent / "jfr"), "print", "--json", "--events",
                          "jdk.GCHeapSummary", str(recording)], capture_output=True, text=True,
                         timeout=300).stdout
    events = json.loads(out)["recording"]["events"] if out.strip() else []
    series = []
    for e in events:
        v = e["values"]
        if v.get("when") != "After GC":
            continue
        t = datetime.fromisoformat(v["startTime"].replace("Z", "+00:00")).timestamp()
        series.append((t - started, int(v["heapUsed"])))
    return series


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--duration", type=int, default=600, help="seconds of load")
    ap.add_argument("--sample-cap", type=int, default=100000)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--num-prompts", type=int, default=None,
                    help="also pass --num-prompts (default: the stage ends by --duration only)")
    ap.add_argument("--jvm-arg", action="append", default=[], help="extra runner JVM flag")
    args = ap.parse_args()
    if not RUNNER_JAR.exists():
        print(f"error: {RUNNER_JAR} missing; build it with ./mvnw -pl runner -am install -DskipTests",
              file=sys.stderr)
        return 2
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H%MZ")
    out = args.out or REPO / "bench" / "results" / "heap-soak" / stamp
    out.mkdir(parents=True, exist_ok=True)
    java = java_21()
    sim = Simulator()
    recording = out / "runner.jfr"
    try:
        cmd = [java, f"-XX:StartFlightRecording=filename={recording},settings=default,dumponexit=true",
               *args.jvm_arg, "-jar", str(RUNNER_JAR), "run", "--base-url", sim.url, "--backend", "vllm",
               "--model", MODEL, "--dataset-name", "random", "--random-input-len", "32",
               "--random-output-len", "64", "--ignore-eos", "--arrival", "constant",
               "--request-rate", str(args.rate), "--duration", f"{args.duration}s",
               *(["--num-prompts", str(args.num_prompts)] if args.num_prompts else []),
               "--sample-cap", str(args.sample_cap), "--progress", "none",
               "--result-dir", str(out / "profiles")]
        started = time.time()
        with open(out / "stdout.txt", "w") as so, open(out / "stderr.txt", "w") as se:
            proc = subprocess.Popen(cmd, stdout=so, stderr=se)
            live = []
            top_classes: list[str] = []
            next_probe = started + 60
            deadline = started + args.duration + 300
            while proc.poll() is None:
                if time.time() > deadline:
                    proc.kill()
                    print("error: runner exceeded its time bound", file=sys.stderr)
                    return 1
                if time.time() >= next_probe:
                    used = live_heap_bytes(java, proc.pid)
                    if used is not None:
                        live.append((round(time.time() - started, 1), used))
                        print(f"[heap-soak] t={live[-1][0]:6.0f}s live heap {used / 2**20:7.1f} MiB",
                              flush=True)
                        top_classes = class_histogram(java, proc.pid,
                                                      out / f"class-histogram-{int(live[-1][0])}s.txt")
                    next_probe += 60
                time.sleep(0.5)
        rc = proc.returncode
        gc_series = jfr_after_gc(java, recording, started) if recording.exists() else []
    finally:
        sim.stop()
    profiles = sorted((out / "profiles").glob("*.json"))
    metrics = json.loads(profiles[-1].read_text()).get("metrics", {}) if profiles else {}
    per_minute = {}
    for t, used in gc_series:
        per_minute.setdefault(int(t // 60), []).append(used)
    jfr_minutes = [{"minute": m + 1, "after_gc_min_mib": round(min(v) / 2**20, 1),
                    "after_gc_median_mib": round(statistics.median(v) / 2**20, 1), "collections": len(v)}
                   for m, v in sorted(per_minute.items())]
    # Growth after the caps filled: the live set from the third probe on (t >= 180 s at 1,000 req/s
    # is past the 100 s a 100,000-sample cap needs) against the last probe.
    settled = [u for t, u in live if t >= 180]
    summary = {
        "rate": args.rate, "duration_s": args.duration, "sample_cap": args.sample_cap, "runner_rc": rc,
        "completed": metrics.get("completed"), "achieved_rate": metrics.get("achieved_rate"),
        "live_heap_mib": [{"t_s": t, "mib": round(u / 2**20, 1)} for t, u in live],
        "settled_growth_mib": round((settled[-1] - settled[0]) / 2**20, 1) if len(settled) >= 2 else None,
        "settled_max_minus_min_mib": round((max(settled) - min(settled)) / 2**20, 1) if settled else None,
        "jfr_after_gc_per_minute": jfr_minutes,
        "num_prompts_flag": args.num_prompts,
        "last_probe_top_classes": top_classes,
        "jvm_args": args.jvm_arg,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"[heap-soak] runner rc={rc} completed={summary['completed']} "
          f"achieved_rate={summary['achieved_rate']}")
    print("| minute | live heap after full GC (MiB) | JFR after-GC min / median (MiB) | GCs |")
    print("|---|---|---|---|")
    by_minute = {int(t // 60): u for t, u in live}
    for row in jfr_minutes:
        lv = by_minute.get(row["minute"])
        print(f"| {row['minute']} | {lv / 2**20:.1f} | {row['after_gc_min_mib']} / "
              f"{row['after_gc_median_mib']} | {row['collections']} |" if lv else
              f"| {row['minute']} | – | {row['after_gc_min_mib']} / {row['after_gc_median_mib']} | "
              f"{row['collections']} |")
    print(f"[heap-soak] live-set growth from t>=180 s to the end: {summary['settled_growth_mib']} MiB; "
          f"results in {out}")
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
