#!/usr/bin/env bash
# Prints the path of loopwatch's collector binary, built by scripts/setup/20-collector.sh from
# collector-config/builder-config.yaml and cached outside the repo under
#   ${LOOPWATCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/loopwatch}/otelcol/<manifest sha>/_build/<dist.name>
# Exit 1 (path still printed) when that binary is not built yet; --expected skips the check.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
manifest="$repo/collector-config/builder-config.yaml"
[ -f "$manifest" ] || { echo "collector-path: missing $manifest" >&2; exit 2; }

sha="$(sha256sum "$manifest" | cut -c1-16)"
# dist.name: the first `name:` inside the top-level `dist:` block.
name="$(awk '/^dist:/{d=1;next} /^[^[:space:]#]/{d=0} d && $1=="name:"{print $2; exit}' "$manifest")"
[ -n "$name" ] || { echo "collector-path: no dist.name in $manifest" >&2; exit 2; }
root="${LOOPWATCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/loopwatch}/otelcol"
bin="$root/$sha/_build/$name"

echo "$bin"
if [ "${1:-}" != "--expected" ] && [ ! -x "$bin" ]; then
  echo "collector-path: not built yet; run: bash scripts/setup/20-collector.sh" >&2
  exit 1
fi
