#!/usr/bin/env bash
# calbench fit from the command line: a fit on a small CSV, the config it writes runs, JSON
# output parses, and bad input exits 2 with nothing written (docs/fit.md).
script=cli_fit usage="CALBENCH_BINARY"
# Few fake samples and resamples where the verdict's and predictions' numbers are not tested.
quick=(--replicates 5 --resamples 5 --sizes 100)
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# 400 rows, K = 3, from a fixed linear congruential stream: overconfident-ish by construction
# (the label follows the largest p only 70 % of the time).
awk 'BEGIN { s = 12345; for (i = 0; i < 400; i++) {
  s = (s * 1103515245 + 12345) % 2147483648; a = 1 + s % 97
  s = (s * 1103515245 + 12345) % 2147483648; b = 1 + s % 89
  s = (s * 1103515245 + 12345) % 2147483648; c = 1 + s % 83
  t = a * a + b * b + c * c; pa = a * a / t; pb = b * b / t; pc = 1 - pa - pb
  s = (s * 1103515245 + 12345) % 2147483648; u = (s % 1000) / 1000
  top = (pa >= pb && pa >= pc) ? 0 : (pb >= pc ? 1 : 2)
  y = (u < 0.7) ? top : (top + 1 + (s % 2)) % 3
  printf "%d,%.17g,%.17g,%.17g\n", y, pa, pb, pc } }' >"$work/model.csv"

"$bin" fit "$work/model.csv" --out "$work/fake.json" "${quick[@]}" >"$work/fit.out" 2>"$work/fit.err" ||
  fail "fit exited $?: $(cat "$work/fit.err")"
grep -q "<- chosen" "$work/fit.out" || fail "no chosen map in: $(cat "$work/fit.out")"
grep -q "total variation distance" "$work/fit.out" || fail "no histogram comparison"
"$bin" validate "$work/fake.json" >/dev/null || fail "the written config does not validate"
# The default family is empirical: its rows are written beside the config with their SHA-256,
# the config runs, and a changed rows file is refused (exit 2, naming the pointer).
grep -q '"family": "empirical"' "$work/fake.json" || fail "the default fit is not empirical"
[ -s "$work/fake.rows.npy" ] || fail "no rows file beside the config"
python3 - "$work/fake.json" <<'PY' || fail "the empirical config's rows: $(cat "$work/fake.json")"
import hashlib, json, os, sys
cfg = json.load(open(sys.argv[1]))
g = cfg["generator"]
rows = os.path.join(os.path.dirname(sys.argv[1]), g["rows"])
assert g["rows"] == "fake.rows.npy", g["rows"]
assert hashlib.sha256(open(rows, "rb").read()).hexdigest() == g["sha256"]
PY
python3 - "$work/fake.json" <<'PY' || fail "cannot shrink the config"
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["replicates"] = 20
cfg["truth"] = {"samples": 400000}
cfg["output"] = {"directory": sys.argv[1] + ".results"}
json.dump(cfg, open(sys.argv[1], "w"))
PY
(cd "$work" && "$bin" run fake.json --quiet >/dev/null 2>"$work/run.err") ||
  fail "the empirical config does not run: $(cat "$work/run.err")"
mkdir -p "$work/elsewhere" && (cd "$work/elsewhere" && "$bin" validate ../fake.json >/dev/null) ||
  fail "the rows file is not read relative to the config"
printf 'x' >>"$work/fake.rows.npy"
"$bin" validate "$work/fake.json" >/dev/null 2>"$work/sha.err"
[ $? -eq 2 ] && grep -q "/generator/sha256" "$work/sha.err" || fail "changed rows file: $(cat "$work/sha.err")"
"$bin" fit "$work/model.csv" --json --map temperature "${quick[@]}" >"$work/fit.json" || fail "fit --json"
python3 - "$work/fit.json" <<'PY' || fail "fit --json is not the documented JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["n"] == 400 and d["classes"] == 3
assert d["generator"]["miscalibration"]["map"] == "temperature"
assert [m["map"] for m in d["maps"]] == ["temperature"]
assert 0 <= d["fake"]["accuracy"]["value"] <= 1 and d["fake"]["accuracy"]["method"]
assert abs(sum(d["model"]["confidence_histogram"]) - 1) < 1e-12
PY

