#!/usr/bin/env bash
# A Kind cluster for `make e2e-kind` and `make demo-kind`, on the project's own dockerd or the
# user's.
#
#   e2e/scripts/kind-cluster.sh up [--load TAR]...   create the cluster, `kind load image-archive`
#                                                    each TAR; prints the kubeconfig path
#   e2e/scripts/kind-cluster.sh down                 delete it and restore the host
#   e2e/scripts/kind-cluster.sh status
#
# Docker: when no dockerd answers (DOCKER_HOST or /var/run/docker.sock), `up` starts the project's
# own: Debian's dockerd 20.10 with its own data-root (/var/lib/inferencebench/docker, kept: the node
# image stays loaded), exec-root, pidfile and socket under /run/inferencebench-docker, no docker0
# bridge, no iptables rules, IP forwarding left as it is, and the OCI runtime wrapper of
# provision-kind.sh as its default runtime. `down` stops it again.
# Node image: the offline one of provision-kind.sh, or IB_KIND_NODE_IMAGE (e.g. kindest/node:v1.34.0
# where it can be pulled). With the offline image the kind config disables kind's default CNI
# (the image brings a bridge conflist), runs kubelet with the cgroupfs driver, names the etcd and
# CoreDNS tags the image holds, and `up` takes the upstream forwarder out of CoreDNS' Corefile.
# Host state: kubelet in the node writes host-wide sysctls (vm.overcommit_memory, kernel.panic,
# kernel.panic_on_oops); `up` records them with e2e/scripts/host-state.sh and `down` restores them,
# removes the route to the Service range, the kind network, the cgroups and directories it made,
# and prints what still differs. The host reaches ClusterIPs through a route via the node.
# State, logs, kubeconfig: $IB_KIND_DIR (default /tmp/inferencebench-kind). Cluster name:
# $IB_KIND_CLUSTER (default inferencebench). Needs root. Run it under the E2E lock
# (flock /tmp/inferencebench-e2e.lock ...) when others share the machine.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE="${IB_KIND_DIR:-/tmp/inferencebench-kind}"
NAME="${IB_KIND_CLUSTER:-inferencebench}"
SERVICE_SUBNET="${IB_KIND_SERVICE_SUBNET:-10.96.0.0/16}"
POD_SUBNET="10.244.0.0/16"
DOCKER_DATA="${IB_DOCKER_DATA_ROOT:-/var/lib/inferencebench/docker}"
DOCKER_RUN=/run/inferencebench-docker
DOCKER_SOCK="$DOCKER_RUN.sock"
NETWORK_BRIDGE=ib-kind0
# sysctls kubelet writes host-wide from inside the node container
KUBELET_SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"

