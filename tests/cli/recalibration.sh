#!/usr/bin/env bash
# Smoke run of `calbench run` on tests/data/tiny_recalibration.json: the result files other
# than run.json are byte-identical on 1 and 2 threads, cells.csv has one row per (cell,
# method, quantity), run.json carries the fit times, output.timings puts them into
# summary.json, a generator given by targets adds the solved parameters to cells.csv,
# `calbench list recalibrators` lists the methods and `calbench validate` the cells.
#
# Usage: tests/cli/recalibration.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_recalibration usage="CALBENCH_BINARY SOURCE_DIR" fail_fast=1
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
config="$src/tests/data/tiny_recalibration.json"

# tiny_recalibration.json: 2 cells (fit_size 100, 300), 4 methods + uncalibrated.
cells=2

for threads in 1 2; do
  "$bin" run "$config" --threads "$threads" --out "$work/t$threads" --quiet \
    >"$work/t$threads.out" 2>"$work/t$threads.err"
  status=$?
  [ "$status" -eq 0 ] || fail "run --threads $threads exited $status: $(cat "$work/t$threads.err")"
done
for file in config.resolved.json summary.json cells.csv; do
  cmp "$work/t1/$file" "$work/t2/$file" || fail "$file differs between 1 and 2 threads"
done
grep -q '"fit_seconds"' "$work/t1/run.json" || fail "run.json has no fit_seconds"
grep -q '"fit_seconds"' "$work/t1/summary.json" && fail "summary.json has fit_seconds by default"
table "$work/t1/cells.csv" | head -n 1 | grep -q '^cell,fit_size,test_size,replicates,method,' ||
  fail "cells.csv header: $(table "$work/t1/cells.csv" | head -n 1)"
for method in uncalibrated temperature isotonic histogram_binning_em5 'classwise(temperature)'; do
  rows=$(grep -cF ",$method," "$work/t1/cells.csv")
  [ "$rows" -gt "$cells" ] || fail "cells.csv has $rows rows for $method"
done
[ -e "$work/t1/replicates.csv" ] && fail "replicates.csv written for a recalibration run"

# output.timings: the fit times go into summary.json as well.
sed 's/"output": {/"output": {"timings": true, /' "$config" >"$work/timed.json"
"$bin" run "$work/timed.json" --out "$work/timed" --quiet 2>"$work/timed.err" ||
  fail "run with output.timings failed: $(cat "$work/timed.err")"
grep -q '"fit_seconds"' "$work/timed/summary.json" || fail "output.timings did not add fit_seconds"

# A generator given by targets: cells.csv carries the solved parameters, as estimator_bias's.
sed -e 's/"alpha": 0.5,/"target": {"accuracy": 0.8, "ece_top_l1": 0.05, "direction": "overconfident"},/' \
  -e 's/{"map": "temperature", "temperature": 0.6}/{"map": "temperature"}/' "$config" >"$work/targets.json"
"$bin" run "$work/targets.json" --out "$work/targets" --quiet 2>"$work/targets.err" ||
  fail "run with targets failed: $(cat "$work/targets.err")"
table "$work/targets/cells.csv" | head -n 1 |
  grep -q '^cell,solved_alpha,solved_temperature,solved_gamma,fit_size,' ||
  fail "targets cells.csv header: $(table "$work/targets/cells.csv" | head -n 1)"
table "$work/targets/cells.csv" | sed -n 2p | grep -Eq '^0,[0-9.e-]+,[0-9.e-]+,,' ||
  fail "targets cells.csv row: $(table "$work/targets/cells.csv" | sed -n 2p)"

"$bin" list recalibrators >"$work/list.out" 2>&1 || fail "list recalibrators failed"
for name in temperature vector matrix dirichlet platt logistic beta isotonic histogram_binning \
  bbq ensemble_temperature scaling_binning classwise top_label_reduced platt_probability \
  quadratic centred_isotonic venn_abers kernel smoothing_spline cdf_spline svs sms \
  laplace_mixture; do
  grep -q "^  $name  " "$work/list.out" || fail "list recalibrators does not list $name"
done

# The methods of issue 26 through `calbench recalibrate fit|apply` on a scikit-learn model's
# outputs (tests/data/recalibration_methods): a model file, then K = 3 rows summing to 1.
data="$src/tests/data/recalibration_methods"
for name in platt_probability quadratic centred_isotonic venn_abers kernel smoothing_spline \
  cdf_spline svs sms '{"name": "laplace_mixture", "method": {"name": "isotonic"}}'; do
  "$bin" recalibrate fit "$data/k3_fit.csv" --method "$name" --out "$work/model.json" \
    >"$work/fit.out" 2>&1 || fail "recalibrate fit --method $name: $(cat "$work/fit.out")"
  "$bin" recalibrate apply "$work/model.json" "$data/k3_test.csv" --out "$work/q.csv" \
    >"$work/apply.out" 2>&1 || fail "recalibrate apply ($name): $(cat "$work/apply.out")"
  awk -F, 'NR > 1 { s = $2 + $3 + $4; if (s < 1 - 1e-9 || s > 1 + 1e-9) bad = 1; n++ }
           END { exit (bad || n != 300) }' "$work/q.csv" || fail "apply ($name) rows: $(head -3 "$work/q.csv")"
done

"$bin" validate "$config" >"$work/validate.out" 2>&1 || fail "validate failed"
grep -Eq '^cells: +2$' "$work/validate.out" || fail "validate: $(cat "$work/validate.out")"
grep -q 'fit_size=100' "$work/validate.out" || fail "validate does not show fit_size"

# A key of another scenario is a config error (exit 2).
sed 's/"test_size": 500,/"test_size": 500, "sample_size": 10,/' "$config" >"$work/bad.json"
"$bin" validate "$work/bad.json" >/dev/null 2>"$work/bad.err"
[ $? -eq 2 ] || fail "sample_size in a recalibration config did not exit 2"
grep -q '/sample_size: key "sample_size" is not used by scenario "recalibration"' "$work/bad.err" || fail "bad.err: $(cat "$work/bad.err")"

finish
