"""Regression tests of a calibration metric against calbench's ground truth (docs/python.md).

`check_estimator(fn, target=..., generators=[...], sizes=[...])` runs a Python metric
fn(p, y) -> float on samples of fake classifiers whose calibration is known exactly and
asserts, with tolerances from Monte Carlo standard errors:

- consistency: at the largest size the metric's bias against the truth of `target` is within
  `tolerance` (the finite-sample bias the metric may keep there);
- convergence: its absolute bias does not grow from the smallest size to the largest;
- with `reference` (a registry estimator of the same convention, e.g. {"name": "ece", "bins":
  15}): on every cell the metric agrees with calbench's estimator on the same samples (a paired
  test, which sees convention bugs far below the sampling noise of the metric itself).

Every check is a z-test; the z threshold is Bonferroni's for `alpha` over all checks, so a
correct metric fails with probability at most `alpha` (plus the `tolerance` margin, which is a
promise the caller makes). Samples come from calbench.sample, so they are the draws of a
`calbench run` with the same seed (cell i of the grid generators x sizes).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .core import estimate, sample, truth


@dataclass
class _Cell:
    generator: int
    size: int
    values: np.ndarray
    differences: np.ndarray | None  # fn - reference, per replicate


def _mean_se(values: np.ndarray) -> tuple[float, float]:
    if len(values) < 2:
        return float(values.mean()), math.inf
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(len(values)))


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def check_estimator(fn: Callable[[np.ndarray, np.ndarray], float], *, target: str,
                    generators: Sequence[dict], sizes: Sequence[int], replicates: int = 200,
                    seed: int = 0, tolerance: float = 0.01, reference: dict | None = None,
                    alpha: float = 1e-3, truth_settings: dict | None = None) -> pd.DataFrame:
    """Asserts that fn(p, y) estimates `target` (docs/python.md, "Testing a metric").

    fn: takes p, an (n, K) float64 array of probabilities, and y, the (n,) int64 labels, and
        returns a number.
    target: the ground-truth quantity fn estimates ("ece_top_l1", "classwise_ece_l1", ...).
    generators: config generator objects; sizes: sample sizes n (at least two for the
        convergence check). replicates: samples per (generator, size).
    tolerance: the absolute bias allowed at the largest size (a binned ECE keeps a finite-sample
        bias of its own; measure your metric's with calbench before choosing it).
    reference: a registry estimator dict fn should agree with on every sample.
    alpha: the probability that a metric meeting every promise fails some check.

    Returns the table of cells (generator, n, mean, sd, se, truth, bias, ...) when every check
    passes; raises AssertionError listing every failed check otherwise.
    """
    if not generators:
        raise ValueError("generators: expected at least one generator object")
    sizes = sorted(int(n) for n in sizes)
    if not sizes or sizes[0] < 1:
        raise ValueError(f"sizes = {sizes}: expected sample sizes >= 1")
    if replicates < 2:
        raise ValueError(f"replicates = {replicates}: expected >= 2 (standard errors)")
    if not tolerance >= 0 or not np.isfinite(tolerance):
        raise ValueError(f"tolerance = {tolerance}: expected a finite number >= 0")
    # A NaN alpha made every comparison false, so a constant estimator passed every check.
    if not 0 < alpha < 1:
        raise ValueError(f"alpha = {alpha}: expected a number in (0, 1)")
    if isinstance(replicates, bool) or int(replicates) != replicates:
        raise ValueError(f"replicates = {replicates}: expected an integer")
    if isinstance(seed, bool) or int(seed) != seed or not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed = {seed}: expected an integer in [0, 2^64 - 1]")
    truths = []
    for g in generators:
        values = truth(g, truth_settings)
        if target not in values:
            raise ValueError(f"target = {target!r}: expected one of {', '.join(values)}")
        truths.append(values[target])

    cells: list[_Cell] = []
    for gi, g in enumerate(generators):
        for si, n in enumerate(sizes):
            cell = gi * len(sizes) + si
            values = np.empty(replicates)
            differences = np.empty(replicates) if reference is not None else None
            for r in range(replicates):
                p, y = sample(g, n, seed, r, cell=cell, settings=truth_settings)
                values[r] = float(fn(p, y))
                if differences is not None:
                    differences[r] = values[r] - estimate(reference, p, y)
            if not np.all(np.isfinite(values)):
                bad = int(np.argmin(np.isfinite(values)))
                raise AssertionError(
                    f"{_name(fn)} returned {values[bad]} on replicate {bad} of generator "
                    f"{json.dumps(g)}, n = {n} (seed {seed}, cell {cell})")
            cells.append(_Cell(gi, n, values, differences))

    checks = len(generators) * ((len(sizes) if reference is not None else 0) + 1 +
                                (1 if len(sizes) > 1 else 0))
    z = NormalDist().inv_cdf(1 - alpha / (2 * checks))
    failures: list[str] = []
    rows = []
    for gi, g in enumerate(generators):
        t = truths[gi]
        where = f"generator {json.dumps(g)}"
        own = [c for c in cells if c.generator == gi]
        stats = []
        for c in own:
            mean, se = _mean_se(c.values)
            row = {"generator": gi, "n": c.size, "mean": mean, "sd": float(c.values.std(ddof=1)),
                   "se": se, "truth": t.value, "truth_error": t.error, "bias": mean - t.value}
            if c.differences is not None:
                d_mean, d_se = _mean_se(c.differences)
                row.update({"reference_difference": d_mean, "reference_se": d_se})
                # Float noise of two implementations of one formula: 1e-9 absolute.
                if abs(d_mean) > z * d_se + 1e-9:
                    changed = int(np.count_nonzero(np.abs(c.differences) > 1e-9))
                    failures.append(
                        f"{where}, n = {c.size}: differs from calbench's "
                        f"{json.dumps(reference)} on the same samples by {d_mean:+.6g} "
                        f"(se {d_se:.2g}; {changed} of {replicates} replicates differ): a binning "
                        f"rule the reference does not share (edges, where 0 and 1 go, ties)")
            rows.append(row)
            stats.append((mean, se))
        mean, se = stats[-1]
        bias = mean - t.value
        combined = math.hypot(se, t.error)
        if abs(bias) > tolerance + z * combined:
            failures.append(
                f"{where}, n = {sizes[-1]}: bias {bias:+.6g} (mean {mean:.6g}, truth "
                f"{target} = {t.value:.6g}, se {combined:.2g}) exceeds the tolerance "
                f"{tolerance:g} by more than {z:.2f} standard errors: the metric does not "
                f"converge to {target}")
        if len(sizes) > 1:
            first_mean, first_se = stats[0]
            first_bias = first_mean - t.value
            if abs(bias) > abs(first_bias) + z * math.hypot(se, first_se):
                failures.append(
                    f"{where}: |bias| grows with n, from {abs(first_bias):.6g} at n = "
                    f"{sizes[0]} to {abs(bias):.6g} at n = {sizes[-1]} (se {se:.2g})")
    table = pd.DataFrame(rows)
    if failures:
        head = (f"{_name(fn)} fails {len(failures)} of {checks} checks against calbench's truth "
                f"of {target} ({replicates} replicates per cell, seed {seed}, z = {z:.2f} for "
                f"alpha = {alpha:g}):")
        raise AssertionError("\n".join([head] + ["  - " + f for f in failures]))
    return table