log() { echo "[kind-cluster] $*" >&2; }
die() { log "$*"; exit 1; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

[ "$(id -u)" = 0 ] || die "needs root: Docker and the privileged node container run as root"

# the kind/docker environment of this state dir (written by `up`)
load_env() {
  [ -f "$STATE/env" ] || return 1
  # shellcheck disable=SC1091
  . "$STATE/env"
  export PATH DOCKER_HOST
}

docker_answers() { timeout 10 docker info >/dev/null 2>&1; }

start_dockerd() {
  local wrapper=$1
  mkdir -p "$DOCKER_DATA" "$DOCKER_RUN" "$STATE/bin"
  # the CLI of the same release as the daemon (another docker on PATH may be newer)
  ln -sf "$(dirname "$(command -v dockerd)")/../bin/docker" "$STATE/bin/docker" 2>/dev/null || true
  [ -x "$STATE/bin/docker" ] || ln -sf /usr/bin/docker "$STATE/bin/docker"
  cat >"$STATE/daemon.json" <<JSON
{
  "data-root": "$DOCKER_DATA",
  "exec-root": "$DOCKER_RUN",
  "pidfile": "$DOCKER_RUN/dockerd.pid",
  "hosts": ["unix://$DOCKER_SOCK"],
  "storage-driver": "overlay2",
  "exec-opts": ["native.cgroupdriver=cgroupfs"],
  "cgroup-parent": "/inferencebench-docker",
  "bridge": "none",
  "iptables": false,
  "ip-forward": false,
  "ip-masq": false,
  "oom-score-adjust": 0,
  "default-runtime": "ib-runc",
  "runtimes": {"ib-runc": {"path": "$wrapper"}},
  "features": {"buildkit": false}
}
JSON
  log "starting dockerd (data-root $DOCKER_DATA, socket $DOCKER_SOCK, log $STATE/dockerd.log)"
  local t; t=$(date +%s%N)
  # Without the descriptors this shell inherited: one of them may hold the E2E lock (flock), and
  # a daemon keeping it would hold the machine's cluster lock until it stops.
  (
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
    done
    exec setsid nohup dockerd --config-file "$STATE/daemon.json" >"$STATE/dockerd.log" 2>&1 </dev/null
  ) &
  echo $! >"$STATE/dockerd.pid"
  for _ in $(seq 1 300); do
    DOCKER_HOST="unix://$DOCKER_SOCK" "$STATE/bin/docker" info >/dev/null 2>&1 && break
    kill -0 "$(cat "$STATE/dockerd.pid")" 2>/dev/null || { tail -20 "$STATE/dockerd.log" >&2; die "dockerd exited"; }
    sleep 0.1
  done
  DOCKER_HOST="unix://$DOCKER_SOCK" "$STATE/bin/docker" info >/dev/null 2>&1 || die "dockerd did not answer in 30 s ($STATE/dockerd.log)"
  log "dockerd up in $(ms_since "$t") ms"
}

stop_dockerd() {
  [ -f "$STATE/dockerd.pid" ] || return 0
  local pid; pid=$(cat "$STATE/dockerd.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      log "dockerd $pid did not stop in 60 s; killing it"
      kill -KILL "$pid"
      sleep 1
    fi
  fi
  # mounts a killed dockerd could not undo
  awk -v d="$DOCKER_DATA" -v r="$DOCKER_RUN" 'index($2, d) == 1 || index($2, r) == 1 {print $2}' /proc/self/mounts \
    | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -f "$STATE/dockerd.pid" "$DOCKER_SOCK"
  # what dockerd leaves behind: its exec-root and the (now empty) cgroup parent of its containers
  rm -rf "$DOCKER_RUN"
  for d in /sys/fs/cgroup/*/inferencebench-docker /sys/fs/cgroup/inferencebench-docker; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
}

kind_config() { # offline(0/1) podLogsDir
  cat <<YAML
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
name: $NAME
networking:
  podSubnet: "$POD_SUBNET"
  serviceSubnet: "$SERVICE_SUBNET"
YAML
  [ "$1" = 1 ] && echo "  disableDefaultCNI: true"
  cat <<YAML
nodes:
- role: control-plane
  extraMounts:
  # the container logs kubelet writes, readable on the host (the E2E suite checks them)
  - hostPath: $2
    containerPath: /var/log/pods
YAML
  if [ "$1" = 1 ]; then
    cat <<YAML
kubeadmConfigPatches:
- |
  kind: ClusterConfiguration
  etcd:
    local:
      imageTag: "$ETCD_VERSION"
  dns:
    imageTag: "v$COREDNS_VERSION"
- |
  kind: KubeletConfiguration
  cgroupDriver: cgroupfs
YAML
  fi
}

up() {
  local loads=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --load) [ $# -ge 2 ] || die "--load needs an image tarball"
              [ -f "$2" ] || die "image tarball $2 not found (make images)"
              loads+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
      *) die "unknown option '$1' (allowed: --load TAR)" ;;
    esac
  done
  if [ -f "$STATE/ready" ] && load_env && "$KIND" get clusters 2>/dev/null | grep -qx "$NAME"; then
    log "already running: cluster $NAME"
    echo "$STATE/kubeconfig"
    return 0
  fi
  mkdir -p "$STATE"
  rm -f "$STATE/ready"
  local t0; t0=$(date +%s%N)

  # host state first, so that `down` can restore and compare. A record left by an earlier `up`
  # is kept only while that up's dockerd still runs (its cluster is still there to tear down);
  # otherwise it is stale (an interrupted run whose `down` never came) and is taken again.
  if [ -f "$STATE/host-before" ] && ! kill -0 "$(cat "$DOCKER_RUN/dockerd.pid" 2>/dev/null)" 2>/dev/null; then
    mv "$STATE/host-before" "$STATE/host-before.stale"
  fi
  if [ ! -f "$STATE/host-before" ]; then
    "$ROOT/e2e/scripts/host-state.sh" >"$STATE/host-before" 2>/dev/null || true
    : >"$STATE/sysctls-before"
    for s in $KUBELET_SYSCTLS; do
      f=/proc/sys/${s//.//}; [ -e "$f" ] && echo "$s=$(cat "$f")" >>"$STATE/sysctls-before"
    done
    [ -e /lib/modules ] || touch "$STATE/created-lib-modules"
    # containerd 1.6's shims put their sockets in /run/containerd/s whatever its state dir
    [ -e /run/containerd ] || touch "$STATE/created-run-containerd"
  fi

  local parts
  parts=$("$ROOT/e2e/scripts/provision-kind.sh" 2>>"$STATE/provision.log") \
    || { tail -30 "$STATE/provision.log" >&2; die "provision-kind.sh failed (log $STATE/provision.log)"; }
  local t_prov; t_prov=$(ms_since "$t0")
  KIND=$(sed -n 's/^KIND=//p' <<<"$parts")
  local wrapper image image_tar offline
  wrapper=$(sed -n 's/^RUNTIME_WRAPPER=//p' <<<"$parts")
  image=$(sed -n 's/^NODE_IMAGE=//p' <<<"$parts")
  image_tar=$(sed -n 's/^NODE_IMAGE_TAR=//p' <<<"$parts")
  offline=$(sed -n 's/^NODE_IMAGE_OFFLINE=//p' <<<"$parts")
  ETCD_VERSION=$(sed -n 's/^ETCD_VERSION=//p' <<<"$parts")
  COREDNS_VERSION=$(sed -n 's/^COREDNS_VERSION=//p' <<<"$parts")

  local own_docker=0
  if [ -z "${DOCKER_HOST:-}" ] && ! docker_answers; then
    own_docker=1
    start_dockerd "$wrapper"
    PATH="$STATE/bin:$PATH"
    DOCKER_HOST="unix://$DOCKER_SOCK"
  fi
  export PATH DOCKER_HOST="${DOCKER_HOST:-}"
  [ -n "$DOCKER_HOST" ] || unset DOCKER_HOST
  { echo "KIND=$KIND"; echo "PATH=\"$PATH\""; echo "DOCKER_HOST=${DOCKER_HOST:-}"; echo "OWN_DOCKER=$own_docker"; } >"$STATE/env"

  local t_load_node=0
  if [ -n "$image_tar" ] && ! docker image inspect "$image" >/dev/null 2>&1; then
    local t; t=$(date +%s%N)
    log "docker load -i $image_tar"
    docker load -i "$image_tar" >/dev/null
    t_load_node=$(ms_since "$t")
  fi
  if [ "$own_docker" = 1 ] && ! docker network inspect kind >/dev/null 2>&1; then
    # IPv4 only, a bridge name that says whose it is; kind takes an existing "kind" network
    docker network create -d bridge -o com.docker.network.bridge.name=$NETWORK_BRIDGE \
      -o com.docker.network.bridge.enable_ip_masquerade=false kind >/dev/null
  fi

  local logs="$STATE/pod-logs"
  mkdir -p "$logs"
  kind_config "$offline" "$logs" >"$STATE/kind-config.yaml"
  log "kind create cluster --name $NAME --image $image"
  local t; t=$(date +%s%N)
  "$KIND" create cluster --name "$NAME" --image "$image" --config "$STATE/kind-config.yaml" \
    --kubeconfig "$STATE/kubeconfig" --wait 5m >"$STATE/kind-create.log" 2>&1 \
    || { tail -30 "$STATE/kind-create.log" >&2; die "kind create cluster failed (log $STATE/kind-create.log)"; }
  local t_create; t_create=$(ms_since "$t")
  local node="$NAME-control-plane"
  local node_ip; node_ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$node")
  local kubectl=(docker exec -i "$node" kubectl --kubeconfig=/etc/kubernetes/admin.conf)

  if [ "$offline" = 1 ]; then
    # the machine's network is closed: CoreDNS answers for the cluster only
    "${kubectl[@]}" -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}' >"$STATE/Corefile.kubeadm"
    awk '/^ *forward \. /{ if ($0 ~ /[{] *$/) skip=1; next } skip && /^ *}/ { skip=0; next } !skip' "$STATE/Corefile.kubeadm" >"$STATE/Corefile"
    "${kubectl[@]}" -n kube-system create configmap coredns --from-file=Corefile=/dev/stdin \
      --dry-run=client -o yaml <"$STATE/Corefile" | "${kubectl[@]}" apply -f - >/dev/null 2>&1
    "${kubectl[@]}" -n kube-system rollout restart deploy/coredns >/dev/null
  fi

  # the host reaches Services (ClusterIPs) through the node, as on a node of its own
  ip route replace "$SERVICE_SUBNET" via "$node_ip"
  echo "$SERVICE_SUBNET via $node_ip" >"$STATE/route"

  local t_images=0 loaded=()
  for tar in "${loads[@]}"; do
    t=$(date +%s%N)
    "$KIND" load image-archive "$tar" --name "$NAME" >>"$STATE/kind-load.log" 2>&1 \
      || { tail -10 "$STATE/kind-load.log" >&2; die "kind load image-archive $tar failed"; }
    t_images=$(( t_images + $(ms_since "$t") ))
    loaded+=("$(basename "$tar")")
  done
  [ "$offline" = 1 ] && "${kubectl[@]}" -n kube-system rollout status deploy/coredns --timeout=180s >/dev/null

  cat >"$STATE/ready" <<EOF
name=$NAME
kubeconfig=$STATE/kubeconfig
node=$node
node_ip=$node_ip
node_image=$image
pod_logs=$logs
provision_ms=$t_prov
node_image_load_ms=$t_load_node
create_ms=$t_create
image_load_ms=$t_images
imported=${loaded[*]:-}
startup_ms=$(ms_since "$t0")
EOF
  log "cluster $NAME up in $(ms_since "$t0") ms: provision ${t_prov} ms, node image load ${t_load_node} ms, kind create ${t_create} ms, kind load ${t_images} ms (${loaded[*]:-no images})"
  echo "$STATE/kubeconfig"
}

down() {
  if load_env; then
    if "$KIND" get clusters 2>/dev/null | grep -qx "$NAME"; then
      local t; t=$(date +%s%N)
      "$KIND" delete cluster --name "$NAME" --kubeconfig "$STATE/kubeconfig" >/dev/null 2>&1 || log "kind delete cluster failed"
      log "kind delete cluster in $(ms_since "$t") ms"
    fi
    if [ "${OWN_DOCKER:-0}" = 1 ]; then
      docker network rm kind >/dev/null 2>&1 || true
      stop_dockerd
    fi
  fi
  if [ -f "$STATE/route" ]; then
    ip route del "$(cut -d' ' -f1 "$STATE/route")" 2>/dev/null || true
    rm -f "$STATE/route"
  fi
  if [ -f "$STATE/sysctls-before" ]; then
    while IFS='=' read -r s v; do
      f=/proc/sys/${s//.//}
      [ "$(cat "$f")" = "$v" ] || { echo "$v" >"$f" && log "restored $s = $v"; }
    done <"$STATE/sysctls-before"
  fi
  if [ -f "$STATE/created-run-containerd" ]; then
    rmdir /run/containerd/s /run/containerd 2>/dev/null || true
    rm -f "$STATE/created-run-containerd"
  fi
  # docker creates a missing bind-mount source: kind mounts /lib/modules
  if [ -f "$STATE/created-lib-modules" ]; then
    rmdir /lib/modules 2>/dev/null || true
    rm -f "$STATE/created-lib-modules"
  fi
  rm -rf "$STATE/pod-logs" "$STATE/ready" "$STATE/env"
  if [ -f "$STATE/host-before" ]; then
    "$ROOT/e2e/scripts/host-state.sh" >"$STATE/host-after" 2>/dev/null || true
    if diff -q "$STATE/host-before" "$STATE/host-after" >/dev/null; then
      log "host state as before (sysctls, links, netns, nft/iptables, mounts)"
    else
      log "host state differs from before the cluster (other programs may have changed it too):"
      diff "$STATE/host-before" "$STATE/host-after" | sed 's/^/    /' | head -40 >&2
    fi
    mv "$STATE/host-before" "$STATE/host-before.last"
  fi
}

status() {
  if [ -f "$STATE/ready" ] && load_env && "$KIND" get clusters 2>/dev/null | grep -qx "$NAME"; then
    echo "running"
    cat "$STATE/ready"
    return 0
  fi
  echo "stopped"
  return 3
}

# sourced (tests of single steps): the functions only
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up [--load TAR]... | down | status" >&2; exit 2 ;;
esac