# Bad input: exit 2, a message naming the file or option, no config written.
head -1 "$work/model.csv" >"$work/one.csv"
"$bin" fit "$work/one.csv" --out "$work/one.json" >/dev/null 2>"$work/one.err"
[ $? -eq 2 ] && grep -q "one.csv: fit needs at least 2 rows" "$work/one.err" ||
  fail "one row: $(cat "$work/one.err")"
[ -e "$work/one.json" ] && fail "one row: a config was written"
"$bin" fit "$work/missing.csv" >/dev/null 2>"$work/missing.err"
[ $? -eq 2 ] && grep -q "missing.csv" "$work/missing.err" || fail "missing file: $(cat "$work/missing.err")"
"$bin" fit "$work/model.csv" --map bogus >/dev/null 2>"$work/map.err"
[ $? -eq 2 ] && grep -q "\-\-map" "$work/map.err" || fail "--map bogus: $(cat "$work/map.err")"

# Data no fake can be fitted to (issue #23): exit 2, a message saying what is wrong, nothing
# written. bad NAME PATTERN: fit NAME.csv --out, expect status 2 and PATTERN on stderr.
bad() {
  "$bin" fit "$work/$1.csv" --out "$work/$1.json" >/dev/null 2>"$work/$1.err"
  local status=$?
  [ "$status" -eq 2 ] && grep -q "$2" "$work/$1.err" || fail "$1: exit $status: $(cat "$work/$1.err")"
  [ -e "$work/$1.json" ] && fail "$1: a config was written"
  return 0
}
awk -F, '{ print 1 "," $2 "," $3 "," $4 }' "$work/model.csv" >"$work/one_class.csv"
bad one_class "one_class.csv: every one of the 400 labels is class 1: fit needs labels of at least two classes"
for K in 2 3 10; do  # a constant classifier with uniform rows, at several K
  awk -v K=$K 'BEGIN { for (i = 0; i < 50; i++) { printf "%d", i % K
    for (k = 0; k < K; k++) printf ",%.17g", 1 / K; printf "\n" } }' >"$work/uniform$K.csv"
  bad uniform$K "uniform$K.csv: all 50 rows have the same probabilities"
done
awk 'BEGIN { for (i = 0; i < 50; i++) printf "%d,0.98,0.01,0.01\n", i % 3 }' >"$work/confident.csv"
bad confident "confident.csv: all 50 rows have the same probabilities (0.98, 0.01, 0.01)"
printf '0,1\n0,1\n1,1\n' >"$work/k1.csv"
bad k1 "k1.csv: line 1: one probability per row: calbench needs every class.s probability"
printf '0,0.3,0.7\n2,0.6,0.4\n1,0.5,0.5\n' >"$work/label_range.csv"
bad label_range "label_range.csv: line 2: label 2 is out of range: must be 0 .. 1"
printf '0,0.3,0.7\n1,nan,0.4\n1,0.5,0.5\n' >"$work/nan.csv"
bad nan "nan.csv: line 2: value 1 is nan: must be finite"

# The verdict's folds: too few rows for them, or a folds or holdout value out of range, exit 2
# naming the option; nothing written.
head -6 "$work/model.csv" >"$work/six.csv"
bad six "six.csv: --folds: 5 folds of 6 rows: need at least 2 folds and 2 rows per fold (n >= 10)"
"$bin" fit "$work/model.csv" --folds 1 --out "$work/folds1.json" >/dev/null 2>"$work/folds1.err"
[ $? -eq 2 ] && grep -q -- "--folds: Value 1 not in range 2 to 100" "$work/folds1.err" ||
  fail "--folds 1: $(cat "$work/folds1.err")"
for h in 0 1 -0.2 x; do
  "$bin" fit "$work/model.csv" --holdout "$h" --out "$work/holdout.json" >/dev/null 2>"$work/holdout.err"
  [ $? -eq 2 ] && grep -q -- "--holdout: must be a fraction > 0 and < 1, found $h" "$work/holdout.err" ||
    fail "--holdout $h: $(cat "$work/holdout.err")"
