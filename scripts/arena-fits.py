#!/usr/bin/env python3
"""Fakes of real models for the recalibration arena (docs/arena.md): scikit-learn models trained
on bundled and synthetic data, their held-out outputs fitted by today's `calbench fit`, and the
fitted generators written to configs/arena/fakes/ (NAME.json, the runnable estimator_bias config
`calbench fit --out` writes, and NAME.rows.npy, its rows).

    /usr/bin/python3 scripts/arena-fits.py [--calbench BIN] [--out configs/arena/fakes]
                                           [--models nb_k2,...]

Models (naive Bayes: overconfident; random forests: underconfident; logistic regression, MLP and
gradient boosting: near-calibrated), each trained on one part of its data set and predicting the
rest; those predictions (label, K probabilities) are what `calbench fit` sees:
- synthetic: sklearn.datasets.make_classification as in scripts/real-models.py (its `dataset`
  function and data seeds: 1 for K = 2, 2 for K = 3), 3,000 training rows, 1,500 predicted;
- bundled: breast_cancer (K = 2, 569 rows: 300 train, 269 predicted) and digits (K = 10, 1,797
  rows: 900 train, 897 predicted), split by a fixed permutation (numpy default_rng(0)).
The fit's verdict (GOOD / FAIR / POOR, docs/fit.md) is printed and written to
DIR/provenance.csv with the model's held-out accuracy and 15-bin top-label ECE; a POOR fit is
written all the same (`--force`) and marked there. Deterministic for a given scikit-learn
version (1.2.1 here) and calbench build.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import sklearn
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

TRAIN, PREDICT = 3000, 1500
# The verdict is computed on a few fake samples only: it is reported, not used.
FIT_FLAGS = ["--verdict-samples", "50", "--replicates", "5", "--resamples", "5",
             "--sizes", "200", "--threads", "2", "--force"]


def synthetic(classes, seed):
    """scripts/real-models.py's data set: make_classification with 20 features."""
    X, y = make_classification(n_samples=TRAIN + PREDICT, n_features=20, n_informative=10,
                               n_redundant=4, n_classes=classes, n_clusters_per_class=2,
                               class_sep=1.2, flip_y=0.02, random_state=seed)
    return X[:TRAIN], y[:TRAIN], X[TRAIN:], y[TRAIN:]


def bundled(loader, train):
    X, y = loader(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    return X[:train], y[:train], X[train:], y[train:]


def rf():
    return RandomForestClassifier(n_estimators=100, random_state=0)


def lr():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))


MODELS = {
    # name: (data, model factory)
    "nb_k2": (lambda: synthetic(2, 1), GaussianNB),
    "rf_k2": (lambda: synthetic(2, 1), rf),
    "gb_k2": (lambda: synthetic(2, 1), lambda: HistGradientBoostingClassifier(random_state=0)),
    "cancer_lr_k2": (lambda: bundled(load_breast_cancer, 300), lr),
    "nb_k3": (lambda: synthetic(3, 2), GaussianNB),
    "rf_k3": (lambda: synthetic(3, 2), rf),
    "mlp_k3": (lambda: synthetic(3, 2),
               lambda: MLPClassifier(hidden_layer_sizes=(64,), max_iter=400, random_state=0)),
    "digits_lr_k10": (lambda: bundled(load_digits, 900), lr),
}


def top_label_ece(p, y, bins=15):
    """Equal-width 15-bin top-label ECE (Guo et al.), for the provenance table only."""
    z = p.max(axis=1)
    correct = (p.argmax(axis=1) == y).astype(float)
    idx = np.minimum((z * bins).astype(int), bins - 1)
    return float(sum(abs(correct[idx == b].sum() - z[idx == b].sum()) for b in range(bins)) / len(y))


# ---- the study's configs ---------------------------------------------------------------------
# Cells: every generator x every fit size (a sweep is a Cartesian product). Fit sizes span
# CalArena's calibration sets (100 to 100,000 rows, median about 2,300): the median over the 30
# cells is (1,500 + 3,000) / 2 = 2,250.
BINARY_FAKES = ["nb_k2", "rf_k2", "gb_k2", "cancer_lr_k2"]
MULTICLASS_FAKES = ["nb_k3", "rf_k3", "mlp_k3", "digits_lr_k10"]
BINARY_SIZES = [100, 1500, 3000, 100000]
MULTICLASS_SIZES = [1000, 4000]
BINARY_PARAMETRIC = {"family": "dirichlet", "classes": 2, "alpha": 0.5,
                     "miscalibration": {"map": "temperature", "temperature": 0.6}}
MULTICLASS_PARAMETRIC = {"family": "dirichlet", "classes": 4, "alpha": 0.4,
                         "miscalibration": {"map": "power", "exponents": [1.6, 0.8, 1.6, 0.8]}}
