#!/usr/bin/env bash
# Makes a Prometheus server binary available for the Prometheus-source tests and prints its absolute
# path as the only line on stdout (logs go to stderr).
#   - `prometheus` already on PATH (or PROMETHEUS=/path/to/prometheus executable): nothing is installed;
#   - otherwise the Debian package is installed: `apt-get update && apt-get install -y prometheus`
#     (needs root). Debian's package also registers a systemd service; containers do not run it, and the
#     tests never rely on it: they start the binary themselves with their own config and storage.
# Idempotent: a second run finds the binary and does nothing.
set -euo pipefail

log() { echo "[provision-prometheus] $*" >&2; }
# shellcheck source=apt-root-lib.sh
. "$(dirname "$0")/apt-root-lib.sh"

if [ -n "${PROMETHEUS:-}" ] && [ -x "${PROMETHEUS}" ]; then
  log "using PROMETHEUS=${PROMETHEUS}"
  echo "${PROMETHEUS}"
  exit 0
fi

if BIN="$(command -v prometheus 2>/dev/null)"; then
  log "found on PATH: ${BIN}"
  echo "${BIN}"
  exit 0
fi

apt_root "'prometheus' is not on PATH and apt-get is unavailable; install Prometheus (>= 2.x)
       or set PROMETHEUS=/path/to/prometheus." \
  "installing the 'prometheus' package needs root (or sudo); set PROMETHEUS=/path/to/prometheus instead."

log "installing the Debian package 'prometheus'"
# The package's post-install tries to start a service; with no init system that is harmless, and
# policy-rc.d is not touched: the service is simply not running afterwards.
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update >&2
$SUDO apt-get install -y --no-install-recommends prometheus >&2

if BIN="$(command -v prometheus 2>/dev/null)"; then
  log "installed: ${BIN} ($("${BIN}" --version 2>&1 | head -n 1))"
  echo "${BIN}"
  exit 0
fi
log "error: the package installed but no 'prometheus' binary is on PATH"
exit 1
