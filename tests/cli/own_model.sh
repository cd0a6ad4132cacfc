#!/usr/bin/env bash
# The README's "Your own model" walk-through, step by step (issue #25's done-when): a
# scikit-learn model's held-out outputs saved by numpy.savetxt (a header, float labels,
# 4-decimal probabilities) are evaluated, recalibrated (fitted on one half, applied to the
# other), evaluated again, and an audit is planned on a fake fitted to them, from the command
# line and from Python. Also: the hint for rounded rows never suggests --logits, and a bad
# model file exits 2 naming the JSON pointer with nothing written.
#
# Usage: own_model.sh CALBENCH_BINARY SOURCE_DIR PYTHON3  (PYTHONPATH names the package)
script=own_model usage="CALBENCH_BINARY SOURCE_DIR PYTHON3"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
py=$3
"$py" -c 'import sklearn' 2>/dev/null || skip "no scikit-learn for $py"

# 1. The user's file: a strongly regularised logistic regression (underconfident) on held-out
#    synthetic data, K = 3, 2,000 rows; and new.csv, probabilities only (a deployed model's).
"$py" - <<'PY' || fail "writing the model's outputs"
import numpy as np
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
X, y = make_classification(n_samples=4000, n_features=8, n_informative=5, n_classes=3,
                           n_clusters_per_class=1, random_state=0)
p = LogisticRegression(C=0.005).fit(X[:2000], y[:2000]).predict_proba(X[2000:])
np.savetxt("outputs.csv", np.column_stack([y[2000:], p]), delimiter=",", fmt="%.4f",
           header="label,p0,p1,p2")
np.savetxt("new.csv", p[:300], delimiter=",", fmt="%.4f", header="p0,p1,p2")
PY
head -2 outputs.csv | grep -q '^# label,p0,p1,p2$' || fail "no savetxt header: $(head -2 outputs.csv)"

# 2. Without --renormalize the rounded rows are refused with the right hint (never --logits).
"$bin" eval outputs.csv >eval0.out 2>eval0.err
[ $? -eq 2 ] || fail "rounded rows without --renormalize: expected exit 2"
grep -q 'outputs.csv: line [0-9]*: probabilities sum to .*--renormalize' eval0.err ||
  fail "no --renormalize hint: $(cat eval0.err)"
grep -q -- '--logits' eval0.err && fail "the hint suggests --logits: $(cat eval0.err)"
[ -s eval0.out ] && fail "eval printed to stdout on bad input"

