#!/usr/bin/env bash
# Provides containerd, ctr and runc for the tests that run the project's images in real containers
# (ImagesIT starts its own private containerd: own socket, root and state; it never uses or starts a
# containerd the host may run). Debian's packages (bookworm: containerd 1.6.20, runc 1.1.5); skipped
# when all three are on PATH. Needs root for apt-get.
set -euo pipefail
log() { echo "[provision-containerd] $*" >&2; }
missing=()
for b in containerd ctr runc; do command -v "$b" >/dev/null 2>&1 || missing+=("$b"); done
if [ ${#missing[@]} -eq 0 ]; then
  log "present: $(containerd --version | awk '{print $3}'), runc $(runc --version | sed -n 's/^runc version //p')"
  exit 0
fi
[ "$(id -u)" = 0 ] || { log "missing ${missing[*]} and not root: apt-get install containerd runc"; exit 1; }
log "installing Debian packages containerd runc (missing: ${missing[*]})"
apt-get update -qq >/dev/null
# The package's service is not started: without systemd nothing starts it, and with systemd we
# mask it for the install (policy-rc.d) so the host's state stays as it was.
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d.inferencebench
chmod +x /usr/sbin/policy-rc.d.inferencebench
had_policy=0; [ -e /usr/sbin/policy-rc.d ] && had_policy=1
[ "$had_policy" = 1 ] || mv /usr/sbin/policy-rc.d.inferencebench /usr/sbin/policy-rc.d
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq containerd runc >/dev/null
[ "$had_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d.inferencebench || rm -f /usr/sbin/policy-rc.d
log "installed: $(containerd --version | awk '{print $3}')"
