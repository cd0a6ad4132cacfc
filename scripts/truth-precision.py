#!/usr/bin/env python3
"""The truth at default settings against exact values or independent long runs (docs/truth.md,
"Precision and stopping").

Two tables:
- the default: the generators of GRID (K >= 4), default truth against a long run;
- --sweep: every family x map x K x alpha of sweep_grid() (invalid combinations left out).

Where the default truth is exact (closed form or quadrature: every `dirichlet` at K = 2 and 3,
`beta_binary`, `class_conditional` at K = 2, symmetric `label_noise`, ...) there is nothing to
measure here; the sweep counts those quantities and lists only the Monte Carlo ones. (The
engine's Monte Carlo path against the quadrature at K = 3 is measured by
tests/unit/test_truth_precision.cpp.) A Monte Carlo quantity is compared with a long run of the same
engine on an *independent* replica of the truth streams (calbench.truth(..., stream=1): the
default run always draws from stream 0), `truth.samples` = --samples and a tolerance it never
meets. The reference shares the default's bins, so the difference measures noise and stopping,
not the binning bias both share (that is measured at K = 3 against the quadrature).

Flags: `>1e-4` where |difference| > 1e-4; `>4se` where |difference| > 4 sqrt(e_d^2 + e_r^2)
(e_d, e_r the default's and the reference's reported errors).

Usage: PYTHONPATH=python /usr/bin/python3 scripts/truth-precision.py [--samples N] [--quick]
       scripts/truth-precision.py --summarise SWEEP.md...   (one row per generator)
       PYTHONPATH=python /usr/bin/python3 scripts/truth-precision.py --sweep [--classes 4,10]
           [--samples N] [--samples-k100 N] [--families dirichlet,label_noise,...]
Prints markdown rows.
"""
import argparse
import json
import math
import sys

import calbench

GRID = [
    {"family": "dirichlet", "classes": 4, "alpha": 1,
     "miscalibration": {"map": "power", "exponents": [0.5, 1, 1.5, 2]}},
    {"family": "dirichlet", "classes": 4, "alpha": 0.5,
     "miscalibration": {"map": "top_label", "gamma": 2}},
    {"family": "dirichlet", "classes": 10, "alpha": 0.1,
     "miscalibration": {"map": "top_label", "gamma": 2}},
    {"family": "dirichlet", "classes": 10, "alpha": 0.5,
     "miscalibration": {"map": "temperature", "temperature": 0.7}},
    {"family": "dirichlet", "classes": 10, "alpha": 1,
     "miscalibration": {"map": "top_label", "gamma": 0.5}},
    {"family": "dirichlet", "classes": 4, "alpha": 0.5,
     "miscalibration": {"map": "affine_logit",
                        "weights": [[1.5, 1.0, 0.2, 0.0], [0.5, 1.0, 1.2, 0.0],
                                    [0.5, 0.0, 0.2, 0.0], [0.0, 0.0, 0.0, 1.0]],
                        "bias": [0.5, 0, 0, 0]}},
    {"family": "class_conditional", "classes": 10, "concentration": 1, "correct_class": 4},
    {"family": "dirichlet", "classes": 100, "alpha": 0.1,
     "miscalibration": {"map": "temperature", "temperature": 1.4}},
]


def spread(lo, hi, k):
    """k numbers from lo to hi, evenly spaced, rounded to 4 digits (short generator texts)."""
    return [round(lo + (hi - lo) * i / (k - 1), 4) for i in range(k)]


def maps(k):
    """Every map of the sweep for K = k: name and the miscalibration object."""
    injective = {"map": "affine_logit",
                 "weights": [[t if i == j else 0.0 for j in range(k)]
                             for i, t in enumerate(spread(0.7, 1.4, k))],
                 "bias": spread(-0.2, 0.2, k)}
    # Rows e_i + e_K (i < K) and 0: D = [I | 1], ker D = (1, ..., 1, -1), mixed signs, so every
    # p of the image has two preimages (docs/truth.md, "The posterior over preimages").
    two = {"map": "affine_logit",
           "weights": [[1.0 if (j == i or j == k - 1) else 0.0 for j in range(k)]
                       for i in range(k - 1)] + [[0.0] * k],
           "bias": [0.0] * k}
    return [
        ("temperature 0.7", {"map": "temperature", "temperature": 0.7}),
        ("temperature 1.5", {"map": "temperature", "temperature": 1.5}),
        ("power", {"map": "power", "exponents": spread(0.5, 2.0, k)}),
        ("top_label 0.5", {"map": "top_label", "gamma": 0.5}),
        ("top_label 2", {"map": "top_label", "gamma": 2}),
        ("affine_logit injective", injective),
        ("affine_logit two-preimage", two),
    ]


