#!/usr/bin/env python3
"""Coverage of `calbench eval`'s fake-calibrated intervals on real models (issue #36;
docs/intervals.md, "Fake-calibrated intervals"), beside today's default intervals measured the
same way.

For each model (the cached networks of tests/data/networks and scikit-learn models of
scripts/transfer-study.py) the held-out rows are the model's population (the pool). Per sample
size n and replicate r: n rows drawn from the pool without replacement (numpy seed [seed,
model index, n, r]) are what a user would hold; one `calbench eval --interval fake --json` on
them, nominal level 0.90, `--resamples` resamples and eval seed r, gives both intervals: "ci",
the fake interval as eval reports it (the fake-calibrated interval's hull with the estimator's
default interval), and "default_ci", that default interval as `--interval default` reports it
(the same resamples, to the bit). An interval covers when it holds the pool's value of
the quantity it is for:
- the target's high-precision pool estimate (scripts/classwise-study.py's pool_references:
  ece_top_l1 by the bias-corrected 20-bin equal-mass plug-in for ece_ew15, ece_em15 and kde_ece;
  ece_top_l2 by the 100-bin debiased ECE for dece_em15; classwise_ece_l1 by the bias-corrected
  plug-in for cwece_ew15), or, for an estimator without a target (smooth_ece, ace15_nixon), its
  own value on the whole pool;
- and, as a second column, the estimator's own value on the whole pool for every estimator.
Coverage's binomial SE is sqrt(c (1 - c) / replicates).

Writes OUT/cells.csv (model, K, n, estimator, method, covered, replicates, coverage, se,
coverage_pool_value, mean_width), OUT/table.md and OUT/summary.md (the done-when figures:
coverage per (model, n) and estimator, cells at least 0.85 per estimator and in all).

    nice -n 10 /usr/bin/python3 scripts/fake-interval-study.py --out results/fake-interval-study
    nice -n 10 /usr/bin/python3 scripts/fake-interval-study.py --small --out /tmp/fis-small

Needs numpy (scikit-learn for those models), the calbench Python extension (PYTHONPATH=python
after a build) and binary (CALBENCH_BIN or --calbench).
"""

import argparse
import csv
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

import calbench

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


classwise = _load("classwise_study", "classwise-study.py")
transfer = classwise.transfer

# (label as eval reports it, estimator, pool reference of scripts/classwise-study.py)
ESTIMATORS = [
    ("ece_ew15", {"name": "ece", "bins": 15}, "l1"),
    ("ece_em15", {"name": "ece", "bins": 15, "binning": "equal_mass"}, "l1"),
    ("dece_em15", {"name": "ece_debiased"}, "l2"),
    ("smooth_ece", {"name": "smooth_ece"}, "smooth"),
    ("kde_ece", {"name": "kde_ece"}, "l1"),
    ("cwece_ew15", {"name": "classwise_ece"}, "classwise"),
    ("ace15_nixon", {"name": "ace"}, "ace"),
]
LEVEL = 0.9
# The estimators whose `calbench eval` default is the fake interval (EstimatorTraits::eval_fake in
# lib/estimators: classwise_ece, kde_ece, ace); the others' is their default method's interval.
EVAL_FAKE = {"kde_ece", "cwece_ew15", "ace15_nixon"}
GOOD = 0.85  # issue #36's bar: coverage at least 0.85 at nominal 0.90 in 90 % of cells


def pool_rows(args, name, K, seed, factory, index):
    """The model's pool: a network's held-out rows, or a scikit-learn model's pool rows."""
    if factory is None:
        return classwise.network_rows(name, index, args.seed)
    X, y = transfer.make_data(K, seed, args.train + args.pool)
    model = factory().fit(X[:args.train], y[:args.train])
    return model.predict_proba(X[args.train:]), y[args.train:]


