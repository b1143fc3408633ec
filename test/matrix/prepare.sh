#!/usr/bin/env bash
# Prepares the SDK matrix cells (test/matrix/<cell>/): each is a small project with its own
# lockfile that consumes loopwatch the way users do, from the packed tarball (`npm pack`) of the
# built package. Idempotent and fast when warm:
# - dist is rebuilt only when a source file is newer than it (CI builds before testing);
# - the tarball is repacked only when dist or package.json changed (content hash);
# - a cell runs `npm ci` only when its lockfile hash changed, and reinstalls the tarball only
#   when the tarball changed (`npm install --no-save`: the cell's lockfile stays third-party only).
# Usage: prepare.sh [cell...]   (default: every cell)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
matrix="$repo/test/matrix"
work="$repo/.tmp/matrix"
mkdir -p "$work"
exec 9>"$work/.lock"
flock 9
cd "$repo"

hash() { sha256sum | cut -c1-16; }
quiet_npm() { npm --no-audit --no-fund --loglevel=error "$@" 2>&1 | grep -v 'Unknown user config' >&2 || true; }

if [ ! -f dist/index.js ] || [ ! -f dist/register.cjs ] || [ -n "$(find src -name '*.ts' -newer dist/index.js -print -quit)" ]; then
  echo "matrix: building dist" >&2
  npm run build >&2
fi

pack_hash="$(cat package.json register/package.json advanced/package.json schema/*.json dist/*.js dist/*.cjs dist/*.d.ts dist/*.d.cts 2>/dev/null | hash)"
tgz="$work/loopwatch.tgz"
if [ ! -f "$tgz" ] || [ "$(cat "$work/pack.hash" 2>/dev/null)" != "$pack_hash" ]; then
  echo "matrix: packing loopwatch" >&2
  rm -rf "$work/pack" && mkdir -p "$work/pack"
  npm pack --ignore-scripts --pack-destination "$work/pack" >/dev/null 2>&1
  mv "$work/pack"/loopwatch-*.tgz "$tgz"
  echo "$pack_hash" >"$work/pack.hash"
fi

if [ $# -eq 0 ]; then
  set -- $(cd "$matrix" && for d in */package.json; do dirname "$d"; done)
fi
for cell in "$@"; do
  dir="$matrix/$cell"
  [ -f "$dir/package-lock.json" ] || { echo "matrix: $cell has no package-lock.json" >&2; exit 1; }
  lock_hash="$(hash <"$dir/package-lock.json")"
  if [ "$(cat "$dir/node_modules/.matrix-lock" 2>/dev/null)" != "$lock_hash" ]; then
    echo "matrix: $cell: npm ci" >&2
    (cd "$dir" && quiet_npm ci)
    echo "$lock_hash" >"$dir/node_modules/.matrix-lock"
  fi
  if [ "$(cat "$dir/node_modules/.matrix-pack" 2>/dev/null)" != "$pack_hash" ]; then
    echo "matrix: $cell: installing the packed loopwatch" >&2
    (cd "$dir" && quiet_npm install --no-save --prefer-offline "$tgz")
    [ -f "$dir/node_modules/loopwatch/package.json" ] || { echo "matrix: $cell: loopwatch did not install" >&2; exit 1; }
    echo "$pack_hash" >"$dir/node_modules/.matrix-pack"
  fi
done
