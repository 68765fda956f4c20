#!/usr/bin/env bash
# Installs the Debian packages listed in system-packages.txt, skipping those already present.
# Needs root (or sudo) and apt; prints what it installs.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' system-packages.txt | tr -d ' ')
missing=()
for package in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "system packages: all present (${wanted[*]:-none})"
    exit 0
fi
run_as_root=()
if [ "$(id -u)" -ne 0 ]; then run_as_root=(sudo); fi
echo "system packages: installing ${missing[*]}"
"${run_as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${run_as_root[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
