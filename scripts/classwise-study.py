#!/usr/bin/env python3
"""The classwise transfer study of `calbench fit` (issue #35, docs/fit.md "The classwise
study"): does a fake fitted to a model's outputs predict how top-label *and* classwise
estimators behave on that model, on deep networks as well as scikit-learn models, at the fit
sizes users have (1,000, 2,000, 5,000 rows), and better than a bootstrap of the same rows?

The sibling of scripts/transfer-study.py (whose functions it imports): the same models and
machinery, plus
- the networks of scripts/train-networks.py, read from their cached outputs
  (tests/data/networks: pool logits and labels; no torch needed). A network's held-out rows
  are put in a seeded permutation (numpy seed [seed, index of the network]); the first
  `fit size` rows are the fit rows, the rest the pool (nested fit sets across fit sizes);
- every estimator of `calbench fit`'s default: ece 15 bins equal width and equal mass,
  ece_debiased, smooth_ece, classwise_ece (15 bins equal width: Kull et al.'s classwise ECE,
  Nixon et al.'s SCE) and ace (Nixon et al.'s defaults);
- pool references: the top-label L1 ECE and L2 ECE as in transfer-study.py; the classwise L1
  ECE (target of classwise_ece) by the plug-in classwise ECE with `pool_bins_l1` equal-mass bins
  per class, bias-corrected by the bootstrap (2 x estimate - mean of resamples, Efron &
  Tibshirani 1993, eq. 10.3); smooth_ece's and ace's own values on the whole pool;
- observed behaviour from `subsamples` samples of n rows drawn *with replacement* from the
  pool (the pool is the model's population; without replacement, n = 20,000 of a 60,000-row
  pool would shrink an estimator's sd by a finite-population factor of 0.82);
- per cell two criteria: the done-when's (predicted sd within 20 % and predicted *mean* within
  0.005 of the observed), and the bias criterion of transfer-study.py (bias within 0.005);
- per model the fake's true top-label and classwise ECE against the pool's, with each one's
  resolution at the fit size (the smallest standard error any regular estimator can have from
  that many rows: the sd of the efficient influence function over sqrt(n), transfer-study.py's
  ece_resolution and its classwise analogue classwise_resolution below).

Writes OUT/cells.csv, OUT/models.csv, OUT/summary.json, OUT/table.md.

    nice -n 15 /usr/bin/python3 scripts/classwise-study.py --out results/classwise-study
    nice -n 15 /usr/bin/python3 scripts/classwise-study.py --small --out /tmp/cw-small
    ... --variants classwise,plain   # also `calbench fit --no-classwise` (before issue #35)

Needs numpy (and scikit-learn for the scikit-learn models), the calbench Python extension
(PYTHONPATH=python after a build) and binary (CALBENCH_BIN or --calbench).
"""

import argparse
import csv
import importlib.util
import json
import math
import os
import sys
import tempfile
import time

import numpy as np

import calbench

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("transfer_study",
                                               os.path.join(HERE, "transfer-study.py"))
transfer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(transfer)

NETWORKS = os.path.join(HERE, "..", "tests", "data", "networks")

# (label as `calbench fit` reports it, estimator, pool reference, classwise?)
ESTIMATORS = [
    ("ece_ew15", {"name": "ece", "bins": 15}, "l1", False),
    ("ece_em15", {"name": "ece", "bins": 15, "binning": "equal_mass"}, "l1", False),
    ("dece_em15", {"name": "ece_debiased"}, "l2", False),
    ("smooth_ece", {"name": "smooth_ece"}, "smooth", False),
    ("cwece_ew15", {"name": "classwise_ece"}, "classwise", True),
    ("ace15_nixon", {"name": "ace"}, "ace", True),
]
SD_TOLERANCE, MEAN_TOLERANCE = 0.20, 0.005
VARIANT_TEXT = {"classwise": " (calbench fit's default: the classwise map)",
                "plain": " (calbench fit --no-classwise: the top-label curve alone, before "
                         "issue #35)"}
CLASSWISE_FLOOR = 0.003  # the fake's classwise ECE within max(0.003, 2 resolutions)


