#!/usr/bin/env bash
# `calbench eval` (docs/eval.md) and `intervals` in a run: the ECE of a reference dataset equals
# the reference value to the printed precision, --json parses, malformed inputs exit 2 with the
# file and line number and print nothing on stdout, and a run with intervals writes the new
# columns.
#
# Usage: tests/cli/eval.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_eval usage="CALBENCH_BINARY SOURCE_DIR"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
data="$src/tests/reference/datasets"

# 1. The reference ECE (15 equal-width bins, top label) of dir_k3_n2000: 0.08481027356675136
#    (sklearn, netcal, kyle, ...), printed to 6 decimals.
if [ -f "$data/dir_k3_n2000.csv" ]; then
  "$bin" eval "$data/dir_k3_n2000.csv" --resamples 100 >"$work/table.txt" 2>"$work/table.err" ||
    fail "eval on dir_k3_n2000 exited $?: $(cat "$work/table.err")"
  grep -Eq '^  ece_ew15 +0\.084810 ' "$work/table.txt" || fail "ece_ew15 is not 0.084810: $(cat "$work/table.txt")"
  # The default set skips what does not apply or costs O(n^2), and says why.
  grep -q '^skipped kde_canonical: O(n^2): give it with --estimators' "$work/table.txt" ||
    fail "kde_canonical is not reported as skipped: $(cat "$work/table.txt")"
  grep -Eq '^  (kde_canonical|skce_gaussian_1_uq) ' "$work/table.txt" &&
    fail "a quadratic estimator ran by default: $(cat "$work/table.txt")"
  # Asked for by name, it runs: the leave-one-out estimate of tests/unit/test_kernel.cpp, 0.280500.
  "$bin" eval "$data/dir_k3_n2000.csv" --resamples 4 \
    --estimators '[{"name": "kde_canonical"}]' >"$work/kde.txt" 2>&1 ||
    fail "eval kde_canonical exited $?: $(cat "$work/kde.txt")"
  grep -Eq '^  kde_canonical +0\.280500 ' "$work/kde.txt" || fail "kde_canonical: $(cat "$work/kde.txt")"
  # An estimator that does not apply, asked for by name, is an input error (exit 2).
  "$bin" eval "$data/dir_k3_n2000.csv" --resamples 4 \
    --estimators '[{"name": "ece", "scope": "binary"}]' >"$work/binary.out" 2>"$work/binary.err"
  status=$?
  [ "$status" -eq 2 ] || fail "scope binary on K = 3: exit status $status, expected 2"
  grep -q 'estimator "ece_ew15_binary": scope binary needs K = 2 classes, found K = 3' \
    "$work/binary.err" || fail "scope binary on K = 3: message $(cat "$work/binary.err")"
  "$bin" eval "$data/dir_k3_n2000.csv" --resamples 100 --json \
    --estimators '[{"name": "ece", "bins": 15}]' >"$work/out.json" || fail "--json exited $?"
  python3 - "$work/out.json" <<'PY' || fail "--json output is not the documented shape"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["n"] == 2000 and d["classes"] == 3, d
e = d["estimators"]["ece_ew15"]
assert e["name"] == "ece" and e["params"]["bins"] == 15
assert abs(e["value"] - 0.08481027356675136) < 1e-12, e["value"]
lo, hi = e["ci"]
assert lo <= hi and 0 < e["p_calibrated"] <= 1
assert e["interval"] == "bias_corrected", e  # the default of ece and ace
assert "note" in e
PY
  # --interval picks the method for every estimator; an unknown one is an input error.
  "$bin" eval "$data/dir_k3_n2000.csv" --resamples 50 --interval percentile --json \
    --estimators '[{"name": "ece"}, {"name": "accuracy"}]' >"$work/pct.json" || fail "--interval exited $?"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["estimators"]; assert all(e["interval"] == "percentile" for e in d.values()), d' "$work/pct.json" ||
    fail "--interval percentile not used"
  # The default of ece falls back to consistency for a norm without a bias model.
  "$bin" eval "$data/dir_k3_n2000.csv" --resamples 20 --json \
    --estimators '[{"name": "ece", "norm": "l2"}]' >"$work/l2.json" || fail "ece l2 exited $?"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["estimators"]; assert all(e["interval"] == "consistency" and e["ci"] is not None for e in d.values()), d' "$work/l2.json" ||
    fail "ece norm l2: the default is not consistency"
  "$bin" eval "$data/dir_k3_n2000.csv" --resamples 5 --interval nope >/dev/null 2>"$work/nope.err"
  [ $? -eq 2 ] && grep -q 'unknown interval method "nope"' "$work/nope.err" ||
    fail "--interval nope: $(cat "$work/nope.err")"
  # The coverage note: on K = 3, n = 2,000 (region K 3-10, n 500-4999) every default estimator
  # whose default interval docs/intervals.md's "Where the defaults miss" lists for that region
  # names the measured coverage, and every other has no note; at least one of each.
  "$bin" eval "$data/dir_k3_n2000.csv" --resamples 20 --json >"$work/notes.json" ||
    fail "eval --json (all estimators) exited $?"
  python3 - "$work/notes.json" "$src/docs/intervals.md" <<'PY' || fail "coverage notes do not follow docs/intervals.md"
