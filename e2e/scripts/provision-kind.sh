#!/usr/bin/env bash
# Provides what `make e2e-kind` / `make demo-kind` need for a Kind cluster, each part cached and
# keyed by version (or by the hash of its sources) and skipped when present:
#   - Docker: Debian's docker.io when dockerd is missing (its service is not started);
#   - kind v$IB_KIND_VERSION built from the Go module proxy into ~/.cache/inferencebench/bin;
#   - the OCI runtime wrapper e2e/kind/oci-runtime-wrapper, installed with the path of the real
#     runc: registered as the project dockerd's default runtime, it fits --privileged containers to
#     hosts whose bounding set lacks capabilities (CAP_SYS_RESOURCE here);
#   - the node image, built offline from the project's own builds unless IB_KIND_NODE_IMAGE names
#     one to use (e.g. a pullable kindest/node): a systemd Debian rootfs (debootstrap) with
#     containerd, runc and the CNI plugins (Debian packages), kubeadm/kubelet/kubectl of the
#     control plane's version and build, the project's entrypoint and units (e2e/kind/), and the
#     kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, etcd, CoreDNS and pause
#     images (scripts/images/image-tar.py) that the node imports into containerd at boot.
# Prints KEY=VALUE lines on stdout (KIND, RUNTIME_WRAPPER, NODE_IMAGE, NODE_IMAGE_TAR,
# NODE_IMAGE_OFFLINE), progress on stderr. Needs root (apt-get, debootstrap), Go, python3.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KIND_VERSION="${IB_KIND_VERSION:-0.30.0}"
K8S_VERSION="${IB_K8S_VERSION:-1.34.4}"
SUITE="${IB_DEBIAN_SUITE:-bookworm}"
CACHE_ROOT="${IB_KUBEAPITEST_DIR:-$HOME/.kubeapitest}"
DEST="$CACHE_ROOT/k8s/${K8S_VERSION}-linux-amd64"
BUILD_ROOT="${IB_BUILD_DIR:-$CACHE_ROOT/build}"
IB_CACHE="${IB_CACHE_DIR:-$HOME/.cache/inferencebench}"
KIND_CACHE="$IB_CACHE/kind"
START=$(date +%s)

