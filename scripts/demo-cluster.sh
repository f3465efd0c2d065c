#!/usr/bin/env bash
# `make demo`: the product on a real single-node cluster, from nothing to LPG profiles.
#
#  1. checks the prerequisites that no script can install (root, Go, a JDK >= 21) and stops at once
#     naming a missing one;
#  2. provisions what is not cached: the host's Debian packages that are missing (jq, curl,
#     python3, gcc, iproute2, nftables, iptables, ...: e2e/scripts/provision-host-packages.sh),
#     control-plane binaries, Helm, the node's parts (kubelet, kube-proxy, containerd, CoreDNS,
#     pause image), the operator/runner/model-sim image tarballs;
#  3. starts the control plane plus a real kubelet + containerd node (e2e/scripts/control-plane.sh
#     up --real-node) and imports the images into the node's containerd;
#  4. installs the chart with Helm (the operator as a Deployment with its own ServiceAccount,
#     in-cluster config, probes; runner RBAC in the demo namespace), deploys the simulator
#     (model-sim image) as a Deployment + Service, applies config/samples/model-sim-sweep.yaml;
#  5. prints progress while the run goes (phase, stage i/n, requests done, rate), then
#     `kubectl get benchmarkruns -o wide`, a per-stage table and the profiles it copied from the
#     output ConfigMap into ./results/ (or $RESULT_DIR);
#  6. shuts everything down and restores the host state. KEEP=1 leaves the cluster running and
#     prints the kubeconfig path and commands to try; `e2e/scripts/control-plane.sh down` stops it.
#
# `--kind` (`make demo-kind`): steps 2, 3 and 6 on a Kind cluster instead (e2e/scripts/kind-cluster.sh:
# Docker, kind, the offline node image unless IB_KIND_NODE_IMAGE names one; the images go in with
# `kind load image-archive`); the rest is the same.
#
# Environment: KEEP=1, RESULT_DIR (default results), IB_MAVEN_ARGS (extra Maven arguments),
# E2E_LOCK (default /tmp/inferencebench-e2e.lock: one cluster per machine, shared with the E2E runs).
set -euo pipefail

ON_KIND=0
for arg in "$@"; do
  case "$arg" in
    --kind) ON_KIND=1 ;;
    *) echo "demo: unknown option '$arg' (allowed: --kind)" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
