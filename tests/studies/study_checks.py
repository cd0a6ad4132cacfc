"""Checks shared by the study tests (transfer_study.py, verdict_study.py, classwise_study.py): a
study's committed table published verbatim in the docs, scikit-learn present for the runs, and
the small helpers every check uses."""
import csv
import json
import os
import subprocess
import sys


def check_docs_table(name, golden, docs):
    """Exits 1 unless `docs` holds `golden`/table.md verbatim; `name` prefixes the message."""
    table = open(os.path.join(golden, "table.md")).read()
    here = os.path.dirname(os.path.abspath(__file__))
    shown = os.path.relpath(os.path.join(golden, "table.md"), os.path.join(here, "..", ".."))
    doc = os.path.relpath(docs, os.path.join(here, "..", ".."))
    if table not in open(docs).read():
        print(f"{name}: FAIL: {doc} does not hold {shown} verbatim", file=sys.stderr)
        sys.exit(1)
    print(f"{doc} publishes {shown}")


def require_sklearn(name):
    """Exits 77 (ctest's skip code) when scikit-learn is missing."""
    try:
        import sklearn  # noqa: F401  (scripts/setup.sh installs python3-sklearn)
    except ImportError:
        print(f"{name}: scikit-learn missing: skipped", file=sys.stderr)
        sys.exit(77)


def failing(name):
    """fail(message) for a study check named `name`: prints and exits 1."""
    def fail(message):
        print(f"{name}: FAIL: {message}", file=sys.stderr)
        sys.exit(1)
    return fail


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def run_study(script, out, arguments, fail):
    """The study script run with `arguments` and `--out out`; its cells.csv rows (fail on a
    nonzero exit, with the end of its stderr)."""
    done = subprocess.run([sys.executable, "-B", script, *arguments, "--out", out],
                          capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"the study exited {done.returncode}: {done.stderr[-2000:]}")
    return read_csv(os.path.join(out, "cells.csv"))


def three_shapes_k2(corpus):
    """A tiny arena's generators, one per calibration shape (a spline fake of the corpus,
    temperature, affine), K = 2: (the fake with its rows path made absolute, all three)."""
    with open(os.path.join(corpus, "cancer_lr.json")) as f:
        fake = json.load(f)["generator"]
    fake["rows"] = os.path.join(corpus, fake["rows"])
    return fake, [fake,
                  {"family": "dirichlet", "classes": 2,
                   "target": {"accuracy": 0.8, "ece_top_l1": 0.05},
                   "miscalibration": {"map": "temperature"}},
                  {"family": "label_noise", "classes": 2, "alpha": 0.5, "weight": 0.1,
                   "beta": 0}]
