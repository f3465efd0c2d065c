#!/usr/bin/env bash
# `make demo`: the runner CLI against a local model-server simulator, no cluster needed.
# Starts the simulator on 127.0.0.1 with a fixed time to first token and inter-token latency, runs
# a short two-stage rate sweep, writes one LPG profile per stage into ./results/ (or $RESULT_DIR),
# prints the per-stage table, stops the simulator and exits with the CLI's exit code.
# Expects the runner jar to be built (`make demo` does it) and Go for the simulator.
# Arrivals are evenly spaced so that the short stages show achieved = requested rate (with Poisson
# arrivals a 100-request sample's own rate varies by +-10 %).
# Environment: RESULT_DIR, DEMO_RATES (default 10,20), DEMO_PROMPTS (default 100 per stage).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

JAR="runner/target/inferencebench-runner.jar"
if [ ! -f "$JAR" ]; then
  echo "demo: $JAR is missing; build it with: ./mvnw -DskipTests install -pl runner -am" >&2
  exit 2
fi
JAVA_HOME="$(scripts/java-home.sh)"
JAVA="$JAVA_HOME/bin/java"
JAVA_OPTS=()
# JDK 24+ warns about Netty's use of sun.misc.Unsafe unless told it is allowed.
JAVA_MAJOR="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
if [ "${JAVA_MAJOR:-21}" -ge 24 ]; then JAVA_OPTS+=(--sun-misc-unsafe-memory-access=allow); fi
SIM="$(e2e/scripts/provision-model-sim.sh)"

MODEL="demo/sim-llama-1b"
TTFT_MS=20
ITL_MS=5
RESULT_DIR="${RESULT_DIR:-results}"
RATES="${DEMO_RATES:-10,20}"
PROMPTS="${DEMO_PROMPTS:-100}"

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=18000
while port_in_use "$PORT"; do
  PORT=$((PORT + 1))
  if [ "$PORT" -gt 18100 ]; then echo "demo: no free port in 18000-18100" >&2; exit 1; fi
done

SIM_LOG="$(mktemp -t model-sim.XXXXXX.log)"
"$SIM" --host 127.0.0.1 --port "$PORT" --model "$MODEL" \
  --time-to-first-token "$TTFT_MS" --inter-token-latency "$ITL_MS" \
  --max-num-seqs 256 --max-model-len 4096 --force-dummy-tokenizer >"$SIM_LOG" 2>&1 &
SIM_PID=$!
cleanup() {
  kill "$SIM_PID" 2>/dev/null || true
  wait "$SIM_PID" 2>/dev/null || true
  rm -f "$SIM_LOG"
}
trap cleanup EXIT INT TERM

for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$SIM_PID" 2>/dev/null; then
    echo "demo: the simulator exited; its log:" >&2
    cat "$SIM_LOG" >&2
    exit 1
  fi
  sleep 0.1
done

echo "demo: simulator $MODEL on 127.0.0.1:$PORT (TTFT ${TTFT_MS} ms, ITL ${ITL_MS} ms)"
set +e
"$JAVA" "${JAVA_OPTS[@]}" -jar "$JAR" run \
  --base-url "http://127.0.0.1:$PORT" \
  --backend vllm \
  --random-input-len 128 --random-output-len 32 \
  --request-rate "$RATES" --num-prompts "$PROMPTS" --arrival constant \
  --num-warmups 10 --cooldown 1s --seed 1 \
  --goodput ttft:500 e2el:2000 \
  --result-dir "$RESULT_DIR"
code=$?
set -e
echo "demo: profiles are in $RESULT_DIR/ (expected TTFT ~${TTFT_MS} ms, ITL ~${ITL_MS} ms)"
exit "$code"
