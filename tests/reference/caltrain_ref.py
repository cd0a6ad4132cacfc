#!/usr/bin/env python3
# A numpy evaluation of the binning rules of google-research/caltrain (Roelofs et al. 2022:
# bin_methods.py and calibration_metrics.py, read at their published commit), written from
# those rules for tests/unit/test_binned.cpp; not caltrain's code. Usage: caltrain_ref.py DATASET.csv
# Prints one line per metric: name value, and the number of bins each sweep settles on. Only
# tie-free datasets are meaningful (or ties whose rows agree in correctness): caltrain sorts with
# np.argsort's default (unstable) kind, so its split of tied scores is unspecified.
import sys

import numpy as np


def load(path):
    a = np.loadtxt(path, delimiter=",", ndmin=2)
    return a[:, 0].astype(int), a[:, 1:]


def bins_equal_width(s, B):
    idx = np.digitize(s, np.linspace(0.0, 1.0, B + 1), right=False) - 1
    return np.where(s == 1.0, B - 1, idx)


def bins_equal_mass(s, B):
    n = len(s)
    out = np.zeros(n, dtype=int)
    out[np.argsort(s, kind="stable")] = np.minimum(B - 1, np.floor((np.arange(n) / n) * B)).astype(int)
    return out


def binned(s, o, idx, B, norm):
    total = 0.0
    for b in range(B):
        m = idx == b
        if m.any():
            total += m.sum() * abs(s[m].mean() - o[m].mean()) ** norm
    return total


def postbin(s, o, idx, B, norm):
    total, last, mono = 0.0, -1000.0, True
    for b in range(B):
        m = idx == b
        if m.any():
            ym = o[m].mean()
            if ym < last:
                mono = False
            last = ym
            total += m.sum() * abs(ym - s[m].mean()) ** norm
    return (total / len(s)) ** (1.0 / norm), mono


def sweep(s, o, rule, norm):
    """caltrain's monotone sweep: the value and the number of bins B* it settles on."""
    n = len(s)
    prev, chosen = np.zeros(n, dtype=int), 1
    for B in range(2, n):
        idx = rule(s, B) if rule is bins_equal_mass else np.minimum(B - 1, np.floor(s * B)).astype(int)
        if not postbin(s, o, idx, B, norm)[1]:
            break
        prev, chosen = idx, B
    return postbin(s, o, prev, int(prev.max()) + 1, norm)[0], chosen


y, p = load(sys.argv[1])
n, K = p.shape
conf, hit = p.max(1), (p.argmax(1) == y).astype(float)
for name, rule in (("ew", bins_equal_width), ("em", bins_equal_mass)):
    for norm in (1, 2):
        top = (binned(conf, hit, rule(conf, 15), 15, norm) / n) ** (1.0 / norm)
        cw = sum(binned(p[:, k], (y == k).astype(float), rule(p[:, k], 15), 15, norm)
                 for k in range(K))
        print(f"{name}_ece_bin_l{norm}", repr(top))
        print(f"{name}_marginal_l{norm}", repr((cw / (n * K)) ** (1.0 / norm)))
        value, chosen = sweep(conf, hit, rule, norm)
        print(f"{name}_ece_sweep_l{norm}", repr(value))
        print(f"{name}_ece_sweep_l{norm}_bins", chosen)
