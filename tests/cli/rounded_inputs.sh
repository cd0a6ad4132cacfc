#!/usr/bin/env bash
# Rounded inputs stay honest (issue #36, docs/eval.md "Saving a model's outputs"): a real
# model's probabilities saved with %.4f put exact zeros on some rows' labels, where -log p is
# infinite. eval reports nll as not estimable (text and --json) instead of flooring log 0,
# calbench.estimate returns NaN with a RuntimeWarning, and recalibrate fit warns; the same
# model saved with %.17g gives numpy's NLL. Also: recalibrate fit warns about a class that never
# occurs in the fit rows.
#
# The model: scikit-learn's Gaussian naive Bayes fitted on a stratified half of its bundled
# breast-cancer data (569 rows, Wisconsin diagnostic), its probabilities on the other 285 rows.
# At full precision no label probability is 0 (the smallest is 2.7e-29) and the NLL is 1.0787;
# at 4 decimals 8 labels round to 0, and flooring log 0 at log(2.2e-308) would give 20.07 (the
# figures docs/eval.md quotes, checked below).
#
# Usage: rounded_inputs.sh CALBENCH_BINARY SOURCE_DIR PYTHON3  (PYTHONPATH names the package)
script=rounded_inputs usage="CALBENCH_BINARY SOURCE_DIR PYTHON3"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
py=$3
"$py" -c 'import sklearn' 2>/dev/null || skip "no scikit-learn for $py"

"$py" - <<'PY' || fail "writing the model's outputs"
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
X, y = load_breast_cancer(return_X_y=True)
Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
p = GaussianNB().fit(Xa, ya).predict_proba(Xb)
np.savetxt("exact.csv", np.column_stack([yb, p]), delimiter=",", fmt=["%d", "%.17g", "%.17g"])
np.savetxt("rounded.csv", np.column_stack([yb, p]), delimiter=",", fmt=["%d", "%.4f", "%.4f"])
label_p = p[np.arange(len(yb)), yb]
rounded = np.round(label_p, 4)
floored = -np.mean(np.log(np.maximum(rounded, np.finfo(float).tiny)))
with open("expected.txt", "w") as f:
    f.write("%d %.17g %d %.17g\n" % ((label_p == 0).sum(), -np.mean(np.log(label_p)),
                                     (rounded == 0).sum(), floored))
# A class-sorted file cut in two (K = 3: naive Bayes on the wine data, 178 rows): the first
# 100 rows hold classes 0 and 1 only.
from sklearn.datasets import load_wine
X, y = load_wine(return_X_y=True)
q = GaussianNB().fit(X, y).predict_proba(X)
order = np.argsort(y, kind="stable")
np.savetxt("sorted_half.csv", np.column_stack([y, q])[order][:100], delimiter=",",
           fmt=["%d"] + ["%.17g"] * 3)
PY
read -r exact_zeros exact_nll rounded_zeros floored_nll <expected.txt
[ "$exact_zeros" = 0 ] && [ "$rounded_zeros" = 8 ] ||
  fail "the model changed: $exact_zeros exact and $rounded_zeros rounded zeros (docs/eval.md says 0 and 8)"
"$py" -c "import sys; e, f = float('$exact_nll'), float('$floored_nll');
sys.exit(not (abs(e - 1.0787) < 5e-4 and abs(f - 20.07) < 5e-3))" ||
  fail "the model's NLLs changed: $exact_nll and $floored_nll (docs/eval.md says 1.0787 and 20.07)"

# 1. Full precision: eval's nll is numpy's, to the last digits.
"$bin" eval exact.csv --estimators nll --resamples 20 --json >exact.json || fail "eval exact.csv"
"$py" - "$exact_nll" <<'PY' || fail "exact NLL: $(cat exact.json)"
import json, sys
d = json.load(open("exact.json"))
assert "label_probability_zeros" not in d, d
v = d["estimators"]["nll"]["value"]
assert abs(v - float(sys.argv[1])) <= 1e-12 * abs(v), (v, sys.argv[1])
PY

# 2. 4 decimals: nll not estimable, in --json and in the table, with the count and rounding.
"$bin" eval rounded.csv --renormalize --estimators nll,ece --resamples 20 --json >rounded.json ||
  fail "eval rounded.csv --json"
"$py" <<'PY' || fail "rounded --json: $(cat rounded.json)"
import json
d = json.load(open("rounded.json"))
z = d["label_probability_zeros"]
assert z["rows"] == 8 and z["decimals"] == 4 and "not estimable" in z["warning"], z
e = d["estimators"]["nll"]
assert e["value"] is None and e["ci"] is None and e["p_calibrated"] is None, e
assert e["estimable"] is False and e["note"].startswith("not estimable: 8 rows"), e
assert isinstance(d["estimators"]["ece_ew15"]["value"], float)  # the others as given
PY
"$bin" eval rounded.csv --renormalize --estimators nll,ece --resamples 20 >rounded.out ||
  fail "eval rounded.csv"
grep -q '^warning: 8 of 285 rows give their label probability exactly 0 (every value is rounded to 4 decimals): -log 0 is infinite, so the NLL is not estimable' rounded.out ||
  fail "no warning line: $(cat rounded.out)"
grep -Eq '^  nll +not estimable +- ' rounded.out || fail "nll row: $(grep '^nll' rounded.out)"

# 3. Python: NaN with a RuntimeWarning for the rounded rows, the value for the exact ones.
"$py" - "$exact_nll" <<'PY' || fail "calbench.estimate on rounded rows"
import math, sys, warnings
import numpy as np
import calbench
for name, expect_nan in (("rounded.csv", True), ("exact.csv", False)):
    rows = np.loadtxt(name, delimiter=",")
    y, p = rows[:, 0].astype(int), rows[:, 1:]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = calbench.estimate({"name": "nll"}, p, y, renormalize=True)
    if expect_nan:
        assert math.isnan(v), v
        assert len(caught) == 1 and issubclass(caught[0].category, RuntimeWarning), caught
        assert "nll is not estimable: 8 of 285 rows" in str(caught[0].message), caught[0].message
    else:
        assert not caught and abs(v - float(sys.argv[1])) <= 1e-12 * v, (v, caught)
PY

# 4. recalibrate fit: a warning for the zeros, and one for a class absent from the fit rows.
"$bin" recalibrate fit rounded.csv --renormalize --method temperature --out t.json >fit.out 2>fit.err ||
  fail "recalibrate fit rounded.csv: $(cat fit.err)"
grep -q 'warning: rounded.csv: 8 of 285 rows give their label probability exactly 0 .*at the floor 1e-06' fit.err ||
  fail "no zeros warning: $(cat fit.err)"
"$bin" recalibrate fit sorted_half.csv --method temperature --out s.json >half.out 2>half.err ||
  fail "recalibrate fit sorted_half.csv: $(cat half.err)"
grep -q 'warning: sorted_half.csv: 1 of 3 classes never occur among the 100 labels (2)' half.err ||
  fail "no absent-class warning: $(cat half.err)"
"$bin" recalibrate fit exact.csv --method temperature --out e.json >exact_fit.out 2>exact_fit.err
[ -s exact_fit.err ] && fail "warnings on clean rows: $(cat exact_fit.err)"
finish
