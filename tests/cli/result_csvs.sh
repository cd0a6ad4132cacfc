#!/usr/bin/env bash
# Every CSV a command writes is read by pandas.read_csv(path) with no options and by Python's
# csv module (issue #25, "Plain tidy files"; DESIGN.md section 4): header on line 1, no comment
# lines, every row as wide as the header, the columns the header names. The files: each
# scenario's (cells, replicates, intervals, reliability, requirements, leaderboard,
# leaderboard_agreement, leaderboard_contrast), eval --plot's reliability.csv and recalibrate apply's calibrated rows.
# A CSV in any output directory that this list does not name fails too, so a new file is checked
# as soon as a command writes it.
#
# Usage: result_csvs.sh CALBENCH_BINARY SOURCE_DIR PYTHON3
script=result_csvs usage="CALBENCH_BINARY SOURCE_DIR PYTHON3"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
py=$3
"$py" -c 'import pandas' 2>/dev/null || skip "no pandas for $py"
export CALBENCH_NO_REPORT=1

for config in tiny tiny_intervals tiny_recalibration tiny_report tiny_decision; do
  "$bin" run "$src/tests/data/$config.json" --out "out/$config" --threads 2 --quiet \
    >"$config.out" 2>"$config.err" || fail "run $config: $(cat "$config.err")"
done
head -n 400 "$src/tests/reference/datasets/dir_k10_n5000.csv" >data.csv
"$bin" eval data.csv --resamples 20 --estimators '[{"name": "ece"}]' --plot out/eval_plot \
  >eval.out 2>eval.err || fail "eval --plot: $(cat eval.err)"
"$bin" recalibrate fit data.csv --method temperature --out model.json >fit.out 2>fit.err ||
  fail "recalibrate fit: $(cat fit.err)"
mkdir -p out/apply
"$bin" recalibrate apply model.json data.csv --out out/apply/calibrated.csv >apply.out 2>apply.err ||
  fail "recalibrate apply: $(cat apply.err)"

"$py" - <<'PY' >check.out 2>&1 || fail "$(cat check.out)"
import csv, glob, os
import pandas as pd

expected = {  # every CSV the runs above must write, by output directory
    "tiny": {"cells.csv", "replicates.csv"},
    "tiny_intervals": {"cells.csv", "intervals.csv"},
    "tiny_recalibration": {"cells.csv", "leaderboard.csv", "leaderboard_agreement.csv",
                           "leaderboard_contrast.csv"},
    "tiny_report": {"cells.csv", "replicates.csv", "reliability.csv"},
    "tiny_decision": {"cells.csv", "requirements.csv"},
    "eval_plot": {"reliability.csv"},
    "apply": {"calibrated.csv"},
}
problems = []
for directory, names in expected.items():
    found = {os.path.basename(p) for p in glob.glob(f"out/{directory}/**/*.csv", recursive=True)}
    if found != names:
        problems.append(f"{directory}: CSV files {sorted(found)}, expected {sorted(names)}")
    for name in sorted(found & names):
        path = f"out/{directory}/{name}"
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        header = rows[0] if rows else []
        frame = pd.read_csv(path)  # no options
        if not header or header[0].startswith("#"):
            problems.append(f"{path}: line 1 is not a header: {header}")
        if list(frame.columns) != header:
            problems.append(f"{path}: pandas columns {list(frame.columns)} != header {header}")
        if len(frame) != len(rows) - 1 or len(frame) == 0:
            problems.append(f"{path}: pandas read {len(frame)} rows of {len(rows) - 1}")
        widths = {len(r) for r in rows}
        if widths != {len(header)}:
            problems.append(f"{path}: rows of {sorted(widths)} fields, header {len(header)}")
        if any(str(c).startswith("Unnamed") for c in frame.columns):
            problems.append(f"{path}: unnamed columns {list(frame.columns)}")
print("\n".join(problems) if problems else f"{sum(map(len, expected.values()))} CSV files")
raise SystemExit(1 if problems else 0)
PY
finish "$(tail -1 check.out)"
