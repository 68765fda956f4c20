#!/usr/bin/env bash
# The Debian packages listed in system-packages.txt, the missing ones installed with apt.
#
#   install-system-packages.sh             install what is missing; fail if that is impossible
#                                           (`make system-deps`, which .ci/run calls)
#   install-system-packages.sh --if-possible   install what is missing when running as root
#                                           (or with passwordless sudo) on a system with apt;
#                                           otherwise say what is missing and go on
#   install-system-packages.sh --report     say what is still missing, what that skips and
#                                           the command that installs it (`make test` and
#                                           `make demo` end with this)
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"

packages=() purposes=()
while IFS= read -r line; do
    line="${line%%$'\r'}"
    [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
    packages+=("$(sed -e 's/#.*//' -e 's/[[:space:]]//g' <<<"$line")")
    purposes+=("$(sed -n -e 's/^[^#]*#[[:space:]]*//p' <<<"$line")")
done < system-packages.txt

missing=() missing_purposes=()
for i in "${!packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "${packages[$i]}" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("${packages[$i]}")
        missing_purposes+=("${purposes[$i]}")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    [ "$mode" = "--report" ] || echo "system packages: all present (${packages[*]})"
    exit 0
fi

if [ "$mode" = "--report" ]; then
    echo "system packages missing, so these were skipped:"
    for i in "${!missing[@]}"; do echo "  ${missing[$i]}: ${missing_purposes[$i]}"; done
    if command -v apt-get >/dev/null; then
        echo "install them with: sudo apt-get install ${missing[*]}   (or run make system-deps as root)"
    else
        echo "install their equivalents with your system's package manager (these are Debian names)"
    fi
    exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        as_root=(sudo -n)
    elif [ "$mode" = "--if-possible" ]; then
        echo "system packages: ${missing[*]} missing; not installed (needs root or passwordless sudo)"
        exit 0
    else
        as_root=(sudo)
    fi
fi
if ! command -v apt-get >/dev/null; then
    echo "system packages: ${missing[*]} missing; not installed (no apt-get on this system)"
    [ "$mode" = "--if-possible" ] && exit 0
    exit 1
fi
echo "system packages: installing ${missing[*]}"
if "${as_root[@]}" apt-get update -qq && "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    exit 0
fi
echo "system packages: installing ${missing[*]} failed"
[ "$mode" = "--if-possible" ] && exit 0
exit 1
