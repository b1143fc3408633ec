#!/usr/bin/env bash
# Makes sure the Python venv for the serve e2e exists: the real OpenTelemetry SDK, its OTLP/HTTP
# exporter, OpenInference's instrumentation helpers and the MCP clients (mcp, openai-agents) from PyPI, pinned in
# test/e2e/python/requirements.txt. Cached outside the repo, keyed by that file's hash; a warm run
# only checks the marker and prints the venv's python. Needs python3 (>= 3.9) with venv, and PyPI
# on a cold run only. LOOPWATCH_PYTHON (a python with those packages) skips all of this.
set -euo pipefail
if [ -n "${LOOPWATCH_PYTHON:-}" ]; then echo "$LOOPWATCH_PYTHON"; exit 0; fi
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
req="$repo/test/e2e/python/requirements.txt"
sha="$(sha256sum "$req" | cut -c1-16)"
root="${LOOPWATCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/loopwatch}"
dir="$root/python-$sha"
py="$dir/bin/python"
if [ -x "$py" ] && [ -e "$dir/.complete" ]; then echo "$py"; exit 0; fi

command -v python3 >/dev/null 2>&1 || { echo "50-python: python3 is needed for the serve e2e and is not on PATH" >&2; exit 1; }
command -v flock >/dev/null 2>&1 || { echo "50-python: flock (util-linux) is missing" >&2; exit 1; }
mkdir -p "$root"
exec 9>"$dir.lock"
flock 9
if [ -x "$py" ] && [ -e "$dir/.complete" ]; then echo "$py"; exit 0; fi
echo "50-python: creating $dir from $(basename "$req")..." >&2
rm -rf "$dir"
if ! python3 -m venv "$dir" >&2; then
  echo "50-python: python3 -m venv failed; on Debian: apt-get install -y python3-venv" >&2
  exit 1
fi
"$py" -m pip install --quiet --disable-pip-version-check --no-input -r "$req" >&2
"$py" -c "import opentelemetry.sdk, opentelemetry.exporter.otlp.proto.http, openinference.instrumentation, mcp, agents.mcp" >&2
touch "$dir/.complete"
echo "$py"
