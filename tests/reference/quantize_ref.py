#!/usr/bin/env python3
"""Monte Carlo reference values of the `quantize` miscalibration map (issue #27).

An independent numpy evaluation, written from the map's definition in docs/generators.md, not
from calbench's code: c ~ Dirichlet(alpha) (numpy's own gamma sampler), m = max c, the level
l_i = (i + 1/2)/L of the grid, i = min(floor(L m), L - 1), kept when l_i >= m or l_i > 1/2 and
otherwise replaced by the next level up; the reported p has p_top = level and the other
components c_j (1 - level)/(1 - m). From 10^7 draws per case, in 10 batches of 10^6:

- accuracy E[m] (the map keeps the argmax; checked per draw: argmax p == argmax c),
- mean_confidence E[Z] (Z = max p, checked to equal the level),
- ece_top_l1 = sum_j |E[m 1{Z = l_j}] - l_j P(Z = l_j)| and
  ece_top_l2 = sqrt(sum_j (E[m 1{Z = l_j}] - l_j P(Z = l_j))^2 / P(Z = l_j)), Z being discrete,
- brier = E[sum_k p_k^2 - 2 sum_k p_k c_k + 1] and nll = E[-sum_k c_k log p_k]
  (Rao-Blackwellised: from c, not from sampled labels),

each with a standard error: the standard deviation of the 10 batch values over sqrt(10).
Writes quantize.json: {case: {"classes", "alpha", "levels", "draws", "values": {q: {"value",
"se"}}}}. Ran once with numpy 1.24.2 (`/usr/bin/python3 quantize_ref.py`), seed 20261126.
"""
import json
import sys

import numpy as np

CASES = [
    {"name": "k4_asym_l10", "classes": 4, "alpha": [0.5, 1.0, 2.0, 3.0], "levels": 10},
    {"name": "k10_a03_l10", "classes": 10, "alpha": [0.3] * 10, "levels": 10},
    {"name": "k3_a2_l5", "classes": 3, "alpha": [2.0] * 3, "levels": 5},
    {"name": "k2_a05_2_l7", "classes": 2, "alpha": [0.5, 2.0], "levels": 7},
]
BATCHES, BATCH = 10, 1_000_000


def levels_of(m, L):
    i = np.minimum(np.floor(L * m), L - 1)
    nearest = (i + 0.5) / L
    return np.where((nearest >= m) | (nearest > 0.5), nearest, (i + 1.5) / L)


def batch_values(rng, alpha, L):
    c = rng.dirichlet(alpha, size=BATCH)
    top = np.argmax(c, axis=1)
    rows = np.arange(BATCH)
    m = c[rows, top]
    lev = levels_of(m, L)
    # 1 - m as the sum of the others, not 1 - m nor sum(c) - m, which round away an other
    # component of 1e-17 (alpha 0.5); where the others underflow to 0 they share 1 - level
    # equally (a draw of probability ~0).
    is_top = np.arange(c.shape[1])[None, :] == top[:, None]
    others = np.where(is_top, 0.0, c).sum(axis=1)
    p = np.where((others > 0)[:, None], c * ((1.0 - lev) / np.where(others > 0, others, 1.0))[:, None],
                 ((1.0 - lev) / (len(alpha) - 1))[:, None])
    p[rows, top] = lev
    assert np.all(np.argmax(p, axis=1) == top), "the map must keep the argmax"
    assert np.allclose(p.sum(axis=1), 1.0)
    grid = (np.arange(L) + 0.5) / L
    gaps = np.array([np.sum(np.where(lev == g, m - g, 0.0)) / BATCH for g in grid])
    probs = np.array([np.mean(lev == g) for g in grid])
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    return {
        "gaps": gaps,
        "probs": probs,
        "accuracy": m.mean(),
        "mean_confidence": lev.mean(),
        "brier": np.mean(np.sum(p * p, axis=1) - 2.0 * np.sum(p * c, axis=1) + 1.0),
        "nll": np.mean(-np.sum(np.where(c > 0, c * logp, 0.0), axis=1)),
    }


def ece(gaps, probs):
    used = probs > 0
    return {"ece_top_l1": np.abs(gaps).sum(),
            "ece_top_l2": np.sqrt(np.sum(gaps[used] ** 2 / probs[used]))}


def main():
    rng = np.random.default_rng(20261126)
    out = {}
    for case in CASES:
        batches = [batch_values(rng, np.array(case["alpha"]), case["levels"]) for _ in range(BATCHES)]
        values = {}
        for b in batches:
            b.update(ece(b["gaps"], b["probs"]))
        # The ECEs of the pooled 10^7 draws (|.| of a pooled gap is less biased than a mean of
        # batch |.|), with the batches' spread for their standard error.
        pooled = ece(np.mean([b["gaps"] for b in batches], axis=0),
                     np.mean([b["probs"] for b in batches], axis=0))
        for q in batches[0]:
            if q in ("gaps", "probs"):
                continue
            v = np.array([b[q] for b in batches])
            value = pooled[q] if q in pooled else v.mean()
            values[q] = {"value": float(value), "se": float(v.std(ddof=1) / np.sqrt(BATCHES))}
        out[case["name"]] = {"classes": case["classes"], "alpha": case["alpha"],
                             "levels": case["levels"], "draws": BATCHES * BATCH, "values": values}
        print(case["name"], {q: round(v["value"], 6) for q, v in values.items()}, file=sys.stderr)
    with open("quantize.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
