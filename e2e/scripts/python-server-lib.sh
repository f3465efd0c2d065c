# Sourced by transformers-serve.sh and vllm-cpu.sh: what running a Python model server from a
# cached venv takes whichever server it is — a CPython to build the venv with, the venv's cache
# marker, the state file, /health, the wait for start-up and the warm-up, and stopping the server's
# process group, and the log lines. Needs LOG_TAG (set before sourcing: the script's name in its
# log lines), and when its functions run CACHE_ROOT, STATE_DIR and START_TIMEOUT; VENV and
# BASE_PYTHON are set by the script's resolve_venv.

log() { echo "[$LOG_TAG] $(date -u +%H:%M:%S) $*" >&2; }
die() { log "error: $*"; exit 1; }

# A CPython 3.10-3.13 with venv, 3.12 first (the one the constraints were resolved with).
# $1: the variable that names one instead; $2: how to install one, for the error.
find_python_for() {
  local override="$1" hint="$2"
  if [ -n "${!override:-}" ]; then
    [ -x "${!override}" ] || die "$override=${!override} is not an executable"
    echo "${!override}"; return
  fi
  local minor c
  for minor in 12 13 11 10; do
    for c in "$HOME/.pyenv/versions/3.$minor"*/bin/python3."$minor" "$(command -v python3."$minor" 2>/dev/null || true)"; do
      if [ -n "$c" ] && [ -x "$c" ] && "$c" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        echo "$c"; return
      fi
    done
  done
  die "no CPython 3.10-3.13 with venv found (looked in ~/.pyenv/versions and PATH); install one (e.g. $hint) or set $override."
}

python_minor() { # PYTHON -> its major.minor version
  "$1" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")'
}

# Exit status 0 (and the venv on stdout) when $VENV is complete: nothing to install.
venv_cached() {
  [ -f "$VENV/.complete" ] || return 1
  log "cache hit: $VENV"
  echo "$VENV"
}

# A fresh, empty venv at $VENV built with $BASE_PYTHON.
venv_create() {
  rm -rf "$VENV"
  mkdir -p "$CACHE_ROOT"
  "$BASE_PYTHON" -m venv "$VENV"
}

# Records what was installed and marks the venv complete; $1: when the install began (date +%s).
venv_seal() {
  "$VENV/bin/python" -m pip freeze --all > "$VENV/freeze.txt"
  touch "$VENV/.complete"
  log "installed in $(( $(date +%s) - $1 )) s, $(du -sh "$VENV" | cut -f1): $VENV"
  echo "$VENV"
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

# Waits until the server just started answers /health, then warms it up; stops it and dies when it
# exits first, does not answer within START_TIMEOUT or fails the warm-up. Records both durations
# in the state file and prints the URL.
# $1: the server's name for messages; $2: the variable that sets START_TIMEOUT; $3: its PID;
# $4: its URL; $5: its log; $6: when it was started (date +%s.%N); the rest: warm_up.py and its
# arguments after the URL.
await_and_warm_up() {
  local server="$1" timeout_var="$2" pid="$3" url="$4" log_file="$5" t0="$6"
  local warm_up="$7"
  shift 7
  local deadline=$(( $(date +%s) + START_TIMEOUT ))
  until healthy "$url"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$log_file" >&2
      rm -f "$STATE_DIR/env"
      die "$server exited before /health answered (log above, full log $log_file)"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 30 "$log_file" >&2
      down >/dev/null 2>&1 || true
      die "$server did not answer /health within ${START_TIMEOUT} s ($timeout_var); stopped it"
    fi
    sleep 0.5
  done
  local t1 t2
  t1=$(date +%s.%N)
  if ! "$VENV/bin/python" "$warm_up" "$url" "$@" >&2; then
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
