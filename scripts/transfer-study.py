#!/usr/bin/env python3
"""The transfer study of `calbench fit` (docs/fit.md, issue #23): does a fake fitted to a real
model's outputs predict how calibration estimators behave on that model, and better than a
bootstrap of the same rows?

For each scikit-learn model (kinds of miscalibration: GaussianNB overconfident, RandomForest
underconfident, LogisticRegression / MLP / HistGradientBoosting near-calibrated; K = 2, 3, 10):
1. data from sklearn.datasets.make_classification (seed stated per model), split into a training
   set, a fit set (the rows a user has) and a pool;
2. the model is trained on the training set and predicts the fit set and the pool;
3. the model's own behaviour, known precisely from the pool: for each estimator and n, the mean
   and sd of the estimate over `subsamples` subsamples of n pool rows (without replacement within
   a subsample); bias = mean - reference, the reference being the population value of the
   estimator's target: the model's true top-label L1 ECE (ece_top_l1) for the two binned ECEs,
   its L2 ECE (ece_top_l2) for the debiased ECE, smooth_ece's own population value (smooth_ece
   on the whole pool) for smooth_ece. ece_top_l1 is estimated on the pool by the plug-in ECE
   with `pool_bins_l1` equal-mass bins, bias-corrected by the bootstrap (2 x estimate - mean of
   `pool_boot` bootstrap resamples: the |mean gap| of a bin is biased upward by its noise);
   ece_top_l2 by the debiased equal-mass ECE with `pool_bins` bins (Kumar et al. 2019); each
   standard error from the same bootstrap resamples;
4. `calbench fit` on the fit set (--json) gives the fake's and the bootstrap's mean, sd and bias
   per (estimator, n) and the verdict;
5. a cell passes when the predicted sd is within 20 % of the observed and the predicted bias
   within 0.005 of the observed; the fake's true top-label ECE matches when within
   max(0.005, 3 pool SEs) of the model's; every model that misses should get POOR.

Writes OUT/cells.csv (one row per model, estimator, n), OUT/models.csv (one row per model),
OUT/summary.json (the shares) and OUT/table.md (the table docs/fit.md publishes).

    /usr/bin/python3 scripts/transfer-study.py --out results/transfer-study          # full size
    /usr/bin/python3 scripts/transfer-study.py --small --out /tmp/transfer-small     # a minute

Needs numpy, scikit-learn and the calbench Python extension (PYTHONPATH=python after a build)
and binary (CALBENCH_BIN or --calbench).
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier

import calbench

# The estimators of the study: `calbench fit`'s defaults, under the labels it reports, each with
# the pool reference its observed bias is measured against: the population value of its target
# (`calbench list estimators`: ece targets ece_top_l1, ece_debiased ece_top_l2, smooth_ece its
# own population value), as `calbench fit` measures the fake's bias.
ESTIMATORS = [
    ("ece_ew15", {"name": "ece", "bins": 15}, "l1"),
    ("ece_em15", {"name": "ece", "bins": 15, "binning": "equal_mass"}, "l1"),
    ("dece_em15", {"name": "ece_debiased"}, "l2"),
    ("smooth_ece", {"name": "smooth_ece"}, "smooth"),
]
SD_TOLERANCE = 0.20    # predicted sd within 20 % of the observed
BIAS_TOLERANCE = 0.005  # predicted bias within 0.005 of the observed
ECE_FLOOR = 0.005       # the fake's true top-label ECE within max(0.005, 3 pool SEs)


def model_kinds():
    """(name, K, seed, factory): each model's data seed is its own, stated here."""
    return [
        ("gaussian_nb", GaussianNB),
        ("random_forest", lambda: RandomForestClassifier(n_estimators=50, min_samples_leaf=3,
                                                         random_state=0, n_jobs=1)),
        ("logistic_regression", lambda: LogisticRegression(max_iter=2000)),
        ("mlp", lambda: MLPClassifier(hidden_layer_sizes=(32,), max_iter=300, random_state=0)),
        ("hist_gradient_boosting", lambda: HistGradientBoostingClassifier(random_state=0)),
    ]