def network_models(only):
    """(name, K, index, None) for every cached network, in manifest order."""
    manifest = json.load(open(os.path.join(NETWORKS, "manifest.json")))
    out = [(name, m["classes"], i, None) for i, (name, m) in enumerate(manifest.items())]
    return [m for m in out if not only or m[0] in only]


def network_rows(name, index, seed):
    """The network's held-out rows (probabilities in float64, labels) in a seeded permutation."""
    manifest = json.load(open(os.path.join(NETWORKS, "manifest.json")))
    directory = os.path.join(NETWORKS, manifest[name]["dataset"])
    logits = np.load(os.path.join(directory, f"{name}.npy")).astype(np.float64)
    labels = np.load(os.path.join(directory, "labels.npy")).astype(np.int64)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    order = np.random.default_rng([seed, index]).permutation(len(labels))
    return p[order], labels[order]


def estimate_all(p, y):
    return [calbench.estimate(spec, p, y) for _, spec, _, _ in ESTIMATORS]


def classwise_calibration(p, y, bins):
    """c[i, k] ~ P(y = k | p_k = p[i, k]) by `bins` equal-mass bins of p_k per class."""
    n, K = p.shape
    c = np.empty_like(p)
    for k in range(K):
        order = np.argsort(p[:, k], kind="stable")
        hit = (y == k).astype(float)
        for chunk in np.array_split(order, bins):
            c[chunk, k] = hit[chunk].mean()
    return c


def classwise_resolution(p, y, fit_size, bins=100):
    """The smallest standard error with which a regular estimator knows the classwise L1 ECE
    (1/K) sum_k E|c_k(p_k) - p_k| from `fit_size` rows: the sd of its efficient influence
    function (1/K) sum_k [sign(c_k - p_k)(1{y = k} - c_k) + |c_k - p_k|] over sqrt(n), c_k
    from `bins` equal-mass bins of p_k on the pool (as ece_resolution does for the top label)."""
    K = p.shape[1]
    c = classwise_calibration(p, y, bins)
    onehot = np.eye(K)[y]
    influence = (np.sign(c - p) * (onehot - c) + np.abs(c - p)).mean(1)
    return float(np.std(influence) / math.sqrt(fit_size))


def pool_references(p, y, args, rng):
    """transfer-study.py's top-label references plus the classwise L1 ECE (bias-corrected
    plug-in, equal-mass bins per class, SE from the same resamples) and ace's pool value."""
    refs = transfer.pool_reference(p, y, args.pool_bins_l1, args.pool_bins, args.pool_boot, rng)
    cw = {"name": "classwise_ece", "bins": args.pool_bins_l1, "binning": "equal_mass"}
    boot = []
    for _ in range(args.pool_boot):
        i = rng.integers(0, len(y), len(y))
        boot.append(calbench.estimate(cw, p[i], y[i]))
    plug = calbench.estimate(cw, p, y)
    refs["classwise"] = (2 * plug - float(np.mean(boot)), float(np.std(boot, ddof=1)))
    refs["ace"] = (calbench.estimate({"name": "ace"}, p, y), 0.0)
    return refs


def observed(p, y, sizes, subsamples, rng):
    """{(label, n): (mean, sd)} over `subsamples` samples of n pool rows with replacement."""
    out = {}
    for n in sizes:
        values = np.array([estimate_all(p[i], y[i]) for i in
                           (rng.integers(0, len(y), n) for _ in range(subsamples))])
        for e, (label, _, _, _) in enumerate(ESTIMATORS):
            out[(label, n)] = (float(values[:, e].mean()), float(values[:, e].std(ddof=1)))
    return out


def run_fit(binary, p, y, sizes, seed, work, args, classwise):
    path = os.path.join(work, "fit.csv")
    transfer.write_fit_csv(path, p, y)
    command = [binary, "fit", path, "--json", "--seed", str(seed), "--threads", str(args.threads),
               "--sizes", ",".join(str(n) for n in sizes)] + \
        [f"--{k}={getattr(args, k.replace('-', '_'))}"
         for k in ("replicates", "resamples", "verdict-samples")] + \
        ([] if classwise else ["--no-classwise"])
    done = __import__("subprocess").run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)


