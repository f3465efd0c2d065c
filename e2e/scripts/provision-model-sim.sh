#!/usr/bin/env bash
# Builds model-sim, the project's model-server simulator (e2e/model-sim, a stdlib-only Go module
# that accepts llm-d-inference-sim's flags), into a cache keyed by a hash of its sources:
#   ~/.cache/inferencebench/bin/model-sim-<first 12 hex of sha256 over go.mod and *.go>
# A cache hit does nothing. The absolute path of the binary is the only line on stdout; logs go to
# stderr. Needs `go` (>= 1.24) on PATH, or GO=/path/to/go.
#
# How the rest of the build finds the binary:
#   - `make model-sim` (and `make tools`, `make test`, `make demo`) run this script;
#   - Java tests and fixtures use the environment variable IB_MODEL_SIM when it names an executable,
#     otherwise they run this script and take the path it prints on stdout;
#   - shell users: SIM=$(e2e/scripts/provision-model-sim.sh) && "$SIM" --model m --port 8000
# Environment: IB_CACHE_DIR (default ~/.cache/inferencebench), GO (default: go on PATH).
set -euo pipefail

log() { echo "[provision-model-sim] $*" >&2; }

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC_DIR="$(cd "$SCRIPT_DIR/../model-sim" && pwd)"
CACHE_DIR="${IB_CACHE_DIR:-$HOME/.cache/inferencebench}/bin"
GO_BIN="${GO:-go}"

if ! command -v "$GO_BIN" >/dev/null 2>&1; then
  for candidate in /usr/local/go/bin/go /usr/lib/go/bin/go; do
    if [ -x "$candidate" ]; then GO_BIN="$candidate"; break; fi
  done
fi
if ! command -v "$GO_BIN" >/dev/null 2>&1; then
  log "error: the Go toolchain ('go', version >= 1.24) is required to build model-sim but was not found."
  log "       Install Go (e.g. 'apt-get install golang-go' where it is recent enough) or set GO=/path/to/go."
  exit 1
fi

# Key: the module's sources in a stable order (tests excluded: they do not change the binary).
KEY="$(cd "$SRC_DIR" && find . -maxdepth 1 -type f \( -name 'go.mod' -o -name '*.go' \) ! -name '*_test.go' \
  | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)"
BIN="$CACHE_DIR/model-sim-$KEY"

if [ -x "$BIN" ]; then
  log "cache hit: $BIN"
  echo "$BIN"
  exit 0
fi

mkdir -p "$CACHE_DIR"
log "building model-sim ($KEY) with $("$GO_BIN" version)"
TMP="$(mktemp "$CACHE_DIR/.model-sim-build.XXXXXX")"
trap 'rm -f "$TMP"' EXIT
(cd "$SRC_DIR" && CGO_ENABLED=0 GOFLAGS=-mod=mod "$GO_BIN" build -trimpath -ldflags="-s -w" -o "$TMP" .) >&2
chmod +x "$TMP"
mv -f "$TMP" "$BIN"
trap - EXIT
log "built $BIN"
echo "$BIN"
