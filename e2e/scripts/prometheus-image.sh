#!/usr/bin/env bash
# A test-only Prometheus image for the E2E tier (ServerMetricsClusterE2E): the binary that
# e2e/scripts/provision-prometheus.sh provides (Debian's package), plus the shared libraries it is
# linked against (`ldd`; Debian's build is dynamic: libc and the loader), on an empty base, running
# as a non-root user. Config and storage come from the pod (a ConfigMap at /etc/prometheus, an
# emptyDir at /prometheus), so the root filesystem can be read-only.
#   prometheus-image.sh OUT.tar REFERENCE     prints the tarball's path as the only stdout line
set -euo pipefail
OUT="$1"
REF="$2"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
log() { echo "[prometheus-image] $*" >&2; }

BIN="$(readlink -f "$("$ROOT/e2e/scripts/provision-prometheus.sh")")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
install -D -m 0755 "$BIN" "$WORK/usr/bin/prometheus"
# every library the dynamic loader resolves, at the path the binary asks for, plus the loader
if file -L "$BIN" | grep -q 'dynamically linked'; then
  while read -r lib; do
    install -D -m 0755 "$(readlink -f "$lib")" "$WORK$lib"
  done < <(ldd "$BIN" | sed -n 's|.*=> \(/[^ ]*\) .*|\1|p; s|^\s*\(/[^ ]*\) (.*|\1|p' | sort -u)
  log "dynamic binary: added $(cd "$WORK" && find lib* usr/lib* -type f 2>/dev/null | tr '\n' ' ')"
fi
mkdir -p "$WORK/etc/prometheus" "$WORK/prometheus" "$WORK/tmp"
chmod 1777 "$WORK/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/prometheus:/sbin/nologin\n' >"$WORK/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$WORK/etc/group"
VERSION="$("$BIN" --version 2>&1 | head -1)"
CONFIG=$(cat <<JSON
{"User": "65532:65532", "Env": ["PATH=/usr/bin"], "WorkingDir": "/prometheus",
 "Entrypoint": ["/usr/bin/prometheus"],
 "Cmd": ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus",
         "--web.listen-address=:9090"],
 "ExposedPorts": {"9090/tcp": {}},
 "Labels": {"org.opencontainers.image.title": "prometheus (E2E tests)",
            "org.opencontainers.image.description": "$VERSION"}}
JSON
)
mkdir -p "$(dirname "$OUT")"
python3 "$ROOT/scripts/images/image-tar.py" --out "$OUT" --tag "$REF" --config "$CONFIG" \
  --layer "$WORK" --history "prometheus $VERSION" >&2
echo "$OUT"
