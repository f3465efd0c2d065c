#!/usr/bin/env bash
# Hugging Face `transformers serve` on the CPU with a tiny random-weight Llama of the project's own
# making (no download): a real third-party OpenAI-compatible server that runs on any x86-64 or
# arm64 machine (no AVX-512 needed), the backend of the `*TransformersIT` tier (make
# test-transformers).
#
#   e2e/scripts/transformers-serve.sh install   # the cached venv only; prints its directory
#   e2e/scripts/transformers-serve.sh model     # install if needed, write the model; prints its dir
#   e2e/scripts/transformers-serve.sh up        # install, write the model, start, wait until it
#                                               # answers, warm up; prints the base URL on stdout
#   e2e/scripts/transformers-serve.sh status    # prints the base URL and exits 0 when up, else 1
#   e2e/scripts/transformers-serve.sh down      # stops the server by its PID (its process group)
#   e2e/scripts/transformers-serve.sh serve ARGS # the server in the foreground (exec), e.g. bound
#                                               # to the address a cluster's pods reach:
#                                               # serve --host 10.0.0.1 --port 8000
#
# Install: transformers[serving] with torch from PyPI (the CUDA-enabled build; it runs on the CPU)
# into a venv at ${IB_CACHE_DIR:-~/.cache/inferencebench}/transformers-<v>-torch-<v>-py<python>/
# (skipped when complete). Every version comes from e2e/transformers/constraints.txt (the set this
# script resolved and was tested with).
#
# The server: `transformers serve MODEL_DIR --continuous-batching --device cpu` on loopback, with a
# small paged cache (128 blocks, 1,024 tokens a batch: the defaults reserve ~20 GB of RAM). What a
# client must know about it: requests name the model by the directory path (printed by `model`,
# and /v1/models lists nothing); fields outside OpenAI's API are refused with HTTP 422; streams end
# without `data: [DONE]`; there is no /metrics. State (PID, port, model, log) lives in
#   ${IB_TRANSFORMERS_STATE_DIR:-/tmp/inferencebench-transformers}/
# Environment: IB_TRANSFORMERS_PORT (default: a free port), IB_TRANSFORMERS_PYTHON (a CPython
#   3.10-3.13 to build the venv with), IB_TRANSFORMERS_START_TIMEOUT (s, default 300),
#   IB_TRANSFORMERS_EXTRA_ARGS (appended to `transformers serve`).
set -euo pipefail

LOG_TAG=transformers-serve
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=python-server-lib.sh
. "$SCRIPT_DIR/python-server-lib.sh"
TF_DIR="$(cd "$SCRIPT_DIR/../transformers" && pwd)"
CONSTRAINTS="$TF_DIR/constraints.txt"
TRANSFORMERS_VERSION=5.17.0
TORCH_VERSION=2.10.0
CACHE_ROOT="${IB_CACHE_DIR:-$HOME/.cache/inferencebench}"
STATE_DIR="${IB_TRANSFORMERS_STATE_DIR:-/tmp/inferencebench-transformers}"
START_TIMEOUT="${IB_TRANSFORMERS_START_TIMEOUT:-300}"
# Continuous batching with a cache that fits a small machine (128 blocks of 32 tokens).
SERVE_ARGS=(--continuous-batching --device cpu --cb-num-blocks 128 --cb-max-batch-tokens 1024)
# Nothing reaches the network at run time: every file of the model is written here.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 DO_NOT_TRACK=1 \
  TOKENIZERS_PARALLELISM=false
# A Hugging Face cache of its own, empty: the server never looks in the user's, and /v1/models
# (which lists the cache's models) answers an empty list instead of HTTP 500 for a missing cache.
export HF_HOME="$STATE_DIR/hf-home"

# The venv, built with a CPython that transformers and torch support (3.10-3.13).
VENV=""
BASE_PYTHON=""
resolve_venv() {
  local py minor
  py="$(find_python_for IB_TRANSFORMERS_PYTHON "'apt-get install python3-venv' or 'pyenv install 3.12'")"
  minor="$(python_minor "$py")"
  VENV="$CACHE_ROOT/transformers-$TRANSFORMERS_VERSION-torch-$TORCH_VERSION-py$minor"
  BASE_PYTHON="$py"
}

