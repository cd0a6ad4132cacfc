#!/usr/bin/env python3
"""Runs scripts/verdict-study.py (docs/fit.md, "How often the verdict is wrong") and checks it.

    verdict_study.py small   # ctest verdict_study.small: one scikit-learn model (mlp_k2), one
                             # fit set, fitted with the default family and with --family
                             # parametric (whose fake misses this model)
    verdict_study.py docs    # ctest verdict_study.docs: docs/fit.md publishes the committed
                             # study's table (tests/golden/verdict_study/table.md) verbatim

Checked on the small study, from the numbers in runs.csv: the miss flags follow from the ECEs and
the tolerance max(0.005, 3 reference SEs); every resolvable miss (beyond the tolerance plus 3
standard errors of the 15-bin ECE on the fit rows, the most a fit to those rows can be off by
their own sampling error) is POOR and names its failing checks: no silent miss; at least one
resolvable miss is present (the parametric fake), so that check bites; and the default family's
fake of this near-calibrated model, which matches it, is GOOD.
"""

import csv
import os
import subprocess
import sys
import tempfile

from study_checks import check_docs_table, require_sklearn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")  # the repository
SCRIPT = os.path.join(ROOT, "scripts", "verdict-study.py")
GOLDEN = os.path.join(ROOT, "tests", "golden", "verdict_study")
DOCS = os.path.join(ROOT, "docs", "fit.md")


def fail(message):
    print(f"verdict_study: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check_docs():
    """docs/fit.md publishes the committed study's table.md verbatim."""
    check_docs_table("verdict_study", GOLDEN, DOCS)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "small"
    if mode == "docs":
        return check_docs()
    require_sklearn("verdict_study")
    with tempfile.TemporaryDirectory() as out:
        args = ["--small", "--parts", "models,parametric", "--models", "mlp_k2", "--fits", "1",
                "--pool", "20000", "--sample-size", "2000"]
        done = subprocess.run([sys.executable, "-B", SCRIPT, "--out", out] + args,
                              capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"the study exited {done.returncode}: {done.stderr}")
        with open(os.path.join(out, "runs.csv")) as f:
            runs = list(csv.DictReader(f))
    if [(r["source"], r["model"]) for r in runs] != [
            ("scikit-learn", "mlp_k2"), ("scikit-learn, --family parametric", "mlp_k2")]:
        fail(f"runs {[(r['source'], r['model']) for r in runs]}")
    for r in runs:
        off = abs(float(r["fake_ece"]) - float(r["reference_ece"]))
        tolerance = max(0.005, 3 * float(r["reference_se"]))
        if abs(tolerance - float(r["tolerance"])) > 1e-12 or int(r["miss"]) != int(off > tolerance):
            fail(f"the miss flag does not follow from the numbers: {r}")
        if int(r["resolvable_miss"]) != int(off > float(r["resolution"]) and off > tolerance):
            fail(f"the resolvable-miss flag does not follow from the numbers: {r}")
        if (r["verdict"] == "POOR") != bool(r["failing_checks"]):
            fail(f"verdict {r['verdict']} with failing checks {r['failing_checks']!r}")
        if int(r["resolvable_miss"]) and r["verdict"] != "POOR":
            fail(f"a silent miss: the fake's ECE {r['fake_ece']} against the model's "
                 f"{r['reference_ece']} (beyond {r['resolution']}) and the verdict is GOOD: {r}")
    if not any(int(r["resolvable_miss"]) for r in runs):
        fail(f"no resolvable miss in the study (the parametric fake should miss): {runs}")
    default = runs[0]
    if int(default["miss"]) == 0 and default["verdict"] != "GOOD":
        fail(f"the default family's fake matches the model and the verdict is POOR: {default}")
    for r in runs:
        print(f"{r['source']}: model ECE {float(r['reference_ece']):.4f}, fake "
              f"{float(r['fake_ece']):.4f}, {r['verdict']} {r['failing_checks']}")


if __name__ == "__main__":
    main()
