#!/usr/bin/env bash
# `calbench eval --interval fake` and `--advice` (docs/intervals.md, "Fake-calibrated
# intervals"; docs/eval.md, "Advice"): on a K = 3 reference dataset the fake interval is used
# for every estimator and holds its default interval, no bound of an error is negative, an
# estimate outside its interval has a note, the advice names the least-RMSE estimator of each
# shared target with the fake's verdict, the table prints the advice, classwise_ece's eval
# default (and ace's, kde_ece's) is the fake interval (their own default method's interval where
# no fake can be fitted), 1 and 2
# threads give the same bytes, and bad values of the new options exit 2 with a message and print nothing; the
# small coverage study runs.
#
# Usage: tests/cli/eval_fake.sh CALBENCH_BINARY SOURCE_DIR [PYTHON3]
script=cli_eval_fake usage="CALBENCH_BINARY SOURCE_DIR"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
data="$src/tests/reference/datasets/dir_k3_n2000.csv"
estimators='[{"name": "ece", "bins": 15}, {"name": "ece", "bins": 15, "binning": "equal_mass"},
             {"name": "ece_debiased"}, {"name": "smooth_ece"}, {"name": "classwise_ece"},
             {"name": "ace"}, {"name": "accuracy"}, {"name": "brier"}]'
run() {  # THREADS OUT [FLAGS...]
  local threads=$1 out=$2
  shift 2
  "$bin" eval "$data" --resamples 40 --fake-samples 60 --level 0.9 --seed 3 \
    --estimators "$estimators" --threads "$threads" "$@" >"$out" 2>"$out.err"
}
run 1 "$work/one.json" --interval fake --json || fail "--interval fake exited $?: $(cat "$work/one.json.err")"
python3 - "$work/one.json" <<'PY' || fail "the fake interval's JSON is not as documented"
import json, sys
d = json.load(open(sys.argv[1]))
est, advice = d["estimators"], d["advice"]
for label, e in est.items():
    assert e["interval"] == "fake", (label, e)
    lo, hi = e["ci"]
    assert lo <= hi, (label, e)
    if label != "accuracy":
        assert lo >= 0, (label, e)  # an error: no negative bound
    if not lo <= e["value"] <= hi:
        assert e["note"] and "outside its interval" in e["note"], (label, e)
assert advice["n"] == 2000 and advice["fake_samples"] == 60, advice
assert advice["verdict"] in ("GOOD", "POOR") and advice["family"], advice
a = advice["estimators"]
for label, x in a.items():
    assert abs(x["rmse"] - (x["bias"] ** 2 + x["sd"] ** 2) ** 0.5) < 1e-12, (label, x)
    assert x["sd"] > 0, (label, x)
# ece_ew15, ece_em15 (ece_top_l1) share a target; so does nothing else here but they.
rec = {r["target"]: r for r in advice["recommended"]}
assert set(rec) == {"ece_top_l1"}, rec
shared = [l for l, x in a.items() if x["target"] == "ece_top_l1"]
best = min(shared, key=lambda l: a[l]["rmse"])
assert rec["ece_top_l1"]["estimator"] == best and rec["ece_top_l1"]["compared"] == len(shared)
assert [l for l, x in a.items() if x["recommended"]] == [best]
assert a["smooth_ece"]["target"] is None  # its own population value
PY
# The fake interval is reported as its hull with the estimator's default method's interval
# (classwise_ece's consistency, ace's bias_corrected, whose eval default is the fake interval
# itself): it holds it, and "default_ci" (only with a fake interval) is that interval as
# --interval METHOD reports it, from the same resamples (so is p_calibrated).
run 1 "$work/default.json" --json || fail "the default intervals exited $?"
run 1 "$work/consistency.json" --json --interval consistency || fail "--interval consistency exited $?"
run 1 "$work/bias_corrected.json" --json --interval bias_corrected || fail "--interval bias_corrected exited $?"
python3 - "$work/one.json" "$work/default.json" "$work/consistency.json" "$work/bias_corrected.json" <<'PY' || fail "a fake interval does not hold the default's, or default_ci is not it"
import json, sys
fake, default, consistency, bias_corrected = (json.load(open(f))["estimators"] for f in sys.argv[1:])
eval_fake = {"cwece_ew15": consistency, "ace15_nixon": bias_corrected}
for label, own in eval_fake.items():
    default[label] = own[label]
for label, e in fake.items():
    (lo, hi), (dlo, dhi) = e["ci"], default[label]["ci"]
    assert lo <= dlo and dhi <= hi, (label, e["ci"], default[label]["ci"])
    assert e["default_ci"] == default[label]["ci"], (label, e["default_ci"], default[label]["ci"])
    assert e["p_calibrated"] == default[label]["p_calibrated"], label
    assert "default_ci" not in default[label] or label in eval_fake, label
