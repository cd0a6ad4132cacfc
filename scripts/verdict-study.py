#!/usr/bin/env python3
"""Size and power of `calbench fit`'s verdict (docs/fit.md, "How often the verdict is wrong";
issue #23): how often a fake that matches the model is called POOR, and how often a fake that
misses is caught.

Two sources of data, each fitted many times with `calbench fit --json` (the default family and
the cross-fitted verdict):
1. calbench's parametric generators (the `dirichlet` family with identity, temperature and power
   maps, K = 2, 3, 10): `sample_size` rows drawn with calbench.sample (seed 1000 + s); the
   model's true top-label ECE is the generator's exact truth;
2. scikit-learn models trained on make_classification (the transfer study's data and models,
   scripts/transfer-study.py): disjoint fit sets of `sample_size` rows from a pool of the
   model's outputs; the model's true top-label ECE is estimated on the whole pool (debiased ECE,
   100 equal-mass bins, its SE from 10 bootstrap resamples).

A run's fake *matches* when its true top-label ECE is within max(0.005, 3 reference SEs) of the
model's, and *misses* otherwise. A miss is *resolvable* when it also exceeds 3 standard errors
of the debiased ECE on the fit rows (the fake's predicted sd of dece_em15 at the fit size): a
smaller miss is within the sampling error of the rows the fit saw, so no verdict can see it
(the fit rows themselves look like the fake). Reported: false-POOR rate (POOR among matches)
and the share of misses and of resolvable misses that got POOR.

    /usr/bin/python3 scripts/verdict-study.py --out results/verdict-study
    /usr/bin/python3 scripts/verdict-study.py --small --out /tmp/verdict-small

Writes OUT/runs.csv (one row per fit), OUT/summary.json and OUT/table.md (docs/fit.md's table).
Needs numpy, scikit-learn, the calbench Python extension (PYTHONPATH=python) and binary
(CALBENCH_BIN or --calbench).
"""

import argparse
import csv
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import calbench

HERE = os.path.dirname(os.path.abspath(__file__))
ECE_FLOOR = 0.005

# calbench generators: (name, generator). Calibrated, over- and underconfident, class-dependent.
GENERATORS = [
    ("dirichlet_k3_identity", {"family": "dirichlet", "classes": 3, "alpha": 0.6,
                               "miscalibration": {"map": "identity"}}),
    ("dirichlet_k10_t0.7", {"family": "dirichlet", "classes": 10, "alpha": 0.3,
                            "miscalibration": {"map": "temperature", "temperature": 0.7}}),
    ("dirichlet_k2_t1.5", {"family": "dirichlet", "classes": 2, "alpha": 1.0,
                           "miscalibration": {"map": "temperature", "temperature": 1.5}}),
    ("dirichlet_k3_power", {"family": "dirichlet", "classes": 3, "alpha": 0.8,
                            "miscalibration": {"map": "power", "exponents": [0.8, 1.0, 1.25]}}),
]


