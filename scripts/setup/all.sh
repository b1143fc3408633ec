#!/usr/bin/env bash
# Makes sure every external tool the tests use is present. Each scripts/setup/NN-*.sh is
# idempotent and fast when its tool is already installed or cached; `npm test` and .ci/run call this.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for step in "$here"/[0-9][0-9]-*.sh; do
  [ -e "$step" ] || continue
  bash "$step"
done
