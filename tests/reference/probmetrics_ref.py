#!/usr/bin/env python3
"""Reference values of probmetrics' ece-B, rmsce-B and mce-B (issue #27), by running its code.

probmetrics (dholzmueller/probmetrics @34123ba) `Metrics.from_names([...])
.compute_all_from_labels_probs(y, p)` with p a float64 torch tensor, imported as is from a
checkout, on torchmetrics v1.4.3 (Lightning-AI/torchmetrics, the newest release that supports the
Debian torch 1.13; its calibration_error.py differs from torchmetrics' main branch @dab0333 only
in type hints and in calling normalize_logits_if_needed, a no-op on probabilities) with
lightning-utilities v0.11.9, under Debian's python3-torch 1.13 (installed by hand to produce
these values; no test or setup step needs torch). Two modules probmetrics imports at load time
but never calls for these metrics are do-nothing stubs: `torchmin` (pytorch-minimize, for its
temperature-scaling calibrators) and `numba` (`njit` returns the function; for its SAGA
solvers).

Cases: the 30 probability datasets of datasets/ (B = 15, 10, 5; l1, l2, max), and a few inline
sets for what the datasets lack: classes absent from the labels (K = 4 with 3 present, K = 3
with 2 present, which turns the error binary), probabilities of exactly 0 and 1 (clamped), and
ties of the top probability. Writes probmetrics.json:

  {"datasets": {dataset: {case: CASE}}, "inline": {name: {"p": rows, "y": labels,
                                                          "cases": {case: CASE}}}}
  CASE = {"estimator": <calbench estimator config>, "implementation": "probmetrics",
          "value": float, "tolerance": float}

The value is the float32 the library returns, as a double. Tolerance: 2^-24, one float32 unit in
the last place in [0.5, 1) (docs/conventions.md states the measured agreement).

Usage: PYTHONPATH=TORCHMETRICS/src:UTILITIES/src:PROBMETRICS:STUBS probmetrics_ref.py
       > probmetrics.json
"""
import json
import os
import sys

import numpy as np
import torch
from probmetrics.metrics import Metrics

HERE = os.path.dirname(os.path.abspath(__file__))
NORMS = (("ece", "l1"), ("rmsce", "l2"), ("mce", "max"))
# One float32 unit in the last place at values in [0.5, 1), 2^-24: the library sums the bins'
# terms with torch.sum (vectorised, in an order calbench does not follow) and its rows with
# torch.sum(dim=-1), so a value may differ from calbench's float32 emulation in its last bit.
TOLERANCE = 2.0 ** -24


def load(name):
    data = np.loadtxt(os.path.join(HERE, "datasets", name + ".csv"), delimiter=",", ndmin=2)
    return data[:, 1:], data[:, 0].astype(int)


def inline_sets():
    rng = np.random.default_rng(20261126)
    sets = {}
    p = rng.dirichlet([0.7] * 4, size=60)
    sets["inline_k4_class2_absent"] = (p, rng.choice([0, 1, 3], size=60))
    p = rng.dirichlet([0.5] * 3, size=40)
    sets["inline_k3_only_0_2"] = (p, rng.choice([0, 2], size=40))
    p = rng.dirichlet([0.3] * 3, size=30)
    p[:5] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0], [0.2, 0.8, 0.0]]
    sets["inline_k3_zeros_ones"] = (p, rng.integers(0, 3, size=30))
    p = np.array([[0.4, 0.4, 0.2], [1 / 3, 1 / 3, 1 / 3], [0.25, 0.5, 0.25], [0.6, 0.2, 0.2]] * 5)
    sets["inline_k3_ties"] = (p, rng.integers(0, 3, size=20))
    p = rng.dirichlet([1.0, 1.0], size=25)
    p[:3] = [[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]
    sets["inline_k2_edges"] = (p, rng.integers(0, 2, size=25))
    return sets


def cases_for(p, y):
    cases = {}
    for B in (15, 10, 5):
        names = [f"{prefix}-{B}" for prefix, _ in NORMS]
        values = Metrics.from_names(names).compute_all_from_labels_probs(
            torch.as_tensor(y), torch.as_tensor(p, dtype=torch.float64))
        for (prefix, norm), name in zip(NORMS, names):
            estimator = {"name": "probmetrics_ece", "bins": B, "norm": norm}
            cases[f"probmetrics_{prefix}_{B}"] = dict(
                estimator=estimator, implementation="probmetrics",
                value=float(values[name].item()), tolerance=TOLERANCE)
    return cases


def main():
    manifest = json.load(open(os.path.join(HERE, "datasets", "manifest.json")))
    out = {"datasets": {}, "inline": {}}
    for name in sorted(manifest):
        if manifest[name]["kind"] != "probs":
            continue
        p, y = load(name)
        if len(np.unique(y)) < 2:
            continue  # the library raises ValueError (num_classes = 1)
        out["datasets"][name] = cases_for(p, y)
    for name, (p, y) in inline_sets().items():
        out["inline"][name] = {"p": p.tolist(), "y": y.tolist(), "cases": cases_for(p, y)}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