T0=$(date +%s)
log() { printf '[demo %4ss] %s\n' "$(($(date +%s) - T0))" "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

# ---- 1. prerequisites -------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || die "needs root: the node runs containerd, kubelet and a network bridge (run: sudo make demo)"
command -v go >/dev/null 2>&1 || die "needs Go (the control-plane binaries, kubelet, Helm and the simulator are built from source); install Go >= 1.24"
JAVA_HOME="$(scripts/java-home.sh 2>/dev/null)" || die "needs a JDK >= 21 (set JAVA_HOME or install one, e.g. apt-get install openjdk-21-jdk-headless)"
export JAVA_HOME
RESULT_DIR="${RESULT_DIR:-results}"
NS=demo
SYSTEM=inferencebench-system
RUN=model-sim-sweep
STATE="${IB_CONTROL_PLANE_DIR:-/tmp/inferencebench-control-plane}"
export IB_CONTROL_PLANE_DIR="$STATE"
CLUSTER_SCRIPT=e2e/scripts/control-plane.sh
if [ "$ON_KIND" = 1 ]; then
  STATE="${IB_KIND_DIR:-/tmp/inferencebench-kind}"
  CLUSTER_SCRIPT=e2e/scripts/kind-cluster.sh
fi

# jq (the stage table), curl, python3, gcc, iproute2, nftables, iptables, containerd, ...: the
# Debian packages of what is missing (e2e/scripts/provision-host-packages.sh lists them), before
# waiting for the lock, so that a missing package fails the demo at once.
log "host packages: installing what is missing"
e2e/scripts/provision-host-packages.sh || die "e2e/scripts/provision-host-packages.sh failed"

# One cluster per machine: hold the E2E lock for the demo's whole life (KEEP=1: until it returns).
LOCK="${E2E_LOCK:-/tmp/inferencebench-e2e.lock}"
if command -v flock >/dev/null 2>&1 && [ -z "${IB_DEMO_LOCKED:-}" ]; then
  exec 9>"$LOCK"
  if ! flock -n 9; then
    log "waiting for $LOCK (another cluster run holds it)"
    flock 9
  fi
fi

# ---- 2. provisioning (cached) -----------------------------------------------------------------
mkdir -p "$STATE"
PLOG="$STATE/provision.log"
: >"$PLOG"
provision() { "$@" 2>>"$PLOG" || { tail -30 "$PLOG" >&2; die "$1 failed (log: $PLOG)"; }; }
log "provisioning: control-plane binaries, Helm, node parts (cached after the first run; log $PLOG)"
K8S_BIN="$(provision e2e/scripts/provision-k8s.sh)"
KUBECTL="$K8S_BIN/kubectl"
[ -x "$KUBECTL" ] || die "kubectl missing in $K8S_BIN (e2e/scripts/provision-k8s.sh builds it)"
HELM="$(provision e2e/scripts/provision-helm.sh)"
if [ "$ON_KIND" = 1 ]; then
  log "provisioning Kind: Docker, kind, the node image (offline build, cached)"
  provision e2e/scripts/provision-kind.sh >/dev/null
else
  provision e2e/scripts/provision-node.sh >/dev/null
fi

pom_property() { sed -n "s|.*<$1>\(.*\)</$1>.*|\1|p" pom.xml | head -1; }
VERSION="$(sed -n '/<artifactId>inferencebench-parent<\/artifactId>/{n;s|.*<version>\(.*\)</version>.*|\1|p}' pom.xml)"
REGISTRY="$(pom_property image.registry)"
IMAGES=()
stale=0
for image in operator runner model-sim; do
  tar="target/images/$(pom_property "image.$image").tar"
  IMAGES+=("$tar")
  [ -f "$tar" ] || stale=1
done
# rebuild when a source of an image is newer than its tarball
if [ "$stale" = 0 ] && [ -n "$(find crds profile runner operator e2e/model-sim pom.xml \
     \( -path '*/target' -prune \) -o -newer "${IMAGES[0]}" -type f \( -name '*.java' -o -name '*.go' \
     -o -name 'pom.xml' -o -name '*.properties' -o -name 'go.mod' \) -print -quit)" ]; then
  stale=1
fi
if [ "$stale" = 1 ]; then
  log "building the images (make images)"
  scripts/images/build-images.sh
else
  log "images up to date in target/images/"
fi
SIM_IMAGE="$REGISTRY/$(pom_property image.model-sim):$VERSION"

# ---- 3. cluster -------------------------------------------------------------------------------
HOST_BEFORE="$(mktemp -t ib-host-before.XXXXXX)"
e2e/scripts/host-state.sh >"$HOST_BEFORE" 2>/dev/null || true
cleanup() {
  local code=$?
  if [ "${KEEP:-}" = 1 ] && [ "$code" = 0 ]; then
    rm -f "$HOST_BEFORE"
    return
  fi
  log "shutting down the cluster and restoring the host state"
  "$CLUSTER_SCRIPT" down >/dev/null 2>&1 || true
  local after; after="$(mktemp -t ib-host-after.XXXXXX)"
  e2e/scripts/host-state.sh >"$after" 2>/dev/null || true
  if diff -q "$HOST_BEFORE" "$after" >/dev/null; then
    log "host state as before (sysctls, links, netns, nft/iptables, mounts)"
  else
    log "host state differs from before the demo (other programs may have changed it too):"
    diff "$HOST_BEFORE" "$after" | sed 's/^/    /' | head -40
  fi
  rm -f "$HOST_BEFORE" "$after"
  log "done in $(($(date +%s) - T0)) s"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$ON_KIND" = 1 ]; then
  log "creating the Kind cluster, loading the images (kind load image-archive)"
  KUBECONFIG="$(e2e/scripts/kind-cluster.sh up \
    --load "${IMAGES[0]}" --load "${IMAGES[1]}" --load "${IMAGES[2]}")"
else
  log "starting the control plane and the real node (kubelet + containerd), importing the images"
  KUBECONFIG="$(e2e/scripts/control-plane.sh up --real-node \
    --import "${IMAGES[0]}" --import "${IMAGES[1]}" --import "${IMAGES[2]}")"
fi
export KUBECONFIG
log "cluster up: $(sed -n 's/^startup_ms=//p' "$STATE/ready") ms (images: $(sed -n 's/^imported=//p' "$STATE/ready"))"
k() { "$KUBECTL" "$@"; }

# ---- 4. install, simulator, run ---------------------------------------------------------------
k create namespace "$SYSTEM" >/dev/null
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $NS
  labels:
    pod-security.kubernetes.io/enforce: restricted
EOF
log "helm install inferencebench charts/inferencebench -n $SYSTEM"
"$HELM" install inferencebench charts/inferencebench -n "$SYSTEM" \
  --set image.pullPolicy=Never --set image.runnerPullPolicy=Never \
  --set "runner.namespaces={$NS}" --wait --timeout 5m >/dev/null
k -n "$SYSTEM" get deploy,sa,pods -l app.kubernetes.io/name=inferencebench -o wide 2>/dev/null \
  || k -n "$SYSTEM" get deploy,pods -o wide
log "simulator $SIM_IMAGE as Deployment + Service model-sim in namespace $NS"
k apply -n "$NS" -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: model-sim, labels: {app: model-sim}}
spec:
  replicas: 1
  selector: {matchLabels: {app: model-sim}}
  template:
    metadata: {labels: {app: model-sim}}
    spec:
      automountServiceAccountToken: false
      securityContext:
        runAsNonRoot: true
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: model-sim
        image: $SIM_IMAGE
        imagePullPolicy: Never
        args: [--model, demo/sim-llama-1b, --port, "8000", --time-to-first-token, "20",
               --inter-token-latency, "5", --max-num-seqs, "256", --max-model-len, "4096"]
        ports: [{name: http, containerPort: 8000}]
        readinessProbe:
          httpGet: {path: /v1/models, port: http}
          periodSeconds: 1
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: "1", memory: 256Mi}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
---
apiVersion: v1
kind: Service
metadata: {name: model-sim}
spec:
  selector: {app: model-sim}
  ports: [{name: http, port: 8000, targetPort: http}]