import json, sys
estimators = json.load(open(sys.argv[1]))["estimators"]
doc = open(sys.argv[2]).read().split("## Where the defaults miss")[1].split("\n## ")[0]
misses = {}
for line in doc.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if line.startswith("| ") and cells[0] != "estimator" and cells[2:4] == ["3-10", "500-4999"]:
        misses[cells[0]] = (cells[1], cells[4], cells[5])
flagged = covered = 0
for label, e in estimators.items():
    if label in misses and e["interval"] == misses[label][0]:
        method, coverage, where = misses[label]
        want = (f"coverage {coverage} at nominal 0.90 measured for K 3-10, n 500-4999 "
                f"({where}; docs/intervals.md)")
        assert e["note"] == want, (label, e["note"], want)
        flagged += 1
    else:
        assert e["note"] is None, (label, e["note"])
        covered += 1
assert flagged >= 1 and covered >= 1, (flagged, covered)
PY
  # Logits: the same probabilities after softmax must pass the checks.
  "$bin" eval "$data/logits_k3_n1000.csv" --logits --resamples 20 >/dev/null 2>"$work/logits.err" ||
    fail "eval --logits exited $?: $(cat "$work/logits.err")"
else
  fail "no reference dataset in $data"
fi

# 2. Malformed inputs: exit 2, the message names the file and the line, stdout empty.
bad() {  # NAME CONTENT PHRASE
  local file="$work/$1.csv"
  printf '%b' "$2" >"$file"
  "$bin" eval "$file" --resamples 10 >"$work/$1.out" 2>"$work/$1.err"
  local status=$?
  [ "$status" -eq 2 ] || fail "$1: exit status $status, expected 2"
  [ -s "$work/$1.out" ] && fail "$1: printed to stdout"
  grep -q "$file: $3" "$work/$1.err" || fail "$1: message lacks \"$file: $3\": $(cat "$work/$1.err")"
}
ok='0,0.5,0.5\n1,0.2,0.8\n'
bad ragged "${ok}1,0.5,0.25,0.25\n" "line 3: expected 3 fields"
bad sum "${ok}1,0.5,0.6\n" "line 3: probabilities sum to 1.1"
bad negative "${ok}0,1.5,-0.5\n" "line 3: probability 2 is -0.5"
bad nan "${ok}0,nan,0.5\n" "line 3: value 1 is nan"
bad inf "0,inf,0.5\n" "line 1: value 1 is inf"
bad label_range "${ok}2,0.5,0.5\n" "line 3: label 2 is out of range"
bad label_negative "-1,0.5,0.5\n" "line 1: label -1 is out of range"
bad label_fraction "${ok}${ok}1.5,0.5,0.5\n" "line 5: label \"1.5\" is not an integer"
bad text "0,0.5,abc\n" "line 1: field 3 \"abc\" is not a number"
bad blank "0,0.5,0.5\n\n1,0.5,0.5\n" "line 2: empty line"
bad empty "" "the file has no data rows"
"$bin" eval "$work/missing.csv" >"$work/missing.out" 2>"$work/missing.err"
[ $? -eq 2 ] && grep -q "missing.csv: cannot open" "$work/missing.err" || fail "missing file"
"$bin" eval "$work/ragged.csv" --estimators '[{"name": "nope"}]' >/dev/null 2>"$work/est.err"
[ $? -eq 2 ] || fail "bad --estimators should exit 2"
# Trailing empty lines are not data and not an error.
printf '0,0.5,0.5\n1,0.2,0.8\n\n\n' >"$work/trailing.csv"
"$bin" eval "$work/trailing.csv" --resamples 10 >/dev/null 2>&1 || fail "trailing empty lines"

