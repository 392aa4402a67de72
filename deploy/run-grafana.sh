#!/usr/bin/env bash
# Runs Grafana with the agenteval data source (Prometheus at http://localhost:9090) and the
# dashboard deploy/grafana/agenteval-dashboard.json provisioned, on http://localhost:3000.
# Grafana's state goes to $AGENTEVAL_DATA_DIR/grafana. Anonymous users get the Viewer role
# (Grafana listens on loopback only); sign in as admin/admin to edit. Extra arguments go to
# the server.
#   GRAFANA_HOME  Grafana's home path: /usr/share/grafana for Grafana's Debian package (the
#                 default), or the directory of an unpacked release tarball.
#   GF_*          any Grafana setting, e.g. GF_SERVER_HTTP_PORT=3001.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
data="${AGENTEVAL_DATA_DIR:-$repo/data}/grafana"
home="${GRAFANA_HOME:-/usr/share/grafana}"

# Grafana 10+ ships one `grafana` binary (`grafana server`); older ones `grafana-server`.
if [ -x "$home/bin/grafana" ]; then cmd=("$home/bin/grafana" server)
elif command -v grafana >/dev/null 2>&1; then cmd=(grafana server)
elif command -v grafana-server >/dev/null 2>&1; then cmd=(grafana-server)
else
  echo "run-grafana: no grafana binary found: install Grafana (docs/decisions/deploy.md) or set GRAFANA_HOME" >&2
  exit 2
fi
if [ ! -d "$home/conf" ]; then
  echo "run-grafana: $home/conf not found: set GRAFANA_HOME to Grafana's home path" >&2
  exit 2
fi

mkdir -p "$data"
export AGENTEVAL_DASHBOARDS_DIR="$here/grafana"           # read by provisioning/dashboards/agenteval.yaml
export GF_PATHS_PROVISIONING="$here/grafana/provisioning"
export GF_PATHS_DATA="$data"
export GF_PATHS_LOGS="$data/log"
export GF_PATHS_PLUGINS="$data/plugins"
export GF_SERVER_HTTP_ADDR="${GF_SERVER_HTTP_ADDR:-localhost}"
export GF_SERVER_HTTP_PORT="${GF_SERVER_HTTP_PORT:-3000}"
export GF_AUTH_ANONYMOUS_ENABLED="${GF_AUTH_ANONYMOUS_ENABLED:-true}"
export GF_AUTH_ANONYMOUS_ORG_ROLE="${GF_AUTH_ANONYMOUS_ORG_ROLE:-Viewer}"
export GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH="${GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH:-$here/grafana/agenteval-dashboard.json}"
echo "run-grafana: http://$GF_SERVER_HTTP_ADDR:$GF_SERVER_HTTP_PORT/d/agenteval-scores, state in $data"
exec "${cmd[@]}" --homepath "$home" "$@"
