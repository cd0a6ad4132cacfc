#!/usr/bin/env python3
"""Runs scripts/transfer-study.py (docs/fit.md) and checks its machinery and what holds today.

    transfer_study.py small   # ctest transfer_study.small: two models, small pools
    transfer_study.py full    # ctest slow.transfer_study: the published study's models (hours),
                              # its table.md against tests/golden/transfer_study/table.md
    transfer_study.py docs    # ctest transfer_study.docs: docs/fit.md publishes that table

Checked: one row per (model, estimator, n) with every column; the bootstrap answers exactly the
n up to the fit size; the pass flags and shares are recomputed here from the numbers in the
rows (20 % on sd, 0.005 on bias; the ECE tolerance max(0.005, 3 pool SEs)), so the script's
bookkeeping is tested independently; a POOR verdict names its failing checks and a GOOD one
none. No silent miss: every model whose fake's true top-label ECE misses the model's by more
than the fit rows can resolve, the tolerance max(0.005, 3 pool SEs) plus 3 standard errors of
the 15-bin equal-mass ECE at the fit size (its sd over the pool's subsamples of that size: the
fit rows differ from the model by that sampling error, so a fit agreeing with its rows can miss
by that much and no verdict on those rows can see it), gets POOR; the smaller misses are
printed. verdict_study.small (tests/studies/verdict_study.py) checks the same rule on a fake that does
miss resolvably. The pass rates of issue #23's done-when are reported, not asserted: today's
families do not reach them (docs/fit.md).
"""

import csv
import json
import os
import subprocess
import sys
import tempfile

from study_checks import check_docs_table, require_sklearn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")  # the repository
SCRIPT = os.path.join(ROOT, "scripts", "transfer-study.py")
ESTIMATORS = ["ece_ew15", "ece_em15", "dece_em15", "smooth_ece"]