# Row caps (the `subsample` wrapper, docs/arena.md "Costs"): kernel's bandwidth search is
# O(n^2) and its model keeps its fit rows; smoothing_spline's cross-validated Newton fits cost
# O(n d^2) per lambda; bbq fits up to 10 n^(1/3) binnings; ensemble_temperature's EM makes up
# to 10,000 passes over the rows (the two took 229 of a trial replicate's 292 s of fit time at
# n = 100,000; docs/performance.md).
CAPS = {"kernel": 500, "smoothing_spline": 2000, "bbq": 10000, "ensemble_temperature": 10000}


def methods():
    plain = ["temperature", "vector", "matrix", "dirichlet", "platt", "beta", "isotonic",
             "histogram_binning", "bbq", "ensemble_temperature", "scaling_binning",
             "platt_probability", "quadratic", "centred_isotonic", "venn_abers", "kernel",
             "smoothing_spline", "cdf_spline", "svs", "sms"]
    out = []
    for name in plain:
        m = {"name": name}
        if name in CAPS:
            m = {"name": "subsample", "rows": CAPS[name], "method": m}
        out.append(m)
    out += [{"name": "laplace_mixture", "method": {"name": "temperature"}},
            {"name": "laplace_mixture", "method": {"name": "isotonic"}},
            {"name": "classwise", "method": {"name": "temperature"}},
            {"name": "top_label_reduced", "method": {"name": "isotonic"}},
            {"name": "laplace_mixture", "method": {"name": "histogram_binning"}}]
    return out


ESTIMATORS = [{"name": "ece", "bins": 15}, {"name": "brier"}, {"name": "nll"},
              {"name": "kuiper_calibration"}, {"name": "smooth_ece"}]


def arena_config(name, seed, fakes, parametric, sizes, folder, replicates=20):
    generators = []
    for fake in fakes:
        with open(os.path.join(folder, "fakes", fake + ".json")) as f:
            g = json.load(f)["generator"]
        g["rows"] = "fakes/" + g["rows"]
        generators.append(g)
    generators.append(parametric)
    return {"name": name, "scenario": "recalibration", "seed": seed, "replicates": replicates,
            "fit_size": sizes[0], "test_size": 2000, "truth_samples": 50000,
            "generator": generators[0], "methods": methods(), "estimators": ESTIMATORS,
            "sweep": {"generator": generators, "fit_size": sizes},
            "output": {"directory": "results/" + name}}


def write_configs(folder):
    for name, seed, fakes, parametric, sizes in [
            ("arena_binary", 20260501, BINARY_FAKES, BINARY_PARAMETRIC, BINARY_SIZES),
            ("arena_multiclass", 20260502, MULTICLASS_FAKES, MULTICLASS_PARAMETRIC,
             MULTICLASS_SIZES)]:
        path = os.path.join(folder, name.replace("arena_", "") + ".json")
        with open(path, "w") as f:
            json.dump(arena_config(name, seed, fakes, parametric, sizes, folder), f, indent=1)
            f.write("\n")
        print("wrote", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "build/release/calbench"))
    ap.add_argument("--out", default="configs/arena/fakes")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--configs-only", action="store_true",
                    help="only (re)write configs/arena/{binary,multiclass}.json from the fakes")
    args = ap.parse_args()
    if args.configs_only:
        write_configs(os.path.dirname(args.out.rstrip("/")))
        return
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        data, make = MODELS[name]
        Xtr, ytr, Xte, yte = data()
        p = make().fit(Xtr, ytr).predict_proba(Xte)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, name + ".csv")
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                for label, row in zip(yte, p):
                    w.writerow([int(label)] + [repr(float(v)) for v in row / row.sum()])
            out = subprocess.run([args.calbench, "fit", path, "--json", "--out",
                                  os.path.join(args.out, name + ".json")] + FIT_FLAGS,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"calbench fit {name}: {out.stderr}")
        d = json.loads(out.stdout)
        verdict = d.get("verdict", {})
        row = {"model": name, "classes": p.shape[1], "rows": len(yte),
               "accuracy": round(float((p.argmax(axis=1) == yte).mean()), 4),
               "ece15": round(top_label_ece(p, yte), 4),
               "family": d["family"],
               "fake_accuracy": round(d["fake"]["accuracy"]["value"], 4),
               "fake_ece_top_l1": round(d["fake"]["ece_top_l1"]["value"], 4),
               "verdict": verdict.get("verdict", "")}
        rows.append(row)
        print(row, flush=True)
    with open(os.path.join(args.out, "provenance.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) + ["sklearn"])
        w.writeheader()
        for row in rows:
            w.writerow(dict(row, sklearn=sklearn.__version__))
    if args.models == ",".join(MODELS):
        write_configs(os.path.dirname(args.out.rstrip("/")))


if __name__ == "__main__":
    main()
