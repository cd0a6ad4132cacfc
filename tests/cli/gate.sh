#!/usr/bin/env bash
# calbench gate from the command line (docs/gates.md):
#   - the OC curve of "15-bin ECE <= 0.08 on n = 100" on a K = 2 beta_binary fake (score
#     f ~ Beta(6, 0.5), P(y = 1 | f) = sigmoid(a + b logit f), a = -0.2, b = 0.6) against an INDEPENDENT numpy
#     simulation of the same law at each member's scale (f drawn by numpy, the 15-bin ECE by
#     its definition, docs/estimators/binned.md): |P_calbench - P_numpy| <= 3.5 sqrt(se1^2 + se2^2)
#     at every point; each member's truth against a numpy quadrature of E|P(correct | Z) - Z|;
#   - the same --out bytes for 1 and 2 threads;
#   - the one-clause options give the gate file's figures;
#   - bad input: exit 2 naming the file and the JSON pointer (or the option), nothing written.
script=cli_gate usage="CALBENCH_BINARY SOURCE_DIR PYTHON3"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
python=$3

cat >"$work/beta.json" <<'JSON'
{"name": "beta_k2", "seed": 7,
 "generator": {"family": "beta_binary", "a": 6, "b": 0.5,
               "calibration": {"curve": "logit_logit", "a": -0.2, "b": 0.6}},
 "rule": {"n": 100, "clauses": [{"estimator": {"name": "ece", "bins": 15}, "at_most": 0.08}]},
 "family": {"quantity": "ece", "values": [0.02, 0.05, 0.08, 0.11, 0.15]},
 "risks": {"good": 0.03, "bad": 0.12},
 "replicates": 2000}
JSON
"$bin" gate "$work/beta.json" --threads 1 --quiet --out "$work/one.json" >"$work/one.out" \
  2>"$work/one.err" || fail "beta.json on 1 thread exited $?: $(cat "$work/one.err")"
[ -s "$work/one.err" ] && fail "--quiet printed on stderr: $(cat "$work/one.err")"
"$bin" gate "$work/beta.json" --threads 2 --quiet --out "$work/two.json" >"$work/two.out" 2>&1 ||
  fail "beta.json on 2 threads exited $?: $(cat "$work/two.out")"
cmp -s "$work/one.json" "$work/two.json" || fail "the result files differ between 1 and 2 threads"
cmp -s <(grep -v "^wrote" "$work/one.out") <(grep -v "^wrote" "$work/two.out") ||
  fail "the tables differ between 1 and 2 threads"
grep -q "^beta_k2: pass when ece_ew15 <= 0.08 on n = 100" "$work/one.out" &&
  grep -q "^false reject at good 0.03: " "$work/one.out" &&
  grep -q "^false accept at bad 0.12: " "$work/one.out" ||
  fail "not the documented table: $(cat "$work/one.out")"

"$python" - "$work/one.json" <<'PY' || fail "calbench's OC curve disagrees with numpy's simulation"
import json, math, sys
import numpy as np

d = json.load(open(sys.argv[1]))
assert d["meta"]["schema"] == "calbench.gate/1"
g = d["gate"]["generator"]
A, B = g["a"], g["b"]                       # f ~ Beta(A, B)
a0, b0 = g["calibration"]["a"], g["calibration"]["b"]
n, R = 100, 4000
rng = np.random.default_rng(20261203)

def curve(s, f):
    """P(y = 1 | f) of the member scaled by s: logit_logit (s a, b^s) (docs/plan.md)."""
    return 1.0 / (1.0 + np.exp(-(s * a0 + b0 ** s * np.log(f / (1.0 - f)))))

def true_ece(s):
    """E|P(y = argmax p | Z) - Z|, Z = max(f, 1 - f): the integral over z in (1/2, 1) by the
    midpoint rule in u, z = 1 - u^2 (dz = 2u du), which makes (1 - z)^(B - 1) smooth."""
    m = 2_000_000
    top = math.sqrt(0.5)
    u = (np.arange(m) + 0.5) * (top / m)
    z = 1.0 - u * u
    logc = math.lgamma(A + B) - math.lgamma(A) - math.lgamma(B)
    w = lambda x, log_1mx: np.exp(logc + (A - 1) * np.log(x) + (B - 1) * log_1mx)
    wz = w(z, 2.0 * np.log(u))              # the score at z (class 1 on top) ...
    wc = w(1.0 - z, np.log(z))              # ... and at 1 - z (class 0 on top)
    right = wz * curve(s, z) + wc * (1.0 - curve(s, 1.0 - z))
    return float(np.sum(np.abs(right - z * (wz + wc)) * 2.0 * u) * (top / m))

