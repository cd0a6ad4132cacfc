#!/usr/bin/env bash
# `pip install ./python` into a venv made from Debian's python3 (README, "Python in any
# environment"): offline, without build isolation, the compiled module built through CMake
# (python/setup.py; it reuses this checkout's release build when the ABI matches). The venv's
# python imports calbench from the venv, not from the checkout, and runs the README's Python
# snippet of "Your own model" on a numpy-written CSV (its calbench.fit and calbench.plan too).
#
# Usage: python_venv.sh CALBENCH_BINARY SOURCE_DIR PYTHON3
script=python_venv usage="CALBENCH_BINARY SOURCE_DIR PYTHON3"
# shellcheck source=tests/cli/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
py=$3
"$py" -c 'import venv, ensurepip' 2>/dev/null || skip "$py has no venv/ensurepip (python3-venv)"

# A copy of python/ without the checkout's compiled module, so pip's build/ and egg-info stay
# out of the source tree and the module installed is the one the build step made.
mkdir pkg
cp "$src/python/pyproject.toml" "$src/python/setup.py" pkg/
mkdir pkg/calbench
cp "$src"/python/calbench/*.py pkg/calbench/
"$py" -m venv --system-site-packages venv || fail "python3 -m venv"
CALBENCH_SOURCE_DIR=$src venv/bin/pip install --no-build-isolation --no-index --quiet ./pkg \
  >pip.out 2>&1 || fail "pip install: $(tail -20 pip.out)"

# The README's Python snippet of "Your own model", run by the venv's python in a directory
# that holds only the data (PYTHONPATH unset: the package must come from the venv).
awk '/^## Your own model/ { inside = 1 } inside && /^```python/ { grab = 1; next }
     grab && /^```/ { exit } grab { print }' "$src/README.md" >snippet.py
[ -s snippet.py ] || fail "no python block in README's \"Your own model\""
"$py" - <<'PY' || fail "writing outputs.csv"
import numpy as np
rng = np.random.default_rng(0)
logits = rng.normal(size=(600, 3)) * 3
p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
y = np.array([rng.choice(3, p=np.sqrt(r) / np.sqrt(r).sum()) for r in p])  # overconfident p
np.savetxt("outputs.csv", np.column_stack([y, p]), delimiter=",", fmt="%.4f",
           header="label,p0,p1,p2")
PY
# calbench.fit and calbench.plan run this build's calbench (CALBENCH_BIN) from the venv.
env -u PYTHONPATH -u CALBENCH_CORE_DIR CALBENCH_BIN="$bin" venv/bin/python - <<'PY' >snippet.out 2>&1 || fail "the venv: $(cat snippet.out)"
import os, runpy, calbench, calbench._core
venv = os.path.realpath("venv")
for module in (calbench, calbench._core):
    assert os.path.realpath(module.__file__).startswith(venv), module.__file__
runpy.run_path("snippet.py")
assert os.path.exists("model.json") and os.path.exists("my_fake.json")
PY
# The snippet's last line: the fit's verdict and the plan's n.
tail -1 snippet.out | grep -qx 'GOOD [0-9]*' || fail "fit and plan from the venv: $(cat snippet.out)"
# A bad plan from Python: ValueError with the command's message, naming the argument.
env -u PYTHONPATH -u CALBENCH_CORE_DIR CALBENCH_BIN="$bin" venv/bin/python - <<'PY' >bad.out 2>&1 || fail "bad plan: $(cat bad.out)"
import calbench
try:
    calbench.plan({"name": "audit", "generator": "my_fake.json", "estimator": {"name": "ece"},
                   "question": {"width": 0, "level": 0.9}})
except ValueError as e:
    assert "calbench.plan(plan): /question/width" in str(e), str(e)
else:
    raise AssertionError("no ValueError")
PY
finish "$(tail -1 snippet.out)"
