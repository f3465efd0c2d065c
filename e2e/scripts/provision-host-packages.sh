#!/usr/bin/env bash
# Installs the Debian packages of the host tools the project's scripts and tests run, for those
# missing, so that `make demo` and `make test` work on a fresh Debian machine with nothing installed
# by hand beyond root, Go, a JDK >= 21 and make. Both call it first; each provisioning script also
# calls it for the tools it needs itself.
#
#   e2e/scripts/provision-host-packages.sh [TOOL...]      (no TOOL: every tool of the table below
#                                                          except debootstrap)
#
#   TOOL         present when                                     Debian packages     used by
#   jq           jq on PATH                                       jq                  the demo's stage table
#   gcc          gcc on PATH and it finds a static libc.a         gcc libc6-dev       the node's pause image
#   python3      python3 on PATH                                  python3             image tarballs (image-tar.py)
#   curl         curl on PATH and the CA bundle exists            curl ca-certificates release downloads, Go's module proxy
#   ip           ip on PATH                                       iproute2            the node, host-state.sh
#   nft          nft on PATH                                      nftables            kube-proxy, host-state.sh
#   iptables     iptables on PATH                                 iptables            kubelet, kube-proxy
#   conntrack    conntrack on PATH                                conntrack           kube-proxy
#   pkill        pkill on PATH                                    procps              the tests' containerd fixture
#   flock        flock on PATH                                    util-linux          the machine's E2E lock
#   containerd   containerd and ctr on PATH                       containerd          the node, ImagesIT
#   runc         runc on PATH                                     runc                the node, ImagesIT
#   cni          /usr/lib/cni/{bridge,host-local,loopback}        containernetworking-plugins  the node
#   debootstrap  debootstrap on PATH                              debootstrap         the local Java base image
#
# A tool that is present is skipped: a second run installs nothing and needs no root. The missing
# ones are installed with one `apt-get install` after `apt-get update` (a fresh machine has no
# package lists), under a lock shared by the project's scripts and waiting for another apt run
# rather than failing. The services of the packages (containerd) are not started (policy-rc.d), so
# the host keeps running what it ran. Then every tool asked for must be present, or it fails naming
# it. Nothing on stdout; progress on stderr. Installing needs root (or sudo without a password).
# Environment: IB_APT_LOCK (default /tmp/inferencebench-apt.lock).
set -euo pipefail

log() { echo "[provision-host-packages] $*" >&2; }
die() { log "error: $*"; exit 1; }

DEFAULT_TOOLS=(jq gcc python3 curl ip nft iptables conntrack pkill flock containerd runc cni)
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

has() { command -v "$1" >/dev/null 2>&1; }

# present TOOL: whether the tool is there (unknown names are refused before any of this runs)
present() {
  case "$1" in
    gcc) has gcc && [ "$(gcc -print-file-name=libc.a 2>/dev/null)" != libc.a ] ;;
    curl) has curl && [ -s "$CA_BUNDLE" ] ;;
    containerd) has containerd && has ctr ;;
    cni) [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] ;;
    *) has "$1" ;;
  esac
}

packages() {
  case "$1" in
    jq | python3 | conntrack | iptables | containerd | runc | debootstrap) echo "$1" ;;
    gcc) echo gcc libc6-dev ;;
    curl) echo curl ca-certificates ;;
    ip) echo iproute2 ;;
    nft) echo nftables ;;
    pkill) echo procps ;;
    flock) echo util-linux ;;
    cni) echo containernetworking-plugins ;;
    *) return 1 ;;
  esac
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=("${DEFAULT_TOOLS[@]}")
for tool in "${tools[@]}"; do
  packages "$tool" >/dev/null || die "unknown tool '$tool' (known: ${DEFAULT_TOOLS[*]} debootstrap)"
done

missing=()
pkgs=()
for tool in "${tools[@]}"; do
  present "$tool" && continue
  missing+=("$tool")
  # shellcheck disable=SC2207
  pkgs+=($(packages "$tool"))
done
if [ ${#missing[@]} -eq 0 ]; then
  log "present: ${tools[*]}"
  exit 0
fi

has apt-get || die "missing ${missing[*]} and no apt-get: install the packages ${pkgs[*]} with the system's package manager"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if has sudo && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    die "missing ${missing[*]}: run as root (make demo and make test do), or install them: apt-get update && apt-get install ${pkgs[*]}"
  fi
fi

# One apt run of the project's scripts at a time (provisioning may run from several test JVMs);
# an apt run of someone else is waited for by DPkg::Lock::Timeout.
if has flock; then
  exec 8>"${IB_APT_LOCK:-/tmp/inferencebench-apt.lock}"
  flock 8
fi
start=$(date +%s)
log "installing Debian packages ${pkgs[*]} (missing: ${missing[*]})"
$SUDO apt-get -qq -o DPkg::Lock::Timeout=600 update >/dev/null
# containerd's package starts its service where systemd runs: keep it stopped for the install.
policy=""
for p in "${pkgs[@]}"; do
  if [ "$p" = containerd ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod +x "$policy"
    trap '$SUDO rm -f "$policy"' EXIT
  fi
done
$SUDO env DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
  --no-install-recommends "${pkgs[@]}" >/dev/null
not_there=()
for tool in "${missing[@]}"; do present "$tool" || not_there+=("$tool"); done
[ ${#not_there[@]} -eq 0 ] || die "apt-get installed ${pkgs[*]} but ${not_there[*]} is still missing"
log "installed ${pkgs[*]} in $(( $(date +%s) - start )) s"
