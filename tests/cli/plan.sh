#!/usr/bin/env bash
# calbench plan from the command line (docs/plan.md): the same result file for 1 and 2 threads,
# a generator taken from `calbench fit --out`, and bad input exiting 2 with the file, the JSON
# pointer and the rule, nothing written.
script=cli_plan usage="CALBENCH_BINARY SOURCE_DIR"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Determinism: the result file is a pure function of the plan file.
"$bin" plan "$src/configs/plan/width_example.json" --threads 1 --quiet --out "$work/one.json" \
  >"$work/one.out" 2>"$work/one.err" || fail "width_example on 1 thread exited $?: $(cat "$work/one.err")"
"$bin" plan "$src/configs/plan/width_example.json" --threads 2 --quiet --out "$work/two.json" \
  >"$work/two.out" 2>&1 || fail "width_example on 2 threads exited $?"
cmp -s "$work/one.json" "$work/two.json" || fail "the result files differ between 1 and 2 threads"
cmp -s <(grep -v '^wrote' "$work/one.out") <(grep -v '^wrote' "$work/two.out") ||
  fail "the tables differ between 1 and 2 threads"
# Its normal interval covers 0.832 at the width's n (nominal 0.9): the answer is refused.
grep -q "^would be: n = " "$work/one.out" && grep -q "^answer refused: the normal interval holds" "$work/one.out" ||
  fail "no refused answer in: $(cat "$work/one.out")"
[ -s "$work/one.err" ] && fail "--quiet printed on stderr: $(cat "$work/one.err")"
python3 - "$work/one.json" <<'PY' || fail "the result file is not the documented JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["schema"] == "calbench.plan/1"
assert d["plan"]["question"] == {"width": 0.02, "level": 0.9, "interval": "normal"}
a = d["answer"]
assert a["status"] == "refused" and a["n"] is None and "below the nominal 0.9" in a["reason"], a
assert a["n_low_95"] <= a["n_refused"] <= a["n_high_95"] + 1
ns = [p["n"] for p in d["points"]]
assert ns == sorted(ns) and ns[0] == 100
assert d["interval"] == "normal"
assert d["reference"]["target"] == "ece_top_l1" and d["reference"]["method"] == "quadrature"
assert all(0 <= p["coverage"] <= 1 and p["coverage_se"] >= 0 for p in d["points"])
assert a["at_n"]["n"] == a["n_refused"] and 0 <= a["at_n"]["coverage"] < 0.85
PY
grep -q "^coverage at n = " "$work/one.out" || fail "no coverage at the answer in: $(cat "$work/one.out")"

# A generator fitted by `calbench fit` (K = 2, 400 rows from a fixed congruential stream).
awk 'BEGIN { s = 777; for (i = 0; i < 400; i++) {
  s = (s * 1103515245 + 12345) % 2147483648; p = 0.02 + 0.96 * (s % 10007) / 10007
  s = (s * 1103515245 + 12345) % 2147483648; u = (s % 10007) / 10007
  q = 0.5 + 0.8 * (p - 0.5); y = (u < q) ? 1 : 0
  printf "%d,%.17g,%.17g\n", y, 1 - p, p } }' >"$work/model.csv"
# --force: this test is about plan reading a fitted config, not the verdict; on 400 rows the
# cross-fitted verdict calls this model's fake POOR (its confidence histogram; docs/fit.md on
# the verdict's false-POOR rate at small n), and a POOR fake is written only with --force.
"$bin" fit "$work/model.csv" --force --out "$work/fake.json" >/dev/null 2>"$work/fit.err" ||
  fail "fit exited $?: $(cat "$work/fit.err")"
cat >"$work/from_fit.json" <<'JSON'
{"generator": "fake.json", "estimator": {"name": "brier"},
 "question": {"width": 0.05, "level": 0.9}, "replicates": 50,
 "search": {"n_min": 50, "n_max": 5000, "refine": 1}}
JSON
"$bin" plan "$work/from_fit.json" --quiet >"$work/from_fit.out" 2>"$work/from_fit.err" ||
  fail "a plan on the fitted generator exited $?: $(cat "$work/from_fit.err")"
grep -q "^generator: empirical:K=2:n=400:rows=" "$work/from_fit.out" || fail "not the fitted generator: $(cat "$work/from_fit.out")"
# The default interval is the estimator's default, as eval's (brier: bca), with its coverage.
cat >"$work/default_interval.json" <<'JSON'
{"generator": "fake.json", "estimator": {"name": "brier"},
 "question": {"width": 0.1, "resamples": 20, "jackknife_groups": 5}, "replicates": 20,
 "search": {"n_min": 50, "n_max": 800, "refine": 1}}
JSON
"$bin" plan "$work/default_interval.json" --quiet >"$work/default_interval.out" 2>&1 ||
  fail "a plan with the default interval exited $?: $(cat "$work/default_interval.out")"
grep -q "intervals of brier (bca, 20 resamples)" "$work/default_interval.out" &&
  grep -q "^coverage at n = " "$work/default_interval.out" ||
  fail "not brier's default bca interval with its coverage: $(cat "$work/default_interval.out")"

# Bad input: exit 2, FILE: /pointer: message, no result file.
expect_error() {  # NAME PATTERN: the plan $work/NAME.json must fail with PATTERN on stderr
  "$bin" plan "$work/$1.json" --quiet --out "$work/$1.result" >/dev/null 2>"$work/$1.err"
  local status=$?
  [ $status -eq 2 ] || fail "$1: exit $status, expected 2: $(cat "$work/$1.err")"
  grep -qF -- "$2" "$work/$1.err" || fail "$1: expected '$2' in: $(cat "$work/$1.err")"
  [ -e "$work/$1.result" ] && fail "$1: a result file was written"
}
generator='"generator": {"family": "dirichlet", "classes": 2, "alpha": 2}'
echo "{$generator, \"estimator\": {\"name\": \"brier\"}, \"question\": {\"width\": 0}}" >"$work/zero.json"
expect_error zero "zero.json: /question/width: width = 0: must be > 0"
echo "{$generator, \"estimator\": {\"name\": \"brier\"}, \"question\": {\"power\": 0.8, \"detect\": {\"ece\": 0.7}}}" >"$work/reach.json"
expect_error reach "reach.json: /question: detect = 0.7 is out of reach"
echo "{$generator, \"estimator\": {\"name\": \"brier\"}, \"question\": {\"width\": 0.1}," >"$work/syntax.json"
expect_error syntax "syntax.json"
echo '{"generator": "nowhere.json", "estimator": {"name": "brier"}, "question": {"width": 0.1}}' >"$work/missing.json"
expect_error missing "missing.json: /generator: the generator is read from"
"$bin" plan "$work/absent.json" >/dev/null 2>"$work/absent.err"
[ $? -eq 2 ] && grep -q "absent.json" "$work/absent.err" || fail "absent plan: $(cat "$work/absent.err")"

finish