def sweep_grid(classes, alphas, families):
    """(label, generator) for the sweep; K = 100 leaves out the maps and alphas that would take
    minutes per generator on 2 cores (affine_logit's K x K posterior, alpha 10)."""
    out = []
    for k in classes:
        for a in alphas:
            if k >= 100 and a > 1:
                continue
            if "dirichlet" in families:
                for label, m in maps(k):
                    if k >= 100 and m["map"] == "affine_logit":
                        continue
                    out.append((f"dirichlet K={k} a={a} {label}",
                                {"family": "dirichlet", "classes": k, "alpha": a,
                                 "miscalibration": m}))
            if "label_noise" in families:
                out.append((f"label_noise K={k} a={a} (asymmetric)",
                            {"family": "label_noise", "classes": k,
                             "alpha": spread(0.5 * a, 1.5 * a, k), "weight": 0.2, "beta": 0}))
            if "class_conditional" in families:
                out.append((f"class_conditional K={k} a={a} pair",
                            {"family": "class_conditional", "classes": k, "concentration": a,
                             "correct_class": 4 * a}))
                prior = spread(1.0, 2.0, k)
                total = sum(prior)
                prior = [x / total for x in prior]
                prior[-1] = 1.0 - sum(prior[:-1])
                out.append((f"class_conditional K={k} a={a} prior",
                            {"family": "class_conditional", "classes": k, "prior": prior,
                             "concentration": a, "correct_class": 4 * a}))
                if k <= 10:
                    alpha = [[round(a * (4 if i == j else 1 + 0.1 * ((i + j) % 3)), 4)
                              for j in range(k)] for i in range(k)]
                    out.append((f"class_conditional K={k} a={a} matrix",
                                {"family": "class_conditional", "classes": k, "alpha": alpha}))
            if "dirichlet_mixture" in families:
                for label, m in [("identity", {"map": "identity"}),
                                 ("temperature 0.7", {"map": "temperature", "temperature": 0.7}),
                                 ("power", {"map": "power", "exponents": spread(0.5, 2.0, k)})]:
                    out.append((f"dirichlet_mixture K={k} a={a} {label}",
                                {"family": "dirichlet_mixture", "classes": k,
                                 "components": [{"weight": 0.6, "alpha": a},
                                                {"weight": 0.4,
                                                 "alpha": spread(0.5 * a, 2 * a, k)}],
                                 "miscalibration": m}))
            if "beta_binary" in families and k == 2:
                for curve in [{"curve": "polynomial", "d": 2},
                              {"curve": "logistic", "a": 0.2, "b": 1.5}]:
                    out.append((f"beta_binary a={a} {curve['curve']}",
                                {"family": "beta_binary", "a": a, "b": 2 * a,
                                 "calibration": curve}))
    return out


def name(g):
    return json.dumps(g, separators=(",", ":"))


def long_runs(args):
    grid = GRID[:3] if args.quick else GRID
    print("| generator | quantity | default | reference | difference | reported error |")
    print("|---|---|---|---|---|---|")
    for g in grid:
        default = calbench.truth(g)
        ref = calbench.truth(g, {"samples": args.samples, "tolerance": 1e-12}, stream=1)
        for q, v in default.items():
            if v.method != "monte_carlo":
                continue
            r = ref[q]
            print(f"| `{name(g)}` | {q} | {v.value:.6f} | {r.value:.6f} ± {r.error:.1e} | "
                  f"{v.value - r.value:+.1e} | {v.error:.1e} |", flush=True)


