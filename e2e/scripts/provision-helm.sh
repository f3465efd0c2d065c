#!/usr/bin/env bash
# Provides the Helm 3 CLI for the chart checks (ChartInstallIT) and prints its absolute path as the
# only line on stdout (logs go to stderr).
# Order: HELM=/path/to/helm (used as given) -> cache hit ~/.cache/inferencebench/bin/helm-<version>
# -> build helm.sh/helm/v3/cmd/helm@v<version> from the Go module proxy with the machine's Go.
# Idempotent and keyed by version; prints what it did and how long it took.
set -euo pipefail

HELM_VERSION="${IB_HELM_VERSION:-3.22.0}"
CACHE_DIR="${IB_TOOLS_DIR:-$HOME/.cache/inferencebench/bin}"
DEST="$CACHE_DIR/helm-$HELM_VERSION"
START=$(date +%s)

log() { echo "[provision-helm] $*" >&2; }
elapsed() { echo "$(( $(date +%s) - START ))s"; }

if [ -n "${HELM:-}" ]; then
  [ -x "$HELM" ] || { log "error: HELM=$HELM is not executable"; exit 1; }
  log "using HELM=$HELM"
  echo "$HELM"
  exit 0
fi

if [ -x "$DEST" ] && "$DEST" version --short 2>/dev/null | grep -q "^v$HELM_VERSION"; then
  log "cache hit: Helm v$HELM_VERSION in $DEST ($(elapsed))"
  echo "$DEST"
  exit 0
fi

command -v go >/dev/null 2>&1 || { log "error: Go is needed to build Helm (or set HELM=/path/to/helm)"; exit 1; }
mkdir -p "$CACHE_DIR"
MODULE="helm.sh/helm/v3"
log "building Helm v$HELM_VERSION from the Go module proxy with $(go version | awk '{print $3}') (cold: a few minutes on 2 cores)"
# The module's own go.mod decides the dependency versions (no replace directives in Helm 3.x);
# the ldflags are the ones Helm's Makefile sets for a release build.
MODFILE=$(go mod download -json "$MODULE@v$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
CLIENT_GO=$(awk '$1 == "k8s.io/client-go" {print $2; exit}' "$MODFILE")
K8S_MINOR=$(echo "$CLIENT_GO" | cut -d. -f2)
LD="-s -w -X $MODULE/internal/version.version=v$HELM_VERSION -X $MODULE/internal/version.metadata="
LD="$LD -X $MODULE/internal/version.gitTreeState=clean"
for pkg in pkg/lint/rules pkg/chartutil; do
  LD="$LD -X $MODULE/$pkg.k8sVersionMajor=1 -X $MODULE/$pkg.k8sVersionMinor=$K8S_MINOR"
done
TMPBIN=$(mktemp -d)
trap 'rm -rf "$TMPBIN"' EXIT
CGO_ENABLED=0 GOBIN="$TMPBIN" go install -trimpath -ldflags "$LD" "$MODULE/cmd/helm@v$HELM_VERSION"
mv "$TMPBIN/helm" "$DEST"
"$DEST" version --short >&2
log "built Helm v$HELM_VERSION into $DEST in $(elapsed)"
echo "$DEST"
