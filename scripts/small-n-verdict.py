#!/usr/bin/env python3
"""False POOR at small n (docs/fit.md, "The verdict at a few hundred rows"; issue #23): how often
`calbench fit`'s cross-fitted verdict calls a fake POOR when the model is smooth and the
`empirical` family can represent it, at n = 200 to 1,000 rows.

Two models, each sampled `--seeds` times at each n (numpy seed [model index, n, s]):
- linear_k2: p_1 ~ Uniform(0.02, 0.98), true P(y = 1 | p) = 0.5 + 0.8 (p_1 - 0.5)
  (underconfident, linear: last session's case of a false POOR);
- temperature_k3: logits ~ N(0, 1.5^2 I_3), p = softmax(logits), true class probabilities
  softmax(0.8 logits) (overconfident like an unregularised network; the top-label calibration
  function is smooth).
Each sample is fitted by `calbench fit --json` (defaults: empirical family, 5-fold cross-fitted
verdict, 200 fake samples per fold). Reported per (model, n): the share called POOR (a false
POOR: the fake is the model's own smoothed rows and a smooth curve), the failing checks, and each
check's mean and sd of z over the seeds (under a correct standard error z has mean about 0 and
sd about 1; a distance's z is one-sided against its null).

    /usr/bin/python3 scripts/small-n-verdict.py --out results/small-n-verdict
Writes OUT/runs.csv (one row per fit), OUT/summary.json and OUT/table.md (docs/fit.md's table).
Needs numpy and the calbench binary (CALBENCH_BIN or --calbench).
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

MODELS = ["linear_k2", "temperature_k3"]
CHECKS = ["accuracy", "mean confidence", "ece_ew15", "ece_em15", "dece_em15", "smooth_ece",
          "confidence histogram", "reliability curve"]


def draw(model, n, rng):
    if model == "linear_k2":
        p1 = rng.uniform(0.02, 0.98, n)
        y = (rng.random(n) < 0.5 + 0.8 * (p1 - 0.5)).astype(int)
        return np.column_stack([1 - p1, p1]), y
    logits = rng.normal(0.0, 1.5, (n, 3))
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    c = np.exp(0.8 * (logits - logits.max(1, keepdims=True)))
    c /= c.sum(1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(c, 1)).sum(1)
    return p, y


def fit(binary, p, y, work):
    path = os.path.join(work, "rows.csv")
    with open(path, "w") as f:
        for label, row in zip(y, p):
            f.write(str(int(label)) + "," + ",".join(repr(float(v)) for v in row) + "\n")
    command = [binary, "fit", path, "--json", "--seed", "1", "--sizes", "200",
               "--replicates", "20", "--resamples", "20"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)["verdict"]


def summarise(runs, sizes):
    summary = []
    for model in MODELS:
        for n in sizes:
            rs = [r for r in runs if r["model"] == model and r["n"] == n]
            if not rs:
                continue
            row = {"model": model, "n": n, "fits": len(rs),
                   "poor": sum(r["verdict"] == "POOR" for r in rs),
                   "failing": sorted({c for r in rs for c in r["failing"].split("; ") if c})}
            for check in CHECKS:
                z = np.array([r["z_" + check] for r in rs])
                row["z_mean_" + check] = float(z.mean())
                row["z_sd_" + check] = float(z.std(ddof=1))
            summary.append(row)
    return summary


def markdown(summary):
    lines = ["| model | n | fits | POOR | failing checks | z: accuracy | mean confidence | "
             "ece_em15 | confidence histogram | reliability curve |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary:
        z = lambda c: f"{s['z_mean_' + c]:+.2f} ± {s['z_sd_' + c]:.2f}"
        lines.append(f"| {s['model']} | {s['n']} | {s['fits']} | {s['poor']} | "
                     f"{', '.join(s['failing'])} | {z('accuracy')} | {z('mean confidence')} | "
                     f"{z('ece_em15')} | {z('confidence histogram')} | {z('reliability curve')} |")
    poor = sum(s["poor"] for s in summary)
    fits = sum(s["fits"] for s in summary)
    lines += ["", f"POOR in {poor} of {fits} fits (z: mean ± sd over the fits)."]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "calbench"))
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--sizes", default="200,400,1000")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--merge", nargs="+", metavar="DIR",
                        help="no fits: join the runs.csv of runs on disjoint --models into --out")
    args = parser.parse_args()
    sizes = [int(v) for v in args.sizes.split(",")]
    os.makedirs(args.out, exist_ok=True)
    runs = []
    for directory in args.merge or []:
        with open(os.path.join(directory, "runs.csv")) as f:
            for r in csv.DictReader(f):
                runs.append({k: (int(v) if k in ("n", "seed") else
                                 float(v) if k.startswith("z_") else v) for k, v in r.items()})
    runs.sort(key=lambda r: (MODELS.index(r["model"]), sizes.index(r["n"]), r["seed"]))
    with tempfile.TemporaryDirectory() as work:
        for model in [] if args.merge else args.models.split(","):
            for n in sizes:
                for s in range(args.seeds):
                    rng = np.random.default_rng([MODELS.index(model), n, s])
                    p, y = draw(model, n, rng)
                    verdict = fit(args.calbench, p, y, work)
                    row = {"model": model, "n": n, "seed": s, "verdict": verdict["verdict"],
                           "failing": "; ".join(c["check"] for c in verdict["checks"]
                                                if c["fails"])}
                    for c in verdict["checks"]:
                        row["z_" + c["check"]] = c["z"]
                    runs.append(row)
                print(f"{model} n = {n}: POOR {sum(r['verdict'] == 'POOR' for r in runs if r['model'] == model and r['n'] == n)}"
                      f" of {args.seeds}", file=sys.stderr, flush=True)
    with open(os.path.join(args.out, "runs.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(runs[0].keys()))
        writer.writeheader()
        writer.writerows(runs)
    summary = summarise(runs, sizes)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(markdown(summary))
    print(markdown(summary))


if __name__ == "__main__":
    main()
