#!/usr/bin/env bash
# The tables of docs/truth.md, "Precision and stopping": the default Monte Carlo truth at K = 3
# against the quadrature (tests/unit/test_truth_precision.cpp, all cases including [slow]) and at
# K >= 4 against long runs (scripts/truth-precision.py). Writes OUT (default
# results/truth-precision.md); paste its tables into the docs.
# CALBENCH_TESTS names the test program (default build/release/calbench_tests).
# Usage: scripts/truth-precision.sh [OUT] [-- truth-precision.py options, e.g. --quick]
# The wide sweep of docs/truth.md is separate (hours on 2 cores at full size):
#   PYTHONPATH=python /usr/bin/python3 scripts/truth-precision.py --sweep [--classes 4,10] > F
#   PYTHONPATH=python /usr/bin/python3 scripts/truth-precision.py --summarise F...
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/truth-precision.md}
shift || true
[ "${1:-}" = "--" ] && shift
mkdir -p "$(dirname "$out")"
k3=$(mktemp)
trap 'rm -f "$k3"' EXIT
CALBENCH_TRUTH_TABLE="$k3" "${CALBENCH_TESTS:-build/release/calbench_tests}" "default Monte Carlo truth at K = 3*"
{
  echo "| generator (K = 3) | quantity | default Monte Carlo | quadrature | difference | reported error |"
  echo "|---|---|---|---|---|---|"
  cat "$k3"
  echo
  PYTHONPATH=python /usr/bin/python3 scripts/truth-precision.py "$@"
} > "$out"
echo "wrote $out"
