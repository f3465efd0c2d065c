#!/usr/bin/env bash
# Provides kube-apiserver, kubectl, kube-controller-manager, kube-scheduler and etcd in the
# fabric8 kube-api-test cache layout: ~/.kubeapitest/k8s/<version>-linux-amd64/.
# Order: cache hit -> official release download (when reachable) -> build from the Go module proxy.
# Idempotent and keyed by version; prints what it did and how long it took.
set -euo pipefail

K8S_VERSION="${IB_K8S_VERSION:-1.34.4}"
ETCD_VERSION="${IB_ETCD_VERSION:-3.6.16}"
CACHE_ROOT="${IB_KUBEAPITEST_DIR:-$HOME/.kubeapitest}"
DEST="$CACHE_ROOT/k8s/${K8S_VERSION}-linux-amd64"
BUILD_ROOT="${IB_BUILD_DIR:-$CACHE_ROOT/build}"
BINARIES=(kube-apiserver kubectl kube-controller-manager kube-scheduler)
START=$(date +%s)

log() { echo "[provision-k8s] $*" >&2; }
# shellcheck source=k8s-build-lib.sh
. "$(dirname "$0")/k8s-build-lib.sh"
elapsed() { echo "$(( $(date +%s) - START ))s"; }

have_all() {
  for b in "${BINARIES[@]}" etcd; do [ -x "$DEST/$b" ] || return 1; done
  [ -f "$DEST/.complete" ] || return 1
}

if have_all; then
  log "cache hit: Kubernetes v$K8S_VERSION + etcd v$ETCD_VERSION in $DEST ($(elapsed))"
  echo "$DEST"
  exit 0
fi
mkdir -p "$DEST"

try_download() {
  [ "${IB_K8S_NO_DOWNLOAD:-}" = "1" ] && return 1
  local base="https://dl.k8s.io/release/v${K8S_VERSION}/bin/linux/amd64"
  curl -fsI --max-time 5 "$base/kubectl" >/dev/null 2>&1 || return 1
  log "release site reachable: downloading official binaries"
  for b in "${BINARIES[@]}"; do
    curl -fsSL --max-time 600 -o "$DEST/$b" "$base/$b" && chmod +x "$DEST/$b" || return 1
  done
  local etcd_tgz="https://github.com/etcd-io/etcd/releases/download/v${ETCD_VERSION}/etcd-v${ETCD_VERSION}-linux-amd64.tar.gz"
  curl -fsSL --max-time 600 "$etcd_tgz" | tar -xz -C "$DEST" --strip-components=1 "etcd-v${ETCD_VERSION}-linux-amd64/etcd" || return 1
  return 0
}

build_kubernetes() {
  log "building Kubernetes v$K8S_VERSION from the Go module proxy in $(k8s_build_dir) (cold: 10-20 min on 2 cores)"
  k8s_build "$DEST" kube-apiserver kube-controller-manager kube-scheduler kubectl
}

build_etcd() {
  local dir="$BUILD_ROOT/etcd-$ETCD_VERSION"
  mkdir -p "$dir"
  log "building etcd v$ETCD_VERSION from the Go module proxy in $dir"
  ( cd "$dir"
    cat > go.mod <<MOD
module inferencebench.local/etcd-build

go 1.24

require go.etcd.io/etcd/server/v3 v$ETCD_VERSION
MOD
    cat > tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
    go mod tidy >/dev/null 2>&1 || go mod tidy
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$DEST/etcd" go.etcd.io/etcd/server/v3
  )
}

if try_download; then
  how="downloaded"
else
  log "release site not reachable (or IB_K8S_NO_DOWNLOAD=1): building from source modules"
  [ -x "$DEST/etcd" ] || build_etcd
  build_kubernetes
  how="built"
fi
"$DEST/kube-apiserver" --version >&2
# sed, not head: head exits after one line and etcd dies of SIGPIPE, failing under pipefail.
"$DEST/etcd" --version | sed -n 1p >&2
touch "$DEST/.complete"
log "$how Kubernetes v$K8S_VERSION + etcd v$ETCD_VERSION into $DEST in $(elapsed)"
echo "$DEST"
