#!/usr/bin/env bash
# Regenerates testdata/conformance/<framework>_<scenario>.json: one npm project per
# framework (pinned package.json + package-lock.json), scripted models, spans captured
# in memory and written as OTLP/JSON. Needs Node >= 20 and the npm registry (npm ci);
# the runs themselves use no network. Not run by CI: the Go tests read the committed
# files and compare them with the hand-written *.expect.json beside them.
# Usage: generate.sh [framework ...]   (default: every directory with a run.mjs)
#        CONFORMANCE_OUT=<dir> writes elsewhere (default testdata/conformance).
set -euo pipefail
cd "$(dirname "$0")"
out="$(cd "${CONFORMANCE_OUT:-../../conformance}" && pwd)"
fws=("$@")
if [ ${#fws[@]} -eq 0 ]; then
  for d in */run.mjs; do fws+=("$(dirname "$d")"); done
fi
for fw in "${fws[@]}"; do
  (
    cd "$fw"
    # semconv/ (hand-written spans) has no dependency.
    if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; fi
    for sc in $(node run.mjs --list); do
      node run.mjs "$sc" "$out"
    done
  )
done