EOF
k -n "$NS" rollout status deploy/model-sim --timeout=180s >/dev/null
log "applying config/samples/model-sim-sweep.yaml (rates 5, 10, 20 req/s)"
k apply -n "$NS" -f config/samples/model-sim-sweep.yaml >/dev/null

# ---- 5. progress, results ---------------------------------------------------------------------
last=""
phase=""
deadline=$(($(date +%s) + 900))
while :; do
  line="$(k get br "$RUN" -n "$NS" -o jsonpath='{.status.phase}|{.status.stage}|{.status.progress.done}|{.status.summary.rps}|{.status.message}' 2>/dev/null || true)"
  IFS='|' read -r phase stage done rps message <<<"$line"
  if [ "$line" != "$last" ]; then
    printf '[demo %4ss]   %-10s stage %-5s done %-9s rps %-7s %s\n' "$(($(date +%s) - T0))" \
      "${phase:--}" "${stage:--}" "${done:--}" "${rps:--}" "${message:-}"
    last="$line"
  fi
  case "$phase" in Succeeded|Failed|Cancelled) break ;; esac
  [ "$(date +%s)" -lt "$deadline" ] || die "the run did not finish in 15 minutes (phase ${phase:-none})"
  sleep 2
done
echo
k get benchmarkruns -n "$NS" -o wide
echo
JSON="$(k get br "$RUN" -n "$NS" -o json)"
jq -r '
  def n(x): if x == null then "-" else x end;
  (.status.results // [])[] |
  [.stage, n(.requestRate), n(.achievedRate), n(.ttftMs.p50), n(.ttftMs.p99), n(.itlMs.p50),
   n(.latencyMs.p99), n(.outputTokensPerSecond), "\(.completed)/\(.failed)"] | @tsv' <<<"$JSON" \
  | awk -F'\t' 'BEGIN { printf "%-5s %6s %8s %9s %9s %8s %9s %11s %8s\n", "STAGE", "RATE", "ACHIEVED",
        "TTFT P50", "TTFT P99", "ITL P50", "E2E P99", "THROUGHPUT", "OK/FAIL" }
      function f(x) { return x == "-" ? "-" : sprintf("%.2f", x) }
      { printf "%-5s %6s %8s %9s %9s %8s %9s %11s %8s\n", $1, f($2), f($3), f($4), f($5), f($6),
        f($7), f($8), $9 }'
echo "(latencies in ms, rates in req/s, throughput in output tokens/s)"
CM="$(jq -r '.status.profileConfigMap // empty' <<<"$JSON")"
if [ -n "$CM" ]; then
  mkdir -p "$RESULT_DIR"
  echo
  echo "LPG profiles from ConfigMap $NS/$CM:"
  # in stage order (status.results[].profileKey), then any other key of the ConfigMap
  keys="$(jq -r '.status.results // [] | .[].profileKey // empty' <<<"$JSON")"
  all="$(k get cm "$CM" -n "$NS" -o go-template='{{range $k, $v := .data}}{{$k}}{{"\n"}}{{end}}')"
  for key in $(printf '%s\n%s\n' "$keys" "$all" | awk 'NF && !seen[$0]++'); do
    k get cm "$CM" -n "$NS" -o go-template="{{index .data \"$key\"}}" >"$RESULT_DIR/$key"
    echo "  $RESULT_DIR/$key"
  done
fi
[ "$phase" = Succeeded ] || { k describe br "$RUN" -n "$NS" | tail -20; die "the run ended $phase"; }

if [ "${KEEP:-}" = 1 ]; then
  echo
  echo "The cluster keeps running (KEEP=1). kubeconfig: $KUBECONFIG"
  echo "  export KUBECONFIG=$KUBECONFIG; alias kubectl=$KUBECTL"
  echo "  kubectl get benchmarkruns -A -o wide"
  echo "  kubectl -n $SYSTEM logs deploy/inferencebench-operator"
  echo "  kubectl -n $NS get pods,svc,configmaps"
  echo "Stop it and restore the host: $CLUSTER_SCRIPT down"
fi
