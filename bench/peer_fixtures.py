#!/usr/bin/env python3
"""The peers' result files that `compare` and `report` read, produced by running the peers.

Runs `vllm bench serve --save-result`, AIPerf, inference-perf, GuideLLM and the InferenceBench runner
against model-sim (e2e/model-sim) on loopback, one workload for all: /v1/completions, streaming, 32
input / 64 output tokens (ignore_eos), constant arrivals at 10 req/s, 30 requests; the simulator
injects TTFT 20 ms and ITL 5 ms. The peers come from the cached venvs of bench/peer_bench.py
(`python3 bench/peer_bench.py install`), pinned there.

  python3 bench/peer_fixtures.py check     # re-run the peers; fail when a file's format differs
                                           # from the committed fixture (keys and JSON types)
  python3 bench/peer_fixtures.py update    # re-run the peers and replace the committed fixtures

The fixtures (runner/src/test/resources/peer-results/, with VERSIONS.json naming each peer's
version and command) are what the unit tier reads; this script is how they were made and how a
change of a peer's format is caught. Only the small files `compare` and `report` take are kept.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_bench as pb  # noqa: E402

FIXTURES = pb.REPO / "runner" / "src" / "test" / "resources" / "peer-results"
RATE, REQUESTS, TTFT_MS, ITL_MS = 10.0, 30, 20, 5
TIMEOUT = 300
# tool -> the files kept, relative to the tool's output directory (also their fixture names).
KEPT = {
    "runner": ["runner/stage-0.json"],
    "vllm": ["vllm/vllm-bench-serve.json"],
    "aiperf": ["aiperf/profile_export_aiperf.json"],
    "inference-perf": ["inference-perf/stage_0_lifecycle_metrics.json",
                       "inference-perf/summary_lifecycle_metrics.json",
                       "inference-perf/inference-perf.partial.stage_0.yaml"],
    "guidellm": ["guidellm/benchmarks.json"],
}


def log(msg: str) -> None:
    print(f"[peer-fixtures] {msg}", file=sys.stderr, flush=True)


def run_runner(url: str, out: Path) -> list[str]:
    cmd = [pb.java_21(), "-jar", str(pb.RUNNER_JAR), "run", "--base-url", url, "--backend", "vllm", "--model", pb.MODEL,
           "--dataset-name", "random", "--random-input-len", str(pb.INPUT_LEN),
           "--random-output-len", str(pb.OUTPUT_LEN), "--ignore-eos", "--arrival", "constant",
           "--request-rate", f"{RATE:g}", "--num-prompts", str(REQUESTS), "--seed", "1",
           "--result-dir", str(out / "raw")]
    return cmd


def commands(url: str, out: Path) -> dict[str, list[str]]:
    """What each tool runs; its files land under out/<tool>/."""
    tok = str(pb.TOKENIZER)
    ip_cfg = out / "inference-perf-config.yml"
    ip_cfg.write_text(json.dumps({
        "api": {"type": "completion", "streaming": True},
        "data": {"type": "random",
                 "input_distribution": {"min": pb.INPUT_LEN, "max": pb.INPUT_LEN, "mean": pb.INPUT_LEN, "std_dev": 0},
                 "output_distribution": {"min": pb.OUTPUT_LEN, "max": pb.OUTPUT_LEN, "mean": pb.OUTPUT_LEN,
                                         "std_dev": 0}},
        "load": {"type": "constant", "stages": [{"rate": RATE, "duration": int(REQUESTS / RATE)}]},
        "server": {"type": "vllm", "model_name": pb.MODEL, "base_url": url, "ignore_eos": True},
        "tokenizer": {"pretrained_model_name_or_path": tok},
        "report": {"request_lifecycle": {"summary": True, "per_stage": True, "per_request": False}},
        "storage": {"local_storage": {"path": str(out / "inference-perf")}},
    }))  # JSON is valid YAML
    return {
        "runner": run_runner(url, out / "runner"),
        "vllm": [str(pb.venv_bin("vllm", "vllm")), "bench", "serve", "--backend", "vllm", "--base-url", url,
                 "--model", pb.MODEL, "--tokenizer", tok, "--dataset-name", "random",
                 "--random-input-len", str(pb.INPUT_LEN), "--random-output-len", str(pb.OUTPUT_LEN),
                 "--ignore-eos", "--request-rate", f"{RATE:g}", "--burstiness", "1e9",
                 "--num-prompts", str(REQUESTS), "--seed", "1",
                 "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,99",
                 "--save-result", "--result-dir", str(out / "vllm"), "--result-filename", "vllm-bench-serve.json",
                 "--disable-tqdm"],
        "aiperf": [str(pb.venv_bin("aiperf", "aiperf")), "profile", "--model", pb.MODEL, "--url", url,
                   "--endpoint-type", "completions", "--streaming", "--tokenizer", tok,
                   "--isl", str(pb.INPUT_LEN), "--isl-stddev", "0", "--osl", str(pb.OUTPUT_LEN), "--osl-stddev", "0",
                   "--extra-inputs", "ignore_eos:true", "--request-rate", f"{RATE:g}", "--arrival-pattern", "constant",
                   "--request-count", str(REQUESTS), "--random-seed", "1", "--artifact-dir", str(out / "aiperf"),
                   "--ui", "none"],
        "inference-perf": [str(pb.venv_bin("inference-perf", "inference-perf")), "--config_file", str(ip_cfg)],
        "guidellm": [str(pb.venv_bin("guidellm", "guidellm")), "run",
                     "--backend", f"kind=openai_http,target={url},request_format=/v1/completions",
                     "--profile", f"kind=constant,rate={RATE:g}",
                     "--constraint", f"kind=max_requests,count={REQUESTS}",
                     "--data", f"kind=synthetic_text,prompt_tokens={pb.INPUT_LEN},output_tokens={pb.OUTPUT_LEN}",
                     "--tokenizer", f"kind=huggingface_auto,model={tok}",
                     "--output", f"kind=json,path={out / 'guidellm' / 'benchmarks.json'}", "--disable-console"],
    }


def produce(tools: list[str], out: Path) -> dict:
    """Runs each tool against one simulator; returns {tool: {version, command, rc}}."""
    versions = pb.versions()
    ran = {}
    with pb.Simulator(TTFT_MS, ITL_MS) as sim:
        cmds = commands(sim.url, out)
        for tool in tools:
            d = out / tool
            d.mkdir(parents=True, exist_ok=True)
            log(f"{tool}: running")
            res = pb.timed(cmds[tool], d, TIMEOUT)
            if tool == "runner":
                profiles = sorted((d / "raw").glob("*.json"))
                if profiles:
                    shutil.copy(profiles[0], d / "stage-0.json")
            shown = ["java" if c == pb.java_21() else c for c in cmds[tool]]
            command = " ".join(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", c) for c in shown)
            command = command.replace(str(out), "OUT").replace(str(pb.TOKENIZER), "TOKENIZER")
            command = command.replace(str(pb.PEERS), "PEERS").replace(str(pb.REPO) + "/", "")
            ran[tool] = {"version": versions.get(tool, "?") if tool != "runner" else git_head(),
                         "command": command, "rc": res["rc"], "wall_s": res["wall_s"]}
            log(f"{tool}: rc={res['rc']} in {res['wall_s']} s")
    return ran


def git_head() -> str:
    r = subprocess.run(["git", "-C", str(pb.REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return "InferenceBench " + (r.stdout.strip() or "?")


def load(path: Path):
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        return yaml_subset(text)
    # Python's json reads LPG's bare Infinity/NaN as the peers write them.
    return json.loads(text)


def yaml_subset(text: str):
    """The block YAML the peers write (mappings, scalars; no lists of mappings), without PyYAML:
    enough for the shape check of inference-perf's BR0.2 partial."""
    root: dict = {}
    stack = [(-1, root)]
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip())
        key, _, value = raw.strip().partition(":")
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        value = value.strip()
        if value == "":
            parent[key] = {}
            stack.append((indent, parent[key]))
        else:
            parent[key] = scalar(value)
    return root


