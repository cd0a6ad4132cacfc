#!/usr/bin/env python3
"""Reference values of the cumulative calibration statistics and Spiegelhalter's Z.

Runs, unmodified, the code of two independent implementations on the probability datasets of
datasets/ and writes cumulative.json ({dataset: {scope: {metric: {implementation: value}}}}, and per scope
`tied_scores`: whether two rows share a score; MCGrad orders tied rows by quicksort, so its
values there depend on the row order and calbench, which groups ties, is compared only without):

- `mcgrad`: facebookincubator/MCGrad @0155fe7 (src/mcgrad/metrics.py): ecce (the Kuiper
  statistic, ECCE-R), ecce_sigma, ecce_pvalue. Imported with a do-nothing `psutil` stub
  (psutil is only used by its memory helpers, absent here).
- `ecevecce`: facebookresearch/ecevecce @ddbd99a (codes/calibration.py
  `cumulative`: Kuiper and KS statistics and the scale sigma; codes/dists.py `kuiper`,
  `kolmogorov_smirnov`: the cdfs of the range and of max|W|; Tygert's code for
  Arrieta-Ibarra et al. 2022). `cumulative` needs strictly increasing scores: datasets with
  tied scores are skipped for it.
- `own_direct`: Spiegelhalter's Z written from the published formula (Spiegelhalter 1986;
  the same expression as rms::val.prob and easonfg/cali_tutorial's Spiegelhalter_z.R; R is not
  installed here), p = 2 (1 - Phi(|Z|)) with scipy.stats.norm.

Usage: cumulative_ref.py MCGRAD_SRC_DIR ECEVECCE_CODES_DIR > cumulative.json
(numpy 1.24.2, scipy 1.10.1, pandas 1.5.3, matplotlib 3.6.3).
"""
import json
import os
import sys
import tempfile
import types

import numpy as np
from scipy.stats import norm

sys.modules.setdefault("psutil", types.ModuleType("psutil"))
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from mcgrad import metrics as mcgrad  # noqa: E402
import calibration as tygert_calibration  # noqa: E402
import dists as tygert_dists  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATASETS = ["dir_k2_n1000", "dir_k2_n20000", "dir_k3_n2000", "dir_k10_n5000",
            "dir_k3_n5000_under", "k2_n2", "k3_n25", "k2_ties", "k3_discrete_n600",
            "k2_exact01_correct", "nixon_pathology"]


def load(name):
    rows = np.loadtxt(os.path.join(HERE, "datasets", name + ".csv"), delimiter=",", ndmin=2)
    return rows[:, 0].astype(int), rows[:, 1:]


def scopes(y, p):
    pred = np.argmax(p, axis=1)  # lowest index on ties, as calbench
    out = {"top": (p[np.arange(len(y)), pred], (pred == y).astype(float))}
    if p.shape[1] == 2:
        out["binary"] = (p[:, 1].copy(), (y == 1).astype(float))
    return out


def spiegelhalter(s, o):
    num = np.sum((o - s) * (1 - 2 * s))
    var = np.sum((1 - 2 * s) ** 2 * s * (1 - s))
    z = num / np.sqrt(var)
    return float(num / len(s)), float(z), float(2 * (1 - norm.cdf(abs(z))))


def main():
    out = {}
    tmp = tempfile.mkdtemp()
    for name in DATASETS:
        y, p = load(name)
        out[name] = {}
        for scope, (s, o) in scopes(y, p).items():
            m = {}
            m["kuiper"] = {"mcgrad": float(mcgrad.ecce(o, s))}
            m["kuiper_normalized"] = {"mcgrad": float(mcgrad.ecce_sigma(o, s))}
            m["kuiper_p"] = {"mcgrad": float(mcgrad.ecce_pvalue(o, s))}
            order = np.argsort(s, kind="stable")
            ss, oo = s[order], o[order]
            m["tied_scores"] = bool(np.any(np.diff(ss) == 0))
            if not m["tied_scores"]:
                ku, ks, scale = tygert_calibration.cumulative(
                    oo, ss, min(4, len(ss)), 4, filename=os.path.join(tmp, "c.pdf"))
                m["kuiper"]["ecevecce"] = float(ku)
                m["ks"] = {"ecevecce": float(ks)}
                m["sigma"] = {"ecevecce": float(scale)}
                if ku > 0:
                    m["kuiper_p"]["ecevecce"] = 1 - tygert_dists.kuiper(ku / scale)
                if ks > 0:
                    m["ks_normalized"] = {"ecevecce": float(ks / scale)}
                    m["ks_p"] = {"ecevecce": 1 - tygert_dists.kolmogorov_smirnov(ks / scale)}
            stat, z, pz = spiegelhalter(s, o)
            if np.isfinite(z):
                m["spiegelhalter"] = {"own_direct": stat}
                m["spiegelhalter_normalized"] = {"own_direct": z}
                m["spiegelhalter_p"] = {"own_direct": pz}
            out[name][scope] = m
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
