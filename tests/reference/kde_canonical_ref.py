#!/usr/bin/env python3
# Independent numpy evaluation of the canonical Lp estimator of Popordanoska, Sayer & Blaschko
# 2022 (NeurIPS), written from the paper's formulas, for tests/unit/test_kernel.cpp. Not calbench
# code and not the authors' torch code. Usage: kde_canonical_ref.py DATASET.csv [b ...]
# Prints, per bandwidth b and q in {1, 2}: b, q, S = mean_i ||r_i - p_i||_q^q and the
# leave-one-out log-likelihood; then the grid bandwidth with the largest log-likelihood.
import sys
from math import lgamma

import numpy as np


def load(path):
    a = np.loadtxt(path, delimiter=",", ndmin=2)
    return a[:, 0].astype(int), a[:, 1:]


def estimate(y, f, b, q):
    n, K = f.shape
    lf = np.log(np.maximum(f, np.finfo(float).tiny))
    alphas = f / b + 1
    log_b = np.array([sum(lgamma(a) for a in row) - lgamma(row.sum()) for row in alphas])
    L = lf @ (alphas - 1).T - log_b[None, :]  # L[i, j] = log Dir(f_i; f_j / b + 1)
    np.fill_diagonal(L, -np.inf)
    m = L.max(1, keepdims=True)
    W = np.exp(L - m)
    den = W.sum(1)
    r = (W @ np.eye(K)[y]) / den[:, None]
    loglik = (m[:, 0] + np.log(den) - np.log(n - 1)).sum()
    return (np.abs(r - f) ** q).sum(1).mean(), loglik


y, f = load(sys.argv[1])
for b in [float(x) for x in sys.argv[2:]]:
    for q in (1, 2):
        print(b, q, *map(repr, estimate(y, f, b, q)))
grid = list(np.logspace(-5, -1, 15)) + list(np.linspace(0.2, 1, 5))
liks = [estimate(y, f, b, 1)[1] for b in grid]
best = grid[int(np.argmax(liks))]
print("loo", repr(best), repr(estimate(y, f, best, 1)[0]), repr(estimate(y, f, best, 2)[0]))
