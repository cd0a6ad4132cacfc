#!/usr/bin/env python3
"""The smaller studies of `calbench fit` (docs/fit.md, issue #23):

    fit_studies.py docs    # ctest fit_studies.docs: docs/fit.md publishes the committed tables
                           # of scripts/curve-alternatives.py (alternatives and --rules)
                           # and scripts/small-n-verdict.py
                           # (small_n_verdict/before: the previous distance null's run)
    fit_studies.py small   # ctest fit_studies.small: small-n-verdict.py's machinery on 2 fits,
                           # curve-alternatives.py --rules on one model

The small run checks one row per fit with a verdict and every check's z, the POOR count
recomputed from the rows, and the table's row.
"""

import csv
import json
import os
import subprocess
import sys
import tempfile

from study_checks import check_docs_table

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")  # the repository
DOCS = os.path.join(ROOT, "docs", "fit.md")
CHECKS = ["accuracy", "mean confidence", "ece_ew15", "ece_em15", "dece_em15", "smooth_ece",
          "confidence histogram", "reliability curve"]


def fail(message):
    print(f"fit_studies: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "docs"
    if mode == "docs":
        for name in ("curve_alternatives", "penalty_rules", "real_models", "small_n_verdict",
                     "small_n_verdict/before"):
            check_docs_table(name, os.path.join(ROOT, "tests", "golden", name), DOCS)
        return
    with tempfile.TemporaryDirectory() as out:
        script = os.path.join(ROOT, "scripts", "small-n-verdict.py")
        done = subprocess.run([sys.executable, "-B", script, "--out", out, "--seeds", "2",
                               "--sizes", "200", "--models", "linear_k2"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"small-n-verdict.py exited {done.returncode}: {done.stderr}")
        runs = list(csv.DictReader(open(os.path.join(out, "runs.csv"))))
        summary = json.load(open(os.path.join(out, "summary.json")))
        table = open(os.path.join(out, "table.md")).read()
    if [(r["model"], int(r["n"]), int(r["seed"])) for r in runs] != [("linear_k2", 200, 0),
                                                                    ("linear_k2", 200, 1)]:
        fail(f"expected one row per seed: {runs}")
    for r in runs:
        if r["verdict"] not in ("GOOD", "POOR") or (r["verdict"] == "POOR") != bool(r["failing"]):
            fail(f"verdict and failing checks disagree: {r}")
        for c in CHECKS:
            if not abs(float(r["z_" + c])) < 1e6:
                fail(f"z of {c} not finite: {r}")
    if summary[0]["poor"] != sum(r["verdict"] == "POOR" for r in runs):
        fail(f"POOR count {summary[0]['poor']} does not follow from the rows")
    if "| linear_k2 | 200 | 2 |" not in table:
        fail(f"table.md lacks the row: {table}")
    print(table)
    check_penalty_rules()


def check_penalty_rules():
    """curve-alternatives.py --rules on one model and one fit set: a row per size and labels,
    and each rule's penalty follows from the plain choices as the rule says."""
    with tempfile.TemporaryDirectory() as out:
        script = os.path.join(ROOT, "scripts", "curve-alternatives.py")
        done = subprocess.run([sys.executable, "-B", script, "--rules", "--models",
                               "gaussian_nb_k2", "--sets", "1", "--out", out],
                              capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"curve-alternatives.py --rules exited {done.returncode}: {done.stderr}")
        runs = list(csv.DictReader(open(os.path.join(out, "runs.csv"))))
        table = open(os.path.join(out, "table.md")).read()
    if sorted((int(r["n"]), r["labels"]) for r in runs) != \
            [(1000, "calibrated"), (1000, "model"), (5000, "calibrated"), (5000, "model")]:
        fail(f"expected one row per size and labels: {runs}")
    for r in runs:
        first, wide, rule = (float(r[k + "_penalty"]) for k in ("identity_or_0.1", "wide", "rule"))
        if first not in (0.1, float("inf")) or \
                (rule not in (0.1, 0.01) if first == 0.1 else rule != wide):
            fail(f"the rule's penalty does not follow from its steps: {r}")
    for rule in ("identity_or_0.1", "wide", "rule", "rule_se"):
        if f"| {rule} | " not in table:
            fail(f"table.md lacks {rule}: {table}")


if __name__ == "__main__":
    main()