done
[ -e "$work/folds1.json" ] || [ -e "$work/holdout.json" ] && fail "a bad --folds or --holdout wrote a config"
# More data no fake can be fitted to, or that is not probabilities: exit 2, nothing written.
printf '0,0.3,0.7\n-1,0.6,0.4\n1,0.5,0.5\n' >"$work/negative_label.csv"
bad negative_label "negative_label.csv: line 2: label -1 is out of range: must be 0 .. 1"
printf '0,0.3,0.7\n1,inf,0.4\n1,0.5,0.5\n' >"$work/inf.csv"
bad inf "inf.csv: line 2: value 1 is inf: must be finite"
printf '0,0.3,0.7\n1.5,0.6,0.4\n1,0.5,0.5\n' >"$work/fraction_label.csv"
bad fraction_label 'fraction_label.csv: line 2: label "1.5" is not an integer class index'
# Identical rows that are not all one row: a model with two distinct outputs (ties everywhere)
# is fitted and judged, with a verdict printed (no crash, no raw library message).
awk 'BEGIN { for (i = 0; i < 60; i++) { if (i % 2) printf "%d,0.7,0.2,0.1\n", i % 3
  else printf "%d,0.2,0.5,0.3\n", (i / 2) % 3 } }' >"$work/two_outputs.csv"
"$bin" fit "$work/two_outputs.csv" "${quick[@]}" >"$work/two_outputs.out" 2>"$work/two_outputs.err" ||
  fail "two distinct outputs: exit $?: $(cat "$work/two_outputs.err")"
grep -q "^verdict: \(GOOD\|POOR\)" "$work/two_outputs.out" || fail "two distinct outputs: no verdict"
# One split instead of folds (--holdout): the verdict on ceil(0.2 n) held-out rows.
"$bin" fit "$work/model.csv" --json --holdout 0.2 "${quick[@]}" --verdict-samples 10 >"$work/split.json" ||
  fail "--holdout 0.2"
python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["verdict"]; assert (v["folds"], v["held_out_rows"], v["fit_rows"]) == (1, 80, 320), v' \
  "$work/split.json" || fail "--holdout 0.2: not one split of 80 held-out rows"

# The verdict and the predictions in --json, the same bytes on 1 and 2 threads.
"$bin" fit "$work/model.csv" --json --threads 1 --sizes 100,400,800 --replicates 20 --resamples 20 \
  --verdict-samples 20 >"$work/t1.json" || fail "fit --threads 1"
"$bin" fit "$work/model.csv" --json --threads 2 --sizes 100,400,800 --replicates 20 --resamples 20 \
  --verdict-samples 20 >"$work/t2.json" || fail "fit --threads 2"
cmp -s "$work/t1.json" "$work/t2.json" || fail "fit --json differs between 1 and 2 threads"
python3 - "$work/t1.json" <<'PY' || fail "fit --json: verdict or predictions not as documented"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["verdict"]
assert v["verdict"] in ("GOOD", "POOR") and v["folds"] == 5 and v["held_out_rows"] == 400 and v["fit_rows"] == 320, v
names = [c["check"] for c in v["checks"]]
assert names == ["accuracy", "mean confidence", "ece_ew15", "ece_em15", "dece_em15", "smooth_ece",
                 "cwece_ew15", "ace15_nixon", "confidence histogram", "reliability curve"], names
assert v["absent_classes"] == []
assert (v["verdict"] == "POOR") == any(c["fails"] for c in v["checks"])
p = d["predictions"]
assert [(c["estimator"], c["n"]) for c in p["cells"]][:2] == [("ece_ew15", 100), ("ece_em15", 100)]
for c in p["cells"]:
    assert (c["bootstrap"] is None) == (c["n"] > 400), c
    assert c["fake"]["sd"] > 0
assert p["references"]["smooth_ece"]["bias_against"] == "own population value"
assert p["references"]["ece_ew15"]["bias_against"] == "target truth"
PY
# The classwise map (K = 3 here): its choices in --json, and --no-classwise turns it off.
python3 - "$work/t1.json" <<'PY' || fail "fit --json: the classwise block"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["classwise"]
assert set(c) == {"top", "other", "wrong_rows", "top_scores", "other_scores"}, c
assert c["top_scores"][0]["candidate"] == "none" and c["other_scores"][0]["candidate"] == "none"
assert "classwise_ece_l1" in d["fake"]
PY
"$bin" fit "$work/model.csv" --json --no-classwise --sizes 100 --replicates 10 --resamples 10 \
  --verdict-samples 10 >"$work/plain.json" || fail "--no-classwise"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "classwise" not in d["generator"], d["generator"]' \
  "$work/plain.json" || fail "--no-classwise wrote a classwise map"

