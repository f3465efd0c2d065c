#!/usr/bin/env bash
# Local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)
# plus the local node agent, in the background, for manual use.
#
#   e2e/scripts/control-plane.sh up [--image-map FILE]   start (or reuse); prints the kubeconfig path
#   e2e/scripts/control-plane.sh status                   running? (exit 0) or stopped (exit 3)
#   e2e/scripts/control-plane.sh down                     stop everything (process trees, network)
#
# Then: export KUBECONFIG=$(e2e/scripts/control-plane.sh up); kubectl get nodes
# State, logs and kubeconfig live in $IB_CONTROL_PLANE_DIR (default /tmp/inferencebench-control-plane).
# Image map file lines: "image-or-prefix* = command args..." (see ImageMap). IB_RUNNER_JAR and
# IB_MODEL_SIM add the runner and simulator images. Needs root (pods get network namespaces).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE="${IB_CONTROL_PLANE_DIR:-/tmp/inferencebench-control-plane}"
PID_FILE="$STATE/pid"

log() { echo "[control-plane] $*" >&2; }

java_bin() {
  local candidate
  for candidate in "${JAVA_HOME:-}/bin/java" "$(command -v java || true)"; do
    [ -x "$candidate" ] || continue
    local major
    major=$("$candidate" -XshowSettings:properties -version 2>&1 | sed -n 's/ *java.specification.version = //p')
    if [ "${major%%.*}" -ge 21 ] 2>/dev/null; then echo "$candidate"; return 0; fi
  done
  log "needs a JDK >= 21 (set JAVA_HOME)"; exit 1
}

running_pid() {
  [ -f "$PID_FILE" ] || return 1
  local pid; pid=$(cat "$PID_FILE")
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

classpath() {
  local cp_file="$STATE/classpath"
  local classes="$ROOT/testkit/target/classes/io/inferencebench/testkit/ControlPlaneMain.class"
  # Reuse the last build while no testkit source or pom is newer than it.
  if [ -s "$cp_file" ] && [ -f "$classes" ] \
     && [ -z "$(find "$ROOT/testkit/src/main" "$ROOT/testkit/pom.xml" "$ROOT/pom.xml" -newer "$classes" -print -quit)" ]; then
    echo "$ROOT/testkit/target/classes:$(cat "$cp_file")"
    return 0
  fi
  ( cd "$ROOT"
    if ! ./mvnw -B -q -o -pl testkit -am install -DskipTests >"$STATE/build.log" 2>&1; then
      ./mvnw -B -q -pl testkit -am install -DskipTests >"$STATE/build.log" 2>&1 \
        || { log "build failed, see $STATE/build.log"; tail -20 "$STATE/build.log" >&2; exit 1; }
    fi
    ./mvnw -B -q -o -pl testkit dependency:build-classpath -Dmdep.outputFile="$cp_file" >>"$STATE/build.log" 2>&1 \
      || ./mvnw -B -q -pl testkit dependency:build-classpath -Dmdep.outputFile="$cp_file" >>"$STATE/build.log" 2>&1 \
      || { log "cannot resolve the classpath, see $STATE/build.log"; exit 1; }
  )
  echo "$ROOT/testkit/target/classes:$(cat "$cp_file")"
}

up() {
  local image_map=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --image-map) [ $# -ge 2 ] || { log "--image-map needs a file"; exit 2; }
                   image_map=(--image-map "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
      *) log "unknown option '$1' (allowed: --image-map FILE)"; exit 2 ;;
    esac
  done
  if pid=$(running_pid); then
    log "already running (pid $pid)"
    echo "$STATE/kubeconfig"
    return 0
  fi
  [ "$(id -u)" = 0 ] || { log "needs root: pods run in network namespaces"; exit 1; }
  mkdir -p "$STATE"
  rm -rf "$STATE/cluster" "$STATE/node" "$STATE/ready" "$STATE/kubeconfig"
  local start; start=$(date +%s%N)
  local bin_dir; bin_dir=$("$ROOT/e2e/scripts/provision-k8s.sh")
  local java; java=$(java_bin)
  local cp; cp=$(classpath)
  IB_K8S_BIN_DIR="$bin_dir" nohup "$java" -cp "$cp" io.inferencebench.testkit.ControlPlaneMain \
    --dir "$STATE" "${image_map[@]}" >"$STATE/main.log" 2>&1 </dev/null &
  echo $! >"$PID_FILE"
  local pid; pid=$(cat "$PID_FILE")
  for _ in $(seq 1 1800); do
    if [ -f "$STATE/ready" ]; then
      local ms=$(( ($(date +%s%N) - start) / 1000000 ))
      log "up in ${ms} ms (pid $pid); $(grep startup_ms "$STATE/ready" | tr '\n' ' ')"
      log "apiserver $(sed -n 's/^apiserver=//p' "$STATE/ready"), logs in $STATE/cluster/logs, $STATE/main.log"
      echo "$STATE/kubeconfig"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      log "failed to start; last lines of $STATE/main.log:"
      tail -40 "$STATE/main.log" >&2
      rm -f "$PID_FILE"
      exit 1
    fi
    sleep 0.1
  done
  log "not ready after 180 s; stopping"
  down
  exit 1
}

down() {
  local pid
  if ! pid=$(running_pid); then
    log "not running"
    rm -f "$PID_FILE"
    return 0
  fi
  kill -TERM "$pid"
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE" "$STATE/ready"; log "stopped (pid $pid)"; return 0; }
    sleep 0.1
  done
  log "pid $pid did not stop in 30 s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$PID_FILE" "$STATE/ready"
}

status() {
  local pid
  if pid=$(running_pid) && [ -f "$STATE/ready" ]; then
    echo "running (pid $pid)"
    cat "$STATE/ready"
    local kubectl; kubectl="$(sed -n 's/^kubectl=//p' "$STATE/ready")"
    [ -x "$kubectl" ] && "$kubectl" --kubeconfig "$STATE/kubeconfig" get nodes 2>&1 || true
    return 0
  elif pid=$(running_pid); then
    echo "starting (pid $pid)"
    return 0
  fi
  echo "stopped"
  return 3
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up [--image-map FILE] | down | status" >&2; exit 2 ;;
esac
