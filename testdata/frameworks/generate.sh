#!/usr/bin/env bash
# Regenerates testdata/samples/*.json: real agent frameworks (pinned in
# package-lock.json) with scripted models, traced with the OpenTelemetry JS SDK
# and serialised as OTLP/JSON. Needs Node >= 20 and the npm registry. Not run
# by CI; the Go tests read the committed files.
set -euo pipefail
cd "$(dirname "$0")"
out="${1:-../samples}"
npm ci --no-audit --no-fund
mkdir -p "$out"
rm -f "$out"/vercel_ai_*.json "$out"/langgraph_*.json "$out"/openai_agents_*.json
for fw in vercel_ai langgraph openai_agents; do
  for sc in $(node src/main.mjs "$fw" --list); do
    node src/main.mjs "$fw" "$sc" "$out"
  done
done
node src/verify.mjs "$out"