def study_models(small, only):
    """(name, K, data seed, factory). The seed is 1000 + 10 K + the kind's index in
    model_kinds(), the same in every run and subset."""
    kinds = model_kinds()
    chosen = [(f"{name}_k{K}", K, 1000 + 10 * K + i, factory)
              for K in (2, 3, 10) for i, (name, factory) in enumerate(kinds)]
    if small and not only:
        only = ["gaussian_nb_k2", "random_forest_k3", "logistic_regression_k3"]
    if only:
        unknown = set(only) - {c[0] for c in chosen}
        if unknown:
            raise SystemExit(f"--models: unknown {sorted(unknown)}; valid: "
                             f"{[c[0] for c in chosen]}")
        chosen = [c for c in chosen if c[0] in only]
    return chosen


def make_data(K, seed, n):
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_redundant=4,
                               n_classes=K, n_clusters_per_class=2, class_sep=1.0,
                               flip_y=0.02, random_state=seed)
    return X, y


def estimates(p, y):
    return [calbench.estimate(spec, p, y) for _, spec, _ in ESTIMATORS]


def pool_reference(p, y, bins_l1, bins_l2, boot, rng):
    """The model's population values from the pool: {"l1": (ece_top_l1, SE), "l2": (ece_top_l2,
    SE), "smooth": (smooth_ece, 0)}. ece_top_l1: the plug-in top-label ECE with `bins_l1`
    equal-mass bins, bias-corrected by the bootstrap (Efron & Tibshirani 1993, eq. 10.3:
    2 x estimate - mean of the resamples' estimates), since each bin's |mean gap| is biased
    upward by its sampling noise; ece_top_l2: the debiased ECE with `bins_l2` equal-mass bins
    (Kumar et al. 2019), whose square is unbiased for the binned L2 error. Both SEs from the
    same `boot` bootstrap resamples of the pool; smooth_ece on the whole pool."""
    l1 = {"name": "ece", "bins": bins_l1, "binning": "equal_mass"}
    l2 = {"name": "ece_debiased", "bins": bins_l2, "binning": "equal_mass"}
    values = []
    for _ in range(boot):
        i = rng.integers(0, len(y), len(y))
        values.append((calbench.estimate(l1, p[i], y[i]), calbench.estimate(l2, p[i], y[i])))
    values = np.array(values)
    plug_l1 = calbench.estimate(l1, p, y)
    smooth = calbench.estimate(dict(ESTIMATORS[3][1]), p, y)
    return {"l1": (2 * plug_l1 - float(values[:, 0].mean()), float(np.std(values[:, 0], ddof=1))),
            "l2": (calbench.estimate(l2, p, y), float(np.std(values[:, 1], ddof=1))),
            "smooth": (smooth, 0.0)}


def ece_resolution(p, y, fit_size, bins=100):
    """The smallest standard error with which any regular estimator can know the model's
    top-label L1 ECE from `fit_size` rows: sqrt((E[c (1 - c)] + Var |c - z|) / n), the variance
    of the L1 ECE's efficient influence function sign(c - z) (1{correct} - c) + |c - z| - ECE
    (c = P(correct | z), z = max p; it applies where c - z is nonzero). c is estimated on the
    pool by `bins` equal-mass bins of z (5,000 rows each at the full pool). By the convolution
    theorem and Anderson's lemma, no such estimator's error is within +-t with probability
    above P(|N(0, se^2)| <= t), returned as the second value for the study's tolerance."""
    z = p.max(1)
    correct = (p.argmax(1) == y).astype(float)
    order = np.argsort(z, kind="stable")
    c = np.empty(len(z))
    for chunk in np.array_split(order, bins):
        c[chunk] = correct[chunk].mean()
    se = float(np.sqrt((np.mean(c * (1 - c)) + np.var(np.abs(c - z))) / fit_size))
    return se


