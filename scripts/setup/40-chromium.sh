#!/usr/bin/env bash
# Makes sure Debian's Chromium is at /usr/bin/chromium for the report's browser test
# (test/report/report.e2e.test.ts drives it with playwright-core; Playwright's own browser
# download is not used). Idempotent: does nothing when it is already installed.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "40-chromium: /usr/bin/chromium is missing and this user cannot install Debian packages." >&2
    echo "40-chromium: run as root (or with passwordless sudo): apt-get update && apt-get install -y chromium" >&2
    exit 1
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "40-chromium: no apt-get here; install Chromium so that /usr/bin/chromium exists." >&2
  exit 1
fi

echo "40-chromium: installing Debian's chromium package..." >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
[ -x /usr/bin/chromium ] || { echo "40-chromium: /usr/bin/chromium still missing after install" >&2; exit 1; }
echo "40-chromium: $(/usr/bin/chromium --version 2>/dev/null | head -n1)" >&2