# A class that never occurs among the labels (issue #35): nothing is known of its calibration,
# so the verdict is POOR whatever the checks say, naming the class.
awk 'BEGIN { s = 7; for (i = 0; i < 400; i++) {
  s = (s * 1103515245 + 12345) % 2147483648; a = 0.2 + 0.6 * (s % 1000) / 1000
  printf "%d,%.6f,%.6f,%.6f\n", (s % 7 < 4) ? 0 : 1, a * 0.8, (1 - a) * 0.8, 0.2 } }' >"$work/absent.csv"
"$bin" fit "$work/absent.csv" --json --sizes 100 --replicates 10 --resamples 10 \
  --verdict-samples 20 >"$work/absent.json" || fail "fit on a model with an absent class"
python3 - "$work/absent.json" <<'PY' || fail "an absent class is not POOR"
import json, sys
v = json.load(open(sys.argv[1]))["verdict"]
assert v["verdict"] == "POOR" and v["absent_classes"] == [2], v
assert any("never occurs" in r and "class 2" in r for r in v["reasons"]), v["reasons"]
PY

"$bin" fit "$work/model.csv" --json --estimators accuracy,brier --sizes 50 --replicates 10 \
  --resamples 10 --verdict-samples 10 >"$work/names.json" || fail "--estimators as names"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [c["estimator"] for c in d["predictions"]["cells"]] == ["accuracy", "brier"]' \
  "$work/names.json" || fail "--estimators accuracy,brier"
"$bin" fit "$work/model.csv" --estimators bogus_metric >/dev/null 2>"$work/est.err"
[ $? -eq 2 ] && grep -q "bogus_metric" "$work/est.err" || fail "--estimators bogus: $(cat "$work/est.err")"

# A model that is always confidently wrong (accuracy 0, ECE about 0.95): POOR, --out refused
# with exit status 3 and nothing written; --force writes it with the verdict recorded. The
# parametric families cannot express it (the empirical family reproduces it, GOOD), so they are
# the fake whose POOR path is tested here.
awk 'BEGIN { s = 99; for (i = 0; i < 300; i++) {
  s = (s * 1103515245 + 12345) % 2147483648; top = 0.9 + 0.09 * (s % 1000) / 1000
  k = i % 3; for (j = 0; j < 3; j++) q[j] = (j == k) ? top : (1 - top) / 2
  printf "%d,%.17g,%.17g,%.17g\n", (k + 1) % 3, q[0], q[1], q[2] } }' >"$work/wrong.csv"
"$bin" fit "$work/wrong.csv" --family parametric --out "$work/wrong.json" --verdict-samples 50 --replicates 10 \
  --resamples 10 >"$work/wrong.out" 2>"$work/wrong.err"
status=$?
[ $status -eq 3 ] || fail "always wrong: exit $status, expected 3: $(cat "$work/wrong.err")"
grep -q "verdict: POOR" "$work/wrong.out" || fail "always wrong: no POOR verdict: $(cat "$work/wrong.out")"
grep -q "^  accuracy: held-out 0.0000" "$work/wrong.out" || fail "always wrong: accuracy not a reason"
grep -q "wrong.json not written (--force" "$work/wrong.err" || fail "always wrong: $(cat "$work/wrong.err")"
[ -e "$work/wrong.json" ] && fail "always wrong: a POOR config was written without --force"
"$bin" fit "$work/wrong.csv" --family parametric --out "$work/wrong.json" --force --verdict-samples 50 --replicates 10 \
  --resamples 10 >/dev/null 2>"$work/wrong.err" || fail "--force: $(cat "$work/wrong.err")"