def within_probability(se, tolerance):
    """P(|N(0, se^2)| <= tolerance)."""
    return math.erf(tolerance / (se * math.sqrt(2))) if se > 0 else 1.0


def at_least_probability(probabilities, count):
    """P(at least `count` successes) of independent trials (the Poisson-binomial law)."""
    law = [1.0]
    for q in probabilities:
        law = [a * (1 - q) + b * q for a, b in zip(law + [0.0], [0.0] + law)]
    return sum(law[count:])


def observed(p, y, sizes, subsamples, rng):
    """{(label, n): (mean, sd)} over subsamples of n pool rows."""
    out = {}
    for n in sizes:
        values = np.array([estimates(p[idx], y[idx]) for idx in
                           (rng.choice(len(y), n, replace=False) for _ in range(subsamples))])
        for e, (label, _, _) in enumerate(ESTIMATORS):
            out[(label, n)] = (float(values[:, e].mean()), float(values[:, e].std(ddof=1)))
    return out


def write_fit_csv(path, p, y):
    """The rows as `calbench fit` reads them: label, then the K probabilities (repr: exact)."""
    with open(path, "w") as f:
        for label, row in zip(y, p):
            f.write(str(int(label)) + "," + ",".join(repr(float(v)) for v in row) + "\n")


def run_fit(binary, p, y, sizes, seed, work, args):
    path = os.path.join(work, "fit.csv")
    write_fit_csv(path, p, y)
    command = [binary, "fit", path, "--json", "--seed", str(seed),
               "--sizes", ",".join(str(n) for n in sizes),
               "--replicates", str(args.replicates), "--resamples", str(args.resamples),
               "--verdict-samples", str(args.verdict_samples),
               # The study's four (fit's default since issue #35 adds the classwise ones, which
               # scripts/classwise-study.py measures).
               "--estimators", json.dumps([spec for _, spec, _ in ESTIMATORS])]
    if args.penalties:
        command += ["--penalties", args.penalties]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)


def passes(predicted, observed_mean_sd, bias_obs):
    sd_ok = abs(predicted["sd"] / observed_mean_sd[1] - 1.0) <= SD_TOLERANCE \
        if observed_mean_sd[1] > 0 else predicted["sd"] == 0
    bias_ok = abs(predicted["bias"] - bias_obs) <= BIAS_TOLERANCE
    return sd_ok, bias_ok