PY
# eval's default for classwise_ece and ace (EstimatorTraits::eval_fake; kde_ece's too) is the
# fake interval, the same bits as --interval fake's; every other estimator keeps its own
# default, and no advice block is printed unless asked for.
python3 - "$work/default.json" "$work/one.json" "$work/consistency.json" "$work/bias_corrected.json" <<'PY' || fail "classwise_ece's and ace's eval default is not the fake interval"
import json, sys
by_default, fake, consistency, bias_corrected = (json.load(open(f)) for f in sys.argv[1:])
assert "advice" not in by_default
own = {"cwece_ew15": consistency, "ace15_nixon": bias_corrected}
for label, e in by_default["estimators"].items():
    if label in own:
        assert e["interval"] == "fake", e
        assert e["ci"] == fake["estimators"][label]["ci"], (e, fake["estimators"][label])
        assert e["default_ci"] == own[label]["estimators"][label]["ci"], e
    else:
        assert e["interval"] != "fake" and "default_ci" not in e, (label, e)
PY
# Where no fake can be fitted (constant rows), classwise_ece falls back to its consistency
# interval with a note saying why; eval succeeds.
"$bin" eval "$src/tests/reference/datasets/k2_identical.csv" --resamples 5 --json \
  --estimators '[{"name": "classwise_ece"}, {"name": "ece"}]' >"$work/fallback.json" 2>"$work/fallback.err" ||
  fail "constant rows by default: exit $?: $(cat "$work/fallback.err")"
python3 - "$work/fallback.json" <<'PY' || fail "no fallback to the consistency interval: $(cat "$work/fallback.json")"
import json, sys
e = json.load(open(sys.argv[1]))["estimators"]["cwece_ew15"]
assert e["interval"] == "consistency" and e["ci"] is not None and "default_ci" not in e, e
assert e["note"].startswith("no fake interval, its default here: ") and "same probabilities" in e["note"], e
assert "the consistency interval instead" in e["note"], e
PY
run 2 "$work/two.json" --interval fake --json || fail "2 threads exited $?"
cmp -s "$work/one.json" "$work/two.json" || fail "1 and 2 threads differ: $(diff "$work/one.json" "$work/two.json" | head -5)"
# The table: the default intervals and the advice block with its recommendation.
run 2 "$work/table.txt" --advice || fail "--advice exited $?: $(cat "$work/table.txt.err")"
grep -q '^advice: the fake fitted to these rows' "$work/table.txt" || fail "no advice block: $(cat "$work/table.txt")"
grep -Eq '^report ece_(ew|em)15 for ece_top_l1: the least predicted RMSE' "$work/table.txt" ||
  fail "no recommendation: $(cat "$work/table.txt")"
grep -Eq '^  ece_ew15 .* bias_corrected' "$work/table.txt" || fail "--advice changed the default interval"
# Without --advice or the fake interval, no advice (the default output is unchanged).
"$bin" eval "$data" --resamples 10 --estimators '[{"name": "ece"}]' --json >"$work/plain.json" ||
  fail "plain eval exited $?"
python3 -c 'import json,sys; assert "advice" not in json.load(open(sys.argv[1]))' "$work/plain.json" ||
  fail "advice printed without being asked"
# Bad values: exit 2, a message naming the option, nothing on stdout.
bad() {  # NAME PHRASE FLAGS...
  local name=$1 phrase=$2
  shift 2
  "$bin" eval "$data" --resamples 10 "$@" >"$work/$name.out" 2>"$work/$name.err"
  local status=$?
  [ "$status" -eq 2 ] || fail "$name: exit status $status, expected 2"
  [ -s "$work/$name.out" ] && fail "$name: printed to stdout"
  grep -q -- "$phrase" "$work/$name.err" || fail "$name: message lacks \"$phrase\": $(cat "$work/$name.err")"
}
bad samples_one "--fake-samples" --advice --fake-samples 1
bad samples_text "--fake-samples" --advice --fake-samples many
bad interval 'unknown interval method "fakes"' --interval fakes
# Data no fake can be fitted to: the fit's reason, and which option asked for the fake.
"$bin" eval "$src/tests/reference/datasets/k2_identical.csv" --resamples 5 --advice \
  >"$work/constant.out" 2>"$work/constant.err"
status=$?
[ "$status" -eq 2 ] || fail "constant rows with --advice: exit status $status, expected 2"
grep -q "all 40 rows have the same probabilities.*(the fake of --advice and --interval fake" \
  "$work/constant.err" || fail "constant rows with --advice: $(cat "$work/constant.err")"
finish "fake interval and advice"