def transfer_study():
    """scripts/transfer-study.py as a module (its name has a hyphen)."""
    spec = importlib.util.spec_from_file_location("transfer_study",
                                                  os.path.join(HERE, "transfer-study.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pool_l1_ece(p, y, rng, bins=50, boot=10):
    """The model's true top-label L1 ECE (ece_top_l1) from the pool: the plug-in ECE with `bins`
    equal-mass bins, bias-corrected by the bootstrap (2 x estimate - mean of `boot` resamples'
    estimates, Efron & Tibshirani 1993: each bin's |mean gap| is biased upward by its noise),
    its SE the resamples' sd."""
    spec = {"name": "ece", "bins": bins, "binning": "equal_mass"}
    values = [calbench.estimate(spec, p[i], y[i])
              for i in (rng.integers(0, len(y), len(y)) for _ in range(boot))]
    return 2 * calbench.estimate(spec, p, y) - float(np.mean(values)), float(np.std(values, ddof=1))


def fit(binary, p, y, seed, work, n, extra):
    path = os.path.join(work, "fit.csv")
    with open(path, "w") as f:
        for label, row in zip(y, p):
            f.write(str(int(label)) + "," + ",".join(repr(float(v)) for v in row) + "\n")
    command = [binary, "fit", path, "--json", "--seed", str(seed), "--estimators",
               '[{"name": "ece", "bins": 15}, {"name": "ece", "bins": 15, "binning": '
               '"equal_mass"}, {"name": "ece_debiased"}, {"name": "smooth_ece"}]',
               "--sizes", str(n), "--replicates", "40", "--resamples", "2"] + extra
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)


def record(source, model, run, result, reference, reference_se, seconds):
    fake = result["fake"]["ece_top_l1"]["value"]
    ece_em = next(c for c in result["predictions"]["cells"] if c["estimator"] == "ece_em15")
    tolerance = max(ECE_FLOOR, 3 * reference_se)
    resolution = tolerance + 3 * ece_em["fake"]["sd"]
    miss = abs(fake - reference) > tolerance
    verdict = result["verdict"]
    return {
        "source": source, "model": model, "run": run, "K": result["classes"],
        "n": result["n"], "reference_ece": reference, "reference_se": reference_se,
        "fake_ece": fake, "tolerance": tolerance, "resolution": resolution,
        "miss": int(miss), "resolvable_miss": int(miss and abs(fake - reference) > resolution),
        "verdict": verdict["verdict"],
        "failing_checks": "; ".join(c["check"] for c in verdict["checks"] if c["fails"]),
        "seconds": round(seconds, 1),
    }


def summarise(rows):
    def rate(selected):
        poor = sum(1 for r in selected if r["verdict"] == "POOR")
        return poor, len(selected)

    groups = {}
    for r in rows:
        groups.setdefault((r["source"], r["model"]), []).append(r)
    table = []
    for (source, model), rs in list(groups.items()) + [(("all", "all"), rows)]:
        matches = [r for r in rs if not r["miss"]]
        misses = [r for r in rs if r["miss"]]
        resolvable = [r for r in rs if r["resolvable_miss"]]
        table.append({"source": source, "model": model, "runs": len(rs),
                      "false_poor": rate(matches), "misses_poor": rate(misses),
                      "resolvable_poor": rate(resolvable)})
    return table


def markdown(table):
    def frac(pair):
        return f"{pair[0]} of {pair[1]}" if pair[1] else "-"

    lines = ["| source | model | fits | POOR among matches | POOR among misses | "
             "POOR among resolvable misses |", "|---|---|---|---|---|---|"]
    for t in table:
        lines.append(f"| {t['source']} | {t['model']} | {t['runs']} | {frac(t['false_poor'])} | "
                     f"{frac(t['misses_poor'])} | {frac(t['resolvable_poor'])} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "calbench"))
    parser.add_argument("--small", action="store_true", help="few fits, for a smoke test")
    parser.add_argument("--sample-size", type=int, default=2000)
    parser.add_argument("--fits", type=int, default=None,
                        help="fits per generator and per model (default 10; --small 2)")
    parser.add_argument("--pool", type=int, default=100000)
    parser.add_argument("--parts", default="generators,models,parametric")
    parser.add_argument("--models", default="gaussian_nb_k2,random_forest_k3,"
                        "logistic_regression_k3,mlp_k2,hist_gradient_boosting_k10")
    parser.add_argument("--fit-flags", default="", help="extra flags for calbench fit")
    args = parser.parse_args()
    fits = args.fits or (2 if args.small else 10)
    n = args.sample_size
    extra = args.fit_flags.split()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    parts = args.parts.split(",")
    with tempfile.TemporaryDirectory() as work:
        if "generators" in parts:
            for name, generator in GENERATORS[: 2 if args.small else None]:
                truth = calbench.truth(generator)["ece_top_l1"]
                for s in range(fits):
                    p, y = calbench.sample(generator, n, seed=1000 + s)
                    started = time.time()
                    result = fit(args.calbench, p, y, s, work, n, extra)
                    rows.append(record("calbench", name, s, result, truth.value, truth.error,
                                       time.time() - started))
                    print(rows[-1], file=sys.stderr)
        # The fakes of the default family, and (the misses a verdict must catch) those of the
        # parametric families, which miss these models (docs/fit.md, the transfer study).
        arms = [(part, source, flags) for part, source, flags in
                (("models", "scikit-learn", []),
                 ("parametric", "scikit-learn, --family parametric", ["--family", "parametric"]))
                if part in parts]
        if arms:
            ts = transfer_study()
            wanted = [m for m in args.models.split(",") if m]
            for name, K, seed, factory in ts.study_models(False, wanted[:1] if args.small
                                                          else wanted):
                X, y = ts.make_data(K, seed, 20000 + args.pool)
                model = factory().fit(X[:20000], y[:20000])
                p_pool, y_pool = model.predict_proba(X[20000:]), y[20000:]
                ece, ece_se = pool_l1_ece(p_pool, y_pool, np.random.default_rng([20261126, seed]))
                for _, source, flags in arms:
                    for s in range(min(fits, args.pool // n)):
                        part = slice(s * n, (s + 1) * n)
                        started = time.time()
                        result = fit(args.calbench, p_pool[part], y_pool[part], s, work, n,
                                     extra + flags)
                        rows.append(record(source, name, s, result, ece, ece_se,
                                           time.time() - started))
                        print(rows[-1], file=sys.stderr)
    with open(os.path.join(args.out, "runs.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    table = summarise(rows)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"sample_size": n, "fits": fits, "pool": args.pool, "table": table}, f,
                  indent=2)
        f.write("\n")
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(markdown(table))
    print(markdown(table))


if __name__ == "__main__":
    main()
