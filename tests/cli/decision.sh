#!/usr/bin/env bash
# Scenario `decision` on the command line (docs/decisions.md): a small run with a recalibrator
# gives byte-identical result files on 1 and 2 threads (requirements.csv included), prints its
# frontier and verdict;
# the worked examples configs/requirements_*.json run in under a minute each;
# every bad `decision` / `requirement` / `recalibrator` config exits 2 with one message per problem at its JSON
# pointer, and writes nothing.
#
# Usage: tests/cli/decision.sh CALBENCH_BINARY SOURCE_DIR  (KEEP_WORK=1 keeps the temp directory)
script=cli_decision usage="CALBENCH_BINARY SOURCE_DIR"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ---- a small run: K = 3 (Monte Carlo) and the frontier -----------------------------------
cat >"$work/small.json" <<'JSON'
{
  "name": "small_decision",
  "scenario": "decision",
  "seed": 11,
  "replicates": 20,
  "sample_size": 100,
  "generator": {"family": "dirichlet", "classes": 3, "alpha": 0.5,
                "miscalibration": {"map": "temperature", "temperature": 0.8}},
  "decision": {"task": "cost_matrix", "utility": [[1, -1, -1], [-1, 1, -1], [-1, -1, 2]],
               "abstain": {"utility": -0.3}},
  "requirement": {"metric": "expected_utility", "at_least": 0.5},
  "recalibrator": {"method": {"name": "temperature"}, "fit_size": 300, "samples": 20000},
  "truth": {"samples": 20000},
  "sweep": {"generator.alpha": [0.2, 0.5, 1.0],
            "generator.miscalibration.temperature": [0.6, 1.0]}
}
JSON
"$bin" run "$work/small.json" --threads 1 --out "$work/t1" --quiet >"$work/t1.out" 2>"$work/t1.err" ||
  fail "run --threads 1 failed: $(cat "$work/t1.err")"
"$bin" run "$work/small.json" --threads 2 --out "$work/t2" >"$work/t2.out" 2>"$work/t2.err" ||
  fail "run --threads 2 failed: $(cat "$work/t2.err")"
for file in config.resolved.json summary.json cells.csv requirements.csv; do
  [ -f "$work/t1/$file" ] || fail "$file missing after run --threads 1"
  cmp -s "$work/t1/$file" "$work/t2/$file" || fail "$file differs between 1 and 2 threads"
done
[ "$(table "$work/t1/cells.csv" | wc -l)" -eq 7 ] || fail "cells.csv: expected a header and 6 rows"
[ "$(table "$work/t1/requirements.csv" | wc -l)" -eq 3 ] ||
  fail "requirements.csv: expected a header and 2 groups: $(cat "$work/t1/requirements.csv")"
table "$work/t1/requirements.csv" | head -n 1 | grep -q '^generator.miscalibration.temperature,metric,' ||
  fail "requirements.csv header: $(table "$work/t1/requirements.csv" | head -n 1)"
grep -q '^requirement frontier' "$work/t2.out" || fail "no frontier printed: $(cat "$work/t2.out")"
grep -q '^Verdict: ' "$work/t2.out" || fail "no verdict printed"
grep -q '"miscalibration_cost"' "$work/t1/summary.json" || fail "summary.json has no decision block"
grep -q '"abstention_rate"' "$work/t1/summary.json" || fail "summary.json has no task figures"
grep -q '"recalibrated"' "$work/t1/summary.json" || fail "summary.json has no recalibrated block"
table "$work/t1/cells.csv" | head -n 1 | grep -q ',recalibrator,recalibrator_fit_size,' ||
  fail "cells.csv has no recalibrated columns: $(table "$work/t1/cells.csv" | head -n 1)"
grep -q 'After recalibration by temperature fitted on 300 cases' "$work/t2.out" ||
  fail "the verdict does not mention the recalibrator: $(cat "$work/t2.out")"
# Without a requirement: no requirements.csv, and a stale one is removed.
grep -v '"requirement"' "$work/small.json" >"$work/noreq.json"
"$bin" run "$work/noreq.json" --out "$work/t1" --overwrite --quiet 2>"$work/noreq.err" ||
  fail "run without requirement failed: $(cat "$work/noreq.err")"
