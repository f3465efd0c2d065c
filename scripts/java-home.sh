#!/usr/bin/env bash
# Prints a JAVA_HOME with Java >= 21: $JAVA_HOME if it qualifies, else the newest JDK under /usr/lib/jvm.
set -euo pipefail
major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && [ "$(major "$JAVA_HOME")" -ge 21 ]; then
  echo "$JAVA_HOME"; exit 0
fi
best=""; best_major=0
for d in /usr/lib/jvm/*/; do
  d="${d%/}"
  [ -x "$d/bin/javac" ] || continue
  m=$(major "$d" || echo 0)
  if [ "${m:-0}" -ge 21 ] && [ "$m" -gt "$best_major" ]; then best="$d"; best_major="$m"; fi
done
if [ -z "$best" ]; then
  echo "java-home.sh: no JDK >= 21 found (set JAVA_HOME or install one, e.g. apt-get install openjdk-21-jdk-headless)" >&2
  exit 1
fi
echo "$best"
