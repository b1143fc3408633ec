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
echo "20-collector: building $name from $(basename "$manifest") with $(go version | cut -d' ' -f3) (done once per manifest;" >&2
echo "20-collector: a cold build downloads ~1.8 GB of Go modules and compiles for about 5 minutes on 2 cores; log: $tmp/build.log)" >&2
(cd "$tmp" && "$builder" --config builder-config.yaml) >"$tmp/build.log" 2>&1 &
build_pid=$!
# A heartbeat every 30 s, so a first `npm test` does not look hung while the collector builds.
while kill -0 "$build_pid" 2>/dev/null; do
  for _ in $(seq 30); do kill -0 "$build_pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$build_pid" 2>/dev/null; then
    modules=$(grep -c 'go: downloading' "$tmp/build.log" 2>/dev/null || true)
    echo "20-collector: still building ($(( $(date +%s) - started ))s so far, ${modules:-0} Go modules downloaded)..." >&2
  fi
done
if ! wait "$build_pid"; then
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