# 3. The README's commands, exactly as written: its shell block of "Your own model", run by
#    bash -e with this build's calbench first on PATH.
awk '/^## Your own model/ { inside = 1 } inside && /^```sh/ { grab = 1; next }
     grab && /^```/ { exit } grab { print }' "$src/README.md" >readme.sh
grep -q '^calbench plan audit.json' readme.sh || fail "no shell block with the plan in README's \"Your own model\""
mkdir path && ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" path/calbench
PATH="$PWD/path:$PATH" bash -e readme.sh >readme.out 2>readme.err ||
  fail "the README's commands: $(tail -5 readme.err)"
grep -q '^  temperature = ' readme.out || fail "recalibrate fit does not print T: $(cat readme.out)"
grep -q '^verdict: GOOD' readme.out || fail "the fit's verdict: $(grep '^verdict' readme.out)"
grep -q '^answer: n = [0-9]' readme.out || fail "plan gives no n: $(tail -5 readme.out)"
[ "$(grep -c '^  ece_ew15 .* bias_corrected ' readme.out)" -eq 2 ] || fail "two evals' tables expected"
[ "$(wc -l <fit.csv)" -eq 1000 ] && [ "$(wc -l <test.csv)" -eq 1000 ] || fail "the halves"
head -1 new_q.csv | grep -qx 'p_0,p_1,p_2' || fail "new_q.csv header: $(head -1 new_q.csv)"
[ "$(wc -l <new_q.csv)" -eq 301 ] || fail "new_q.csv: $(wc -l <new_q.csv) lines"
cp model.json cli_model.json

# The recalibration halves the ECE (test half before, the same rows after).
ece() {  # FILE [OPTION]: the ece_ew15 value of `calbench eval FILE --json`
  "$bin" eval "$@" --resamples 50 --estimators '[{"name": "ece"}]' --json |
    "$py" -c 'import json,sys; print(json.load(sys.stdin)["estimators"]["ece_ew15"]["value"])'
}
before=$(ece test.csv --renormalize) || fail "eval test.csv"
after=$(ece calibrated.csv) || fail "eval calibrated.csv"
"$py" -c "import sys; b, a = $before, $after; sys.exit(0 if a < 0.5 * b else 1)" ||
  fail "temperature scaling did not halve the ECE: $before -> $after"

# 4. The same from Python: the same model and the same calibrated rows as the command line,
#    then the README's Python block as written (its fit and plan run this build's calbench).
"$py" - "$before" "$after" <<'PY' || fail "the Python walk-through"
import sys
import numpy as np
import pandas as pd
import calbench
d = np.loadtxt("outputs.csv", delimiter=",")  # skips the "# " header line
y, p = d[:, 0], d[:, 1:]
r = calbench.Recalibrator("temperature", renormalize=True).fit(p[:1000], y[:1000])
q = r.predict_proba(p[1000:])
cli = pd.read_csv("calibrated.csv")  # a plain CSV: no options needed
assert list(cli.columns) == ["label", "p_0", "p_1", "p_2"], cli.columns
assert (cli["label"].to_numpy() == y[1000:]).all()
# The shortest round-trip digits: read back (strtod), the very doubles Python computed.
np.testing.assert_array_equal(q, np.loadtxt("calibrated.csv", delimiter=",", skiprows=1)[:, 1:])
assert r.to_json() == open("cli_model.json").read()
before = calbench.estimate({"name": "ece"}, p[1000:], y[1000:], renormalize=True)
after = calbench.estimate({"name": "ece"}, q, y[1000:])
assert abs(before - float(sys.argv[1])) < 1e-15 and abs(after - float(sys.argv[2])) < 1e-15
PY
awk '/^## Your own model/ { inside = 1 } inside && /^```python/ { grab = 1; next }
     grab && /^```/ { exit } grab { print }' "$src/README.md" >readme.py
grep -q 'calbench.plan(' readme.py || fail "no calbench.plan in README's Python block"
rm -f model.json my_fake.json
CALBENCH_BIN=$bin "$py" readme.py >readme_py.out 2>readme_py.err ||
  fail "the README's Python block: $(tail -5 readme_py.err)"
cmp -s model.json cli_model.json || fail "Python's model.json differs from the command line's"
grep -qx 'GOOD [0-9]*' readme_py.out || fail "README Python block's fit and plan: $(cat readme_py.out)"
cli_n=$(sed -n 's/^answer: n = \([0-9]*\).*/\1/p' readme.out)
[ "$(tail -1 readme_py.out)" = "GOOD $cli_n" ] ||
  fail "Python's plan $(tail -1 readme_py.out) against the command line's n = $cli_n"

# 5. Unlabelled data (probabilities only, as a deployed model produces them): apply takes a CSV
#    of K probabilities per line or an NPY (n, K) without --labels, and writes the calibrated
#    rows without a label column; the same rows as the labelled file's. A row count that fits
#    neither layout is refused with the line, exit 2, nothing written.
"$py" - <<'PY' || fail "writing the unlabelled data"
import numpy as np
d = np.loadtxt("test.csv", delimiter=",")
np.savetxt("test_unlabelled.csv", d[:, 1:], delimiter=",", fmt="%.4f", header="p0,p1,p2")
np.save("test_unlabelled.npy", d[:, 1:] / d[:, 1:].sum(axis=1, keepdims=True))
PY
"$bin" recalibrate apply model.json test_unlabelled.csv --renormalize --out unlabelled.csv   >/dev/null || fail "apply on unlabelled CSV exited $?"
head -1 unlabelled.csv | grep -qx 'p_0,p_1,p_2' || fail "unlabelled header: $(head -1 unlabelled.csv)"
cut -d, -f2- calibrated.csv | cmp -s - unlabelled.csv ||
  fail "unlabelled CSV: other rows than the labelled file's"
"$bin" recalibrate apply model.json test_unlabelled.npy --out unlabelled.npy >/dev/null ||
  fail "apply on an unlabelled NPY exited $?"
"$py" -c '
import numpy as np, pandas as pd
q = np.load("unlabelled.npy"); c = pd.read_csv("calibrated.csv").to_numpy()[:, 1:]
assert q.shape == c.shape and np.allclose(q, c, rtol=0, atol=1e-12), abs(q - c).max()' ||
  fail "unlabelled NPY: other rows than the labelled CSV's"
printf '0.2,0.8\n' >two.csv
"$bin" recalibrate apply model.json two.csv --out two_out.csv >/dev/null 2>two.err
[ $? -eq 2 ] || fail "2 fields for a K = 3 model: expected exit 2"
grep -q 'two.csv: line 1: expected 3 probabilities, or a label and 3 probabilities (4 fields), found 2' \
  two.err || fail "2 fields message: $(cat two.err)"
[ -e two_out.csv ] && fail "2 fields: the output was written"

# 6. Exact zeros (4 decimals write p < 5e-5 as 0): fitted on log p they are raised to 1e-6
#    (docs/recalibration.md), so the temperature fitted on the rounded rows stays near the one
#    fitted on the exact rows (before: log 0 clamped at -708.4 gave 7.67 against 2.21 on
#    tests/cli/own_model.sh's rows below).
"$py" - <<'PY' || fail "writing the rows with zeros"
import numpy as np
rng = np.random.default_rng(0)
logits = rng.normal(size=(600, 3)) * 4
p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
y = np.array([rng.choice(3, p=np.sqrt(r) / np.sqrt(r).sum()) for r in p])  # true T = 2
np.savetxt("zeros.csv", np.column_stack([y, p]), delimiter=",", fmt="%.4f")
np.savetxt("exact.csv", np.column_stack([y, p]), delimiter=",", fmt="%.17g")
assert (np.round(p, 4) == 0).sum() > 100
PY
"$bin" recalibrate fit zeros.csv --renormalize --method temperature --out zeros.json >zeros.out ||
  fail "fit on rows with zeros exited $?"
grep -q 'probabilities of exactly 0 raised to 1e-06' zeros.out || fail "no zero note: $(cat zeros.out)"
"$bin" recalibrate fit exact.csv --method temperature --out exact.json >exact.out ||
  fail "fit on exact rows exited $?"
t_zeros=$(sed -n 's/^  temperature = //p' zeros.out)
t_exact=$(sed -n 's/^  temperature = //p' exact.out)
"$py" -c "import sys; sys.exit(0 if abs($t_zeros / $t_exact - 1) < 0.05 else 1)" ||
  fail "temperature with zeros $t_zeros against $t_exact on the exact rows"
"$bin" recalibrate apply zeros.json zeros.csv --renormalize --out zeros_q.npy >/dev/null ||
  fail "apply on rows with zeros exited $?"
"$py" -c 'import numpy as np; q = np.load("zeros_q.npy"); assert np.isfinite(q).all() and (q > 0).all()' ||
  fail "apply on rows with zeros: not finite or not positive"

# 7. A bad model file: exit 2, the pointer, nothing written.
"$py" -c 'import json; d = json.load(open("model.json")); d["model"]["temperature"] = "hot"; json.dump(d, open("bad.json", "w"))'
"$bin" recalibrate apply bad.json test.csv --renormalize --out bad.csv >bad.out 2>bad.err
[ $? -eq 2 ] || fail "bad model: expected exit 2"
grep -q 'bad.json: /model/temperature' bad.err || fail "bad model message: $(cat bad.err)"
[ -e bad.csv ] && fail "bad model: the output was written"

finish "ECE $before -> $after"