def share(rows, key):
    values = [r[key] for r in rows if r[key] != ""]
    return (sum(values) / len(values), len(values)) if values else (float("nan"), 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--small", action="store_true",
                        help="three models, a 20,000-row pool, n = 200 and 1,000, fit on 2,000")
    parser.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "calbench"))
    parser.add_argument("--seed", type=int, default=20261126)
    args_known, _ = parser.parse_known_args()
    small = args_known.small
    parser.add_argument("--pool", type=int, default=20000 if small else 500000)
    parser.add_argument("--train", type=int, default=5000 if small else 20000)
    parser.add_argument("--fit-size", type=int, default=2000 if small else 5000)
    parser.add_argument("--subsamples", type=int, default=60 if small else 200)
    parser.add_argument("--replicates", type=int, default=60 if small else 200)
    parser.add_argument("--resamples", type=int, default=60 if small else 200)
    parser.add_argument("--pool-bins", type=int, default=20 if small else 100,
                        help="equal-mass bins of the pool's debiased L2 ECE")
    parser.add_argument("--pool-bins-l1", type=int, default=10 if small else 20,
                        help="equal-mass bins of the pool's bias-corrected L1 ECE")
    parser.add_argument("--pool-boot", type=int, default=10 if small else 20)
    parser.add_argument("--verdict-samples", type=int, default=200)
    parser.add_argument("--penalties", default="",
                        help="calbench fit --penalties (default: fit's own); the golden: 0.1")
    parser.add_argument("--models", default="", help="comma-separated subset, e.g. mlp_k3")
    parser.add_argument("--sizes", default="",
                        help="comma-separated n (default 200,1000,fit size,4 x fit size; "
                             "--small: 200,1000)")
    parser.add_argument("--reuse-pool", metavar="DIR", default="",
                        help="read each model's pool measurements (its references and the "
                             "observed mean and sd per estimator and n) from a previous run's "
                             "cells.csv and models.csv in DIR instead of recomputing them: they "
                             "depend only on the model, --seed and the pool options, not on the "
                             "fit; only the fits are rerun")
    parser.add_argument("--merge", nargs="+", metavar="DIR",
                        help="no computation: join the cells.csv and models.csv of runs on "
                             "disjoint --models subsets (same other options) into --out")
    args = parser.parse_args()
    if args.sizes:
        sizes = [int(n) for n in args.sizes.split(",")]
    else:
        sizes = [200, 1000] if small else [200, 1000, args.fit_size, 4 * args.fit_size]
    os.makedirs(args.out, exist_ok=True)
    if args.merge:
        print(json.dumps(merge(args, sizes), indent=2))
        return

    cell_rows, model_rows = [], []
    with tempfile.TemporaryDirectory() as work:
        for name, K, seed, factory in study_models(small, [m for m in args.models.split(",")
                                                           if m]):
            started = time.time()
            X, y = make_data(K, seed, args.train + args.fit_size + args.pool)
            a, b = args.train, args.train + args.fit_size
            model = factory().fit(X[:a], y[:a])
            p_fit, y_fit = model.predict_proba(X[a:b]), y[a:b]
            p_pool, y_pool = model.predict_proba(X[b:]), y[b:]
            if args.reuse_pool:
                references, obs = reused_pool(args.reuse_pool, name, sizes)
            else:
                rng = np.random.default_rng([args.seed, seed])
                references = pool_reference(p_pool, y_pool, args.pool_bins_l1, args.pool_bins,
                                            args.pool_boot, rng)
                obs = observed(p_pool, y_pool, sizes, args.subsamples, rng)
            ece, ece_se = references["l1"]
            fit = run_fit(args.calbench, p_fit, y_fit, sizes, args.seed, work, args)
            fake_ece = fit["fake"]["ece_top_l1"]["value"]
            tolerance = max(ECE_FLOOR, 3 * ece_se)
            verdict = fit["verdict"]["verdict"]
            matches = abs(fake_ece - ece) <= tolerance
            resolution = ece_resolution(p_pool, y_pool, args.fit_size)
            model_rows.append({
                "model": name, "K": K, "data_seed": seed,
                "accuracy": float((p_pool.argmax(1) == y_pool).mean()),
                "fake_accuracy": fit["fake"]["accuracy"]["value"],
                "ece_top_pool": ece, "ece_top_pool_se": ece_se, "fake_ece_top": fake_ece,
                "ece_top_l2_pool": references["l2"][0], "ece_top_l2_pool_se": references["l2"][1],
                "ece_tolerance": tolerance, "fake_ece_matches": int(matches),
                "ece_resolution_se": resolution,
                "best_within_probability": within_probability(resolution, tolerance),
                "family": fit["family"], "verdict": verdict,
                "miss_flagged": "" if matches else int(verdict == "POOR"),
                "failing_checks": "; ".join(c["check"] for c in fit["verdict"]["checks"]
                                            if c["fails"]),
            })
            for cell in fit["predictions"]["cells"]:
                label, n = cell["estimator"], cell["n"]
                mean_sd = obs[(label, n)]
                reference = references[next(r for l, _, r in ESTIMATORS if l == label)][0]
                bias_obs = mean_sd[0] - reference
                row = {"model": name, "K": K, "estimator": label, "n": n,
                       "observed_mean": mean_sd[0], "observed_sd": mean_sd[1],
                       "observed_bias": bias_obs,
                       "fake_sd": cell["fake"]["sd"], "fake_bias": cell["fake"]["bias"]}
                sd_ok, bias_ok = passes(cell["fake"], mean_sd, bias_obs)
                row.update({"fake_sd_ok": int(sd_ok), "fake_bias_ok": int(bias_ok),
                            "fake_ok": int(sd_ok and bias_ok)})
                if cell["bootstrap"] is not None:
                    bsd, bbias = passes(cell["bootstrap"], mean_sd, bias_obs)
                    row.update({"boot_sd": cell["bootstrap"]["sd"],
                                "boot_bias": cell["bootstrap"]["bias"],
                                "boot_sd_ok": int(bsd), "boot_bias_ok": int(bbias),
                                "boot_ok": int(bsd and bbias)})
                else:
                    row.update({k: "" for k in ("boot_sd", "boot_bias", "boot_sd_ok",
                                                "boot_bias_ok", "boot_ok")})
                cell_rows.append(row)
            print(f"{name}: pool ECE {ece:.4f} ± {ece_se:.4f}, fake {fake_ece:.4f}, "
                  f"{fit['family']}, {verdict} ({time.time() - started:.0f} s)", file=sys.stderr)
            write_outputs(args, sizes, cell_rows, model_rows)

    print(json.dumps(write_outputs(args, sizes, cell_rows, model_rows), indent=2))


