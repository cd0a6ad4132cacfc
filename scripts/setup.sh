#!/usr/bin/env bash
# Installs what calbench needs from Debian's packages (only what is missing) and builds the
# release preset. Idempotent: a second run only rebuilds what changed. Run as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build git libboost-dev libboost-math-dev libboost-random-dev libtbb-dev
          nlohmann-json3-dev catch2 libcli11-dev libeigen3-dev liblbfgspp-dev
          python3)  # python3: tests/cli_eval.sh checks `calbench eval --json` with it
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "calbench setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

preset=${1:-release}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