def scalar(v: str):
    if v.startswith(("'", '"')):
        return v[1:-1]
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return {"true": True, "false": False, "null": None, "~": None}.get(v, v)


def shape(doc, path: str = "$", out: dict | None = None) -> dict:
    """{json path: type} with list items collapsed to [*] and dict keys that are data (URLs, ids,
    numbers) to {*}, so that two runs of one format have one shape."""
    out = {} if out is None else out
    if isinstance(doc, dict):
        out[path] = "object"
        for k, v in doc.items():
            data_key = re.match(r"^(https?://|[0-9a-f]{8,}$|\d+$)", k) is not None
            shape(v, f"{path}.{'{*}' if data_key else k}", out)
    elif isinstance(doc, list):
        out[path] = "array"
        for v in doc:
            shape(v, f"{path}[*]", out)
    else:
        kind = ("null" if doc is None else "bool" if isinstance(doc, bool)
                else "number" if isinstance(doc, (int, float)) else "string")
        if kind == "number" and isinstance(doc, float) and not math.isfinite(doc):
            kind = "number"
        prev = out.get(path)
        # null and a number in one place over runs are one format (a value absent this time).
        out[path] = kind if prev in (None, kind) else "|".join(sorted({prev, kind}))
    return out


def differences(old: dict, new: dict) -> list[str]:
    lines = []
    for p in sorted(set(old) | set(new)):
        a, b = old.get(p), new.get(p)
        if a == b:
            continue
        if a and b and "null" in (a + "|" + b).split("|"):
            continue  # a value present in one run and null in the other
        lines.append(f"  {p}: fixture {a or 'absent'}, now {b or 'absent'}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["check", "update"])
    ap.add_argument("--tools", default=",".join(KEPT))
    a = ap.parse_args()
    tools = a.tools.split(",")
    missing = [t for t in tools if not pb.available(t)]
    if missing:
        log(f"not installed: {', '.join(missing)} (python3 bench/peer_bench.py install --tools "
            f"{','.join(t for t in missing if t != 'runner')}; the runner jar: make build)")
        return 2
    with tempfile.TemporaryDirectory(prefix="peer-fixtures-") as tmp:
        out = Path(tmp)
        ran = produce(tools, out)
        failed = []
        versions_file = FIXTURES / "VERSIONS.json"
        recorded = json.loads(versions_file.read_text()) if versions_file.exists() else {}
        for tool in tools:
            for rel in KEPT[tool]:
                produced = out / rel
                fixture = FIXTURES / rel
                if not produced.exists():
                    failed.append(f"{tool}: {rel} was not written (rc {ran[tool]['rc']}; "
                                  f"see its stderr: rerun with --tools {tool})")
                    continue
                if a.mode == "update":
                    fixture.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(produced, fixture)
                    continue
                if not fixture.exists():
                    failed.append(f"{tool}: no fixture {fixture} (run `update`)")
                    continue
                diff = differences(shape(load(fixture)), shape(load(produced)))
                if diff:
                    failed.append(f"{tool} {ran[tool]['version']}: the format of {rel} changed against the "
                                  f"fixture ({recorded.get(tool, {}).get('version', '?')}):\n" + "\n".join(diff))
            if a.mode == "update":
                recorded[tool] = {k: ran[tool][k] for k in ("version", "command")}
        if a.mode == "update":
            recorded["_workload"] = (f"model-sim with TTFT {TTFT_MS} ms, ITL {ITL_MS} ms; /v1/completions streaming, "
                                     f"{pb.INPUT_LEN} input / {pb.OUTPUT_LEN} output tokens (ignore_eos), constant "
                                     f"{RATE:g} req/s, {REQUESTS} requests; made by bench/peer_fixtures.py")
            versions_file.parent.mkdir(parents=True, exist_ok=True)
            versions_file.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
        for f in failed:
            print(f, file=sys.stderr)
        if not failed:
            log(("updated " if a.mode == "update" else "unchanged: ") + ", ".join(
                f"{t} {ran[t]['version']}" for t in tools))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
