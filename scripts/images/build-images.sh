#!/usr/bin/env bash
# `make images`: builds the operator, runner and model-sim images as tarballs under target/images/
# (no Docker daemon, no registry). `make images-push` (PUSH=1) pushes the Java images to
# $IMAGE_REGISTRY instead and the simulator tarball stays local (push it with any OCI tool).
#
# Environment:
#   IMAGE_REGISTRY  registry/namespace for the image names (default: the root pom's image.registry)
#   IMAGE_TAG       tag (default: the project version)
#   IB_BASE_IMAGE   Java 21+ base for Jib (docker://, tar:// or a registry reference). Default: the
#                   pom's standard Java 21 runtime when its registry answers, else a local base
#                   built by scripts/images/java-base.sh (Debian minbase + jlink, cached).
#   PUSH=1          push instead of writing tarballs.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
START=$(date +%s)
log() { echo "[images] $*" >&2; }

pom_property() { sed -n "s|.*<$1>\(.*\)</$1>.*|\1|p" pom.xml | head -1; }
VERSION="$(sed -n '/<artifactId>inferencebench-parent<\/artifactId>/{n;s|.*<version>\(.*\)</version>.*|\1|p}' pom.xml)"
REGISTRY="${IMAGE_REGISTRY:-$(pom_property image.registry)}"
TAG="${IMAGE_TAG:-$VERSION}"
DEFAULT_BASE="$(pom_property image.base)"
REVISION="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
if ! git diff --quiet HEAD 2>/dev/null; then REVISION="$REVISION-dirty"; fi
OUT_DIR="$ROOT/target/images"
mkdir -p "$OUT_DIR"

export JAVA_HOME="${JAVA_HOME:-$("$ROOT/scripts/java-home.sh")}"
# python3 writes the simulator's image tarball; curl probes the registry (installed when missing).
"$ROOT/e2e/scripts/provision-host-packages.sh" python3 curl

# Docker Hub's registry answers 401 to an anonymous /v2/ probe when it is reachable.
registry_reachable() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 https://registry-1.docker.io/v2/ 2>/dev/null || true)
  [ "$code" = 401 ] || [ "$code" = 200 ]
}

if [ -n "${IB_BASE_IMAGE:-}" ]; then
  BASE="$IB_BASE_IMAGE"
elif registry_reachable; then
  BASE="$DEFAULT_BASE"
else
  log "no container registry reachable: building the local Java base image"
  BASE="tar://$("$ROOT/scripts/images/java-base.sh")"
fi
log "base image: $BASE"
# Java 24+ warns on sun.misc.Unsafe (Netty); Java 21 refuses the flag that silences it.
JVM_COMPAT=-XX:+UseContainerSupport
case "$BASE" in
  tar://*)
    major="$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
    [ "${major:-21}" -ge 24 ] && JVM_COMPAT=--sun-misc-unsafe-memory-access=allow ;;
esac

GOAL_PROFILE=images
[ "${PUSH:-}" = 1 ] && GOAL_PROFILE=images-push
# shellcheck disable=SC2086
./mvnw -B -ntp -q ${IB_MAVEN_ARGS:-} -P"$GOAL_PROFILE" -DskipTests -pl runner,operator -am verify \
  -Dimage.base="$BASE" -Dimage.registry="$REGISTRY" -Dimage.tag="$TAG" -Dimage.revision="$REVISION" \
  -Dimage.jvm.compat="$JVM_COMPAT" \
  -Djib.console=plain -Djib.disableUpdateChecks=true

# model-sim: one static Go binary on an empty base (nothing else in the image to patch).
SIM_BIN="$("$ROOT/e2e/scripts/provision-model-sim.sh")"
SIM_ROOT="$(mktemp -d)"
trap 'rm -rf "$SIM_ROOT"' EXIT
install -D -m 0755 "$SIM_BIN" "$SIM_ROOT/usr/local/bin/model-sim"
mkdir -p "$SIM_ROOT/etc" "$SIM_ROOT/tmp"
chmod 1777 "$SIM_ROOT/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n' >"$SIM_ROOT/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$SIM_ROOT/etc/group"
SIM_CONFIG=$(cat <<JSON
{"User": "65532:65532", "Env": ["PATH=/usr/local/bin", "HOME=/tmp"], "WorkingDir": "/tmp",
 "Entrypoint": ["/usr/local/bin/model-sim"], "ExposedPorts": {"8000/tcp": {}},
 "Labels": {"org.opencontainers.image.title": "model-sim",
            "org.opencontainers.image.description": "InferenceBench model-server simulator (llm-d-inference-sim flags)",
            "org.opencontainers.image.source": "$(pom_property image.source)",
            "org.opencontainers.image.version": "$VERSION",
            "org.opencontainers.image.revision": "$REVISION",
            "org.opencontainers.image.licenses": "Apache-2.0"}}
JSON
)
python3 "$ROOT/scripts/images/image-tar.py" --out "$OUT_DIR/$(pom_property image.model-sim).tar" \
  --tag "$REGISTRY/$(pom_property image.model-sim):$TAG" --config "$SIM_CONFIG" \
  --layer "$SIM_ROOT" --history "model-sim $(basename "$SIM_BIN")" >/dev/null

echo "images ($(( $(date +%s) - START ))s, base $BASE):"
for name in "$(pom_property image.operator)" "$(pom_property image.runner)" "$(pom_property image.model-sim)"; do
  if [ "${PUSH:-}" = 1 ] && [ "$name" != "$(pom_property image.model-sim)" ]; then
    echo "  pushed $REGISTRY/$name:$TAG"
  else
    printf '  %-45s %s (%s MB)\n' "$REGISTRY/$name:$TAG" "target/images/$name.tar" "$(du -m "$OUT_DIR/$name.tar" | cut -f1)"
  fi
done