def sweep(args):
    classes = [int(x) for x in args.classes.split(",")]
    alphas = [float(x) if "." in x else int(x) for x in args.alphas.split(",")]
    families = args.families.split(",")
    print("| generator | quantity | default | reference (independent) | difference | "
          "reported error | flags |")
    print("|---|---|---|---|---|---|---|")
    exact = 0
    worst = (0.0, "")
    flagged = 0
    for label, g in sweep_grid(classes, alphas, families):
        if args.only and args.only not in label:
            continue
        default = calbench.truth(g)
        mc = [q for q, v in default.items() if v.method == "monte_carlo"]
        exact += len(default) - len(mc)
        if not mc:
            print(f"| {label} | all nine | exact ({', '.join(sorted({v.method for v in default.values()}))}) | | | | |",
                  flush=True)
            continue
        samples = args.samples_k100 if g["classes"] >= 100 else args.samples
        ref = calbench.truth(g, {"samples": samples, "tolerance": 1e-12}, stream=1)
        for q in mc:
            v, r = default[q], ref[q]
            if math.isnan(v.value):
                print(f"| {label} | {q} | NaN (unknown) | | | | |", flush=True)
                continue
            diff = v.value - r.value
            flags = []
            if abs(diff) > 1e-4:
                flags.append(">1e-4")
            if abs(diff) > 4 * math.hypot(v.error, r.error):
                flags.append(">4se")
            flagged += bool(flags)
            if abs(diff) > worst[0]:
                worst = (abs(diff), f"{label} {q}")
            print(f"| {label} | {q} | {v.value:.6f} | {r.value:.6f} ± {r.error:.1e} "
                  f"({samples // 1_000_000}M) | {diff:+.1e} | {v.error:.1e} | "
                  f"{' '.join(flags)} |", flush=True)
    print(f"\nExact quantities (closed form or quadrature): {exact}. Flagged rows: {flagged}. "
          f"Largest |difference|: {worst[0]:.1e} ({worst[1]}).", flush=True)


def summarise(paths):
    """One row per generator from --sweep outputs: its Monte Carlo quantities, the largest
    |difference| (quantity, in combined reported errors), the largest reported error, flags."""
    print("| generator | Monte Carlo quantities | largest \\|difference\\| | in errors | "
          "largest reported error | flagged |")
    print("|---|---|---|---|---|---|")
    rows = {}
    order = []
    exact = []
    for path in paths:
        with open(path) as f:
            for line in f:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if len(cells) != 7 or cells[0] in ("generator", "---"):
                    continue
                label, q = cells[0], cells[1]
                if q == "all nine":
                    exact.append(label)
                    continue
                if not cells[4]:
                    continue
                ref_err = float(cells[3].split("±")[1].split()[0])
                diff, err = float(cells[4]), float(cells[5])
                if label not in rows:
                    rows[label] = []
                    order.append(label)
                rows[label].append((q, diff, err, ref_err, cells[6]))
    for label in order:
        r = rows[label]
        q, diff, err, ref_err, _ = max(r, key=lambda x: abs(x[1]))
        flags = [f"{x[0]} {x[4]}" for x in r if x[4]]
        print(f"| {label} | {len(r)} | {abs(diff):.1e} ({q}) | "
              f"{abs(diff) / math.hypot(err, ref_err):.1f} | {max(x[2] for x in r):.1e} | "
              f"{'; '.join(flags)} |")
    print(f"\nAll nine exact (closed form or quadrature) at default settings: {len(exact)} "
          f"generators.")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=64_000_000)
    ap.add_argument("--quick", action="store_true", help="the first three generators only")
    ap.add_argument("--sweep", action="store_true", help="the wide sweep (sweep_grid)")
    ap.add_argument("--classes", default="2,3,4,10,100")
    ap.add_argument("--alphas", default="0.1,1,10")
    ap.add_argument("--samples-k100", type=int, default=32_000_000)
    ap.add_argument("--families",
                    default="dirichlet,label_noise,class_conditional,dirichlet_mixture,beta_binary")
    ap.add_argument("--only", metavar="TEXT", help="--sweep: the generators whose label has TEXT")
    ap.add_argument("--summarise", nargs="+", metavar="FILE",
                    help="one row per generator from saved --sweep outputs")
    args = ap.parse_args()
    if args.summarise:
        summarise(args.summarise)
    elif args.sweep:
        sweep(args)
    else:
        long_runs(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
