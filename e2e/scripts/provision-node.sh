#!/usr/bin/env bash
# Provides what a real Kubernetes node of the project's own single-node cluster needs, on top of
# the control plane of provision-k8s.sh (testkit RealNode starts it):
#   - kubelet and kube-proxy of the same version and build as the control plane (the one wrapper
#     module and ldflags of k8s-build-lib.sh), next to kube-apiserver in
#     ~/.kubeapitest/k8s/<version>-linux-amd64/ (the control-plane binaries are not rebuilt);
#   - containerd, runc and the CNI plugins: Debian's packages (bookworm: containerd 1.6.20,
#     runc 1.1.5, containernetworking-plugins 1.1.1 in /usr/lib/cni) plus nftables, iptables,
#     conntrack and iproute2 for kube-proxy and kubelet (provision-host-packages.sh installs what
#     is missing). Why the packages: they install in seconds, while containerd 2.x from the module
#     proxy needs a wrapper module that copies containerd's own exclude block (~70 s) and runc
#     needs cgo + libseccomp. containerd 1.6 serves CRI v1, which
#     Kubernetes 1.34 runs; 1.6 is end-of-life and Kubernetes 1.35 is the last minor that supports
#     containerd 1.x, so the move to 1.36 needs containerd 2.x (built from the module proxy or a
#     newer distribution package) and a config in containerd 2's "version = 3" layout;
#   - CoreDNS (the version kubeadm of this Kubernetes minor deploys) built from the Go module proxy
#     into ~/.cache/inferencebench/bin/coredns-<version>;
#   - the project's own pause image (e2e/node/pause.c, static) as an image tarball in
#     ~/.cache/inferencebench/images/pause-<hash>.tar, tagged inferencebench.local/pause:<hash>.
# Each part is cached and keyed by version (or source hash) and skipped when present. Prints
# KEY=VALUE lines (paths) on stdout, progress on stderr. Needs root only for apt-get (gcc, libc6-dev
# and python3 for the pause image come from provision-host-packages.sh too).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
K8S_VERSION="${IB_K8S_VERSION:-1.34.4}"
COREDNS_VERSION="${IB_COREDNS_VERSION:-1.12.1}"
CACHE_ROOT="${IB_KUBEAPITEST_DIR:-$HOME/.kubeapitest}"
DEST="$CACHE_ROOT/k8s/${K8S_VERSION}-linux-amd64"
BUILD_ROOT="${IB_BUILD_DIR:-$CACHE_ROOT/build}"
IB_CACHE="${IB_CACHE_DIR:-$HOME/.cache/inferencebench}"
START=$(date +%s)

log() { echo "[provision-node] $*" >&2; }
elapsed() { echo "$(( $(date +%s) - START ))s"; }
die() { log "$*"; exit 1; }
# shellcheck source=k8s-build-lib.sh
. "$HERE/k8s-build-lib.sh"

command -v go >/dev/null 2>&1 || [ -x "$DEST/kubelet" ] || die "Go is missing: kubelet, kube-proxy and CoreDNS are built from the Go module proxy (install Go >= 1.24)"

# --- the control plane first (cache hit in a second) -------------------------------------------
"$HERE/provision-k8s.sh" >/dev/null

# --- kubelet + kube-proxy ----------------------------------------------------------------------
if [ -x "$DEST/kubelet" ] && [ -x "$DEST/kube-proxy" ] && [ -f "$DEST/.node-complete" ]; then
  log "cache hit: kubelet + kube-proxy v$K8S_VERSION in $DEST"
else
  t=$(date +%s)
  log "building kubelet + kube-proxy v$K8S_VERSION in $(k8s_build_dir) (warm Go cache: ~1-2 min; cold: 10+ min)"
  k8s_build "$DEST" kubelet kube-proxy
  for b in kubelet kube-proxy; do
    v=$("$DEST/$b" --version | awk '{print $2}')
    [ "$v" = "v$K8S_VERSION" ] || die "$b reports $v, expected v$K8S_VERSION"
  done
  touch "$DEST/.node-complete"
  log "built kubelet + kube-proxy in $(( $(date +%s) - t ))s"
fi

# --- containerd, runc, CNI plugins, nft/iptables/conntrack, gcc, python3 (Debian packages) ------
# (skipped when present; the pause image below needs gcc with a static libc and python3)
"$HERE/provision-host-packages.sh" containerd runc cni nft iptables conntrack ip gcc python3
log "runtime: containerd $(containerd --version | awk '{print $3}'), runc $(runc --version | sed -n 's/^runc version //p'), CNI plugins in /usr/lib/cni"

# --- CoreDNS -----------------------------------------------------------------------------------
COREDNS="$IB_CACHE/bin/coredns-$COREDNS_VERSION"
if [ -x "$COREDNS" ]; then
  log "cache hit: $COREDNS"
else
  t=$(date +%s)
  log "building CoreDNS v$COREDNS_VERSION from the Go module proxy (~2-3 min)"
  mkdir -p "$IB_CACHE/bin"
  tmp=$(mktemp -d)
  GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@v$COREDNS_VERSION"
  mv "$tmp/coredns" "$COREDNS"
  rmdir "$tmp"
  log "built CoreDNS in $(( $(date +%s) - t ))s"
fi

# --- pause image -------------------------------------------------------------------------------
PAUSE_HASH=$(sha256sum "$ROOT/e2e/node/pause.c" "$ROOT/scripts/images/image-tar.py" | sha256sum | cut -c1-12)
PAUSE_TAR="$IB_CACHE/images/pause-$PAUSE_HASH.tar"
PAUSE_REF="inferencebench.local/pause:$PAUSE_HASH"
if [ -f "$PAUSE_TAR" ]; then
  log "cache hit: $PAUSE_TAR"
else
  mkdir -p "$IB_CACHE/images"
  tmp=$(mktemp -d)
  mkdir -p "$tmp/rootfs"
  gcc -static -Os -s -o "$tmp/rootfs/pause" "$ROOT/e2e/node/pause.c"
  python3 "$ROOT/scripts/images/image-tar.py" --out "$tmp/pause.tar" --tag "$PAUSE_REF" \
    --config '{"Entrypoint":["/pause"],"User":"65535:65535","WorkingDir":"/"}' \
    --layer "$tmp/rootfs" --history "inferencebench pause (static, e2e/node/pause.c)" >&2
  mv "$tmp/pause.tar" "$PAUSE_TAR"
  rm -rf "$tmp"
fi

log "node parts ready in $(elapsed)"
echo "K8S_BIN=$DEST"
echo "COREDNS=$COREDNS"
echo "PAUSE_TAR=$PAUSE_TAR"
echo "PAUSE_REF=$PAUSE_REF"