def judge(predicted, obs, bias_obs):
    sd_ok = abs(predicted["sd"] / obs[1] - 1.0) <= SD_TOLERANCE if obs[1] > 0 \
        else predicted["sd"] == 0
    mean_ok = abs(predicted["mean"] - obs[0]) <= MEAN_TOLERANCE
    bias_ok = abs(predicted["bias"] - bias_obs) <= MEAN_TOLERANCE
    return int(sd_ok), int(mean_ok), int(bias_ok)


def judge_fit(args, name, source, K, fit_size, p_fit, y_fit, p_pool, y_pool, sizes, refs, obs,
              work, variant):
    """One `calbench fit` of the fit rows (variant "classwise": fit's default; "plain":
    --no-classwise, the family before issue #35) against the pool's measurements."""
    fit = run_fit(args.calbench, p_fit, y_fit, sizes, args.seed, work, args,
                  variant == "classwise")
    top, top_se = refs["l1"]
    cw, cw_se = refs["classwise"]
    fake_top = fit["fake"]["ece_top_l1"]["value"]
    fake_cw = fit["fake"]["classwise_ece_l1"]["value"]
    top_res = transfer.ece_resolution(p_pool, y_pool, fit_size)
    cw_res = classwise_resolution(p_pool, y_pool, fit_size)
    top_tol = max(transfer.ECE_FLOOR, 3 * top_se)
    cw_tol = max(CLASSWISE_FLOOR, 2 * cw_res)
    verdict = fit["verdict"]["verdict"]
    top_miss, cw_miss = abs(fake_top - top) > top_tol, abs(fake_cw - cw) > cw_tol
    # A miss the fit rows can resolve: beyond the tolerance plus 3 resolutions.
    resolvable = abs(fake_top - top) > top_tol + 3 * top_res or \
        abs(fake_cw - cw) > cw_tol + 3 * cw_res
    model = {
        "model": name, "source": source, "K": K, "fit_size": fit_size, "variant": variant,
        "pool_rows": len(y_pool), "accuracy": float((p_pool.argmax(1) == y_pool).mean()),
        "fake_accuracy": fit["fake"]["accuracy"]["value"],
        "ece_top_pool": top, "ece_top_pool_se": top_se, "fake_ece_top": fake_top,
        "ece_top_resolution": top_res, "ece_top_tolerance": top_tol,
        "fake_ece_top_matches": int(not top_miss),
        "classwise_pool": cw, "classwise_pool_se": cw_se, "fake_classwise": fake_cw,
        "classwise_resolution": cw_res, "classwise_tolerance": cw_tol,
        "fake_classwise_matches": int(not cw_miss),
        "classwise_map": "" if fit.get("classwise") is None else
        f"{fit['classwise']['top']}; {fit['classwise']['other']}",
        "verdict": verdict, "resolvable_miss": int(resolvable),
        "silent": int(resolvable and verdict != "POOR"),
        "failing_checks": "; ".join(c["check"] for c in fit["verdict"]["checks"] if c["fails"]),
    }
    cells = []
    for cell in fit["predictions"]["cells"]:
        label, n = cell["estimator"], cell["n"]
        mean_sd = obs[(label, n)]
        ref_key = next(r for l, _, r, _ in ESTIMATORS if l == label)
        bias_obs = mean_sd[0] - refs[ref_key][0]
        row = {"model": name, "source": source, "K": K, "fit_size": fit_size,
               "variant": variant, "estimator": label,
               "classwise": int(next(c for l, _, _, c in ESTIMATORS if l == label)), "n": n,
               "observed_mean": mean_sd[0], "observed_sd": mean_sd[1], "observed_bias": bias_obs,
               "fake_mean": cell["fake"]["mean"], "fake_sd": cell["fake"]["sd"],
               "fake_bias": cell["fake"]["bias"]}
        sd_ok, mean_ok, bias_ok = judge(cell["fake"], mean_sd, bias_obs)
        row.update({"fake_sd_ok": sd_ok, "fake_mean_ok": mean_ok, "fake_bias_ok": bias_ok,
                    "fake_ok": int(sd_ok and mean_ok)})
        if cell["bootstrap"] is not None:
            sd_ok, mean_ok, bias_ok = judge(cell["bootstrap"], mean_sd, bias_obs)
            row.update({"boot_mean": cell["bootstrap"]["mean"], "boot_sd": cell["bootstrap"]["sd"],
                        "boot_sd_ok": sd_ok, "boot_mean_ok": mean_ok,
                        "boot_ok": int(sd_ok and mean_ok)})
        else:
            row.update({k: "" for k in ("boot_mean", "boot_sd", "boot_sd_ok", "boot_mean_ok",
                                        "boot_ok")})
        cells.append(row)
    return model, cells


