#!/usr/bin/env bash
# Local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)
# plus one node, in the background, for manual use and `make demo`.
#
#   e2e/scripts/control-plane.sh up [--import TAR]...
#        the real node (RealNodeMain): kubelet + containerd + kube-proxy + CoreDNS running image
#        tarballs imported with --import (e.g. target/images/*.tar from `make images`);
#        --real-node is accepted and changes nothing (the only node there is)
#   e2e/scripts/control-plane.sh status     running? (exit 0) or stopped (exit 3)
#   e2e/scripts/control-plane.sh down       stop everything; the real node restores the host state
#
# `up` prints the kubeconfig path: export KUBECONFIG=$(e2e/scripts/control-plane.sh up)
# State, logs and kubeconfig live in $IB_CONTROL_PLANE_DIR (default /tmp/inferencebench-control-plane).
# Needs root. The script
# selects a JDK >= 21 itself (JAVA_HOME, java on PATH, else the newest under /usr/lib/jvm).
# IB_MAVEN_ARGS: extra Maven arguments of the testkit build (e.g. -Dmaven.repo.local=...).
# One real node per machine: run it under the same lock as the E2E tests
# (flock /tmp/inferencebench-e2e.lock ...) when others share the machine.
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
  local home
  if home=$(JAVA_HOME= "$ROOT/scripts/java-home.sh" 2>/dev/null); then echo "$home/bin/java"; return 0; fi
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
  local classes="$ROOT/testkit/target/classes/io/inferencebench/testkit/RealNodeMain.class"
  # Reuse the last build while no testkit source or pom is newer than it.
  if [ -s "$cp_file" ] && [ -f "$classes" ] \
     && [ -z "$(find "$ROOT/testkit/src/main" "$ROOT/testkit/pom.xml" "$ROOT/pom.xml" -newer "$classes" -print -quit)" ]; then
    echo "$ROOT/testkit/target/classes:$(cat "$cp_file")"
    return 0
  fi
  local java_home; java_home="$(dirname "$(dirname "$(java_bin)")")"
  # shellcheck disable=SC2086
  ( cd "$ROOT"
    export JAVA_HOME="$java_home"
    if ! ./mvnw -B -q -o ${IB_MAVEN_ARGS:-} -pl testkit -am install -DskipTests >"$STATE/build.log" 2>&1; then
      ./mvnw -B -q ${IB_MAVEN_ARGS:-} -pl testkit -am install -DskipTests >"$STATE/build.log" 2>&1 \
        || { log "build failed, see $STATE/build.log"; tail -20 "$STATE/build.log" >&2; exit 1; }
    fi
    ./mvnw -B -q -o ${IB_MAVEN_ARGS:-} -pl testkit dependency:build-classpath -Dmdep.outputFile="$cp_file" >>"$STATE/build.log" 2>&1 \
      || ./mvnw -B -q ${IB_MAVEN_ARGS:-} -pl testkit dependency:build-classpath -Dmdep.outputFile="$cp_file" >>"$STATE/build.log" 2>&1 \
      || { log "cannot resolve the classpath, see $STATE/build.log"; exit 1; }
  )
  echo "$ROOT/testkit/target/classes:$(cat "$cp_file")"
}

abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

up() {
  local args=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --real-node) shift ;;
      --import) [ $# -ge 2 ] || { log "--import needs an image tarball"; exit 2; }
                [ -f "$2" ] || { log "image tarball $2 not found (make images)"; exit 2; }
                args+=(--import "$(abs "$2")"); shift 2 ;;
      *) log "unknown option '$1' (allowed: --import TAR)"; exit 2 ;;
    esac
  done
  if pid=$(running_pid); then
    log "already running (pid $pid)"
    echo "$STATE/kubeconfig"
    return 0
  fi
  [ "$(id -u)" = 0 ] || { log "needs root: containerd, kubelet and a bridge"; exit 1; }
  mkdir -p "$STATE"
  rm -rf "$STATE/cluster" "$STATE/node" "$STATE/ready" "$STATE/kubeconfig"
  local start; start=$(date +%s%N)
  local bin_dir; bin_dir=$("$ROOT/e2e/scripts/provision-k8s.sh" 2>>"$STATE/provision.log") \
    || { tail -20 "$STATE/provision.log" >&2; log "provision-k8s.sh failed"; exit 1; }
  local java; java=$(java_bin)
  local cp; cp=$(classpath)
  local main=io.inferencebench.testkit.RealNodeMain
  "$ROOT/e2e/scripts/provision-node.sh" >"$STATE/node-parts" 2>>"$STATE/provision.log" \
    || { tail -20 "$STATE/provision.log" >&2; log "provision-node.sh failed"; exit 1; }
  echo real >"$STATE/mode"
  # setsid: the node outlives the shell that started it; `down` signals it by its PID.
  ( cd "$ROOT" && IB_K8S_BIN_DIR="$bin_dir" IB_NODE_PARTS="$STATE/node-parts" exec setsid nohup "$java" \
      -cp "$cp" "$main" --dir "$STATE" "${args[@]}" >"$STATE/main.log" 2>&1 </dev/null ) &
  echo $! >"$PID_FILE"
  local pid; pid=$(cat "$PID_FILE")
  local wait_s=600
  for _ in $(seq 1 $((wait_s * 10))); do
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
  log "not ready after $wait_s s; stopping"
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
  # the real node deletes workloads, stops its parts in order and restores the host: give it time
  local tenths=1800
  for _ in $(seq 1 "$tenths"); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE" "$STATE/ready"; log "stopped (pid $pid)"; return 0; }
    sleep 0.1
  done
  log "pid $pid did not stop in $((tenths / 10)) s; killing it (the next start cleans up what it left)"
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
  *) echo "usage: $0 up [--import TAR]... | down | status" >&2; exit 2 ;;
esac
