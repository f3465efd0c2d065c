#!/usr/bin/env bash
# Provides containerd, ctr and runc for the tests that run the project's images in real containers
# (ImagesIT starts its own private containerd: own socket, root and state; it never uses or starts a
# containerd the host may run). Debian's packages (bookworm: containerd 1.6.20, runc 1.1.5) through
# provision-host-packages.sh: skipped when all three are on PATH, the package's service not started.
# Needs root for apt-get.
set -euo pipefail
log() { echo "[provision-containerd] $*" >&2; }
"$(dirname "$0")/provision-host-packages.sh" containerd runc
log "present: $(containerd --version | awk '{print $3}'), runc $(runc --version | sed -n 's/^runc version //p')"
