#!/usr/bin/env python3
"""Real models' outputs for `calbench fit` (docs/fit.md, "Real models"): scikit-learn models
trained on synthetic data, each predicting a large pool whose top-label calibration error is
therefore known precisely, and fits of calbench's families to 5,000 of their rows.

    scripts/real-models.py [--pool 200000] [--fit 5000] [--out DIR] [--calbench BIN]
                           [--models nb_k3,rf_k2,...] [--write-data tests/data/real_models]

For every model it prints (and writes to DIR/real_models.csv) the pool's accuracy and top-label
ECE (20 equal-mass bins, with a bootstrap standard error over the pool), and, for the fake
classifier `calbench fit` makes from the first `--fit` pool rows, its true accuracy and ECE, for
the default (`empirical`) family and for the parametric one (`--family parametric`).
`--write-data` also writes each model's fit rows (label, K probabilities; 9 significant digits)
and the pool's figures, the small version tests/unit/test_empirical.cpp checks.

Seeds: data sets and models random_state 0..; the pool is drawn from the same generator as the
training rows (make_classification with a fixed random_state), so it is the model's
population. Everything is deterministic for a given scikit-learn version.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier

TRAIN = 3000
QUICK = os.environ.get("REAL_MODELS_FIT_FLAGS",
                       "--replicates 5 --resamples 5 --sizes 100 --verdict-samples 20").split()


def dataset(classes, n, seed):
    """make_classification with enough signal that K = 10 is learnable."""
    return make_classification(n_samples=n, n_features=20, n_informative=10, n_redundant=4,
                               n_classes=classes, n_clusters_per_class=2, class_sep=1.2,
                               flip_y=0.02, random_state=seed)


MODELS = {
    # name: (K, model factory, data seed); naive Bayes overconfident, forests underconfident,
    # logistic regression / MLP / boosting near-calibrated.
    "nb_k2": (2, lambda: GaussianNB(), 1),
    "nb_k3": (3, lambda: GaussianNB(), 2),
    "nb_k10": (10, lambda: GaussianNB(), 3),
    "rf_k2": (2, lambda: RandomForestClassifier(n_estimators=100, random_state=0), 1),
    "rf_k3": (3, lambda: RandomForestClassifier(n_estimators=100, random_state=0), 2),
    "rf_k10": (10, lambda: RandomForestClassifier(n_estimators=100, random_state=0), 3),
    "lr_k3": (3, lambda: LogisticRegression(max_iter=2000), 2),
    "lr_k10": (10, lambda: LogisticRegression(max_iter=2000), 3),
    "mlp_k3": (3, lambda: MLPClassifier(hidden_layer_sizes=(64,), max_iter=400, random_state=0), 2),
    "gb_k2": (2, lambda: HistGradientBoostingClassifier(random_state=0), 1),
    "gb_k10": (10, lambda: HistGradientBoostingClassifier(random_state=0), 3),
}


def top_label_ece(p, y, bins=20):
    """Equal-mass binned top-label ECE (the plug-in |mean gap| per bin, weighted)."""
    z = p.max(axis=1)
    correct = (p.argmax(axis=1) == y).astype(float)
    order = np.argsort(z, kind="stable")
    total = 0.0
    for chunk in np.array_split(order, bins):
        total += len(chunk) * abs(correct[chunk].mean() - z[chunk].mean())
    return total / len(y)


def pool_figures(p, y, rng, reps=20):
    acc = float((p.argmax(axis=1) == y).mean())
    ece = top_label_ece(p, y)
    boot = []
    for _ in range(reps):
        idx = rng.integers(0, len(y), len(y))
        boot.append(top_label_ece(p[idx], y[idx]))
    return acc, ece, float(np.std(boot, ddof=1))


def fit_fake(calbench, rows_csv, family):
    # Few fake samples for the verdict and predictions: only the fit's truth is used here.
    args = [calbench, "fit", rows_csv, "--json"] + QUICK
    if family:
        args += ["--family", family]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    return d["family"], d["fake"]["accuracy"]["value"], d["fake"]["ece_top_l1"]["value"]


def write_rows(path, p, y, digits=None):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        for label, row in zip(y, p):
            row = row / row.sum()
            w.writerow([int(label)] + [f"{v:.{digits}g}" if digits else repr(float(v)) for v in row])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pool", type=int, default=200_000)
    ap.add_argument("--fit", type=int, default=5000)
    ap.add_argument("--out", default="results/real_models")
    ap.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "build/release/calbench"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--write-data", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(20261126)
    rows = []
    header = ["model", "classes", "pool_accuracy", "pool_ece", "pool_ece_se",
              "fake_family", "fake_accuracy", "fake_ece", "parametric_family",
              "parametric_accuracy", "parametric_ece"]
    print(",".join(header))
    for name in args.models.split(","):
        K, make, seed = MODELS[name]
        X, y = dataset(K, TRAIN + args.pool, seed)
        model = make().fit(X[:TRAIN], y[:TRAIN])
        p = model.predict_proba(X[TRAIN:])
        yp = y[TRAIN:]
        acc, ece, se = pool_figures(p, yp, rng)
        with tempfile.TemporaryDirectory() as tmp:
            csv_path = os.path.join(tmp, f"{name}.csv")
            write_rows(csv_path, p[: args.fit], yp[: args.fit])
            fam, facc, fece = fit_fake(args.calbench, csv_path, None)
            pfam, pacc, pece = fit_fake(args.calbench, csv_path, "parametric")
        row = [name, K, acc, ece, se, fam, facc, fece, pfam, pacc, pece]
        rows.append(row)
        print(",".join(str(round(v, 5)) if isinstance(v, float) else str(v) for v in row),
              flush=True)
        if args.write_data:
            os.makedirs(args.write_data, exist_ok=True)
            write_rows(os.path.join(args.write_data, f"{name}.csv"), p[: args.fit],
                       yp[: args.fit], digits=9)
            with open(os.path.join(args.write_data, f"{name}.json"), "w") as f:
                json.dump({"model": name, "classes": K, "pool": args.pool,
                           "pool_accuracy": acc, "pool_ece_em20": ece, "pool_ece_se": se,
                           "made_by": "scripts/real-models.py --pool %d --fit %d --models %s"
                           % (args.pool, args.fit, name)}, f, indent=1)
                f.write("\n")
    with open(os.path.join(args.out, "real_models.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(markdown(rows))


def markdown(rows):
    """The table docs/fit.md publishes: the fakes' true ECE and accuracy beside the pool's, and
    whether the ECE is within max(0.005, 3 pool SEs)."""
    out = ["| model | K | pool accuracy | pool ECE ± SE | empirical: accuracy | ECE | within | "
           "parametric (family): accuracy | ECE | within |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for name, K, acc, ece, se, fam, facc, fece, pfam, pacc, pece in rows:
        tol = max(0.005, 3 * se)
        out.append(f"| {name} | {K} | {acc:.3f} | {ece:.4f} ± {se:.4f} | {facc:.3f} | "
                   f"{fece:.4f} | {'yes' if abs(fece - ece) <= tol else 'no'} | "
                   f"{pacc:.3f} ({pfam}) | {pece:.4f} | "
                   f"{'yes' if abs(pece - ece) <= tol else 'no'} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
