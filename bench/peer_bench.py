#!/usr/bin/env python3
"""Peer benchmark harness: how fast and how accurate are load generators against one simulator?

Runs GuideLLM, inference-perf, `vllm bench serve`, AIPerf and the InferenceBench runner against model-sim
(e2e/model-sim) on loopback and reports, per tool:
  - the highest request rate it sustains: achieved rate >= 99 % of the target and p99 schedule
    lag <= 2 ms (constant arrivals, streaming completions, 32 input / 64 output tokens, ignore_eos);
  - CPU seconds per 1,000 requests (user+sys of the tool's process tree from /usr/bin/time -v,
    marginal: a short run's CPU is subtracted so start-up cost does not count);
  - TTFT / ITL error against delays injected by the simulator (20 ms / 5 ms by default).

Only the Python standard library is used here; the peers are installed with pip into cached
virtual environments under ~/.cache/inferencebench/peers/ (`install` sub-command). Nothing talks to
anything but 127.0.0.1. Every tool run is bounded (request count, duration and a hard timeout).

  python3 bench/peer_bench.py install                      # venvs + tokenizer (cached)
  python3 bench/peer_bench.py sweep --tools guidellm,inference-perf,vllm,runner
  python3 bench/peer_bench.py accuracy --tools guidellm,inference-perf,vllm,runner
  python3 bench/peer_bench.py report                       # markdown table from the saved results
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("IB_CACHE_DIR", Path.home() / ".cache" / "inferencebench"))
PEERS = CACHE / "peers"
TOKENIZER = PEERS / "tokenizer"
RESULTS = Path(os.environ.get("IB_BENCH_RESULTS", REPO / "bench" / "results"))
MODEL = "sim-model"
INPUT_LEN, OUTPUT_LEN = 32, 64

# Pinned so that reruns compare like with like; bump deliberately.
PIP_SPECS = {
    "guidellm": ["guidellm==0.8.1"],
    "inference-perf": ["inference-perf==0.7.0"],
    "vllm": ["vllm==0.33.0"],
    "aiperf": ["aiperf==0.13.0"],
}
RUNNER_JAR = REPO / "runner" / "target" / "inferencebench-runner.jar"
TOOLS = ["guidellm", "inference-perf", "vllm", "aiperf", "runner"]
# `reparse`: recompute figures from the tools' saved outputs without running anything again.
REPARSE = False
# `pinned`: the CPU every client process tree runs on, and the simulator's (taskset -c).
PIN_CLIENT: str | None = None
PIN_SERVER: str | None = None


def log(msg: str) -> None:
    print(f"[peer-bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- installation


def find_python(min_minor: int = 12) -> str | None:
    """A CPython >= 3.<min_minor> that really runs: inference-perf requires 3.12 (pip refuses it on
    3.11). Each candidate is started once, because a pyenv shim exists for every version pyenv
    knows, also for versions that are not installed or selected ("pyenv: python3.13: command not
    found"), and such a shim must not be picked."""
    candidates = [shutil.which(f"python3.{m}") for m in range(14, min_minor - 1, -1)]
    candidates += sorted(glob.glob(str(Path.home() / ".pyenv" / "versions" / "3.*" / "bin" / "python3.*")),
                         reverse=True)
    for p in candidates:
        if p and os.access(p, os.X_OK) and python_minor(p) >= min_minor:
            return p
    return None


def python_minor(python: str) -> int:
    """The interpreter's minor version if it starts and can make a venv with pip (ensurepip, ssl), else -1."""
    try:
        out = subprocess.run([python, "-c", "import sys, venv, ensurepip, ssl; print(sys.version_info[0], sys.version_info[1])"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return -1
    parts = out.stdout.split()
    if out.returncode != 0 or len(parts) != 2 or parts[0] != "3":
        return -1
    return int(parts[1])


def venv_bin(tool: str, exe: str) -> Path:
    return PEERS / tool / "bin" / exe


def install(tools: list[str]) -> dict:
    PEERS.mkdir(parents=True, exist_ok=True)
    status_file = PEERS / "install-status.json"
    status = json.loads(status_file.read_text()) if status_file.exists() else {}
    py = find_python()
    for tool in tools:
        if tool == "runner":
            continue
        if tool == "wrk":
            status["wrk"] = install_wrk()
            continue
        marker = PEERS / tool / ".installed"
        if marker.exists() and marker.read_text().strip() == " ".join(PIP_SPECS[tool]):
            log(f"{tool}: cached in {PEERS / tool}")
            continue
        if py is None:
            status[tool] = {"ok": False, "reason": "no Python >= 3.12 found (inference-perf needs it)"}
            log(f"{tool}: {status[tool]['reason']}")
            continue
        log(f"{tool}: creating venv with {py} and installing {PIP_SPECS[tool]} (may take minutes)")
        started = time.time()
        subprocess.run([py, "-m", "venv", str(PEERS / tool)], check=True)
        pip = [str(venv_bin(tool, "python")), "-m", "pip", "install", "-q"]
        subprocess.run(pip + ["--upgrade", "pip"], check=False)
        r = subprocess.run(pip + PIP_SPECS[tool], capture_output=True, text=True)
        ok = r.returncode == 0
        status[tool] = {
            "ok": ok,
            "python": py,
            "seconds": round(time.time() - started),
            "reason": "" if ok else (r.stderr or r.stdout)[-2000:],
        }
        if ok:
            marker.write_text(" ".join(PIP_SPECS[tool]))
        log(f"{tool}: {'installed' if ok else 'FAILED'} in {status[tool]['seconds']} s")
    status_file.write_text(json.dumps(status, indent=2))
    make_tokenizer()
    return status


def install_wrk() -> dict:
    """wrk, the HTTP floor of `pinned`, from the distribution's packages (Debian: wrk)."""
    if shutil.which("wrk"):
        return {"ok": True, "path": shutil.which("wrk")}
    if not shutil.which("apt-get") or os.geteuid() != 0:
        return {"ok": False, "reason": "wrk not found; install it with the system's package manager (apt-get install wrk)"}
    log("wrk: apt-get install wrk")
    subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
    r = subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], capture_output=True, text=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    return {"ok": r.returncode == 0 and shutil.which("wrk") is not None, "reason": r.stderr[-500:]}


def make_tokenizer() -> None:
    if (TOKENIZER / "tokenizer.json").exists():
        return
    for tool in ("guidellm", "inference-perf", "vllm"):
        py = venv_bin(tool, "python")
        if py.exists():
            subprocess.run([str(py), str(REPO / "bench" / "make_tokenizer.py"), str(TOKENIZER)], check=True)
            return
    raise SystemExit("no peer venv with transformers to build the tokenizer; run `install` first")


def versions() -> dict:
    out = {}
    for tool, pkg in (("guidellm", "guidellm"), ("inference-perf", "inference-perf"), ("vllm", "vllm"),
                      ("aiperf", "aiperf")):
        py = venv_bin(tool, "python")
        if py.exists():
            r = subprocess.run([str(py), "-m", "pip", "show", pkg], capture_output=True, text=True)
            m = re.search(r"^Version: (.+)$", r.stdout, re.M)
            out[tool] = m.group(1) if m else "?"
    out["runner"] = "jar present" if RUNNER_JAR.exists() else "jar missing"
    return out


# ---------------------------------------------------------------- simulator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Simulator:
    def __init__(self, ttft_ms: float = 0, itl_ms: float = 0):
        self.binary = subprocess.run(
            [str(REPO / "e2e" / "scripts" / "provision-model-sim.sh")], check=True, capture_output=True, text=True
        ).stdout.strip()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        pin = ["taskset", "-c", PIN_SERVER] if PIN_SERVER is not None else []
        self.proc = subprocess.Popen(
            pin + [self.binary, "--model", MODEL, "--host", "127.0.0.1", "--port", str(self.port),
             "--max-num-seqs", "100000", "--max-waiting-queue-length", "100000", "--max-model-len", "4096",
             "--time-to-first-token", f"{ttft_ms}ms", "--inter-token-latency", f"{itl_ms}ms",
             "--force-dummy-tokenizer", "--seed", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                urllib.request.urlopen(self.url + "/health", timeout=1).read()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("model-sim did not become healthy")

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def server_view(self) -> dict:
        """Mean TTFT / ITL as the simulator itself measured them (its vLLM histograms), so a
        client's error can be split into server lateness and client overhead."""
        text = urllib.request.urlopen(self.url + "/metrics", timeout=5).read().decode()
        v = {}
        for name in ("time_to_first_token_seconds", "inter_token_latency_seconds"):
            s = re.search(rf"^vllm:{name}_sum\{{[^}}]*\}} (\S+)$", text, re.M)
            c = re.search(rf"^vllm:{name}_count\{{[^}}]*\}} (\S+)$", text, re.M)
            if s and c and float(c.group(1)) > 0:
                v[name] = float(s.group(1)) / float(c.group(1)) * 1000
        return {"server_ttft_mean_ms": v.get("time_to_first_token_seconds", math.nan),
                "server_itl_mean_ms": v.get("inter_token_latency_seconds", math.nan)}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# ---------------------------------------------------------------- tool runs


def timed(cmd: list[str], cwd: Path, timeout: float, env: dict | None = None) -> dict:
    """Runs cmd under /usr/bin/time -v; returns rc, wall and user+sys CPU of the whole process tree."""
    tfile = cwd / "time-v.txt"
    if REPARSE:
        prev = json.loads((cwd / "result.json").read_text())
        return {k: prev[k] for k in ("rc", "wall_s", "cpu_s")}
    full = ["/usr/bin/time", "-v", "-o", str(tfile)] + cmd
    if PIN_CLIENT is not None:
        # taskset outside /usr/bin/time: the tool and every process or thread it starts inherit
        # the one-CPU affinity mask, so the JVM sizes itself as in a pod with a 1-CPU limit.
        full = ["taskset", "-c", PIN_CLIENT] + full
    started = time.time()
    with open(cwd / "stdout.txt", "w") as out, open(cwd / "stderr.txt", "w") as err:
        # Own process group, so a timeout ends the tool's workers too, not only /usr/bin/time.
        proc = subprocess.Popen(full, cwd=cwd, stdout=out, stderr=err, start_new_session=True,
                                env={**os.environ, **(env or {})})
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = "timeout"
    wall = time.time() - started
    text = tfile.read_text() if tfile.exists() else ""
    user = re.search(r"User time \(seconds\): ([\d.]+)", text)
    sys_ = re.search(r"System time \(seconds\): ([\d.]+)", text)
    cpu = float(user.group(1)) + float(sys_.group(1)) if user and sys_ else math.nan
    return {"rc": rc, "wall_s": round(wall, 2), "cpu_s": cpu}


def pct(values: list[float], q: float) -> float:
    """numpy-style linear-interpolation percentile."""
    if not values:
        return math.nan
    s = sorted(values)
    k = (len(s) - 1) * q / 100
    f = math.floor(k)
    c = min(f + 1, len(s) - 1)
    return s[f] + (s[c] - s[f]) * (k - f)


def lag_from_send_times(starts: list[float], rate: float) -> list[float]:
    """Schedule lag when a tool records send instants but not due instants: the ideal constant
    schedule t0 + i/rate is anchored at the least-delayed request, so lags are >= 0 (a lower bound)."""
    starts = sorted(starts)
    offsets = [s - i / rate for i, s in enumerate(starts)]
    t0 = min(offsets)
    return [o - t0 for o in offsets]


def run_guidellm(url: str, rate: float, n: int, d: Path, timeout: float) -> dict:
    out = d / "guidellm.json"
    cmd = [str(venv_bin("guidellm", "guidellm")), "run",
           "--backend", f"kind=openai_http,target={url},request_format=/v1/completions",
           "--profile", f"kind=constant,rate={rate}",
           "--constraint", f"kind=max_requests,count={n}",
           "--data", f"kind=synthetic_text,prompt_tokens={INPUT_LEN},output_tokens={OUTPUT_LEN}",
           "--tokenizer", f"kind=huggingface_auto,model={TOKENIZER}",
           "--output", f"kind=json,path={out}", "--disable-console"]
    res = timed(cmd, d, timeout)
    if not out.exists():
        return res
    b = json.loads(out.read_text())["benchmarks"][0]
    m = b["metrics"]
    ok = b["requests"]["successful"]
    starts = [r["info"]["timings"]["request_start"] for r in ok if r["info"]["timings"].get("request_start")]
    lags = [r["info"]["timings"]["request_start"] - r["info"]["timings"]["targeted_start"]
            for r in ok if r["info"]["timings"].get("request_start") and r["info"]["timings"].get("targeted_start")]
    res.update(
        completed=len(ok), failed=len(b["requests"].get("errored") or []),
        achieved_rate=(len(starts) - 1) / (max(starts) - min(starts)) if len(starts) > 1 else math.nan,
        p99_lag_ms=pct(lags, 99) * 1000, p50_lag_ms=pct(lags, 50) * 1000,
        lag_source="request_start - targeted_start (per request)",
        ttft_mean_ms=m["time_to_first_token_ms"]["successful"]["mean"],
        ttft_median_ms=m["time_to_first_token_ms"]["successful"]["median"],
        itl_mean_ms=m["inter_token_latency_ms"]["successful"]["mean"],
        itl_median_ms=m["inter_token_latency_ms"]["successful"]["median"],
    )
    return res


def run_inference_perf(url: str, rate: float, n: int, d: Path, timeout: float) -> dict:
    duration = max(1, round(n / rate))
    cfg = d / "config.yml"
    cfg.write_text(json.dumps({
        "api": {"type": "completion", "streaming": True},
        "data": {"type": "random",
                 "input_distribution": {"min": INPUT_LEN, "max": INPUT_LEN, "mean": INPUT_LEN, "std_dev": 0},
                 "output_distribution": {"min": OUTPUT_LEN, "max": OUTPUT_LEN, "mean": OUTPUT_LEN, "std_dev": 0}},
        "load": {"type": "constant", "stages": [{"rate": rate, "duration": duration}]},
        "server": {"type": "vllm", "model_name": MODEL, "base_url": url, "ignore_eos": True},
        "tokenizer": {"pretrained_model_name_or_path": str(TOKENIZER)},
        "report": {"request_lifecycle": {"summary": True, "per_stage": True, "per_request": False}},
        "storage": {"local_storage": {"path": str(d / "out")}},
    }))  # JSON is valid YAML
    res = timed([str(venv_bin("inference-perf", "inference-perf")), "--config_file", str(cfg)], d, timeout)
    stage = d / "out" / "stage_0_lifecycle_metrics.json"
    if not stage.exists():
        return res
    s = json.loads(stage.read_text())
    lat = s["successes"]["latency"]
    itl = lat.get("inter_token_latency") or lat.get("time_per_output_token")
    res.update(
        completed=s["successes"]["count"], failed=(s.get("failures") or {}).get("count", 0),
        achieved_rate=s["load_summary"]["achieved_rate"],
        p99_lag_ms=s["load_summary"]["schedule_delay"]["p99"] * 1000,
        p50_lag_ms=s["load_summary"]["schedule_delay"]["median"] * 1000,
        lag_source="load_summary.schedule_delay (tool's own)",
        ttft_mean_ms=lat["time_to_first_token"]["mean"] * 1000,
        ttft_median_ms=lat["time_to_first_token"]["median"] * 1000,
        itl_mean_ms=itl["mean"] * 1000, itl_median_ms=itl["median"] * 1000,
        itl_source="inter_token_latency" if "inter_token_latency" in lat else "time_per_output_token",
    )
    return res


def run_vllm(url: str, rate: float, n: int, d: Path, timeout: float) -> dict:
    cmd = [str(venv_bin("vllm", "vllm")), "bench", "serve", "--backend", "vllm", "--base-url", url,
           "--model", MODEL, "--tokenizer", str(TOKENIZER), "--dataset-name", "random",
           "--random-input-len", str(INPUT_LEN), "--random-output-len", str(OUTPUT_LEN), "--ignore-eos",
           # A huge gamma shape makes the inter-arrival times constant (vllm has no constant mode).
           "--request-rate", str(rate), "--burstiness", "1e9", "--num-prompts", str(n), "--seed", "1",
           "--save-result", "--save-detailed", "--result-dir", str(d), "--result-filename", "vllm.json",
           "--disable-tqdm"]
    res = timed(cmd, d, timeout)
    out = d / "vllm.json"
    if not out.exists():
        return res
    r = json.loads(out.read_text())
    starts = r.get("start_times") or []
    res.update(
        completed=r["completed"], failed=r.get("failed", 0),
        achieved_rate=(len(starts) - 1) / (max(starts) - min(starts)) if len(starts) > 1 else math.nan,
        p99_lag_ms=pct(lag_from_send_times(starts, rate), 99) * 1000 if starts else math.nan,
        p50_lag_ms=pct(lag_from_send_times(starts, rate), 50) * 1000 if starts else math.nan,
        lag_source="start_times vs ideal constant schedule anchored at the least-delayed request",
        ttft_mean_ms=r["mean_ttft_ms"], ttft_median_ms=r["median_ttft_ms"],
        itl_mean_ms=r["mean_itl_ms"], itl_median_ms=r["median_itl_ms"],
    )
    return res


def run_aiperf(url: str, rate: float, n: int, d: Path, timeout: float) -> dict:
    out = d / "out"
    cmd = [str(venv_bin("aiperf", "aiperf")), "profile", "--model", MODEL, "--url", url,
           "--endpoint-type", "completions", "--streaming", "--tokenizer", str(TOKENIZER),
           "--isl", str(INPUT_LEN), "--isl-stddev", "0", "--osl", str(OUTPUT_LEN), "--osl-stddev", "0",
           "--extra-inputs", "ignore_eos:true", "--request-rate", str(rate), "--arrival-pattern", "constant",
           "--request-count", str(n), "--random-seed", "1", "--artifact-dir", str(out), "--ui", "none",
           "--export-level", "records"]
    res = timed(cmd, d, timeout)
    summary = out / "profile_export_aiperf.json"
    if not summary.exists():
        return res
    doc = json.loads(summary.read_text())
    records = []
    jsonl = out / "profile_export.jsonl"
    if jsonl.exists():
        records = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    starts = sorted(r["metadata"]["request_start_ns"] / 1e9 for r in records
                    if (r.get("metadata") or {}).get("request_start_ns"))

    def stat(tag: str, key: str) -> float:
        m = doc.get(tag) or {}
        return float(m[key]) if isinstance(m.get(key), (int, float)) else math.nan

    res.update(
        completed=int(stat("request_count", "avg")) if not math.isnan(stat("request_count", "avg")) else None,
        failed=int(stat("error_request_count", "avg")) if not math.isnan(stat("error_request_count", "avg")) else 0,
        achieved_rate=(len(starts) - 1) / (max(starts) - min(starts)) if len(starts) > 1 else math.nan,
        p99_lag_ms=pct(lag_from_send_times(starts, rate), 99) * 1000 if starts else math.nan,
        p50_lag_ms=pct(lag_from_send_times(starts, rate), 50) * 1000 if starts else math.nan,
        lag_source="request_start_ns vs ideal constant schedule anchored at the least-delayed request",
        ttft_mean_ms=stat("time_to_first_token", "avg"), ttft_median_ms=stat("time_to_first_token", "p50"),
        # AIPerf's inter_token_latency is (latency - TTFT) / (tokens after the first chunk) per request,
        # i.e. TPOT; its inter_chunk_latency is the gap between SSE events, what the others call ITL.
        itl_mean_ms=stat("inter_chunk_latency", "avg"), itl_median_ms=stat("inter_chunk_latency", "p50"),
        tpot_mean_ms=stat("inter_token_latency", "avg"), itl_source="inter_chunk_latency",
    )
    return res


def find_metric(metrics: dict, *parts: str, prefer: tuple[str, ...] = ()) -> float:
    keys = [k for k in metrics if all(p in k for p in parts) and isinstance(metrics[k], (int, float))]
    for p in prefer:
        for k in keys:
            if k.startswith(p):
                return float(metrics[k])
    return float(metrics[keys[0]]) if keys else math.nan


_SNAPSHOT: list[Path] = []


def runner_snapshot() -> Path:
    """A copy of the runner jar taken once per harness process: a rebuild during a sweep must not
    swap classes under a running JVM or mix two builds in one table."""
    if not _SNAPSHOT:
        RESULTS.mkdir(parents=True, exist_ok=True)
        snap = RESULTS / "inferencebench-runner-snapshot.jar"
        shutil.copy2(RUNNER_JAR, snap)
        _SNAPSHOT.append(snap)
    return _SNAPSHOT[0]


def jar_digest(jar: Path) -> str:
    """sha256 of the runner jar a result came from, so tables can name the build."""
    import hashlib
    return hashlib.sha256(jar.read_bytes()).hexdigest()


def java_21() -> str:
    """The runner needs Java >= 21; the repository's helper script picks such a JDK."""
    try:
        home = subprocess.run([str(REPO / "scripts" / "java-home.sh")], capture_output=True, text=True,
                              check=True).stdout.strip()
        if home and Path(home, "bin", "java").exists():
            return str(Path(home, "bin", "java"))
    except (OSError, subprocess.CalledProcessError):
        pass
    return shutil.which("java") or "java"


# `pinned --runner-variants NAME=FLAGS;...`: the same jar under other JVM flags, as tools "runner:NAME".
RUNNER_VARIANTS: dict[str, list[str]] = {}

# The JVM flags the runner image starts the runner with (runner/pom.xml, Jib entrypoint) that bear
# on speed: tool "runner" runs the jar so, as a runner pod does; a variant ("runner:NAME") runs it
# with only its own flags (an empty one, `plain=`, is `java -jar` as a user types it).
RUNNER_IMAGE_FLAGS = ["-XX:TieredStopAtLevel=1"]


def run_runner(url: str, rate: float, n: int, d: Path, timeout: float, variant: str = "") -> dict:
    if not RUNNER_JAR.exists():
        return {"rc": "jar missing", "wall_s": 0, "cpu_s": math.nan}
    java = os.environ.get("JAVA") or java_21()
    jar = runner_snapshot()
    extra = os.environ.get("IB_RUNNER_ARGS", "").split()
    jvm = os.environ.get("IB_RUNNER_JVM_ARGS", "").split()
    if not variant:
        jvm = RUNNER_IMAGE_FLAGS + jvm
    for flag in RUNNER_VARIANTS.get(variant, []):
        # "jar=PATH" runs another build (a before/after pair in one run); the rest are JVM flags.
        if flag.startswith("jar="):
            jar = Path(flag[4:])
        else:
            jvm.append(flag)
    cmd = [java] + jvm + ["-jar", str(jar), "run", "--base-url", url, "--backend", "vllm", "--model", MODEL,
           "--dataset-name", "random", "--random-input-len", str(INPUT_LEN),
           "--random-output-len", str(OUTPUT_LEN), "--ignore-eos", "--arrival", "constant",
           "--request-rate", str(rate), "--num-prompts", str(n), "--result-dir", str(d / "out")] + extra
    res = timed(cmd, d, timeout)
    res["jvm_args"] = jvm
    res["jar"] = str(jar)
    if REPARSE:
        res["jar_sha256"] = json.loads((d / "result.json").read_text()).get("jar_sha256", "unknown")
    else:
        res["jar_sha256"] = jar_digest(jar)[:12]
    files = sorted((d / "out").glob("*.json")) if (d / "out").exists() else []
    if not files:
        return res
    doc = json.loads(files[-1].read_text())
    m = doc.get("metrics", {})
    res.update(
        completed=m.get("completed", m.get("num_prompts")),
        achieved_rate=find_metric(m, "achieved_rate"),
        p99_lag_ms=find_metric(m, "_schedule_lag_ms", prefer=("p99_",)),
        p50_lag_ms=find_metric(m, "_schedule_lag_ms", prefer=("median_",)),
        lag_source="LPG metrics p99_schedule_lag_ms (tool's own)",
        ttft_mean_ms=find_metric(m, "_ttft_ms", prefer=("avg_", "mean_")),
        ttft_median_ms=find_metric(m, "_ttft_ms", prefer=("median_",)),
        itl_mean_ms=find_metric(m, "_itl_ms", prefer=("avg_", "mean_")),
        itl_median_ms=find_metric(m, "_itl_ms", prefer=("median_",)),
    )
    cpu = m.get("runner_cpu")
    if cpu and res.get("completed"):
        # The runner's own CPU over the stage alone (start-up and warm-up excluded).
        res.update(stage_cpu_s=cpu["cpu_seconds"], stage_wall_s=cpu["wall_seconds"],
                   stage_cpu_per_request_ms=cpu["cpu_seconds"] / res["completed"] * 1000,
                   stage_run_queue_wait_s=cpu.get("run_queue_wait_seconds"))
    return res


WRK_SCRIPT = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"%s","prompt":"%s","max_tokens":%d,"stream":true,"ignore_eos":true}'
"""


def run_wrk(url: str, rate: float, n: int, d: Path, timeout: float) -> dict:
    """The HTTP floor: wrk sends the same streaming completion in a closed loop and reads every
    response whole without parsing the events, so its CPU per request is what the HTTP exchange
    alone costs. It has no schedule: `rate` only sets how long it runs (n / rate seconds)."""
    script = d / "completions.lua"
    script.write_text(WRK_SCRIPT % (MODEL, " ".join(["hello"] * INPUT_LEN), OUTPUT_LEN))
    seconds = max(1, round(n / rate))
    cmd = [shutil.which("wrk") or "wrk", "-t1", "-c32", f"-d{seconds}s", "-s", str(script),
           f"{url}/v1/completions"]
    res = timed(cmd, d, timeout)
    out = (d / "stdout.txt").read_text() if (d / "stdout.txt").exists() else ""
    m = re.search(r"(\d+) requests in ([\d.]+)(m?s)", out)
    if not m:
        return res
    done = int(m.group(1))
    secs = float(m.group(2)) / (1000 if m.group(3) == "ms" else 1)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    res.update(completed=done, failed=(int(bad.group(1)) if bad else 0)
               + (sum(int(x) for x in errors.groups()) if errors else 0),
               achieved_rate=done / secs, closed_loop=True,
               cpu_per_request_ms=res["cpu_s"] / done * 1000 if done else math.nan)
    return res


RUNNERS = {"guidellm": run_guidellm, "inference-perf": run_inference_perf, "vllm": run_vllm, "aiperf": run_aiperf,
           "runner": run_runner, "wrk": run_wrk}


def run_tool(tool: str, url: str, rate: float, n: int, d: Path, timeout: float) -> dict:
    base, _, variant = tool.partition(":")
    if base == "runner":
        return run_runner(url, rate, n, d, timeout, variant)
    return RUNNERS[base](url, rate, n, d, timeout)


def available(tool: str) -> bool:
    tool = tool.partition(":")[0]
    if tool == "runner":
        return RUNNER_JAR.exists()
    if tool == "wrk":
        return shutil.which("wrk") is not None
    exe = {"guidellm": "guidellm", "inference-perf": "inference-perf", "vllm": "vllm", "aiperf": "aiperf"}[tool]
    return venv_bin(tool, exe).exists()


def one_run(tool: str, sim: Simulator, rate: float, n: int, label: str, timeout: float) -> dict:
    d = RESULTS / "runs" / f"{tool.replace(':', '-')}-{label}-{rate:g}qps-{n}"
    if REPARSE:
        prev = json.loads((d / "result.json").read_text())
        res = run_tool(tool, prev.get("url", ""), rate, n, d, timeout)
        res.update({k: prev[k] for k in ("loadavg_1m", "sim_cpu_s") if k in prev})
        res.update({k: v for k, v in prev.items() if k.startswith("server_") or k.startswith("injected_")})
        res.update(tool=tool, rate=rate, n=n, label=label)
    else:
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        sim_cpu = sim.cpu_seconds()
        load = os.getloadavg()[0]
        res = run_tool(tool, sim.url, rate, n, d, timeout)
        res.update(tool=tool, rate=rate, n=n, label=label, loadavg_1m=round(load, 2),
                   sim_cpu_s=round(sim.cpu_seconds() - sim_cpu, 2))
    res["sustained"] = bool(
        res.get("achieved_rate", 0) >= 0.99 * rate and res.get("p99_lag_ms", math.inf) <= 2.0
        and res.get("completed") == n)
    log(f"{tool} {label} rate={rate:g} n={n}: rc={res['rc']} achieved={res.get('achieved_rate', math.nan):.1f} "
        f"p99_lag={res.get('p99_lag_ms', math.nan):.2f}ms cpu={res['cpu_s']:.1f}s wall={res['wall_s']}s "
        f"sustained={res['sustained']}")
    (d / "result.json").write_text(json.dumps(res, indent=2, default=str))
    return res


def save(name: str, data) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / name).write_text(json.dumps(data, indent=2, default=str))


def load(name: str):
    p = RESULTS / name
    return json.loads(p.read_text()) if p.exists() else None


BASELINE_RATE, BASELINE_REQUESTS = 20.0, 20


def add_marginal_cpu(run: dict, base: dict) -> None:
    """CPU seconds per 1,000 requests beyond the baseline run's start-up cost, counted over the
    requests each run really completed: a tool may send more than asked (inference-perf sends
    rate x whole seconds), and dividing by the asked count would credit it with free requests."""
    done, base_done = run.get("completed"), base.get("completed")
    if not done or not base_done or done <= base_done or math.isnan(base.get("cpu_s", math.nan)):
        return
    run["cpu_per_1k_requests_s"] = (run["cpu_s"] - base["cpu_s"]) / (done - base_done) * 1000


def sweep(tools: list[str], rates: list[float], seconds: float, timeout: float) -> None:
    all_results = load("sweep.json") or {}
    for tool in tools:
        if not available(tool):
            log(f"{tool}: not installed, skipped")
            continue
        runs = []
        with Simulator() as sim:
            # Start-up CPU (imports, dataset preparation) is measured with a tiny run and subtracted.
            # 20 requests at 20 req/s: a whole second, so a tool that takes a duration in whole
            # seconds (inference-perf) sends exactly 20 too.
            base = one_run(tool, sim, BASELINE_RATE, BASELINE_REQUESTS, "baseline", timeout)
            for rate in rates:
                n = max(200, int(rate * seconds))
                r = one_run(tool, sim, rate, n, "sweep", timeout)
                add_marginal_cpu(r, base)
                runs.append(r)
                if r.get("rc") == "timeout" or r.get("achieved_rate", 0) < 0.9 * rate:
                    break  # saturated: higher rates only take longer
        all_results[tool] = {"baseline": base, "runs": runs}
        save("sweep.json", all_results)


def accuracy(tools: list[str], ttft_ms: float, itl_ms: float, rate: float, n: int, timeout: float) -> None:
    all_results = load("accuracy.json") or {}
    for tool in tools:
        if not available(tool):
            continue
        with Simulator(ttft_ms, itl_ms) as sim:
            r = one_run(tool, sim, rate, n, f"accuracy-ttft{ttft_ms:g}-itl{itl_ms:g}", timeout)
            r.update(sim.server_view(), injected_ttft_ms=ttft_ms, injected_itl_ms=itl_ms)
            d = RESULTS / "runs" / f"{tool.replace(':', '-')}-{r['label']}-{rate:g}qps-{n}"
            (d / "result.json").write_text(json.dumps(r, indent=2, default=str))
        r.update(injected_ttft_ms=ttft_ms, injected_itl_ms=itl_ms)
        for k in ("ttft_mean_ms", "ttft_median_ms"):
            r[k.replace("_ms", "_err_ms")] = r.get(k, math.nan) - ttft_ms
        for k in ("itl_mean_ms", "itl_median_ms"):
            r[k.replace("_ms", "_err_ms")] = r.get(k, math.nan) - itl_ms
        all_results[tool] = r
        save("accuracy.json", all_results)


def pinned(tools: list[str], rates: list[float], repeats: int, seconds: float, timeout: float,
           accuracy_too: bool) -> None:
    """Equal footing: every client on PIN_CLIENT, the simulator on PIN_SERVER, all tools in one
    run. Rates go up in turn; at each rate every tool still in the race runs `repeats` times, the
    tools alternating (the order rotates per repeat) so that drift of the machine hits all alike.
    A tool leaves the race after a rate at which no repeat reached 90 % of the target."""
    out = {"client_cpu": PIN_CLIENT, "server_cpu": PIN_SERVER, "seconds": seconds, "repeats": repeats,
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "versions": versions(),
           "runner_image_flags": RUNNER_IMAGE_FLAGS, "runner_variants": RUNNER_VARIANTS, "tools": {}}
    tools = [t for t in tools if available(t) or log(f"{t}: not installed, skipped")]
    racing = [t for t in tools if t != "wrk"]
    with Simulator() as sim:
        for tool in tools:
            if tool == "wrk":
                continue
            base = one_run(tool, sim, BASELINE_RATE, BASELINE_REQUESTS, "pinned-baseline", timeout)
            out["tools"][tool] = {"baseline": base, "runs": []}
        for rate in rates:
            n = max(200, int(rate * seconds))
            reached: dict[str, bool] = {}
            for rep in range(repeats):
                order = racing[rep % len(racing):] + racing[:rep % len(racing)] if racing else []
                for tool in order:
                    r = one_run(tool, sim, rate, n, f"pinned-r{rep + 1}", timeout)
                    r["repeat"] = rep + 1
                    add_marginal_cpu(r, out["tools"][tool]["baseline"])
                    out["tools"][tool]["runs"].append(r)
                    reached[tool] = reached.get(tool, False) or (
                        r.get("rc") != "timeout" and r.get("achieved_rate", 0) >= 0.9 * rate)
                    save("pinned.json", out)
            racing = [t for t in racing if reached.get(t)]
            if not racing:
                break
        if "wrk" in tools:
            # Closed loop for as long as the runner's longest step, twice.
            out["tools"]["wrk"] = {"runs": []}
            for rep in range(repeats):
                r = one_run("wrk", sim, 1000, int(1000 * seconds), f"pinned-r{rep + 1}", timeout)
                r["repeat"] = rep + 1
                out["tools"]["wrk"]["runs"].append(r)
            save("pinned.json", out)
    if accuracy_too:
        for tool in [t for t in tools if t != "wrk"]:
            with Simulator(20, 5) as sim:
                r = one_run(tool, sim, 10, 100, "pinned-accuracy-ttft20-itl5", timeout)
                r.update(sim.server_view(), injected_ttft_ms=20, injected_itl_ms=5)
            for k in ("ttft_mean_ms", "ttft_median_ms"):
                r[k.replace("_ms", "_err_ms")] = r.get(k, math.nan) - 20
            for k in ("itl_mean_ms", "itl_median_ms"):
                r[k.replace("_ms", "_err_ms")] = r.get(k, math.nan) - 5
            out["tools"][tool]["accuracy"] = r
            save("pinned.json", out)
    out["ended"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    save("pinned.json", out)


def pinned_report(name: str = "pinned.json") -> str:
    doc = load(name)
    if not doc:
        return f"no {name} in {RESULTS}"
    floor = math.nan
    wrk = (doc["tools"].get("wrk") or {}).get("runs", [])
    per_req = [r["cpu_per_request_ms"] for r in wrk if not math.isnan(r.get("cpu_per_request_ms", math.nan))]
    if per_req:
        floor = statistics.median(per_req)  # ms per request = CPU s per 1,000 requests
    lines = [f"Pinned: clients on CPU {doc['client_cpu']}, simulator on CPU {doc['server_cpu']}, "
             f"{doc['repeats']} repeats per rate, {doc['started']} – {doc.get('ended', 'unfinished')}", "",
             "| tool | max rate strict in every repeat (req/s) | max rate strict in any repeat | max rate achieved >= 99 % "
             "(lag ignored) | CPU s per 1k req | × floor (wrk) | TTFT mean / median error (ms) | ITL mean / median error (ms) |",
             "|---|---|---|---|---|---|---|---|"]
    for tool, tr in doc["tools"].items():
        runs = tr.get("runs", [])
        if tool == "wrk":
            rates = [r.get("achieved_rate", math.nan) for r in runs]
            lines.append(f"| wrk (closed loop, 32 connections; the floor) | n/a | n/a | "
                         f"{' / '.join(fmt(x, 0) for x in rates)} req/s | {fmt(floor, 3)} | 1 | n/a | n/a |")
            continue
        by_rate: dict[float, list[dict]] = {}
        for r in runs:
            by_rate.setdefault(r["rate"], []).append(r)
        every = [rt for rt, rs in by_rate.items() if all(r.get("sustained") for r in rs)]
        anyr = [rt for rt, rs in by_rate.items() if any(r.get("sustained") for r in rs)]
        reached = [rt for rt, rs in by_rate.items()
                   if all(r.get("achieved_rate", 0) >= 0.99 * rt and r.get("completed") == r["n"] for r in rs)]
        slope = cpu_per_1k(tr)
        a = tr.get("accuracy", {})
        lines.append(
            f"| {tool} | {fmt(max(every), 0) if every else 'none'} | {fmt(max(anyr), 0) if anyr else 'none'} "
            f"| {fmt(max(reached), 0) if reached else 'none'} | {fmt(slope, 3)} | {fmt(slope / floor, 1)} "
            f"| {fmt(a.get('ttft_mean_err_ms'), 2)} / {fmt(a.get('ttft_median_err_ms'), 2)} "
            f"| {fmt(a.get('itl_mean_err_ms'), 3)} / {fmt(a.get('itl_median_err_ms'), 3)} |")
    lines += ["", "Per run (in the order they ran within each rate; in-stage CPU: the runner's own meter over "
              "the stage, start-up and warm-up excluded):", "",
              "| tool | target req/s | repeat | requests | achieved req/s | p50 / p99 schedule lag (ms) | strict "
              "| tool CPU s | in-stage CPU ms/req | simulator CPU s | load avg |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = [r for tr in doc["tools"].values() for r in tr.get("runs", []) if r.get("label", "").startswith("pinned-r")]
    for r in rows:
        lines.append(
            f"| {r['tool']} | {r['rate']:g} | {r.get('repeat', '')} | {r['n']} | {fmt(r.get('achieved_rate'))} "
            f"| {fmt(r.get('p50_lag_ms'), 2)} / {fmt(r.get('p99_lag_ms'), 2)} | {'yes' if r.get('sustained') else 'no'} "
            f"| {fmt(r.get('cpu_s'))} | {fmt(r.get('stage_cpu_per_request_ms'), 3)} | {fmt(r.get('sim_cpu_s'), 2)} "
            f"| {r.get('loadavg_1m')} |")
    return "\n".join(lines)


def reparse() -> str:
    global REPARSE
    REPARSE = True
    sw, acc = load("sweep.json") or {}, load("accuracy.json") or {}
    for tool, tr in sw.items():
        tr["baseline"] = one_run(tool, None, tr["baseline"]["rate"], tr["baseline"]["n"], "baseline", 0)
        runs = [one_run(tool, None, r["rate"], r["n"], "sweep", 0) for r in tr["runs"]]
        for r in runs:
            add_marginal_cpu(r, tr["baseline"])
        tr["runs"] = runs
    for tool, a in acc.items():
        r = one_run(tool, None, a["rate"], a["n"], a["label"], 0)
        r.update({k: v for k, v in a.items() if k.startswith(("server_", "injected_"))})
        for k in ("ttft_mean_ms", "ttft_median_ms"):
            r[k.replace("_ms", "_err_ms")] = r.get(k, math.nan) - r["injected_ttft_ms"]
        for k in ("itl_mean_ms", "itl_median_ms"):
            r[k.replace("_ms", "_err_ms")] = r.get(k, math.nan) - r["injected_itl_ms"]
        acc[tool] = r
    save("sweep.json", sw)
    save("accuracy.json", acc)
    return report()


def fmt(v, nd=1):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.{nd}f}"


def cpu_per_1k(tool_results: dict) -> float:
    """Least-squares slope of the tool's CPU seconds over request count (baseline and every completed
    sweep run), per 1,000 requests: start-up cost is the intercept and drops out."""
    pts = [(r["n"], r["cpu_s"]) for r in [tool_results.get("baseline", {})] + tool_results.get("runs", [])
           if r.get("completed") == r.get("n") and isinstance(r.get("cpu_s"), (int, float)) and not math.isnan(r["cpu_s"])]
    if len(pts) < 2:
        return math.nan
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx * 1000 if sxx else math.nan


def report() -> str:
    sw, acc = load("sweep.json") or {}, load("accuracy.json") or {}
    lines = ["| tool | max sustained rate (req/s): achieved >= 99 % and p99 lag <= 2 ms | max rate with achieved >= 99 % "
             "(lag ignored) | CPU s per 1k req | TTFT mean / median error (ms) | ITL mean / median error (ms) |",
             "|---|---|---|---|---|---|"]
    for tool in TOOLS:
        if tool not in sw and tool not in acc:
            continue
        runs = (sw.get(tool) or {}).get("runs", [])
        sustained = [r["rate"] for r in runs if r.get("sustained")]
        best = f"{max(sustained):g}" if sustained else (f"< {runs[0]['rate']:g}" if runs else "n/a")
        reached = [r["rate"] for r in runs if r.get("achieved_rate", 0) >= 0.99 * r["rate"] and r.get("completed") == r["n"]]
        best_rate_only = f"{max(reached):g}" if reached else (f"< {runs[0]['rate']:g}" if runs else "n/a")
        cpu_slope = cpu_per_1k(sw.get(tool) or {})
        a = acc.get(tool, {})
        lines.append(
            f"| {tool} | {best} | {best_rate_only} | {fmt(cpu_slope, 2)} | "
            f"{fmt(a.get('ttft_mean_err_ms'), 2)} / {fmt(a.get('ttft_median_err_ms'), 2)} | "
            f"{fmt(a.get('itl_mean_err_ms'), 2)} / {fmt(a.get('itl_median_err_ms'), 2)} |")
    lines += ["", f"Accuracy runs (simulator TTFT / ITL injected as shown; server-side means from its own histograms):", "",
              "| tool | injected TTFT / ITL (ms) | tool TTFT mean / median (ms) | tool ITL mean / median (ms) "
              "| simulator's own TTFT / ITL mean (ms) | p99 schedule lag (ms) | load avg |", "|---|---|---|---|---|---|---|"]
    for tool in TOOLS:
        a = acc.get(tool)
        if a:
            lines.append(
                f"| {tool} | {fmt(a.get('injected_ttft_ms'), 0)} / {fmt(a.get('injected_itl_ms'), 0)} "
                f"| {fmt(a.get('ttft_mean_ms'), 2)} / {fmt(a.get('ttft_median_ms'), 2)} "
                f"| {fmt(a.get('itl_mean_ms'), 3)} / {fmt(a.get('itl_median_ms'), 3)} "
                f"| {fmt(a.get('server_ttft_mean_ms'), 2)} / {fmt(a.get('server_itl_mean_ms'), 3)} "
                f"| {fmt(a.get('p99_lag_ms'), 2)} | {a.get('loadavg_1m')} |")
    lines += ["", "Per rate (sweep):", "",
              "| tool | target req/s | requests | achieved req/s | p50 / p99 schedule lag (ms) | sustained | tool CPU s "
              "| CPU s/1k req (minus baseline run) | simulator CPU s | wall s | load avg |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for tool in TOOLS:
        for r in (sw.get(tool) or {}).get("runs", []):
            lines.append(
                f"| {tool} | {r['rate']:g} | {r['n']} | {fmt(r.get('achieved_rate'))} "
                f"| {fmt(r.get('p50_lag_ms'), 2)} / {fmt(r.get('p99_lag_ms'), 2)} "
                f"| {'yes' if r.get('sustained') else 'no'} | {fmt(r.get('cpu_s'))} | {fmt(r.get('cpu_per_1k_requests_s'), 2)} "
                f"| {fmt(r.get('sim_cpu_s'), 2)} | {r.get('wall_s')} | {r.get('loadavg_1m')} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("install")
    p.add_argument("--tools", default="guidellm,inference-perf,vllm,aiperf,wrk")
    p = sub.add_parser("sweep")
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--rates", default="25,50,100,200,400,800,1600")
    p.add_argument("--seconds", type=float, default=8, help="load phase per rate (requests = rate x seconds)")
    p.add_argument("--timeout", type=float, default=120, help="hard limit per tool run, start-up included")
    p = sub.add_parser("accuracy")
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--ttft-ms", type=float, default=20)
    p.add_argument("--itl-ms", type=float, default=5)
    p.add_argument("--rate", type=float, default=10)
    p.add_argument("--num", type=int, default=100)
    p.add_argument("--timeout", type=float, default=120)
    p = sub.add_parser("pinned", help="equal footing: clients on one CPU, the simulator on another, all tools alternating")
    p.add_argument("--tools", default="runner,vllm,inference-perf,guidellm,aiperf,wrk")
    p.add_argument("--rates", default="100,200,400,800,1600,2400,3200,4000,5000,6400,8000")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--seconds", type=float, default=6)
    p.add_argument("--timeout", type=float, default=90)
    p.add_argument("--client-cpu", default="0")
    p.add_argument("--server-cpu", default="1")
    p.add_argument("--runner-variants", default="",
                   help="NAME=JVM FLAGS;... : also run the runner as tool runner:NAME with those flags")
    p.add_argument("--no-accuracy", action="store_true")
    p = sub.add_parser("pinned-report")
    p.add_argument("--file", default="pinned.json")
    sub.add_parser("report")
    sub.add_parser("reparse", help="recompute sweep.json/accuracy.json from bench/results/runs")
    sub.add_parser("versions")
    a = ap.parse_args()
    if a.cmd == "install":
        print(json.dumps(install(a.tools.split(",")), indent=2))
    elif a.cmd == "sweep":
        sweep(a.tools.split(","), [float(x) for x in a.rates.split(",")], a.seconds, a.timeout)
        print(report())
    elif a.cmd == "accuracy":
        accuracy(a.tools.split(","), a.ttft_ms, a.itl_ms, a.rate, a.num, a.timeout)
        print(report())
    elif a.cmd == "pinned":
        global PIN_CLIENT, PIN_SERVER
        PIN_CLIENT, PIN_SERVER = a.client_cpu, a.server_cpu
        tools = a.tools.split(",")
        for spec in filter(None, a.runner_variants.split(";")):
            name, _, flags = spec.partition("=")
            RUNNER_VARIANTS[name.strip()] = flags.split()
            tools.insert(tools.index("runner") + 1 if "runner" in tools else 0, f"runner:{name.strip()}")
        pinned(tools, [float(x) for x in a.rates.split(",")], a.repeats, a.seconds, a.timeout, not a.no_accuracy)
        print(pinned_report())
    elif a.cmd == "pinned-report":
        print(pinned_report(a.file))
    elif a.cmd == "report":
        print(report())
    elif a.cmd == "reparse":
        print(reparse())
    else:
        print(json.dumps(versions(), indent=2))


if __name__ == "__main__":
    main()
