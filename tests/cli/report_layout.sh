#!/usr/bin/env bash
# Issue #25: the HTML report's headline tables (truth, mean, bias ± SE, sd, RMSE per estimator)
# fit a 1,400 px window. A quickstart-shaped run (every estimator, both sweep keys; fewer
# replicates and sizes) is rendered, laid out by headless Chromium at 1,400 px, and every
# headline table must lie inside the window with no column hidden (tests/cli/report_layout.py).
# The same page in a 400 px window (each table is 550-600 px wide) must NOT fit, so the check can fail. Chromium is required:
# scripts/setup.sh installs it, and a missing browser is a failure, not a skip.
#
# Usage: report_layout.sh CALBENCH_BINARY SOURCE_DIR PYTHON3
script=report_layout usage="CALBENCH_BINARY SOURCE_DIR PYTHON3"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
python=$3
unset CALBENCH_NO_REPORT CALBENCH_PYTHON
chromium=$(command -v chromium) ||
  { echo "$script: FAIL: chromium is not installed (scripts/setup.sh tests installs it)" >&2; exit 1; }

"$python" - "$src/configs/quickstart.json" "$work/quickstart.json" <<'PY' || fail "config"
import json, sys
c = json.load(open(sys.argv[1]))
c.update(replicates=10, truth={"samples": 16000, "population_samples": 8000},
         reliability={"samples": 20000})
c["sweep"]["sample_size"] = [100, 1000]
json.dump(c, open(sys.argv[2], "w"))
PY
"$bin" run "$work/quickstart.json" --threads 2 --quiet --out "$work/run" >"$work/run.out" \
  2>"$work/run.err" || fail "run: $(cat "$work/run.err")"
page="$work/run/report/index.html"
[ -s "$page" ] || fail "no report page"

"$python" -B "$src/tests/cli/report_layout.py" "$page" "$chromium" 1400 "$work" >"$work/1400.txt"
status=$?
cat "$work/1400.txt"
[ "$status" -eq 0 ] || fail "a headline table does not fit 1,400 px (status $status)"
[ "$(grep -c '^fits: ' "$work/1400.txt")" -ge 5 ] || fail "fewer than 5 headline tables measured"

"$python" -B "$src/tests/cli/report_layout.py" "$page" "$chromium" 400 "$work" >"$work/400.txt"
status=$?
[ "$status" -eq 1 ] || fail "at 400 px the check should find a table that does not fit (status $status): $(cat "$work/400.txt")"
finish "headline tables fit 1,400 px"
