#!/usr/bin/env bash
# Installs what calbench needs from Debian's packages (only what is missing; `tests` adds the
# browser and the Slurm daemons the test suite uses), builds the release preset (`tests`: also
# the test suite) and puts `calbench` on PATH. Idempotent: a second run only
# rebuilds what changed. Run as root on Debian 12: `bash scripts/setup.sh [quickstart | tests]`.
# `check [quickstart | tests]` changes nothing: it names the packages missing and exits 1 when
# there are any, 0 when every one is installed (tests/studies/scripts.py runs it).
set -euo pipefail
cd "$(dirname "$0")/.."

# What to build: the quick start's needs first (the command line and the Python module), and
# with `tests` then everything else (the test suite and its helpers), so that the README's first
# command does not wait for the test suite.
check=false
if [ "${1:-}" = check ]; then
  check=true
  shift
fi
what=${1:-quickstart}
case $what in
  quickstart | tests) ;;
  *) echo "usage: scripts/setup.sh [check] [quickstart | tests]" >&2; exit 2 ;;
esac

packages=(g++ cmake ninja-build git libboost-dev libboost-math-dev libboost-random-dev libtbb-dev
          nlohmann-json3-dev catch2 libcli11-dev libeigen3-dev liblbfgspp-dev libssl-dev libxgboost-dev
          python3 python3-numpy python3-pandas python3-matplotlib python3-dev pybind11-dev
          python3-pybind11 python3-sklearn python3-venv python3-pip python3-setuptools)
# Only for the test suite, never for the quick start: chromium renders the HTML report headless
# (report.layout, cli.report); slurmctld, slurmd, slurm-client and munge are the one-node
# cluster of cli.slurm_cluster (scripts/slurm-local.sh, docs/cluster.md).
test_packages=(chromium slurmctld slurmd slurm-client munge)
[ "$what" = tests ] && packages+=("${test_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if $check; then
  if [ ${#missing[@]} -gt 0 ]; then
    echo "calbench setup: missing for $what: ${missing[*]}"
    exit 1
  fi
  echo "calbench setup: all ${#packages[@]} packages for $what are installed"
  exit 0
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "calbench setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# `import calbench` for Debian's /usr/bin/python3 from any directory, without PyPI: a .pth
# file in its site-packages names this checkout's python/ (rewritten only when it differs).
site_dir=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
pth="$site_dir/calbench.pth"
if [ "$(cat "$pth" 2>/dev/null)" != "$PWD/python" ]; then
  mkdir -p "$site_dir"
  printf '%s\n' "$PWD/python" >"$pth"
  echo "calbench setup: $pth -> $PWD/python" >&2
fi

cmake --preset release >/dev/null
cmake --build --preset release --target calbench calbench_core
[ "$what" = tests ] && cmake --build --preset release

# `calbench` on PATH: a symlink to this checkout's binary in /usr/local/bin (when writable).
link=/usr/local/bin/calbench
if [ -w "$(dirname "$link")" ] && [ "$(readlink "$link" 2>/dev/null)" != "$PWD/build/release/calbench" ]; then
  ln -sfn "$PWD/build/release/calbench" "$link"
  echo "calbench setup: $link -> $PWD/build/release/calbench" >&2
fi