def pass_rate(s):
    """The gate on R samples of n rows, each drawn and measured by numpy alone."""
    f = rng.beta(A, B, size=(R, n))
    y = rng.random((R, n)) < curve(s, f)
    top = np.maximum(f, 1.0 - f)
    correct = (y == (f > 0.5)).astype(float)
    # Equal-width bins (i/15, (i+1)/15], 0 in the first: docs/estimators/binned.md.
    b = np.clip(np.ceil(top * 15).astype(int) - 1, 0, 14) + 15 * np.arange(R)[:, None]
    hits = np.bincount(b.ravel(), weights=correct.ravel(), minlength=15 * R).reshape(R, 15)
    conf = np.bincount(b.ravel(), weights=top.ravel(), minlength=15 * R).reshape(R, 15)
    ece = np.abs(hits - conf).sum(axis=1) / n
    p = float(np.mean(ece <= 0.08))
    return p, math.sqrt(p * (1 - p) / R)

points = d["points"] + [d["risks"]["good"], d["risks"]["bad"]]
bad = []
for point in points:
    s = point["scale"]
    truth = true_ece(s)
    if abs(truth - point["true_error"]) > 2e-5 or abs(truth - point["value"]) > 1e-4:
        bad.append(f"value {point['value']}: numpy truth {truth:.6f}, calbench {point['true_error']:.6f}")
    p, se = pass_rate(s)
    tol = 3.5 * math.sqrt(se ** 2 + point["se"] ** 2)
    line = (f"value {point['value']}: s = {s:.4f}, calbench P(pass) {point['p_pass']:.4f} "
            f"± {point['se']:.4f}, numpy {p:.4f} ± {se:.4f}")
    print(line)
    if abs(p - point["p_pass"]) > tol:
        bad.append(line + f": differ by more than {tol:.4f}")
assert d["risks"]["good"]["false_reject"] == 1 - d["risks"]["good"]["p_pass"]
assert d["risks"]["bad"]["false_accept"] == d["risks"]["bad"]["p_pass"]
p = [pt["p_pass"] for pt in d["points"]]
assert p == sorted(p, reverse=True), f"P(pass) not decreasing in the true error: {p}"
if bad:
    sys.exit("\n".join(bad))
PY

# Design: the smallest n and the threshold meeting false reject <= 0.05 at 0.03 and false
# accept <= 0.05 at 0.12; the answer's risks measured on fresh streams (calbench's cell 1) must
# meet the request, and numpy's own simulation of the designed rule (a fresh seed of another
# generator) must agree with them within 3.5 combined standard errors and meet the request
# within 3.5 of its own.
cat >"$work/design.json" <<'JSON'
{"name": "design", "seed": 7,
 "generator": {"family": "beta_binary", "a": 6, "b": 0.5,
               "calibration": {"curve": "logit_logit", "a": -0.2, "b": 0.6}},
 "rule": {"n": 100, "clauses": [{"estimator": {"name": "ece", "bins": 15}, "at_most": 0.08}]},
 "family": {"quantity": "ece", "values": [0.03, 0.12]},
 "risks": {"good": 0.03, "bad": 0.12},
 "design": {"false_reject": 0.05, "false_accept": 0.05},
 "replicates": 2000}
JSON
"$bin" gate "$work/design.json" --quiet --out "$work/design.result" >"$work/design.out" 2>&1 ||
  fail "design.json exited $?: $(cat "$work/design.out")"
grep -q "^design: n = [0-9]*, pass when ece_ew15 <= " "$work/design.out" ||
  fail "no design answer in: $(cat "$work/design.out")"
"$python" - "$work/design.result" <<'PY' || fail "the design does not meet its request"
import json, math, sys
import numpy as np

d = json.load(open(sys.argv[1]))
design, risks = d["design"], d["risks"]
answer = design["answer"]
n, t = answer["n"], answer["threshold"]
v = design["verified"]
bad = []
if not (v["false_reject"] <= 0.05 and v["false_accept"] <= 0.05):
    bad.append(f"fresh streams: false reject {v['false_reject']}, false accept {v['false_accept']}")
# The smallest n that met: every smaller n searched did not.
assert all(not p["meets"] for p in design["points"] if p["n"] < n), design["points"]
g = d["gate"]["generator"]
A, B = g["a"], g["b"]
a0, b0 = g["calibration"]["a"], g["calibration"]["b"]
R = 4000
rng = np.random.default_rng(4040)

