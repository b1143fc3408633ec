#!/usr/bin/env bash
# npm run stack / npm run stack:stop: the loopwatch gateway collector and Prometheus on loopback,
# with demo agent traffic, in the background (see test/e2e/support/stack.ts).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmd="${1:-start}"
if [ "$cmd" = start ]; then
  bash "$repo/scripts/setup/10-prometheus.sh"
  bash "$repo/scripts/setup/20-collector.sh" >/dev/null
fi
exec node "$repo/node_modules/tsx/dist/cli.mjs" "$repo/test/e2e/support/stack.ts" "$cmd"