log() { echo "[provision-kind] $*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=k8s-build-lib.sh
. "$HERE/k8s-build-lib.sh"

[ "$(id -u)" = 0 ] || die "needs root: Docker, debootstrap and the node containers run as root"
command -v python3 >/dev/null 2>&1 || die "python3 is missing (the runtime wrapper and image-tar.py are Python)"
mkdir -p "$IB_CACHE/bin" "$KIND_CACHE"

apt_install() {
  command -v apt-get >/dev/null 2>&1 || die "missing $*: install it with the system's package manager"
  log "installing Debian packages: $*"
  apt-get update -qq >/dev/null
  # the packages' services are not started (policy-rc.d), so the host keeps running what it ran
  local had_policy=0
  [ -e /usr/sbin/policy-rc.d ] && had_policy=1
  [ "$had_policy" = 1 ] || { printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "$@" >/dev/null
  [ "$had_policy" = 1 ] || rm -f /usr/sbin/policy-rc.d
}

# --- Docker ------------------------------------------------------------------------------------
if ! command -v dockerd >/dev/null 2>&1; then
  apt_install docker.io
fi
RUNC=$(command -v runc) || die "runc is missing (Debian: apt-get install runc)"

# --- kind --------------------------------------------------------------------------------------
KIND="$IB_CACHE/bin/kind-v$KIND_VERSION"
if [ -x "$KIND" ]; then
  log "cache hit: $KIND"
else
  command -v go >/dev/null 2>&1 || die "Go is missing: kind is built from the Go module proxy (install Go >= 1.24)"
  t=$(date +%s)
  tmp=$(mktemp -d)
  GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kind@v$KIND_VERSION"
  mv "$tmp/kind" "$KIND"
  rmdir "$tmp"
  log "built kind v$KIND_VERSION in $(( $(date +%s) - t ))s"
fi

# --- runtime wrapper ---------------------------------------------------------------------------
WRAPPER_KEY=$( { cat "$ROOT/e2e/kind/oci-runtime-wrapper"; echo "$RUNC"; } | sha256sum | cut -c1-12)
WRAPPER="$KIND_CACHE/oci-runtime-wrapper-$WRAPPER_KEY"
if [ ! -x "$WRAPPER" ]; then
  sed "s|@REAL_RUNC@|$RUNC|" "$ROOT/e2e/kind/oci-runtime-wrapper" >"$WRAPPER.partial"
  chmod 0755 "$WRAPPER.partial"
  mv "$WRAPPER.partial" "$WRAPPER"
fi

echo "KIND=$KIND"
echo "RUNTIME_WRAPPER=$WRAPPER"

if [ -n "${IB_KIND_NODE_IMAGE:-}" ]; then
  log "node image $IB_KIND_NODE_IMAGE as given (IB_KIND_NODE_IMAGE); no offline build"
  echo "NODE_IMAGE=$IB_KIND_NODE_IMAGE"
  echo "NODE_IMAGE_TAR="
  echo "NODE_IMAGE_OFFLINE=0"
  exit 0
fi

# --- the node's binaries -----------------------------------------------------------------------
NODE_PARTS=$("$HERE/provision-node.sh")
COREDNS=$(sed -n 's/^COREDNS=//p' <<<"$NODE_PARTS")
PAUSE_TAR=$(sed -n 's/^PAUSE_TAR=//p' <<<"$NODE_PARTS")
PAUSE_REF=$(sed -n 's/^PAUSE_REF=//p' <<<"$NODE_PARTS")
COREDNS_VERSION=$(basename "$COREDNS"); COREDNS_VERSION=${COREDNS_VERSION#coredns-}
ETCD_VERSION=$("$DEST/etcd" --version | sed -n 's/^etcd Version: //p')
[ -n "$ETCD_VERSION" ] || die "cannot read etcd's version from $DEST/etcd"
if [ -x "$DEST/kubeadm" ] && [ -f "$DEST/.kubeadm-complete" ]; then
  log "cache hit: kubeadm v$K8S_VERSION in $DEST"
else
  t=$(date +%s)
  log "building kubeadm v$K8S_VERSION in $(k8s_build_dir) (warm Go cache: ~1-2 min)"
  k8s_build "$DEST" kubeadm
  v=$("$DEST/kubeadm" version -o short)
  [ "$v" = "v$K8S_VERSION" ] || die "kubeadm reports $v, expected v$K8S_VERSION"
  touch "$DEST/.kubeadm-complete"
  log "built kubeadm in $(( $(date +%s) - t ))s"
fi
for b in kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy etcd; do
  [ -x "$DEST/$b" ] || die "$DEST/$b is missing (e2e/scripts/provision-k8s.sh and provision-node.sh build it)"
done

# --- the node's root file system (debootstrap, cached) -----------------------------------------
# systemd as PID 1, what kubelet, kube-proxy and containerd call (mount, iptables/nft, conntrack,
# ethtool, socat), the container runtime and CNI plugins; kind runs cat/cp/mkdir/bash inside.
PACKAGES="systemd,systemd-sysv,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,\
kmod,libseccomp2,pigz,ca-certificates,curl,jq,procps,e2fsprogs,socat,containerd,runc,\
containernetworking-plugins"
ROOTFS_KEY=$(echo "$SUITE $PACKAGES" | sha256sum | cut -c1-12)
ROOTFS="$KIND_CACHE/rootfs-$SUITE-$ROOTFS_KEY"
mirror() {
  [ -n "${IB_DEBIAN_MIRROR:-}" ] && { echo "$IB_DEBIAN_MIRROR"; return; }
  local m
  m=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v -- '-security' | head -1)
  [ -z "$m" ] && m=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}' | grep -v -- '-security' | head -1)
  [ -n "$m" ] || die "no Debian mirror found in apt's sources: set IB_DEBIAN_MIRROR"
  echo "$m"
}
if [ -f "$ROOTFS/.complete" ]; then
  log "cache hit: $ROOTFS"
else
  command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
  t=$(date +%s)
  rm -rf "$ROOTFS" "$ROOTFS.partial"
  log "debootstrap --variant=minbase $SUITE with systemd, containerd, runc, CNI plugins (cold: 1-3 min)"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS.partial" "$(mirror)" \
    >"$KIND_CACHE/debootstrap.log" 2>&1 || { tail -20 "$KIND_CACHE/debootstrap.log" >&2; die "debootstrap failed"; }
  R="$ROOTFS.partial"
  # nothing runs apt or reads docs in the node: drop what only takes space
  rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/* "$R"/usr/share/doc/* "$R"/usr/share/man/* \
    "$R"/usr/share/info/* "$R"/usr/share/locale/* "$R"/var/log/* "$R"/debootstrap \
    "$R"/dev/* "$R"/proc/* "$R"/sys/* "$R"/run/* "$R"/tmp/*
  : >"$R/etc/machine-id"
  touch "$R/.complete"
  mv "$R" "$ROOTFS"
  log "node rootfs in $(( $(date +%s) - t ))s ($(du -sm "$ROOTFS" | cut -f1) MB)"
fi

# --- the node image ----------------------------------------------------------------------------
POD_SUBNET="${IB_KIND_POD_SUBNET:-10.244.0.0/24}"
IMAGE_KEY=$( { cat "$0" "$ROOT/scripts/images/image-tar.py" "$ROOT"/e2e/kind/*;
  echo "$K8S_VERSION $ETCD_VERSION $COREDNS_VERSION $PAUSE_REF $ROOTFS_KEY $POD_SUBNET";
  cat "$DEST/.complete" "$DEST/.node-complete" "$DEST/.kubeadm-complete" 2>/dev/null;
  stat -c '%Y %s' "$DEST/kubeadm" "$DEST/kubelet" "$DEST/kube-apiserver" "$COREDNS"; } | sha256sum | cut -c1-12)
NODE_IMAGE="inferencebench.local/kind-node:v$K8S_VERSION-$IMAGE_KEY"
NODE_TAR="$KIND_CACHE/node-v$K8S_VERSION-$IMAGE_KEY.tar"
if [ -s "$NODE_TAR" ]; then
  log "cache hit: $NODE_TAR ($NODE_IMAGE)"
else
  t=$(date +%s)
  WORK=$(mktemp -d "$KIND_CACHE/node-build.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  IMAGES="$WORK/node/kind/images"
  mkdir -p "$IMAGES"
  # one static binary per control-plane image, in /usr/local/bin on PATH (kubeadm's static pod
  # manifests call them by name)
  binary_image() { # name tag binary [entrypoint]
    local name=$1 tag=$2 bin=$3 entry=${4:-}
    local dir="$WORK/img-$name"
    install -D -m 0755 "$bin" "$dir/usr/local/bin/$(basename "$bin" | sed 's/-[0-9.]*$//')"
    mkdir -p "$dir/tmp" "$dir/etc"; chmod 1777 "$dir/tmp"
    local config='{"Env":["PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'
    [ -n "$entry" ] && config="$config,\"Entrypoint\":[\"$entry\"]"
    config="$config}"
    python3 "$ROOT/scripts/images/image-tar.py" --out "$IMAGES/$name.tar" --tag "$tag" \
      --config "$config" --layer "$dir" --history "inferencebench kind node: $name" >/dev/null
  }
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    binary_image "$c" "registry.k8s.io/$c:v$K8S_VERSION" "$DEST/$c"
  done
  binary_image etcd "registry.k8s.io/etcd:$ETCD_VERSION" "$DEST/etcd"
  # CoreDNS' Deployment (kubeadm) relies on the image's entrypoint. No User: port 53 needs
  # NET_BIND_SERVICE, which the Deployment grants (every other capability dropped) but which a
  # non-root user only gets from a file capability, and image-tar.py writes no xattrs.
  mkdir -p "$WORK/img-coredns"
  install -D -m 0755 "$COREDNS" "$WORK/img-coredns/coredns"
  python3 "$ROOT/scripts/images/image-tar.py" --out "$IMAGES/coredns.tar" \
    --tag "registry.k8s.io/coredns/coredns:v$COREDNS_VERSION" \
    --config '{"Entrypoint":["/coredns"]}' \
    --layer "$WORK/img-coredns" --history "inferencebench kind node: coredns" >/dev/null
  # kube-proxy runs iptables/nft/conntrack: the node's own rootfs is its base layer
  mkdir -p "$WORK/img-kube-proxy"
  install -D -m 0755 "$DEST/kube-proxy" "$WORK/img-kube-proxy/usr/local/bin/kube-proxy"
  python3 "$ROOT/scripts/images/image-tar.py" --out "$IMAGES/kube-proxy.tar" \
    --tag "registry.k8s.io/kube-proxy:v$K8S_VERSION" \
    --config '{"Env":["PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}' \
    --layer "$ROOTFS" --history "debootstrap --variant=minbase $SUITE (the node's rootfs)" \
    --layer "$WORK/img-kube-proxy" --history "kube-proxy v$K8S_VERSION" >/dev/null
  cp "$PAUSE_TAR" "$IMAGES/pause.tar"

  N="$WORK/node"
  for b in kubeadm kubelet kubectl; do install -D -m 0755 "$DEST/$b" "$N/usr/bin/$b"; done
  install -D -m 0755 "$ROOT/e2e/kind/entrypoint" "$N/usr/local/bin/entrypoint"
  install -D -m 0755 "$ROOT/e2e/kind/import-node-images" "$N/usr/local/bin/import-node-images"
  for u in containerd kubelet node-images; do
    install -D -m 0644 "$ROOT/e2e/kind/$u.service" "$N/etc/systemd/system/$u.service"
  done
  mkdir -p "$N/etc/systemd/system/multi-user.target.wants"
  ln -s /etc/systemd/system/containerd.service "$N/etc/systemd/system/multi-user.target.wants/containerd.service"
  # Units that would change the host through the privileged container's /proc/sys and
  # /proc/sys/fs/binfmt_misc, or that only make sense on a machine of its own.
  for u in systemd-sysctl.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount \
    proc-sys-fs-binfmt_misc.mount systemd-modules-load.service systemd-remount-fs.service \
    systemd-firstboot.service getty.target console-getty.service kmod-static-nodes.service \
    sys-kernel-config.mount sys-kernel-debug.mount sys-kernel-tracing.mount dev-hugepages.mount \
    e2scrub_all.timer e2scrub_reap.service fstrim.timer apt-daily.timer apt-daily-upgrade.timer \
    dpkg-db-backup.timer systemd-journald-audit.socket; do
    ln -sf /dev/null "$N/etc/systemd/system/$u"
  done
  sed "s|@PAUSE_REF@|$PAUSE_REF|" "$ROOT/e2e/kind/containerd-config.toml" \
    | install -D -m 0644 /dev/stdin "$N/etc/containerd/config.toml"
  sed "s|@POD_SUBNET@|$POD_SUBNET|" "$ROOT/e2e/kind/10-bridge.conflist" \
    | install -D -m 0644 /dev/stdin "$N/etc/cni/net.d/10-bridge.conflist"
  printf 'runtime-endpoint: unix:///run/containerd/containerd.sock\nimage-endpoint: unix:///run/containerd/containerd.sock\n' \
    | install -D -m 0644 /dev/stdin "$N/etc/crictl.yaml"
  echo "v$K8S_VERSION" | install -D -m 0644 /dev/stdin "$N/kind/version"
  mkdir -p "$N/var/lib/kubelet" "$N/etc/kubernetes/manifests" "$N/var/log"
  # CNI plugins where most tools look for them
  mkdir -p "$N/opt/cni"
  ln -s /usr/lib/cni "$N/opt/cni/bin"

  CONFIG=$(cat <<JSON
{"Entrypoint": ["/usr/local/bin/entrypoint", "/sbin/init"],
 "Env": ["container=docker", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
 "StopSignal": "SIGRTMIN+3",
 "Labels": {"org.opencontainers.image.title": "inferencebench kind node",
            "org.opencontainers.image.description": "Kind node image built offline: Debian $SUITE + systemd, Kubernetes v$K8S_VERSION, etcd $ETCD_VERSION, CoreDNS v$COREDNS_VERSION"}}
JSON
)
  log "writing the node image $NODE_IMAGE"
  python3 "$ROOT/scripts/images/image-tar.py" --out "$NODE_TAR.partial" --tag "$NODE_IMAGE" --config "$CONFIG" \
    --layer "$ROOTFS" --history "debootstrap --variant=minbase $SUITE ($PACKAGES)" \
    --layer "$N" --history "inferencebench kind node: Kubernetes v$K8S_VERSION, entrypoint and units (e2e/kind)" >/dev/null
  mv "$NODE_TAR.partial" "$NODE_TAR"
  # earlier builds of the node image are superseded
  find "$KIND_CACHE" -maxdepth 1 -name 'node-v*.tar' ! -name "$(basename "$NODE_TAR")" -delete
  log "node image $NODE_TAR ($(du -m "$NODE_TAR" | cut -f1) MB) in $(( $(date +%s) - t ))s"
fi

log "kind parts ready in $(( $(date +%s) - START ))s"
echo "NODE_IMAGE=$NODE_IMAGE"
echo "NODE_IMAGE_TAR=$NODE_TAR"
echo "NODE_IMAGE_OFFLINE=1"
echo "ETCD_VERSION=$ETCD_VERSION"
echo "COREDNS_VERSION=$COREDNS_VERSION"