def pass_rate(s):
    f = rng.beta(A, B, size=(R, n))
    y = rng.random((R, n)) < 1.0 / (1.0 + np.exp(-(s * a0 + b0 ** s * np.log(f / (1.0 - f)))))
    top = np.maximum(f, 1.0 - f)
    correct = (y == (f > 0.5)).astype(float)
    b = np.clip(np.ceil(top * 15).astype(int) - 1, 0, 14) + 15 * np.arange(R)[:, None]
    hits = np.bincount(b.ravel(), weights=correct.ravel(), minlength=15 * R).reshape(R, 15)
    conf = np.bincount(b.ravel(), weights=top.ravel(), minlength=15 * R).reshape(R, 15)
    p = float(np.mean(np.abs(hits - conf).sum(axis=1) / n <= t))
    return p, math.sqrt(p * (1 - p) / R)

for name, member, key in [("good", risks["good"], "false_reject"), ("bad", risks["bad"], "false_accept")]:
    p, se = pass_rate(member["scale"])
    risk = 1.0 - p if key == "false_reject" else p
    print(f"design n = {n}, threshold {t:.4f}: {key} calbench {v[key]:.4f} ± {v[key + '_se']:.4f}, numpy {risk:.4f} ± {se:.4f}")
    if abs(risk - v[key]) > 3.5 * math.sqrt(se ** 2 + v[key + "_se"] ** 2):
        bad.append(f"{key}: numpy {risk:.4f} against calbench {v[key]:.4f}")
    if risk > 0.05 + 3.5 * se:
        bad.append(f"{key}: numpy {risk:.4f} > 0.05 + 3.5 se")
if bad:
    sys.exit("\n".join(bad))
PY

# The one-clause options: the same gate as a file with one clause and a generator file.
cat >"$work/fake.json" <<'JSON'
{"generator": {"family": "beta_binary", "a": 6, "b": 0.5,
               "calibration": {"curve": "logit_logit", "a": -0.2, "b": 0.6}}}
JSON
cat >"$work/file_form.json" <<'JSON'
{"name": "gate", "generator": "fake.json",
 "rule": {"n": 100, "clauses": [{"estimator": {"name": "ece"}, "at_most": 0.08}]},
 "family": {"values": [0.05, 0.1]}, "risks": {"bad": 0.12}, "replicates": 200}
JSON
"$bin" gate "$work/file_form.json" --quiet >"$work/file_form.out" 2>&1 ||
  fail "file_form.json exited $?: $(cat "$work/file_form.out")"
"$bin" gate --generator fake.json --estimator ece --le 0.08 --n 100 --values 0.05,0.1 \
  --bad 0.12 --replicates 200 --quiet >"$work/options.out" 2>&1 ||
  fail "the one-clause options exited $?: $(cat "$work/options.out")"
cmp -s "$work/file_form.out" "$work/options.out" ||
  fail "the options and the file differ: $(diff "$work/file_form.out" "$work/options.out")"

# Bad input: exit 2, FILE: /pointer: message (or the option), no result file.
expect_error() {  # NAME PATTERN [ARGS...]: calbench gate ARGS must fail with PATTERN on stderr
  local name=$1 pattern=$2
  shift 2
  "$bin" gate "$@" --quiet --out "$work/$name.result" >/dev/null 2>"$work/$name.err"
  local status=$?
  [ $status -eq 2 ] || fail "$name: exit $status, expected 2: $(cat "$work/$name.err")"
  grep -qF -- "$pattern" "$work/$name.err" || fail "$name: expected '$pattern' in: $(cat "$work/$name.err")"
  [ -e "$work/$name.result" ] && fail "$name: a result file was written"
}
bad_file() {  # NAME JSON PATTERN
  echo "$2" >"$work/$1.json"
  expect_error "$1" "$3" "$work/$1.json"
}
gen='"generator": "fake.json"'
ok_rule='"rule": {"n": 100, "clauses": [{"estimator": {"name": "ece"}, "at_most": 0.08}]}'
ok_family='"family": {"values": [0.05]}'
bad_file no_rule "{$gen, $ok_family}" "no_rule.json: /rule: required key is missing"
bad_file no_family "{$gen, $ok_rule}" "no_family.json: /family: required key is missing"
bad_file no_generator "{$ok_rule, $ok_family}" "no_generator.json: /generator: required key is missing"
bad_file n_one "{$gen, \"rule\": {\"n\": 1, \"clauses\": [{\"estimator\": {\"name\": \"ece\"}, \"at_most\": 0.08}]}, $ok_family}" \
  "n_one.json: /rule/n: expected an integer >= 2, found 1"