def one_model(args, name, K, seed, factory, fit_size, work):
    started = time.time()
    if factory is None:
        p_all, y_all = network_rows(name, seed, args.seed)
        p_fit, y_fit = p_all[:fit_size], y_all[:fit_size]
        p_pool, y_pool = p_all[fit_size:], y_all[fit_size:]
        source = "network"
    else:
        X, y = transfer.make_data(K, seed, args.train + fit_size + args.pool)
        a, b = args.train, args.train + fit_size
        model = factory().fit(X[:a], y[:a])
        p_fit, y_fit = model.predict_proba(X[a:b]), y[a:b]
        p_pool, y_pool = model.predict_proba(X[b:]), y[b:]
        source = "scikit-learn"
    sizes = sorted({200, 1000, fit_size, 4 * fit_size})
    rng = np.random.default_rng([args.seed, seed, fit_size])
    refs = pool_references(p_pool, y_pool, args, rng)
    obs = observed(p_pool, y_pool, sizes, args.subsamples, rng)
    models, cells = [], []
    for variant in args.variants.split(","):
        model, rows = judge_fit(args, name, source, K, fit_size, p_fit, y_fit, p_pool, y_pool,
                                sizes, refs, obs, work, variant)
        models.append(model)
        cells += rows
    for m in models:
        print(f"{name} @ {fit_size} ({m['variant']}): top {m['ece_top_pool']:.4f} fake "
              f"{m['fake_ece_top']:.4f}; classwise {m['classwise_pool']:.4f} (res "
              f"{m['classwise_resolution']:.4f}) fake {m['fake_classwise']:.4f}; {m['verdict']} "
              f"({time.time() - started:.0f} s)", file=sys.stderr)
    return models, cells


def share(rows, key):
    values = [r[key] for r in rows if r[key] != ""]
    return (sum(values) / len(values)) if values else None


def summarise(models, cells):
    out = {"models": len(models), "fits": len(models)}
    groups = {"all": cells, "classwise": [c for c in cells if c["classwise"]],
              "top_label": [c for c in cells if not c["classwise"]]}
    for group, rows in groups.items():
        within = [c for c in rows if c["n"] <= c["fit_size"]]
        beyond = [c for c in rows if c["n"] > c["fit_size"]]
        out[group] = {"cells": len(within), "fake": share(within, "fake_ok"),
                      "fake_sd": share(within, "fake_sd_ok"),
                      "fake_mean": share(within, "fake_mean_ok"),
                      "boot": share(within, "boot_ok"), "boot_sd": share(within, "boot_sd_ok"),
                      "boot_mean": share(within, "boot_mean_ok"),
                      "cells_beyond": len(beyond), "fake_beyond": share(beyond, "fake_ok")}
    out["by_fit_size"] = {}
    for fit_size in sorted({c["fit_size"] for c in cells}):
        within = [c for c in cells if c["fit_size"] == fit_size and c["n"] <= fit_size]
        classwise = [c for c in within if c["classwise"]]
        out["by_fit_size"][str(fit_size)] = {
            "cells": len(within), "fake": share(within, "fake_ok"), "boot": share(within, "boot_ok"),
            "fake_classwise": share(classwise, "fake_ok"), "boot_classwise": share(classwise, "boot_ok"),
            "classwise_matches": share([m for m in models if m["fit_size"] == fit_size],
                                       "fake_classwise_matches")}
    out["classwise_matches"] = share(models, "fake_classwise_matches")
    out["top_matches"] = share(models, "fake_ece_top_matches")
    out["resolvable_misses"] = sum(m["resolvable_miss"] for m in models)
    out["silent_misses"] = sum(m["silent"] for m in models)
    out["poor"] = sum(m["verdict"] == "POOR" for m in models)
    return out


