#!/usr/bin/env python3
"""The Monte Carlo truth at default settings against long runs (docs/truth.md, "Precision and
stopping").

For K >= 4 there is no quadrature: the reference is the same engine with `truth.samples`
draws (default 64,000,000) and a tolerance it never meets, so it measures the default run's
noise and stopping, not the binning bias both share (that is measured at K = 3 against the
quadrature: tests/test_truth_precision.cpp, run with CALBENCH_TRUTH_TABLE=FILE).

Usage: PYTHONPATH=python /usr/bin/python3 scripts/truth-precision.py [--samples N] [--quick]
Prints markdown rows: generator | quantity | default | reference | difference | reported error.
"""
import argparse
import json
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


def name(g):
    return json.dumps(g, separators=(",", ":"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=64_000_000)
    ap.add_argument("--quick", action="store_true", help="the first three generators only")
    args = ap.parse_args()
    grid = GRID[:3] if args.quick else GRID
    print("| generator | quantity | default | reference | difference | reported error |")
    print("|---|---|---|---|---|---|")
    for g in grid:
        default = calbench.truth(g)
        ref = calbench.truth(g, {"samples": args.samples, "tolerance": 1e-12})
        for q, v in default.items():
            if v.method != "monte_carlo":
                continue
            r = ref[q]
            print(f"| `{name(g)}` | {q} | {v.value:.6f} | {r.value:.6f} ± {r.error:.1e} | "
                  f"{v.value - r.value:+.1e} | {v.error:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