def reused_pool(directory, name, sizes):
    """A previous run's pool measurements of one model, as pool_reference() and observed() give
    them (the smooth_ece reference is the observed mean's reference: its bias column)."""
    with open(os.path.join(directory, "models.csv")) as f:
        model = next((typed(r) for r in csv.DictReader(f) if r["model"] == name), None)
    with open(os.path.join(directory, "cells.csv")) as f:
        cells = [typed(r) for r in csv.DictReader(f) if r["model"] == name]
    if model is None or {(c["estimator"], c["n"]) for c in cells} != \
            {(label, n) for label, _, _ in ESTIMATORS for n in sizes}:
        raise SystemExit(f"--reuse-pool {directory}: no complete measurements of {name} at "
                         f"sizes {sizes}")
    smooth = next(c for c in cells if c["estimator"] == "smooth_ece")
    references = {"l1": (model["ece_top_pool"], model["ece_top_pool_se"]),
                  "l2": (model["ece_top_l2_pool"], model["ece_top_l2_pool_se"]),
                  "smooth": (smooth["observed_mean"] - smooth["observed_bias"], 0.0)}
    return references, {(c["estimator"], c["n"]): (c["observed_mean"], c["observed_sd"])
                        for c in cells}


def write_outputs(args, sizes, cell_rows, model_rows):
    """Writes the tables so far (after each model, so a long run can be read as it goes)."""
    write_csv(os.path.join(args.out, "cells.csv"), cell_rows)
    write_csv(os.path.join(args.out, "models.csv"), model_rows)
    fit_size = args.fit_size
    within = [r for r in cell_rows if r["n"] <= fit_size]
    beyond = [r for r in cell_rows if r["n"] > fit_size]
    summary = {
        "models": len(model_rows), "pool": args.pool, "fit_size": fit_size, "sizes": sizes,
        "subsamples": args.subsamples, "seed": args.seed,
        "cells_up_to_fit_size": len(within),
        "fake_sd_share": share(within, "fake_sd_ok")[0],
        "fake_bias_share": share(within, "fake_bias_ok")[0],
        "fake_share": share(within, "fake_ok")[0],
        "boot_sd_share": share(within, "boot_sd_ok")[0],
        "boot_bias_share": share(within, "boot_bias_ok")[0],
        "boot_share": share(within, "boot_ok")[0],
        "cells_beyond_fit_size": len(beyond),
        "fake_share_beyond": share(beyond, "fake_ok")[0] if beyond else None,
        "fake_ece_match_share": share(model_rows, "fake_ece_matches")[0],
        "best_expected_matches": sum(r["best_within_probability"] for r in model_rows),
        "best_bar_probability": at_least_probability(
            [r["best_within_probability"] for r in model_rows],
            math.ceil(0.9 * len(model_rows) - 1e-9)),
        "misses": sum(1 for r in model_rows if not r["fake_ece_matches"]),
        "misses_flagged_poor": sum(1 for r in model_rows if r["miss_flagged"] == 1),
        "poor": sum(1 for r in model_rows if r["verdict"] == "POOR"),
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(markdown(summary, model_rows))
    return summary


def typed(row):
    """A row read back from our CSV: integers and floats as written (repr round-trips)."""
    out = {}
    for key, value in row.items():
        if value == "" or key in ("model", "estimator", "family", "verdict", "failing_checks"):
            out[key] = value
        elif key in ("K", "n", "data_seed", "miss_flagged", "fake_ece_matches") or \
                key.endswith("_ok"):
            out[key] = int(value)
        else:
            out[key] = float(value)
    return out


def merge(args, sizes):
    """The tables of one run over every model, from runs over disjoint subsets: each model's
    rows depend only on the model and the shared options, so the result is the same."""
    cells, models = [], []
    for directory in args.merge:
        with open(os.path.join(directory, "cells.csv")) as f:
            cells += [typed(r) for r in csv.DictReader(f)]
        with open(os.path.join(directory, "models.csv")) as f:
            models += [typed(r) for r in csv.DictReader(f)]
    order = [m[0] for m in study_models(args.small, [m for m in args.models.split(",") if m])]
    models.sort(key=lambda m: order.index(m["model"]))
    cells.sort(key=lambda c: order.index(c["model"]))  # stable: each model's rows keep order
    return write_outputs(args, sizes, cells, models)


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)