def off_resolutions(m, which):
    """How many of the fit rows' resolutions the fake's true ECE (top-label or classwise) is
    from the pool's."""
    if which == "top":
        return abs(m["fake_ece_top"] - m["ece_top_pool"]) / m["ece_top_resolution"]
    return abs(m["fake_classwise"] - m["classwise_pool"]) / m["classwise_resolution"]


def miss(m, which):
    return f" (misses: {off_resolutions(m, which):.1f} res.)"


def flag_chance(d):
    """P(|N(d, 1)| > 3): the chance that a two-sided 3-standard-error test whose standard
    error is the resolution (the smallest any regular estimator from the fit rows has) flags a
    miss of d resolutions."""
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
    return phi(d - 3) + phi(-d - 3)


def markdown(s, models):
    pct = lambda x: "-" if x is None else f"{100 * x:.0f} %"
    lines = ["| cells (n ≤ fit size) | cells | fake: sd | mean | both | bootstrap: sd | mean | "
             "both | fake at 4 × fit size |", "|---|---|---|---|---|---|---|---|---|"]
    for group in ("all", "top_label", "classwise"):
        g = s[group]
        lines.append(f"| {group.replace('_', '-')} | {g['cells']} | {pct(g['fake_sd'])} | "
                     f"{pct(g['fake_mean'])} | {pct(g['fake'])} | {pct(g['boot_sd'])} | "
                     f"{pct(g['boot_mean'])} | {pct(g['boot'])} | {pct(g['fake_beyond'])} "
                     f"({g['cells_beyond']}) |")
    lines += ["", "| fit rows | cells | fake: both | bootstrap: both | classwise cells: fake | "
              "bootstrap | fits whose classwise ECE matches |", "|---|---|---|---|---|---|---|"]
    for fit_size, g in s["by_fit_size"].items():
        lines.append(f"| {fit_size} | {g['cells']} | {pct(g['fake'])} | {pct(g['boot'])} | "
                     f"{pct(g['fake_classwise'])} | {pct(g['boot_classwise'])} | "
                     f"{pct(g['classwise_matches'])} |")
    lines += ["", "| model | K | fit rows | accuracy | top ECE: pool ± SE | resolution | fake | "
              "classwise ECE: pool ± SE | resolution | fake | classwise map | verdict | "
              "failing checks |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        lines.append(
            f"| {m['model']} | {m['K']} | {m['fit_size']} | {m['accuracy']:.3f} | "
            f"{m['ece_top_pool']:.4f} ± {m['ece_top_pool_se']:.4f} | "
            f"{m['ece_top_resolution']:.4f} | {m['fake_ece_top']:.4f}"
            f"{'' if m['fake_ece_top_matches'] else miss(m, 'top')} | "
            f"{m['classwise_pool']:.4f} ± {m['classwise_pool_se']:.4f} | "
            f"{m['classwise_resolution']:.4f} | {m['fake_classwise']:.4f}"
            f"{'' if m['fake_classwise_matches'] else miss(m, 'classwise')} | "
            f"{m['classwise_map']} | {m['verdict']} | {m['failing_checks']} |")
    largest = max((off_resolutions(m, w) for m in models for w in ("top", "classwise")
                   if not m["fake_ece_top_matches" if w == "top" else "fake_classwise_matches"]),
                  default=None)
    lines += ["", f"Fake's true classwise ECE within max(0.003, 2 resolutions) of the pool's: "
              f"{pct(s['classwise_matches'])} of {s['fits']} fits; top-label within "
              f"max(0.005, 3 pool SEs): {pct(s['top_matches'])}. Misses beyond the fit rows' "
              f"resolution: {s['resolvable_misses']}, of them silent (GOOD): "
              f"{s['silent_misses']}." + ("" if largest is None else
              f" The largest miss is {largest:.1f} resolutions off (a test at 3 standard errors "
              f"as sharp as the fit rows allow flags it with probability at most "
              f"{flag_chance(largest):.2f}).")]
    return "\n".join(lines) + "\n"