def eval_intervals(args, p, y, r, work):
    """{method: {label: (value, lo, hi, p_calibrated)}} of one `calbench eval --interval fake
    --json` on the rows: "fake" its intervals, "default" the default intervals it joined."""
    np.save(os.path.join(work, "p.npy"), p)
    np.save(os.path.join(work, "y.npy"), y.astype(np.int64))
    command = [args.calbench, "eval", os.path.join(work, "p.npy"), "--labels",
               os.path.join(work, "y.npy"), "--json", "--level", str(LEVEL), "--seed", str(r),
               "--resamples", str(args.resamples), "--threads", str(args.threads),
               "--fake-samples", str(args.fake_samples),
               "--estimators", json.dumps([spec for _, spec, _ in ESTIMATORS]),
               "--interval", "fake"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    d = json.loads(done.stdout)["estimators"]
    return {method: {label: (d[label]["value"], *(d[label].get(key) or (math.nan, math.nan)),
                             d[label]["p_calibrated"])
                     for label, _, _ in ESTIMATORS}
            for method, key in (("fake", "ci"), ("default", "default_ci"))}


class Model:
    """A model's pool, the pool's references and each estimator's value on the whole pool."""

    def __init__(self, args, index, name, K, seed, factory):
        self.index, self.name = index, name
        self.p, self.y = pool_rows(args, name, K, seed, factory, index)
        rng = np.random.default_rng([args.seed, index])
        self.refs = classwise.pool_references(self.p, self.y, args, rng)
        self.refs["smooth"] = (calbench.estimate({"name": "smooth_ece"}, self.p, self.y), 0.0)
        self.own = {label: calbench.estimate(spec, self.p, self.y)
                    for label, spec, _ in ESTIMATORS}


def one_replicate(args, model, n, r, work):
    """Replicate r at n: one record per (method, estimator)."""
    pick = np.random.default_rng([args.seed, model.index, n, r]).choice(len(model.y), n,
                                                                        replace=False)
    got = eval_intervals(args, model.p[pick], model.y[pick], r, work)
    records = []
    for method in ("fake", "default"):
        for label, _, ref in ESTIMATORS:
            value, lo, hi, p_calibrated = got[method][label]
            records.append({"model": model.name, "n": n, "replicate": r, "estimator": label,
                            "method": method, "value": value, "lo": lo, "hi": hi,
                            "p_calibrated": p_calibrated, "reference": model.refs[ref][0],
                            "pool_value": model.own[label]})
    return records


def cells(records, K):
    """One row per (model, n, estimator, method) of the replicates' records, in their order."""
    hits = {}
    for x in records:
        lo, hi = float(x["lo"]), float(x["hi"])
        h = hits.setdefault((x["model"], int(x["n"]), x["estimator"], x["method"]),
                            [0, 0, 0.0, 0])
        h[0] += lo <= float(x["reference"]) <= hi
        h[1] += lo <= float(x["pool_value"]) <= hi
        h[2] += hi - lo
        h[3] += 1
    rows = []
    for (name, n, label, method), (covered, covered_own, width, count) in hits.items():
        c = covered / count
        rows.append({"model": name, "K": K[name], "n": n, "estimator": label, "method": method,
                     "covered": covered, "replicates": count, "coverage": round(c, 4),
                     "se": round(math.sqrt(c * (1 - c) / count), 4),
                     "coverage_pool_value": round(covered_own / count, 4),
                     "mean_width": round(width / count, 6)})
    return rows


def with_hull(records):
    """Records written before eval reported the fake interval's hull with the default interval
    (fake rows: the fake-calibrated interval alone) with each fake row's interval replaced by
    that hull, as the current `calbench eval --interval fake` reports it."""
    default = {(x["model"], x["n"], x["replicate"], x["estimator"]): x for x in records
               if x["method"] == "default"}
    out = []
    for x in records:
        if x["method"] == "fake":
            d = default[(x["model"], x["n"], x["replicate"], x["estimator"])]
            x = dict(x, lo=repr(min(float(x["lo"]), float(d["lo"]))),
                     hi=repr(max(float(x["hi"]), float(d["hi"]))))
        out.append(x)
    return out


def table(rows):
    """Markdown: coverage of fake and default per (model, n, estimator), and the share of cells
    at least 0.85."""
    lines = ["| model | n | estimator | fake | default | fake (pool value) | default (pool value) |",
             "|---|---:|---|---:|---:|---:|---:|"]
    index = {(r["model"], r["n"], r["estimator"], r["method"]): r for r in rows}
    cells = sorted({(r["model"], r["n"], r["estimator"]) for r in rows},
                   key=lambda c: (c[0], c[1], [e[0] for e in ESTIMATORS].index(c[2])))
    for m, n, e in cells:
        f, d = index[(m, n, e, "fake")], index[(m, n, e, "default")]
        lines.append(f"| {m} | {n} | {e} | {f['coverage']:.2f} | {d['coverage']:.2f} | "
                     f"{f['coverage_pool_value']:.2f} | {d['coverage_pool_value']:.2f} |")
    lines.append("")
    for method in ("fake", "default"):
        chosen = [r for r in rows if r["method"] == method]
        good = sum(r["coverage"] >= 0.85 for r in chosen)
        lines.append(f"{method}: coverage >= 0.85 in {good} of {len(chosen)} cells "
                     f"(against the pool's target reference)")
    return "\n".join(lines) + "\n"


def summary(rows):
    """Markdown: each (model, n)'s coverage per estimator, fake / default, and per estimator the
    cells at least GOOD for each, those where both miss, the coverage over all the cells'
    replicates and the fake's mean width over the default's; then the totals against the bar,
    and those of eval's defaults (the fake interval for EVAL_FAKE, the default elsewhere)."""
    labels = [e[0] for e in ESTIMATORS]
    index = {(r["model"], r["n"], r["estimator"], r["method"]): r for r in rows}
    K = {r["model"]: r["K"] for r in rows}
    places = sorted({(r["model"], r["n"]) for r in rows},
                    key=lambda c: ([r["model"] for r in rows].index(c[0]), c[1]))
    lines = ["| model | K | n | " + " | ".join(labels) + " |",
             "|---|---:|---:|" + "---:|" * len(labels)]
    for m, n in places:
        lines.append(f"| {m} | {K[m]} | {n} | " + " | ".join(
            f"{index[(m, n, e, 'fake')]['coverage']:.2f} / "
            f"{index[(m, n, e, 'default')]['coverage']:.2f}" for e in labels) + " |")
    lines += ["", "| estimator | cells | fake >= 0.85 | default >= 0.85 | both below | "
              "fake, all replicates | default, all replicates | fake width / default |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    total = {"fake": 0, "default": 0, "eval": 0, "cells": 0}
    for e in labels:
        f = [index[(m, n, e, "fake")] for m, n in places]
        d = [index[(m, n, e, "default")] for m, n in places]
        good_f = sum(x["coverage"] >= GOOD for x in f)
        good_d = sum(x["coverage"] >= GOOD for x in d)
        both = sum(x["coverage"] < GOOD and y["coverage"] < GOOD for x, y in zip(f, d))
        pooled = [sum(x["covered"] for x in c) / sum(x["replicates"] for x in c) for c in (f, d)]
        width = sum(x["mean_width"] for x in f) / sum(x["mean_width"] for x in d)
        lines.append(f"| {e} | {len(places)} | {good_f} | {good_d} | {both} | {pooled[0]:.3f} | "
                     f"{pooled[1]:.3f} | {width:.2f} |")
        total["fake"] += good_f
        total["default"] += good_d
        total["eval"] += good_f if e in EVAL_FAKE else good_d
        total["cells"] += len(places)
    cells = total["cells"]
    # What exact intervals would show: a cell of R replicates reads at least GOOD when at least
    # ceil(GOOD R) cover, with probability P(Binomial(R, LEVEL) >= that).
    R = rows[0]["replicates"]
    least = math.ceil(GOOD * R - 1e-9)
    exact = sum(math.comb(R, k) * LEVEL ** k * (1 - LEVEL) ** (R - k) for k in range(least, R + 1))
    lines.append("")
    for what, count in (("fake (--interval fake)", total["fake"]),
                        ("default (each estimator's default method)", total["default"]),
                        ("eval's defaults (fake for " + ", ".join(sorted(EVAL_FAKE)) +
                         ", the default method elsewhere)", total["eval"])):
        lines.append(f"{what}: coverage >= {GOOD} in {count} of {cells} cells "
                     f"({100 * count / cells:.0f} %; the bar: 90 %)")
    lines.append(f"an interval of coverage exactly {LEVEL} in every cell: >= {GOOD} ({least} of "
                 f"{R} replicates) in {100 * exact:.0f} % of cells on average")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--small", action="store_true",
                        help="one network, n = 200, 2 replicates: the default test")
    parser.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "calbench"))
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--models", default="fmnist_cnn,fmnist_cnn_ts,fmnist_mlp,letter_mlp",
                        help="comma-separated networks or scikit-learn models")
    parser.add_argument("--sizes", default="200,1000")
    parser.add_argument("--replicates", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--fake-samples", type=int, default=200)
    parser.add_argument("--pool", type=int, default=50000, help="scikit-learn pool rows")
    parser.add_argument("--train", type=int, default=20000, help="scikit-learn training rows")
    parser.add_argument("--pool-bins", type=int, default=100)
    parser.add_argument("--pool-bins-l1", type=int, default=20)
    parser.add_argument("--pool-boot", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--raw", action="store_true",
                        help="also write OUT/replicates.csv: every replicate's estimate, "
                             "interval, p_calibrated and references")
    parser.add_argument("--cells-from", metavar="REPLICATES_CSV",
                        help="no evals: the cells of a replicates.csv this script wrote")
    parser.add_argument("--hull-from", metavar="REPLICATES_CSV",
                        help="no evals: the cells of a replicates.csv written before the fake "
                             "interval was reported as its hull with the default, with that hull")
    args = parser.parse_args()
    if args.small:
        args.models, args.sizes, args.replicates = "fmnist_cnn", "200", 2
        args.resamples, args.fake_samples, args.pool_boot = 30, 30, 2
    args.sizes = [int(n) for n in args.sizes.split(",")]
    only = [m for m in args.models.split(",") if m]
    chosen = [(i, *m) for i, m in enumerate(classwise.network_models([]))]
    chosen += [(100 + i, *m) for i, m in enumerate(transfer.study_models(False, []))]
    chosen = [c for c in chosen if c[1] in only]
    missing = set(only) - {c[1] for c in chosen}
    if missing:
        raise SystemExit(f"--models: unknown {sorted(missing)}")
    os.makedirs(args.out, exist_ok=True)
    K = {name: k for _, name, k, _, _ in chosen}
    if args.hull_from or args.cells_from:
        with open(args.hull_from or args.cells_from, newline="") as f:
            records = list(csv.DictReader(f))
        if args.hull_from:
            records = with_hull(records)
        rows = cells(records, K)
        write(args.out, rows)
        print(table(rows))
        return
    # Replicate by replicate over every model and size, the results rewritten after each: a
    # run stopped early leaves the cells of its complete replicates, the same as those of a
    # run with that many (each replicate's rows and seeds depend on nothing else).
    models = []
    for index, name, k, seed, factory in chosen:
        models.append(Model(args, index, name, k, seed, factory))
        print(f"{name}: pool of {len(models[-1].y)} rows", file=sys.stderr, flush=True)
    records = []
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.replicates):
            for model in models:
                for n in args.sizes:
                    records += one_replicate(args, model, n, r, work)
            print(f"replicate {r + 1}/{args.replicates} done", file=sys.stderr, flush=True)
            rows = cells(records, K)
            write(args.out, rows)
            if args.raw:
                with open(os.path.join(args.out, "replicates.csv"), "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=list(records[0]))
                    w.writeheader()
                    w.writerows(records)
    print(table(rows))


def write(out, rows):
    with open(os.path.join(out, "cells.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(table(rows))
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(summary(rows))


if __name__ == "__main__":
    main()
