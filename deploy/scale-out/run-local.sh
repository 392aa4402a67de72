#!/usr/bin/env bash
# Runs the two-tier setup on loopback: one tier-1 router (tier1.yaml) in front of two tier-2
# agenteval collectors (tier2.yaml) that share one PostgreSQL database. Ctrl-C stops all
# three. Logs and queues go to $AGENTEVAL_DATA_DIR/scale-out (default ./data/scale-out).
#
#   AGENTEVAL_POSTGRES_DSN='postgres://agenteval:agenteval@127.0.0.1:5432/agenteval?sslmode=disable' \
#     deploy/scale-out/run-local.sh
#
# Binaries (override with the variables):
#   AGENTEVAL_BIN  ./bin/otelcol-agenteval (make build), tier 2
#   TIER1_BIN      $AGENTEVAL_BIN: our distribution includes the load_balancing exporter;
#                  any other with it works too, e.g. otelcol-contrib
#   TIER1_CONFIG   deploy/scale-out/tier1.yaml (e.g. a copy with the routing_key: attributes
#                  variant enabled)
#
# Where to look:
#   OTLP in      gRPC localhost:4317, HTTP localhost:4318 (tier 1)
#   tier 2 #1    OTLP localhost:14317, metrics localhost:8889, API localhost:8890
#   tier 2 #2    OTLP localhost:24317, metrics localhost:18889, API localhost:18890
# Both query APIs read the shared store, so each shows every session. To scrape both, add
# localhost:18889 to the targets of deploy/prometheus/prometheus.yml.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

: "${AGENTEVAL_POSTGRES_DSN:?set AGENTEVAL_POSTGRES_DSN to the shared PostgreSQL database}"
export AGENTEVAL_POSTGRES_DSN
out="${AGENTEVAL_DATA_DIR:-./data}/scale-out"
mkdir -p "$out"

agenteval="${AGENTEVAL_BIN:-./bin/otelcol-agenteval}"
tier1="${TIER1_BIN:-$agenteval}"
for b in "$tier1" "$agenteval"; do
  if [ ! -x "$b" ]; then
    echo "run-local: $b not found or not executable (see the header of this script)" >&2
    exit 2
  fi
done

pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop EXIT INT TERM

tier2() { # index, otlp, metrics, api, health, telemetry port
  AGENTEVAL_TIER2_OTLP_GRPC="$2" AGENTEVAL_TIER2_METRICS="$3" AGENTEVAL_TIER2_API="$4" \
  AGENTEVAL_TIER2_HEALTH="$5" AGENTEVAL_TIER2_TELEMETRY="$6" \
  AGENTEVAL_TIER2_QUEUE_DIR="$out/queue-$1" \
    "$agenteval" --config "$here/tier2.yaml" >"$out/tier2-$1.log" 2>&1 &
  pids+=("$!")
}
tier2 1 localhost:14317 localhost:8889 localhost:8890 localhost:13134 8888
tier2 2 localhost:24317 localhost:18889 localhost:18890 localhost:23134 18888
AGENTEVAL_TIER2_HOSTS='[localhost:14317, localhost:24317]' AGENTEVAL_TIER1_TELEMETRY=28888 \
  "$tier1" --config "${TIER1_CONFIG:-$here/tier1.yaml}" >"$out/tier1.log" 2>&1 &
pids+=("$!")

echo "run-local: tier 1 on localhost:4317/4318 -> tier 2 on localhost:14317 and localhost:24317"
echo "run-local: metrics localhost:8889 and localhost:18889, query API localhost:8890 and localhost:18890"
echo "run-local: logs in $out; Ctrl-C stops all three"
# Stop everything as soon as one of them exits (a port in use, a bad DSN...).
wait -n "${pids[@]}" || true
echo "run-local: a collector exited; see the logs in $out" >&2
exit 1
