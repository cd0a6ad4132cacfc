#!/usr/bin/env python3
"""Reference values of the CORP decomposition (Dimitriadis, Gneiting & Jordan 2021).

The reliability curve is scikit-learn's IsotonicRegression (1.2.1; increasing=True,
in-sample fit_transform) of the outcomes on the scores; the decomposition is written from the
paper's definitions with numpy: with mean scores S(f) of the scores, S(c) of the isotonic fit
and S(r) of the mean outcome, MCB = S(f) - S(c), DSC = S(r) - S(c), UNC = S(r). Brier is the
binary (s - o)^2, log is -o log s - (1 - o) log(1 - s) (s floored at DBL_MIN where o needs it).
scikit-learn pools scores within 1e-15 of each other, calbench's CORP exact ties only: the
datasets used have no such near-ties.

Writes corp.json: {dataset: {scope: {"mcb_brier": v, "dsc_brier": v, "unc_brier": v,
"score_brier": v, ... "_log": ...}}}. Usage: corp_ref.py > corp.json
"""
import json
import os
import sys

import numpy as np
from sklearn.isotonic import IsotonicRegression

HERE = os.path.dirname(os.path.abspath(__file__))
DATASETS = ["dir_k2_n1000", "dir_k2_n20000", "dir_k3_n2000", "dir_k10_n5000",
            "dir_k3_n5000_under", "k3_n25"]
TINY = np.finfo(float).tiny


def load(name):
    rows = np.loadtxt(os.path.join(HERE, "datasets", name + ".csv"), delimiter=",", ndmin=2)
    return rows[:, 0].astype(int), rows[:, 1:]


def scopes(y, p):
    pred = np.argmax(p, axis=1)
    out = {"top": (p[np.arange(len(y)), pred], (pred == y).astype(float))}
    if p.shape[1] == 2:
        out["binary"] = (p[:, 1].copy(), (y == 1).astype(float))
    return out


def mean_score(kind, s, o):
    if kind == "brier":
        return float(np.mean((s - o) ** 2))
    one = np.where(o > 0, -np.log(np.maximum(s, TINY)), 0.0)
    zero = np.where(o < 1, -np.log(np.maximum(1 - s, TINY)), 0.0)
    return float(np.mean(o * one + (1 - o) * zero))


def main():
    out = {}
    for name in DATASETS:
        y, p = load(name)
        out[name] = {}
        for scope, (s, o) in scopes(y, p).items():
            fit = IsotonicRegression(increasing=True).fit_transform(s, o)
            clim = np.full_like(o, o.mean())
            m = {}
            for kind in ["brier", "log"]:
                f, c, r = mean_score(kind, s, o), mean_score(kind, fit, o), mean_score(kind, clim, o)
                m["score_" + kind] = f
                m["mcb_" + kind] = f - c
                m["dsc_" + kind] = r - c
                m["unc_" + kind] = r
            out[name][scope] = m
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