def write_csv(path, rows):
    if not rows:
        return
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)


def write_outputs(out, models, cells):
    write_csv(os.path.join(out, "cells.csv"), cells)
    write_csv(os.path.join(out, "models.csv"), models)
    variants = list(dict.fromkeys(m["variant"] for m in models))
    summary = {v: summarise([m for m in models if m["variant"] == v],
                            [c for c in cells if c["variant"] == v]) for v in variants}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(f"Variant `{v}`{VARIANT_TEXT[v]}:\n\n" +
                          markdown(summary[v], [m for m in models if m["variant"] == v])
                          for v in variants))
    return summary


TEXT_COLUMNS = {"model", "source", "variant", "estimator", "classwise_map", "verdict",
                "failing_checks"}


def transfer_read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def typed(row):
    """A row read back from our CSV: flags and counts as int, numbers as float (repr)."""
    out = {}
    for key, value in row.items():
        if value == "" or key in TEXT_COLUMNS:
            out[key] = value
        elif key in ("K", "n", "fit_size", "pool_rows", "classwise") or key.endswith("_ok") or \
                key.endswith("_matches") or key in ("resolvable_miss", "silent"):
            out[key] = int(value)
        else:
            out[key] = float(value)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--small", action="store_true",
                        help="two networks, fit size 1,000, 30 subsamples: the default test")
    parser.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "calbench"))
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--models", default="", help="comma-separated subset")
    parser.add_argument("--sources", default="networks,scikit-learn")
    parser.add_argument("--fit-sizes", default="1000,2000,5000")
    parser.add_argument("--pool", type=int, default=200000, help="scikit-learn pool rows")
    parser.add_argument("--train", type=int, default=20000, help="scikit-learn training rows")
    parser.add_argument("--subsamples", type=int, default=200)
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--verdict-samples", type=int, default=200)
    parser.add_argument("--pool-bins", type=int, default=100)
    parser.add_argument("--pool-bins-l1", type=int, default=20)
    parser.add_argument("--pool-boot", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--variants", default="classwise",
                        help="comma-separated: classwise (fit's default), plain (fit "
                             "--no-classwise: the empirical family before issue #35)")
    parser.add_argument("--merge", nargs="+", metavar="DIR",
                        help="no computation: join the cells.csv and models.csv of runs on "
                             "disjoint models (same other options) into --out")
    args = parser.parse_args()
    if args.merge:
        models, cells = [], []
        for directory in args.merge:
            models += [typed(r) for r in transfer_read(os.path.join(directory, "models.csv"))]
            cells += [typed(r) for r in transfer_read(os.path.join(directory, "cells.csv"))]
        os.makedirs(args.out, exist_ok=True)
        print(json.dumps(write_outputs(args.out, models, cells), indent=2))
        return
    only = [m for m in args.models.split(",") if m]
    fit_sizes = [int(f) for f in args.fit_sizes.split(",")]
    if args.small:
        only = only or ["fmnist_cnn", "letter_mlp_smooth"]
        args.sources, fit_sizes = "networks", [1000]
        args.subsamples = args.replicates = args.resamples = 30
        args.verdict_samples, args.pool_boot = 60, 5
    chosen = []
    if "networks" in args.sources:
        chosen += network_models(only)
    if "scikit-learn" in args.sources:
        chosen += [m for m in transfer.study_models(False, []) if not only or m[0] in only]
    os.makedirs(args.out, exist_ok=True)
    models, cells = [], []
    with tempfile.TemporaryDirectory() as work:
        for fit_size in fit_sizes:
            for name, K, seed, factory in chosen:
                fitted, rows = one_model(args, name, K, seed, factory, fit_size, work)
                models += fitted
                cells += rows
                write_outputs(args.out, models, cells)
    print(json.dumps(write_outputs(args.out, models, cells), indent=2))


if __name__ == "__main__":
    main()
