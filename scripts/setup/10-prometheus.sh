#!/usr/bin/env bash
# Makes sure `prometheus` and `promtool` (Debian's package, 2.42 on bookworm) are on PATH.
# Idempotent: does nothing when both are present. The tests never use the package's own
# service: they start their own `prometheus` with their own config and data dir on a free
# loopback port. So the install below keeps the package's init script from starting a daemon.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "10-prometheus: prometheus/promtool are missing and this user cannot install Debian packages." >&2
    echo "10-prometheus: run as root (or with passwordless sudo): apt-get update && apt-get install -y prometheus" >&2
    exit 1
  fi
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "10-prometheus: no apt-get here; install Prometheus >= 2.42 so that 'prometheus' and 'promtool' are on PATH." >&2
  exit 1
fi

# policy-rc.d exit code 101 = "action forbidden": dpkg's maintainer scripts then install the
# service without starting it (no stray Prometheus on :9090 that a test could talk to by mistake).
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod 755 "$policy"
  created_policy=1
fi
cleanup() { if [ "$created_policy" = 1 ]; then "${as_root[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

echo "10-prometheus: installing Debian's prometheus package (gives prometheus and promtool)..." >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends prometheus >/dev/null

for tool in prometheus promtool; do
  command -v "$tool" >/dev/null 2>&1 || { echo "10-prometheus: '$tool' still missing after install" >&2; exit 1; }
done
echo "10-prometheus: $(promtool --version 2>&1 | head -n1)" >&2
