#!/usr/bin/env bash
# Runs Prometheus with deploy/prometheus/prometheus.yml (scrapes the agenteval exporter on
# localhost:8889 every 15s), storing its data under $AGENTEVAL_DATA_DIR/prometheus and
# listening on localhost:9090, the URL of the Grafana data source in
# deploy/grafana/provisioning/. Extra arguments go to prometheus.
#   Debian: apt-get install prometheus   (then stop the packaged service if it holds :9090)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
data="${AGENTEVAL_DATA_DIR:-$repo/data}/prometheus"
prometheus="${PROMETHEUS:-prometheus}"
if ! command -v "$prometheus" >/dev/null 2>&1; then
  echo "run-prometheus: $prometheus not found (Debian: apt-get install prometheus; or set PROMETHEUS=/path/to/prometheus)" >&2
  exit 2
fi
mkdir -p "$data"
echo "run-prometheus: http://${PROMETHEUS_LISTEN:-localhost:9090}, data in $data"
exec "$prometheus" \
  --config.file="$here/prometheus/prometheus.yml" \
  --storage.tsdb.path="$data" \
  --web.listen-address="${PROMETHEUS_LISTEN:-localhost:9090}" \
  "$@"
