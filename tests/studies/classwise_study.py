#!/usr/bin/env python3
"""Runs scripts/classwise-study.py (docs/fit.md, "The classwise study") and checks its
machinery on the cached networks (tests/data/networks; no torch needed).

    classwise_study.py small   # ctest classwise_study.small: two networks, fit size 1,000
    classwise_study.py docs    # ctest classwise_study.docs: docs/fit.md publishes the golden's
                               # table.md (tests/golden/classwise_study) and the run before
                               # the top deviations were centred (its before_centring/)

Checked: one row per (model, variant, estimator, n) for the six estimators, the classwise ones
flagged; the bootstrap answers exactly the n up to the fit size; every pass flag follows from
the numbers in its row (sd within 20 %, mean within 0.005); the shares of summary.json are
recomputed here; the classwise tolerance is max(0.003, 2 resolutions) and the match flags
follow from it; a POOR verdict names its failing checks; and no silent miss: a fit of the
default (classwise) variant whose fake misses the pool's top-label or classwise ECE beyond the
fit rows' resolution (tolerance plus 3 resolutions) is POOR.
"""

import json
import os
import subprocess
import sys
import tempfile

from study_checks import check_docs_table, failing, read_csv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")  # the repository
SCRIPT = os.path.join(ROOT, "scripts", "classwise-study.py")
ESTIMATORS = {"ece_ew15": 0, "ece_em15": 0, "dece_em15": 0, "smooth_ece": 0, "cwece_ew15": 1,
              "ace15_nixon": 1}
MODELS = ["fmnist_cnn_mixup", "letter_mlp_smooth"]


fail = failing("classwise_study")
read = read_csv


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "docs":
        golden = os.path.join(ROOT, "tests", "golden", "classwise_study")
        for run in (golden, os.path.join(golden, "before_centring")):
            check_docs_table("classwise_study", run, os.path.join(ROOT, "docs", "fit.md"))
        return None
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("classwise_study: SKIP: numpy is not installed", file=sys.stderr)
        sys.exit(77)
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([sys.executable, "-B", SCRIPT, "--small", "--models",
                               ",".join(MODELS), "--out", out], capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"the study exited {done.returncode}: {done.stderr}")
        cells = read(os.path.join(out, "cells.csv"))
        models = read(os.path.join(out, "models.csv"))
        summary = json.load(open(os.path.join(out, "summary.json")))
    fit_size, sizes = 1000, [200, 1000, 4000]
    if [m["model"] for m in models] != MODELS or {m["variant"] for m in models} != {"classwise"}:
        fail(f"models {[(m['model'], m['variant']) for m in models]}")
    keys = sorted((c["model"], c["estimator"], int(c["n"])) for c in cells)
    if keys != sorted((m, e, n) for m in MODELS for e in ESTIMATORS for n in sizes):
        fail("cells: not one per (model, estimator, n)")
    for c in cells:
        n = int(c["n"])
        if int(c["classwise"]) != ESTIMATORS[c["estimator"]]:
            fail(f"classwise flag wrong: {c}")
        sd, mean = float(c["observed_sd"]), float(c["observed_mean"])
        if not sd > 0:
            fail(f"a zero observed sd: {c}")
        for who in ("fake", "boot"):
            if c[f"{who}_sd"] == "":
                if who == "fake" or n <= fit_size:
                    fail(f"{who} missing at n = {n}: {c}")
                continue
            if who == "boot" and n > fit_size:
                fail(f"a bootstrap beyond the fit size: {c}")
            sd_ok = abs(float(c[f"{who}_sd"]) / sd - 1) <= 0.2
            mean_ok = abs(float(c[f"{who}_mean"]) - mean) <= 0.005
            if (int(c[f"{who}_sd_ok"]), int(c[f"{who}_mean_ok"]), int(c[f"{who}_ok"])) != \
                    (sd_ok, mean_ok, sd_ok and mean_ok):
                fail(f"{who} flags do not follow from the numbers: {c}")
    s = summary["classwise"]
    for group, rows in (("all", cells), ("classwise", [c for c in cells if c["classwise"] == "1"])):
        within = [c for c in rows if int(c["n"]) <= fit_size]
        for key in ("fake", "boot"):
            share = sum(int(c[f"{key}_ok"]) for c in within) / len(within)
            if abs(share - s[group][key]) > 1e-12:
                fail(f"{group} {key} share {s[group][key]} != recomputed {share}")
    for m in models:
        tolerance = max(0.003, 2 * float(m["classwise_resolution"]))
        if abs(tolerance - float(m["classwise_tolerance"])) > 1e-12:
            fail(f"{m['model']}: classwise tolerance {m['classwise_tolerance']}")
        off_cw = abs(float(m["fake_classwise"]) - float(m["classwise_pool"]))
        off_top = abs(float(m["fake_ece_top"]) - float(m["ece_top_pool"]))
        if int(m["fake_classwise_matches"]) != int(off_cw <= tolerance):
            fail(f"{m['model']}: classwise match flag does not follow from the numbers")
        if (m["verdict"] == "POOR") != bool(m["failing_checks"]) and m["verdict"] == "GOOD":
            fail(f"{m['model']}: GOOD with failing checks {m['failing_checks']!r}")
        resolvable = off_cw > tolerance + 3 * float(m["classwise_resolution"]) or \
            off_top > float(m["ece_top_tolerance"]) + 3 * float(m["ece_top_resolution"])
        if resolvable and m["verdict"] != "POOR":
            fail(f"{m['model']}: a silent miss (classwise off by {off_cw:.4f}, top-label by "
                 f"{off_top:.4f}) with verdict GOOD")
        print(f"{m['model']}: classwise ECE pool {float(m['classwise_pool']):.4f}, fake "
              f"{float(m['fake_classwise']):.4f} (tolerance {tolerance:.4f}); {m['verdict']}")
    print("classwise_study: OK")


if __name__ == "__main__":
    main()
