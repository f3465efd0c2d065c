#!/usr/bin/env bash
# Builds the local Java base image for when no base image can be pulled (no registry reachable):
# a minimal Debian rootfs (debootstrap --variant=minbase, trimmed) plus a jlink'ed runtime of the
# local JDK (>= 21) with the modules the runner and the operator need. Written as an image tarball
# in the `docker save` layout that Jib takes as a tar:// base. Cached, keyed by this script, the
# Debian suite and the JDK's version; prints the tarball's path on stdout.
#
# Needs root (debootstrap; it and python3 come from e2e/scripts/provision-host-packages.sh when
# missing) and a JDK >= 21 (scripts/java-home.sh finds one).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SUITE="${IB_DEBIAN_SUITE:-bookworm}"
CACHE_DIR="${IB_IMAGE_CACHE:-$HOME/.cache/inferencebench/images}"
# jdeps on the runner's jar and the operator's Quarkus app finds java.base, java.compiler,
# java.desktop, java.naming, java.net.http, java.rmi, java.sql, jdk.compiler (dev-mode only, left
# out), jdk.httpserver, jdk.management, jdk.unsupported; the rest are loaded reflectively (logging,
# JMX, TLS providers, DNS, zip file systems, JFR for profiling a pod).
MODULES="java.base,java.compiler,java.desktop,java.instrument,java.logging,java.management,\
java.naming,java.net.http,java.rmi,java.security.jgss,java.security.sasl,java.sql,java.xml,\
jdk.crypto.ec,jdk.httpserver,jdk.jfr,jdk.management,jdk.management.jfr,jdk.naming.dns,\
jdk.unsupported,jdk.zipfs"
START=$(date +%s)
log() { echo "[java-base] $*" >&2; }

JAVA_HOME="$("$ROOT/scripts/java-home.sh")"
JDK_VERSION="$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.runtime.version = //p')"
KEY="$( { cat "$0" "$HERE/image-tar.py"; echo "$SUITE $JDK_VERSION $MODULES"; } | sha256sum | cut -c1-12)"
TAG="inferencebench.local/java-base:${JDK_VERSION%%+*}-$SUITE-$KEY"
OUT="$CACHE_DIR/java-base-$KEY.tar"

if [ -s "$OUT" ]; then
  log "cache hit: $OUT ($TAG)"
  echo "$OUT"
  exit 0
fi

[ "$(id -u)" = 0 ] || { log "debootstrap needs root: run as root or set IB_BASE_IMAGE to a pullable Java 21 image"; exit 1; }
"$ROOT/e2e/scripts/provision-host-packages.sh" debootstrap python3

# The Debian mirror apt already uses on this host (deb822 or one-line sources), unless told.
mirror() {
  [ -n "${IB_DEBIAN_MIRROR:-}" ] && { echo "$IB_DEBIAN_MIRROR"; return; }
  local m
  m=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v -- '-security' | head -1)
  [ -z "$m" ] && m=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}' | grep -v -- '-security' | head -1)
  [ -n "$m" ] || { log "no Debian mirror found in apt's sources: set IB_DEBIAN_MIRROR"; exit 1; }
  echo "$m"
}
MIRROR="$(mirror)"

mkdir -p "$CACHE_DIR"
WORK="$(mktemp -d "$CACHE_DIR/java-base-build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
ROOTFS="$WORK/rootfs"
JAVA_LAYER="$WORK/java"

log "debootstrap --variant=minbase $SUITE (cold: about a minute)"
debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || {
  tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
# Nothing runs apt or reads docs inside the image: drop what only takes space.
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/* "$ROOTFS"/var/cache/debconf/*-old \
  "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
  "$ROOTFS"/usr/share/locale/* "$ROOTFS"/usr/share/lintian "$ROOTFS"/var/log/* \
  "$ROOTFS"/debootstrap "$ROOTFS"/dev/* "$ROOTFS"/proc/* "$ROOTFS"/sys/* "$ROOTFS"/run/* "$ROOTFS"/tmp/*
# The numeric user every project image runs as (65532, like distroless' nonroot); HOME is /tmp,
# the one writable path with a read-only root filesystem.
echo "nonroot:x:65532:65532:nonroot:/tmp:/usr/sbin/nologin" >>"$ROOTFS/etc/passwd"
echo "nonroot:x:65532:" >>"$ROOTFS/etc/group"
chmod 1777 "$ROOTFS/tmp"

log "jlink $JDK_VERSION ($MODULES)"
mkdir -p "$JAVA_LAYER/opt/java"
"$JAVA_HOME/bin/jlink" --add-modules "$MODULES" --strip-debug --no-man-pages --no-header-files \
  --compress=zip-6 --output "$JAVA_LAYER/opt/java/openjdk"

CONFIG=$(cat <<JSON
{"User": "65532:65532",
 "Env": ["PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
         "JAVA_HOME=/opt/java/openjdk", "LANG=C.UTF-8", "HOME=/tmp"],
 "WorkingDir": "/",
 "Labels": {"org.opencontainers.image.title": "inferencebench java base",
            "org.opencontainers.image.description": "Debian $SUITE minbase + jlink'ed Java $JDK_VERSION",
            "org.opencontainers.image.base.name": "debian:$SUITE (debootstrap minbase)"}}
JSON
)
python3 "$HERE/image-tar.py" --out "$OUT" --tag "$TAG" --config "$CONFIG" \
  --layer "$ROOTFS" --history "debootstrap --variant=minbase $SUITE" \
  --layer "$JAVA_LAYER" --history "jlink --add-modules $MODULES" >&2
log "built $OUT ($(du -m "$OUT" | cut -f1) MB, $(( $(date +%s) - START ))s)"
echo "$OUT"