# 3. NPY: float64 probabilities and int64 labels, then a label out of range (row numbers).
# Written with struct (no numpy needed): NPY 1.0, header padded to a multiple of 64 bytes.
python3 - "$work" <<'PY'
import struct, sys
w = sys.argv[1]
def save(name, descr, shape, fmt, values, order="False"):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, order, shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(w + "/" + name, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
p = [0.5, 0.5, 0.25, 0.75, 0.875, 0.125]
save("p.npy", "<f8", "(3, 2)", "d", p)
save("p32.npy", "<f4", "(3, 2)", "f", p)
# The same 3 x 2 array stored column by column (np.asfortranarray(p), a transposed view):
# numpy reads it as the same array, and so must calbench.
save("pf.npy", "<f8", "(3, 2)", "d", [0.5, 0.25, 0.875, 0.5, 0.75, 0.125], order="True")
save("y.npy", "<i8", "(3,)", "q", [0, 1, 0])
save("ybad.npy", "<i8", "(3,)", "q", [0, 1, 5])
save("huge.npy", "<f8", "(4, 4611686018427387904)", "d", p)  # 4 * 2^62 elements wraps size_t
save("wide.npy", "<f8", "(99999999999999999999999, 2)", "d", p)
PY
"$bin" eval "$work/p.npy" --labels "$work/y.npy" --resamples 10 >/dev/null || fail "NPY eval"
"$bin" eval "$work/p32.npy" --labels "$work/y.npy" --resamples 10 >/dev/null || fail "NPY f4"
"$bin" eval "$work/p.npy" --labels "$work/y.npy" --estimators ece,brier --resamples 10 --json \
  >"$work/c_order.json" &&
  "$bin" eval "$work/pf.npy" --labels "$work/y.npy" --estimators ece,brier --resamples 10 --json \
    >"$work/f_order.json" ||
  fail "NPY Fortran order"
cmp -s "$work/c_order.json" "$work/f_order.json" || fail "a Fortran-order NPY reads as another array"
"$bin" eval "$work/p.npy" --labels "$work/ybad.npy" >"$work/npy.out" 2>"$work/npy.err"
[ $? -eq 2 ] && grep -q "ybad.npy: row 2: label 5" "$work/npy.err" || fail "NPY bad label: $(cat "$work/npy.err")"
[ -s "$work/npy.out" ] && fail "NPY bad label printed to stdout"
for f in huge wide; do
  "$bin" eval "$work/$f.npy" --labels "$work/y.npy" >/dev/null 2>"$work/$f.err"
  [ $? -eq 2 ] && grep -q "$f.npy: NPY shape .* is too large" "$work/$f.err" ||
    fail "NPY $f shape: $(cat "$work/$f.err")"
done

# 4. A run with intervals writes the new columns.
"$bin" run "$src/tests/data/tiny_intervals.json" --out "$work/run" --quiet --threads 2 ||
  fail "run with intervals exited $?"
table "$work/run/cells.csv" | head -1 | grep -q ',coverage,coverage_se,rejection_rate,rejection_se$' ||
  fail "cells.csv lacks the interval columns: $(table "$work/run/cells.csv" | head -1)"
python3 - "$work/run/summary.json" <<'PY' || fail "summary.json lacks the interval fields"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["intervals"] == {"resamples": 50, "level": 0.9, "test_level": 0.05,
                          "methods": ["default"], "jackknife_groups": 100}, d["intervals"]
e = d["cells"][0]["estimators"]
assert 0 <= e["ece_ew15"]["coverage"] <= 1 and 0 <= e["ece_ew15"]["rejection_rate"] <= 1
m = e["ece_ew15"]["intervals"]
assert len(m) == 1 and m[0]["requested"] == "default" and m[0]["coverage"] == e["ece_ew15"]["coverage"]
PY
table "$work/run/intervals.csv" | head -1 | grep -q ',requested,method,coverage,coverage_se,truth_below,truth_above,mean_width$' ||
  fail "intervals.csv lacks its columns: $(table "$work/run/intervals.csv" | head -1)"
"$bin" run "$src/tests/data/tiny_intervals.json" --out "$work/run2" --threads 1 2>/dev/null |
  grep -Eq '^  estimator .* coverage +rejected$' || fail "the summary table lacks coverage columns"
"$bin" run "$src/tests/data/tiny.json" --out "$work/plain" --quiet --threads 1 || fail "plain run"
table "$work/plain/cells.csv" | head -1 | grep -q 'coverage' && fail "plain run has interval columns"

# 5. calib_err below its 2 beta rows evaluates no bin (its library returns 0): marked not
#    estimable with the reason, not printed as an estimate of 0 (issue #36).
head -150 "$src/tests/data/beta_fig1_n200.csv" >"$work/n150.csv"
"$bin" eval "$work/n150.csv" --estimators calib_err,ece --resamples 20 --json >"$work/ce.json" ||
  fail "eval calib_err on 150 rows"
python3 - "$work/ce.json" <<'PY' || fail "calib_err below 200 rows: $(cat "$work/ce.json")"
import json, sys
e = json.load(open(sys.argv[1]))["estimators"]
c = e["calib_err_b100"]
assert c["value"] is None and c["ci"] is None and c["estimable"] is False, c
assert c["note"] == ("not estimable: its bins of 100 rows leave none to evaluate below 200 "
                     "rows, where the library returns 0"), c["note"]
assert e["ece_ew15"]["value"] > 0 and "estimable" not in e["ece_ew15"], e["ece_ew15"]
PY
"$bin" eval "$src/tests/data/beta_fig1_n200.csv" --estimators calib_err --resamples 20 --json |
  python3 -c 'import json, sys; v = json.load(sys.stdin)["estimators"]["calib_err_b100"]["value"]; assert v > 0, v' ||
  fail "calib_err at 200 rows is an estimate"
finish
