#!/usr/bin/env bash
# Builds loopwatch's OpenTelemetry Collector from Go modules with the Collector Builder (ocb),
# once per manifest: binary and generated sources are cached outside the repo, keyed by the
# manifest's hash (see scripts/collector-path.sh). A warm run only checks the cache and prints
# the binary's path. Needs Go and the Go module proxy on a cold run only.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
manifest="$repo/collector-config/builder-config.yaml"
bin="$(bash "$repo/scripts/collector-path.sh" --expected)"
dir="$(dirname "$(dirname "$bin")")"          # .../otelcol/<sha>
root="$(dirname "$dir")"                      # .../otelcol
name="$(basename "$bin")"

if [ -x "$bin" ] && [ -e "$dir/.complete" ]; then
  echo "$bin"
  exit 0
fi

version="$(sed -n 's/^# ocb-version: *\(v[0-9][0-9.]*\).*/\1/p' "$manifest" | head -n1)"
[ -n "$version" ] || { echo "20-collector: no '# ocb-version: vX.Y.Z' line in $manifest" >&2; exit 1; }
command -v go >/dev/null 2>&1 || {
  echo "20-collector: Go is needed once to build the collector ($version) and is not on PATH." >&2
  exit 1
}
command -v flock >/dev/null 2>&1 || { echo "20-collector: flock (util-linux) is missing" >&2; exit 1; }

mkdir -p "$root"
# Two `npm test` runs (or a test and `npm run stack`) may start together: build once.
exec 9>"$root/.lock-$(basename "$dir")"
flock 9
if [ -x "$bin" ] && [ -e "$dir/.complete" ]; then
  echo "$bin"
  exit 0
fi

started=$(date +%s)
builder_dir="$root/builder-$version"
builder="$builder_dir/builder"
if [ ! -x "$builder" ]; then
  echo "20-collector: installing the collector builder $version..." >&2
  GOBIN="$builder_dir" go install "go.opentelemetry.io/collector/cmd/builder@$version" >&2
fi

tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
cp "$manifest" "$tmp/builder-config.yaml"
echo "20-collector: building $name from $(basename "$manifest") (cold build: several minutes; log: $tmp/build.log)..." >&2
if ! (cd "$tmp" && "$builder" --config builder-config.yaml) >"$tmp/build.log" 2>&1; then
  tail -n 40 "$tmp/build.log" >&2
  echo "20-collector: build failed (full log above was $tmp/build.log)" >&2
  exit 1
fi
"$tmp/_build/$name" --version >/dev/null || { echo "20-collector: built binary does not run" >&2; exit 1; }

rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
touch "$dir/.complete"
echo "20-collector: built $name in $(( $(date +%s) - started ))s" >&2
echo "$bin"