install() {
  resolve_venv
  if venv_cached; then return; fi
  log "installing transformers[serving]==$TRANSFORMERS_VERSION and torch==$TORCH_VERSION with $BASE_PYTHON into $VENV"
  local t0
  t0=$(date +%s)
  venv_create
  local c=()
  [ -f "$CONSTRAINTS" ] && c=(-c "$CONSTRAINTS")
  # `requests`: the transformers command imports it, and the serving extra does not bring it.
  "$VENV/bin/python" -m pip --disable-pip-version-check install --no-input "${c[@]}" \
    "transformers[serving]==$TRANSFORMERS_VERSION" "torch==$TORCH_VERSION" requests >&2 \
    || die "pip could not install transformers[serving]==$TRANSFORMERS_VERSION (output above)"
  "$VENV/bin/python" -c 'import torch, transformers, fastapi, uvicorn; assert transformers.__version__ == "'"$TRANSFORMERS_VERSION"'", transformers.__version__' \
    || die "the install in $VENV does not import (torch, transformers, fastapi, uvicorn); see the pip output above"
  venv_seal "$t0"
}

MODEL_DIR=""
# The model directory is keyed by the generator's source and the transformers version, so a
# changed generator (or a new transformers) makes a new one.
write_model() {
  local key tmp
  key="$( (cat "$TF_DIR/make_tiny_model.py"; echo "$TRANSFORMERS_VERSION") | sha256sum | cut -c1-12)"
  MODEL_DIR="$CACHE_ROOT/transformers-models/tiny-llama-$key"
  if [ -f "$MODEL_DIR/.complete" ]; then return; fi
  mkdir -p "$CACHE_ROOT/transformers-models"
  tmp="$(mktemp -d "$CACHE_ROOT/transformers-models/.tiny-llama.XXXXXX")"
  "$VENV/bin/python" "$TF_DIR/make_tiny_model.py" "$tmp" >/dev/null \
    || { rm -rf "$tmp"; die "make_tiny_model.py failed (output above)"; }
  touch "$tmp/.complete"
  mv -T "$tmp" "$MODEL_DIR" 2>/dev/null || rm -rf "$tmp"
  log "model directory: $MODEL_DIR"
}

up() {
  if status 2>/dev/null; then log "already up (PID $(state PID))"; return 0; fi
  install >/dev/null
  write_model
  mkdir -p "$STATE_DIR" "$HF_HOME/hub"
  local port url log_file t0 pid
  port="${IB_TRANSFORMERS_PORT:-$(free_port)}"
  url="http://127.0.0.1:$port"
  log_file="$STATE_DIR/server.log"
  t0=$(date +%s.%N)
  # A session of its own: `down` signals the whole group.
  # shellcheck disable=SC2086
  setsid "$VENV/bin/transformers" serve "$MODEL_DIR" "${SERVE_ARGS[@]}" \
      --host 127.0.0.1 --port "$port" ${IB_TRANSFORMERS_EXTRA_ARGS:-} \
      >"$log_file" 2>&1 </dev/null &
  pid=$!
  printf '%s\n' "PID=$pid" "PORT=$port" "URL=$url" "MODEL_DIR=$MODEL_DIR" "VENV=$VENV" \
    "TRANSFORMERS_VERSION=$TRANSFORMERS_VERSION" "TORCH_VERSION=$TORCH_VERSION" "LOG=$log_file" \
    >"$STATE_DIR/env"
  log "started transformers serve (PID $pid) on $url, log $log_file"
  await_and_warm_up "transformers serve" IB_TRANSFORMERS_START_TIMEOUT "$pid" "$url" "$log_file" "$t0" "$TF_DIR/warm_up.py" "$MODEL_DIR"
}

model() {
  install >/dev/null
  write_model
  echo "$MODEL_DIR"
}

# In the foreground: `transformers-serve.sh serve --host ADDR --port P`; the arguments go to
# `transformers serve` after the model directory and the small-cache settings.
serve() {
  install >/dev/null
  write_model
  mkdir -p "$HF_HOME/hub"
  exec "$VENV/bin/transformers" serve "$MODEL_DIR" "${SERVE_ARGS[@]}" "$@"
}

case "${1:-}" in
  install) install ;;
  model) model ;;
  serve) shift; serve "$@" ;;
  up) up ;;
  status) status ;;
  down) down ;;
  *) echo "usage: $0 install|model|up|status|down|serve [transformers serve args]" >&2; exit 2 ;;
esac