[ -e "$work/t1/requirements.csv" ] && fail "requirements.csv left from the earlier run"

# ---- the worked examples (README): each runs in under a minute and prints its frontier ----
# "Under a minute on 2 cores" is checked as under 120 s of CPU time (user + system): wall time
# on a shared machine measures its load, not calbench.
TIMEFORMAT='%3U %3S'
for example in "$src"/configs/requirements_*.json; do
  name=$(basename "$example" .json)
  { time "$bin" run "$example" --threads 2 --out "$work/$name" >"$work/$name.out" \
      2>"$work/$name.err"; } 2>"$work/$name.time" ||
    fail "$name: run failed: $(cat "$work/$name.err")"
  cpu=$(awk '{printf "%d", $1 + $2}' "$work/$name.time")
  [ "$cpu" -lt 120 ] || fail "$name used $cpu s of CPU (the README promises under a minute on 2 cores)"
  grep -q '^requirement frontier' "$work/$name.out" || fail "$name printed no frontier"
  grep -q '^Verdict: ' "$work/$name.out" || fail "$name printed no verdict"
  [ -s "$work/$name/requirements.csv" ] || fail "$name wrote no requirements.csv"
  grep -q ',unreachable,' "$work/$name/requirements.csv" && fail "$name: a level is unreachable"
done

# ---- bad configs -------------------------------------------------------------------------
cases=0
# expect_bad NAME CONTENT "POINTER|PHRASE"...: exit 2, exactly these error lines, nothing written.
expect_bad() {
  local name=$1 content=$2
  shift 2
  cases=$((cases + 1))
  local file="$work/$name.json" out="$work/out_$name"
  printf '%s' "$content" >"$file"
  "$bin" run "$file" --out "$out" --quiet >"$work/$name.stdout" 2>"$work/$name.stderr"
  local status=$?
  local stderr
  stderr=$(cat "$work/$name.stderr")
  [ "$status" -eq 2 ] || { fail "$name: exit status $status, expected 2: $stderr"; return; }
  [ -e "$out" ] && fail "$name: the output directory was created"
  local lines
  lines=$(grep -c '^error: ' "$work/$name.stderr")
  [ "$lines" -eq "$#" ] || fail "$name: $lines error lines, expected $#: $stderr"
  local expected pointer phrase
  for expected in "$@"; do
    pointer=${expected%%|*}
    phrase=${expected#*|}
    grep -F "error: $file: $pointer: " "$work/$name.stderr" | grep -qF "$phrase" ||
      fail "$name: no error at $pointer containing \"$phrase\": $stderr"
  done
}

gen2='{"family": "dirichlet", "classes": 2, "alpha": 0.5, "miscalibration": {"map": "temperature", "temperature": 0.8}}'
gen3='{"family": "dirichlet", "classes": 3, "alpha": 0.5}'
# config GENERATOR DECISION [EXTRA_MEMBERS]
config() {
  printf '{"scenario": "decision", "replicates": 5, "sample_size": 50,\n "generator": %s,\n "decision": %s%s}\n' \
    "$1" "$2" "${3:+,
 $3}"
}
triage='{"task": "triage", "harm": 0.5}'

expect_bad unknown_task "$(config "$gen2" '{"task": "poker"}')" \
  '/decision/task|unknown decision task "poker"'
expect_bad missing_decision '{"scenario": "decision", "replicates": 5, "sample_size": 50, "generator": {"family": "dirichlet", "classes": 2}}' \
  '/decision|required key'
expect_bad estimators_in_decision "$(config "$gen2" "$triage" '"estimators": [{"name": "ece"}]')" \
  '/estimators|not used by scenario "decision"'
expect_bad decision_in_bias '{"scenario": "estimator_bias", "replicates": 5, "sample_size": 50, "generator": {"family": "dirichlet", "classes": 2}, "estimators": [{"name": "ece"}], "decision": {"task": "triage"}, "requirement": {"at_least": 0}}' \
  '/decision|key "decision" is not used by scenario "estimator_bias"' \
  '/requirement|belongs to scenario "decision"'
