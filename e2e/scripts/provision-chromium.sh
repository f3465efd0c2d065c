#!/usr/bin/env bash
# Makes Debian's headless-capable Chromium available for the HTML report's browser test and prints
# its absolute path as the only line on stdout (logs go to stderr).
#   - CHROMIUM=/path/to/chromium (an executable), or /usr/bin/chromium already there: nothing is
#     installed (a second run is a no-op);
#   - otherwise `apt-get update && apt-get install -y chromium chromium-driver` (needs root or sudo).
# The test runs it as: chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
#   --disable-background-networking --disable-component-update --disable-sync
#   --user-data-dir=<fresh temp dir> --dump-dom file://...
set -euo pipefail

log() { echo "[provision-chromium] $*" >&2; }
# shellcheck source=apt-root-lib.sh
. "$(dirname "$0")/apt-root-lib.sh"

if [ -n "${CHROMIUM:-}" ] && [ -x "${CHROMIUM}" ]; then
  log "using CHROMIUM=${CHROMIUM}"
  echo "${CHROMIUM}"
  exit 0
fi
if [ -x /usr/bin/chromium ]; then
  log "found /usr/bin/chromium"
  echo /usr/bin/chromium
  exit 0
fi
apt_root "/usr/bin/chromium is missing and apt-get is unavailable; install Chromium or set
       CHROMIUM=/path/to/chromium." \
  "installing the 'chromium' package needs root (or sudo); set CHROMIUM=/path/to/chromium."
start=$(date +%s)
log "installing the Debian packages 'chromium' and 'chromium-driver'"
$SUDO apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver >&2
log "installed in $(( $(date +%s) - start )) s"
if [ ! -x /usr/bin/chromium ]; then
  log "error: the package installed no /usr/bin/chromium"
  exit 1
fi
echo /usr/bin/chromium