bad_file no_comparison "{$gen, \"rule\": {\"n\": 100, \"clauses\": [{\"estimator\": {\"name\": \"ece\"}}]}, $ok_family}" \
  "no_comparison.json: /rule/clauses/0: expected \"at_most\""
bad_file both_comparisons "{$gen, \"rule\": {\"n\": 100, \"clauses\": [{\"estimator\": {\"name\": \"ece\"}, \"at_most\": 0.1, \"at_least\": 0}]}, $ok_family}" \
  "both_comparisons.json: /rule/clauses/0: a clause compares with"
bad_file unknown_estimator "{$gen, \"rule\": {\"n\": 100, \"clauses\": [{\"estimator\": {\"name\": \"eec\"}, \"at_most\": 0.08}]}, $ok_family}" \
  "unknown_estimator.json: /rule/clauses/0/estimator/name: unknown estimator \"eec\""
bad_file empty_clauses "{$gen, \"rule\": {\"n\": 100, \"clauses\": []}, $ok_family}" \
  "empty_clauses.json: /rule/clauses: expected a non-empty array of clauses"
bad_file bad_join "{$gen, \"rule\": {\"n\": 100, \"join\": \"xor\", \"clauses\": [{\"estimator\": {\"name\": \"ece\"}, \"at_most\": 0.08}]}, $ok_family}" \
  "bad_join.json: /rule/join: unknown join \"xor\""
bad_file negative_value "{$gen, $ok_rule, \"family\": {\"values\": [0.05, -0.1]}}" \
  "negative_value.json: /family/values/1: values[1] = -0.1: must be > 0"
bad_file bad_quantity "{$gen, $ok_rule, \"family\": {\"quantity\": \"brier\", \"values\": [0.05]}}" \
  "bad_quantity.json: /family/quantity: unknown quantity \"brier\""
bad_file risks_order "{$gen, $ok_rule, $ok_family, \"risks\": {\"good\": 0.1, \"bad\": 0.05}}" \
  "risks_order.json: /risks/bad: bad = 0.05: must be > good = 0.1"
bad_file unknown_key "{$gen, $ok_rule, $ok_family, \"reps\": 10}" "unknown_key.json: /reps: unknown key"
bad_file few_replicates "{$gen, $ok_rule, $ok_family, \"replicates\": 5}" \
  "few_replicates.json: /replicates: expected an integer >= 10, found 5"
bad_file unreachable "{$gen, $ok_rule, \"family\": {\"values\": [0.97]}}" \
  "unreachable.json: /family: values[0] = 0.97 is out of reach"
bad_file unscalable "{\"generator\": {\"family\": \"class_conditional\", \"classes\": 2, \"alpha\": [[2, 1], [1, 2]]}, $ok_rule, $ok_family}" \
  "unscalable.json: /generator: family class_conditional"
bad_file design_two "{$gen, \"rule\": {\"n\": 100, \"clauses\": [{\"estimator\": {\"name\": \"ece\"}, \"at_most\": 0.08}, {\"estimator\": {\"name\": \"accuracy\"}, \"at_least\": 0.8}]}, $ok_family, \"risks\": {\"good\": 0.03, \"bad\": 0.1}, \"design\": {}}" \
  "design_two.json: /design: a design searches the n and threshold of a one-clause rule"
bad_file design_risks "{$gen, $ok_rule, $ok_family, \"design\": {\"false_accept\": 0.1}}" \
  "design_risks.json: /design: a design needs"
bad_file design_limit "{$gen, $ok_rule, $ok_family, \"risks\": {\"good\": 0.03, \"bad\": 0.1}, \"design\": {\"false_reject\": 1.5}}" \
  "design_limit.json: /design/false_reject: false_reject = 1.5: must be > 0 and < 1"
bad_file not_json "{$gen," "not_json.json: not valid JSON"
expect_error missing_file "missing.json" "$work/missing.json"
expect_error option_n "calbench gate: --n: expected an integer >= 2, found 1" \
  --generator fake.json --estimator ece --le 0.08 --n 1 --values 0.05
expect_error option_estimator "calbench gate: --estimator/name: unknown estimator" \
  --generator fake.json --estimator eec --le 0.08 --n 100 --values 0.05
expect_error option_missing "give a gate file, or --generator" --generator fake.json --n 100

finish "OC curve against numpy, determinism, options, bad input"