"$bin" validate "$work/wrong.json" >/dev/null || fail "the --force config does not validate"
# The default (empirical) family reproduces the always-wrong model instead of contradicting it
# (issue #28 item 6: a fake with accuracy 0.998 for a model with accuracy 0): the fake's true
# accuracy is that of the data, 0, within the truth's Monte Carlo error.
"$bin" fit "$work/wrong.csv" --json --verdict-samples 20 --replicates 5 --resamples 5 --sizes 100 \
  >"$work/wrong_empirical.json" || fail "always wrong, empirical: exit $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); a=d["fake"]["accuracy"]; assert d["family"] == "empirical" and a["value"] < 0.01, a; v=d["verdict"]; assert v["verdict"] == "GOOD" or v["reasons"], v' \
  "$work/wrong_empirical.json" || fail "always wrong: the empirical fake contradicts the data"
# It needs the penalty rule's step 2 (docs/fit.md): 0.1 cannot bend the curve to accuracy 0.
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["penalty_rule"]; assert r["penalty"] == 0.01 and r["reason"].startswith("better than 0.1 by"), r' \
  "$work/wrong_empirical.json" || fail "always wrong: the penalty rule's step 2 did not choose 0.01"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d["provenance"]["verdict"]; assert v["verdict"] == "POOR" and v["reasons"], v' \
  "$work/wrong.json" || fail "the written config does not record the verdict"

# Binary data (K = 2): 600 rows, the score f = p_1 skewed towards 1 with every tenth row exactly
# 1 (a point mass), labels y = 1 with probability f^1.5. Only beta_binary has a point mass, so
# the joint AIC must choose it; the written config runs it.
awk 'BEGIN { s = 777; for (i = 0; i < 600; i++) {
  s = (s * 1103515245 + 12345) % 2147483648; u = (s % 100000 + 0.5) / 100000
  f = (i % 10 == 0) ? 1 : u ^ 0.6
  s = (s * 1103515245 + 12345) % 2147483648; v = (s % 100000) / 100000
  y = (v < f ^ 1.5) ? 1 : 0
  printf "%d,%.17g,%.17g\n", y, 1 - f, f } }' >"$work/binary.csv"
"$bin" fit "$work/binary.csv" --family parametric --json --out "$work/binary.json" "${quick[@]}" >"$work/binary.out" 2>"$work/binary.err" ||
  fail "binary fit exited $?: $(cat "$work/binary.err")"
python3 - "$work/binary.out" <<'PY' || fail "binary fit --json: $(cat "$work/binary.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["classes"] == 2 and d["family"] == "beta_binary", d["family"]
g = d["generator"]
assert g["family"] == "beta_binary" and abs(g["point_mass"] - 0.1) < 1e-12, g
assert g["calibration"]["curve"] in ("identity", "polynomial", "logit_logit"), g
fams = {f["family"]: f for f in d["families"]}
other = fams.pop("beta_binary") and [f for f in fams.values()]
# The other candidate is the BIC-chosen Dirichlet model (single or mixture): no mass at p_1 = 1.
assert len(other) == 1 and other[0]["family"] in ("dirichlet", "dirichlet_mixture"), other
assert other[0]["aic"] is None, other
assert [c["curve"] for c in d["curves"]] == ["identity", "polynomial", "logit_logit"], d["curves"]
assert any(r.startswith("logistic") for r in d["rejected_curves"]), d["rejected_curves"]
PY
"$bin" validate "$work/binary.json" >/dev/null || fail "the written beta_binary config does not validate"
"$bin" fit "$work/binary.csv" --family dirichlet --json "${quick[@]}" >"$work/binary_d.out" ||
  fail "--family dirichlet on binary data"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["generator"]["family"] == "dirichlet"' \
  "$work/binary_d.out" || fail "--family dirichlet did not give a dirichlet generator"
"$bin" fit "$work/binary.csv" --family parametric "${quick[@]}" >"$work/binary.txt" || fail "binary fit, text"
grep -q "beta_binary: p_1 ~ Beta(" "$work/binary.txt" || fail "no beta_binary table: $(cat "$work/binary.txt")"
"$bin" fit "$work/model.csv" --family beta_binary --out "$work/k3.json" >/dev/null 2>"$work/k3.err"
[ $? -eq 2 ] && grep -q "model.csv: .*K = 2" "$work/k3.err" || fail "beta_binary on K = 3: $(cat "$work/k3.err")"
[ -e "$work/k3.json" ] && fail "beta_binary on K = 3: a config was written"

finish