expect_bad unknown_param "$(config "$gen2" '{"task": "triage", "harms": 0.5}')" \
  '/decision/harms|unknown key'
expect_bad bad_harm "$(config "$gen2" '{"task": "triage", "harm": -1}')" \
  '/decision/harm|harm = -1: must be > 0'
expect_bad disease_range "$(config "$gen2" '{"task": "triage", "disease": 2}')" \
  '/decision/disease|must be a class index < 2'
expect_bad disease_required "$(config "$gen3" '{"task": "triage"}')" \
  '/decision/disease|required key'
expect_bad odds_length "$(config "$gen2" '{"task": "betting", "odds": [2, 2, 2]}')" \
  '/decision/odds|expected an array of 2 numbers'
expect_bad odds_value "$(config "$gen2" '{"task": "betting", "odds": [2, 0.9]}')" \
  '/decision/odds/1|odds[1] = 0.9: must be >= 1.000001'
expect_bad matrix_shape "$(config "$gen3" '{"task": "cost_matrix", "utility": [[1, 0], [0, 1]]}')" \
  '/decision/utility|expected a 3 x 3' '/decision/utility/0|expected an array of 3 numbers, each in [-1e6, 1e6]' \
  '/decision/utility/1|expected an array of 3 numbers, each in [-1e6, 1e6]'
expect_bad two_bounds "$(config "$gen2" "$triage" '"requirement": {"at_least": 0.1, "at_most": 0.2}')" \
  '/requirement|give one bound, found at_least and at_most'
expect_bad no_bound "$(config "$gen2" "$triage" '"requirement": {"metric": "helped"}')" \
  '/requirement|expected one bound'
expect_bad unknown_metric "$(config "$gen2" "$triage" '"requirement": {"metric": "coverage", "at_least": 0.1}')" \
  '/requirement/metric|unknown metric "coverage"'
expect_bad regret_metric "$(config "$gen2" "$triage" '"requirement": {"metric": "helped", "regret": 0.1}')" \
  '/requirement/metric|a regret bound is on expected_utility'
expect_bad accuracy_key "$(config "$gen2" "$triage" '"requirement": {"at_least": 0.1, "accuracy_key": "generator.alpha"}')" \
  '/requirement/accuracy_key|is not a sweep key'
expect_bad sweep_requirement "$(config "$gen2" "$triage" '"requirement": {"at_least": 0.1}, "sweep": {"requirement.at_least": [0.1, 0.2]}')" \
  '/sweep/requirement.at_least|cannot sweep "requirement"'
expect_bad recalibrator_method "$(config "$gen2" "$triage" '"recalibrator": {"method": {"name": "warp"}, "fit_size": 100}')" \
  '/recalibrator/method/name|unknown recalibration method "warp"'
expect_bad recalibrator_fit_size "$(config "$gen2" "$triage" '"recalibrator": {"method": {"name": "temperature"}, "fit_size": 1}')" \
  '/recalibrator/fit_size|'
expect_bad recalibrator_missing "$(config "$gen2" "$triage" '"recalibrator": {"fit_size": 100, "sample": 5}')" \
  '/recalibrator/method|required key' '/recalibrator/sample|unknown key'
expect_bad recalibrator_param "$(config "$gen2" "$triage" '"recalibrator": {"method": {"name": "histogram_binning", "bins": 0}, "fit_size": 100}')" \
  '/recalibrator/method/bins|'
expect_bad recalibrator_in_bias '{"scenario": "estimator_bias", "replicates": 5, "sample_size": 50, "generator": {"family": "dirichlet", "classes": 2}, "estimators": [{"name": "ece"}], "recalibrator": {"method": {"name": "temperature"}, "fit_size": 100}}' \
  '/recalibrator|belongs to scenario "decision"'
expect_bad recalibration_fit_size "$(config "$gen2" "$triage" '"fit_size": 100')" \
  '/fit_size|belongs to scenario "recalibration"'
expect_bad swept_bad_harm "$(config "$gen2" "$triage" '"sweep": {"decision.harm": [1, -1]}')" \
  '/sweep/decision.harm/1|harm = -1: must be > 0'

finish "$cases bad configs and the run on 1 and 2 threads"