def markdown(s, models):
    pct = lambda x: "-" if x is None else f"{100 * x:.0f} %"
    lines = [
        f"| cells (model, estimator, n ≤ {s['fit_size']}) | sd within 20 % | bias within 0.005 "
        "| both |",
        "|---|---|---|---|",
        f"| fake ({s['cells_up_to_fit_size']} cells) | {pct(s['fake_sd_share'])} | "
        f"{pct(s['fake_bias_share'])} | {pct(s['fake_share'])} |",
        f"| bootstrap of the fit rows | {pct(s['boot_sd_share'])} | "
        f"{pct(s['boot_bias_share'])} | {pct(s['boot_share'])} |",
        f"| fake at n = 4 × fit size ({s['cells_beyond_fit_size']} cells) | | | "
        f"{pct(s['fake_share_beyond'])} |",
        "",
        "| model | K | accuracy | pool top-label ECE ± SE | fit rows' resolution | fake's "
        "| fake's accuracy | family | verdict | failing checks |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in models:
        lines.append(
            f"| {m['model']} | {m['K']} | {m['accuracy']:.3f} | {m['ece_top_pool']:.4f} ± "
            f"{m['ece_top_pool_se']:.4f} | {m['ece_resolution_se']:.4f} "
            f"({100 * m['best_within_probability']:.0f} %) | {m['fake_ece_top']:.4f}"
            f"{'' if m['fake_ece_matches'] else ' (misses)'} | {m['fake_accuracy']:.3f} | "
            f"{m['family']} | {m['verdict']} | {m['failing_checks']} |")
    lines.append("")
    lines.append(f"Fake's true top-label ECE within max(0.005, 3 pool SEs): "
                 f"{pct(s['fake_ece_match_share'])} of {s['models']} models; "
                 f"{s['misses_flagged_poor']} of {s['misses']} misses got POOR.")
    lines.append(f"An estimate of the ECE as precise as {s['fit_size']} fit rows allow (the "
                 f"resolution column: its smallest standard error, and the chance it lands "
                 f"within the tolerance) is expected within the bar for "
                 f"{s['best_expected_matches']:.1f} of {s['models']} models, and within it for "
                 f"90 % of them with probability {s['best_bar_probability']:.3f}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