def fail(message):
    print(f"transfer_study: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


GOLDEN = os.path.join(ROOT, "tests", "golden", "transfer_study")
DOCS = os.path.join(ROOT, "docs", "fit.md")


def check_docs():
    """docs/fit.md publishes the committed study's table.md verbatim."""
    check_docs_table("transfer_study", GOLDEN, DOCS)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "small"
    if mode == "docs":
        return check_docs()
    require_sklearn("transfer_study")
    with tempfile.TemporaryDirectory() as out:
        if mode == "small":
            args = ["--small", "--models", "gaussian_nb_k2,random_forest_k3", "--pool", "10000",
                    "--train", "3000", "--fit-size", "1000", "--sizes", "200,1000,2000",
                    "--subsamples", "30", "--replicates", "30", "--resamples", "30",
                    "--verdict-samples", "100", "--pool-boot", "5"]
            models, sizes, fit_size = ["gaussian_nb_k2", "random_forest_k3"], [200, 1000, 2000], 1000
        else:
            # The models of the committed study (the script's default is all 15; the golden
            # holds those that were run, docs/fit.md).
            models = [m["model"] for m in read(os.path.join(GOLDEN, "models.csv"))]
            args = ["--models", ",".join(models)]
            sizes, fit_size = [200, 1000, 5000, 20000], 5000
        done = subprocess.run([sys.executable, "-B", SCRIPT, "--out", out] + args,
                              capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"the study exited {done.returncode}: {done.stderr}")
        cells = read(os.path.join(out, "cells.csv"))
        model_rows = read(os.path.join(out, "models.csv"))
        summary = json.load(open(os.path.join(out, "summary.json")))
        table = open(os.path.join(out, "table.md")).read()

    names = [m["model"] for m in model_rows]
    if models is not None and names != models:
        fail(f"models {names}, expected {models}")
    keys = sorted((c["model"], c["estimator"], int(c["n"])) for c in cells)
    expected = sorted((m, e, n) for m in names for e in ESTIMATORS for n in sizes)
    if keys != expected:
        fail(f"cells {keys[:5]}..., expected one per (model, estimator, n)")

    def flag(x):
        return "" if x == "" else int(x)

    for c in cells:
        n = int(c["n"])
        observed_sd, observed_bias = float(c["observed_sd"]), float(c["observed_bias"])
        if not (observed_sd > 0 and float(c["fake_sd"]) > 0):
            fail(f"a zero sd in {c}")
        sd_ok = abs(float(c["fake_sd"]) / observed_sd - 1) <= 0.2
        bias_ok = abs(float(c["fake_bias"]) - observed_bias) <= 0.005
        if (flag(c["fake_sd_ok"]), flag(c["fake_bias_ok"])) != (int(sd_ok), int(bias_ok)):
            fail(f"fake pass flags do not follow from the numbers: {c}")
        if (c["boot_sd"] == "") != (n > fit_size):
            fail(f"the bootstrap must answer exactly n <= {fit_size}: {c}")
        if c["boot_sd"] != "":
            sd_ok = abs(float(c["boot_sd"]) / observed_sd - 1) <= 0.2
            bias_ok = abs(float(c["boot_bias"]) - observed_bias) <= 0.005
            if (flag(c["boot_sd_ok"]), flag(c["boot_bias_ok"])) != (int(sd_ok), int(bias_ok)):
                fail(f"bootstrap pass flags do not follow from the numbers: {c}")
    within = [c for c in cells if int(c["n"]) <= fit_size]
    for key in ("fake_sd_ok", "fake_bias_ok", "fake_ok", "boot_sd_ok", "boot_bias_ok", "boot_ok"):
        share = sum(int(c[key]) for c in within) / len(within)
        if abs(share - summary[key.replace("_ok", "_share")]) > 1e-12:
            fail(f"{key}: share {summary[key.replace('_ok', '_share')]} != recomputed {share}")

    # Each estimator's observed bias is against its own target's pool value (the binned ECEs:
    # the L1 top-label ECE; the debiased ECE: the L2 one), and L1 <= L2 (Jensen) up to noise.
    by_model = {m["model"]: m for m in model_rows}
    reference = {"ece_ew15": "ece_top_pool", "ece_em15": "ece_top_pool",
                 "dece_em15": "ece_top_l2_pool"}
    for c in cells:
        if c["estimator"] in reference:
            value = float(by_model[c["model"]][reference[c["estimator"]]])
            if abs(float(c["observed_bias"]) - (float(c["observed_mean"]) - value)) > 1e-12:
                fail(f"observed bias not against the pool's {reference[c['estimator']]}: {c}")
    for m in model_rows:
        l1, l2 = float(m["ece_top_pool"]), float(m["ece_top_l2_pool"])
        if l1 > l2 + 3 * (float(m["ece_top_pool_se"]) + float(m["ece_top_l2_pool_se"])):
            fail(f"{m['model']}: pool L1 ECE {l1} above its L2 ECE {l2} beyond their errors")
    for m in model_rows:
        tolerance = max(0.005, 3 * float(m["ece_top_pool_se"]))
        off = abs(float(m["fake_ece_top"]) - float(m["ece_top_pool"]))
        miss = off > tolerance
        if int(m["fake_ece_matches"]) == int(miss):
            fail(f"{m['model']}: fake_ece_matches does not follow from the numbers")
        if (m["verdict"] == "POOR") != bool(m["failing_checks"]):
            fail(f"{m['model']}: verdict {m['verdict']} with failing checks "
                 f"{m['failing_checks']!r}")
        sd = next(float(c["observed_sd"]) for c in cells if c["model"] == m["model"]
                  and c["estimator"] == "ece_em15" and int(c["n"]) == fit_size)
        resolution = tolerance + 3 * sd
        if off > resolution and m["verdict"] != "POOR":
            fail(f"{m['model']}: a silent miss: the fake's ECE is off by {off:.4f}, beyond the "
                 f"fit rows' resolution {resolution:.4f}, and the verdict is GOOD")
        if miss:
            print(f"{m['model']}: the fake's ECE is off by {off:.4f} (tolerance {tolerance:.4f}; "
                  f"resolution on {fit_size} rows {resolution:.4f}): verdict {m['verdict']}")
    if mode == "small":
        # The parametric fakes missed this forest grossly (direction reversed, issue #23); the
        # empirical family (fit's default) must not. Whether it is within the issue's
        # tolerance is measured by the full study (docs/fit.md), not at this small pool with
        # 1,000 fit rows.
        rf = next(m for m in model_rows if m["model"] == "random_forest_k3")
        if rf["family"] == "empirical" and abs(
                float(rf["fake_ece_top"]) - float(rf["ece_top_pool"])) > 0.05:
            fail(f"random_forest_k3: the empirical fake misses the model's ECE grossly: {rf}")
        if rf["family"] != "empirical" and (int(rf["fake_ece_matches"]) or rf["verdict"] != "POOR"):
            fail(f"random_forest_k3: expected a miss flagged POOR, found {rf}")
    if "| model | K |" not in table:
        fail("table.md has no model table")
    if mode == "full":
        golden = open(os.path.join(GOLDEN, "table.md")).read()
        if table != golden:
            fail("the study's table.md differs from tests/golden/transfer_study/table.md "
                 "(rerun: scripts/transfer-study.py --out tests/golden/transfer_study, and "
                 "update docs/fit.md):\n" + table)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
