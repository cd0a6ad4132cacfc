"""Reliability diagrams from data, binned by calbench's own convention.

The bins are those of docs/estimators/binned.md (convention `calbench`), so the per-bin gaps
drawn here sum to the `ece` that `calbench eval` reports for the same rows (python/tests checks
this to 1e-12):
- equal_width: edges i/B by division; right-closed bins (a, b]; 0 (and below) in the first
  bin, 1 in the last.
- equal_mass: the sorted scores split as numpy.array_split into min(B, n) parts; edge b is the
  midpoint of the largest score of part b and the smallest of part b + 1; right-closed, so a
  tied run straddling a split goes to the lower bin.
Empty bins contribute nothing.

Each bin's observed frequency is drawn with its Wilson score interval at z = 2 (wilson_interval),
not f ± 2 sqrt(f(1 - f)/n): that interval has no width when f is 0 or 1, so a bin of one row, or
a bin whose rows were all right, showed no uncertainty at all. A bin without rows has no point
and no interval (nothing was observed in it); its place on the axis stays empty.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._style import COLOURS

BINNINGS = ("equal_width", "equal_mass")


# The intervals of the observed frequencies: z = 2, as the diagrams' other bands (±2 errors).
INTERVAL_Z = 2.0


def wilson_interval(frequency, count, z: float = INTERVAL_Z) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval (Wilson 1927; Brown, Cai & DasGupta 2001, eq. 4) of binomial
    proportions f = k/n: centre (k + z^2/2)/(n + z^2), half-width
    z/(n + z^2) sqrt(k (n - k)/n + z^2/4). It keeps a width where f is 0 or 1: one row at z = 2
    gives [0, 0.8] or [0.2, 1]. NaN where n = 0. Returns (lower, upper)."""
    f = np.asarray(frequency, dtype=float)
    n = np.asarray(count, dtype=float)
    k = f * n
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = (k + z * z / 2) / (n + z * z)
        half = z / (n + z * z) * np.sqrt(np.maximum(k * (n - k), 0.0) / n + z * z / 4)
    empty = ~(n > 0)
    lower = np.where(empty, np.nan, np.clip(centre - half, 0.0, 1.0))
    upper = np.where(empty, np.nan, np.clip(centre + half, 0.0, 1.0))
    return lower, upper


def _interval_bars(frequency, count) -> np.ndarray:
    """matplotlib's yerr (2, m) of the Wilson intervals around the frequencies."""
    lower, upper = wilson_interval(frequency, count)
    f = np.asarray(frequency, dtype=float)
    return np.vstack([np.maximum(f - lower, 0.0), np.maximum(upper - f, 0.0)])


# Rows of probabilities must sum to 1 within this (float32 outputs cast to float64 are off by
# about 1e-7 per row; calbench eval allows the same, docs/eval.md).
ROW_SUM_TOLERANCE = 1e-6

# The estimators' limit (lib/estimators/binning.hpp, max_bins): 2^63 bins became one bin.
MAX_BINS = 1_000_000


def _check_probabilities(p: np.ndarray, y: np.ndarray) -> None:
    """NaN probabilities, rows that do not sum to 1 and labels outside 0..K-1 (or outcomes other
    than 0 and 1) are errors: a figure of them would look like a finding."""
    valid = np.isfinite(p) & (p >= 0) & (p <= 1)
    if not valid.all():
        first = int(np.flatnonzero(~valid)[0])
        row = first // p.shape[1] if p.ndim == 2 else first
        raise ValueError(f"p row {row}: every probability must be a finite number in [0, 1]")
    if p.ndim == 2:
        sums = p.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1.0) > ROW_SUM_TOLERANCE)
        if bad.size:
            raise ValueError(f"p row {bad[0]} sums to {sums[bad[0]]:.17g}; each row must sum to 1 "
                             f"(within {ROW_SUM_TOLERANCE})")
    classes = p.shape[1] if p.ndim == 2 else 2
    y_float = y.astype(float)
    bad = np.flatnonzero(~np.isfinite(y_float) | (y_float != np.round(y_float))
                         | (y_float < 0) | (y_float >= classes))
    if bad.size:
        what = f"a class index in 0..{classes - 1}" if p.ndim == 2 else "an outcome 0 or 1"
        raise ValueError(f"y[{bad[0]}] = {y[bad[0]]!r}: expected {what}")


def _scores_outcomes(p, y) -> tuple[np.ndarray, np.ndarray]:
    """Top-label confidence and correctness for (n, K) p, or (score, outcome) for 1-D p."""
    p = np.asarray(p)
    # Real numbers only: a complex array lost its imaginary part and a text array was parsed
    # (issue #38's Python fuzzer, tests/cli/fuzz_python.py).
    if p.dtype.kind not in "fiub":
        raise ValueError(f"p: expected an array of real numbers, found dtype {p.dtype}")
    p = p.astype(float)
    y = np.asarray(y)
    if y.dtype.kind not in "fiub":
        raise ValueError(f"y: expected an array of numbers, found dtype {y.dtype}")
    if p.ndim == 2:
        if y.shape != (p.shape[0],):
            raise ValueError(f"y has shape {y.shape}; expected ({p.shape[0]},), one label a row")
        _check_probabilities(p, y)
        # argmax takes the lowest index on ties, as calbench does (lib/core/sample.hpp).
        predicted = np.argmax(p, axis=1)
        return p[np.arange(p.shape[0]), predicted], (predicted == y).astype(float)
    if p.ndim == 1:
        if y.shape != p.shape:
            raise ValueError(f"y has shape {y.shape}; expected {p.shape}, one outcome a score")
        _check_probabilities(p, y)
        return p, y.astype(float)
    raise ValueError(f"p has {p.ndim} dimensions; expected (n, K) probabilities or (n,) scores")


def bin_edges(scores, bins: int = 15, binning: str = "equal_width") -> np.ndarray:
    """The inner edges e_1 < ... of calbench's bins; a score s is in bin #{e : e < s}."""
    if binning not in BINNINGS:
        raise ValueError(f"binning = {binning!r}: must be one of {', '.join(BINNINGS)}")
    # An integer or a whole float: int(inf) raised OverflowError, int(nan) numpy's text.
    if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, float, np.number)) or \
            not np.isfinite(bins) or int(bins) != bins or not 1 <= bins <= MAX_BINS:
        raise ValueError(f"bins = {bins!r}: must be an integer in 1 .. {MAX_BINS}")
    if binning == "equal_width":
        return np.arange(1, bins, dtype=float) / float(bins)
    s = np.sort(np.asarray(scores, dtype=float))
    n = s.size
    if n == 0:
        return np.empty(0)
    parts = min(bins, n)
    base, extra = divmod(n, parts)
    # First rank of parts 1 .. parts-1 (numpy.array_split: the first `extra` parts are longer).
    sizes = np.full(parts, base) + (np.arange(parts) < extra)
    split = np.cumsum(sizes)[:-1]
    return (s[split - 1] + s[split]) / 2.0


def assign_bins(scores, edges: np.ndarray) -> np.ndarray:
    # side="left" counts the edges strictly below s: right-closed bins, 0 in the first.
    return np.searchsorted(edges, np.asarray(scores, dtype=float), side="left")


def reliability_table(p, y, bins: int = 15, binning: str = "equal_width") -> pd.DataFrame:
    """One row per bin: bin, lower, upper, count, confidence (mean score), accuracy (mean
    outcome), gap (accuracy - confidence) and weight (count / n).

    p is (n, K) probabilities with labels y (top label: confidence max p, outcome argmax p = y),
    or (n,) scores with 0/1 outcomes y. ECE = sum(weight * |gap|) over non-empty bins.
    """
    s, o = _scores_outcomes(p, y)
    edges = bin_edges(s, bins, binning)
    b = assign_bins(s, edges)
    nb = edges.size + 1
    count = np.bincount(b, minlength=nb).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        confidence = np.bincount(b, weights=s, minlength=nb) / count
        accuracy = np.bincount(b, weights=o, minlength=nb) / count
        # The gap from the summed differences, as calbench sums s_i - o_i within a bin.
        gap = -np.bincount(b, weights=s - o, minlength=nb) / count
    bounds = np.concatenate([[0.0], edges, [1.0]])
    n = max(s.size, 1)
    return pd.DataFrame({"bin": np.arange(nb), "lower": bounds[:-1], "upper": bounds[1:],
                         "count": count.astype(int), "confidence": confidence,
                         "accuracy": accuracy, "gap": gap, "weight": count / n})


def ece_from_table(table: pd.DataFrame) -> float:
    """sum_b (n_b / n) |gap_b| over non-empty bins: calbench's `ece` (norm l1)."""
    t = table[table["count"] > 0]
    return float(np.sum(t["weight"] * np.abs(t["gap"])))


def smooth_curve(scores, outcomes, grid=None, bandwidth: float | None = None,
                 n_boot: int = 200, level: float = 0.95, seed: int = 0):
    """Nadaraya-Watson (Gaussian kernel) estimate of P(outcome | score) with a pointwise
    percentile bootstrap band. Returns (grid, curve, lower, upper); NaN where fewer than 5
    rows carry the kernel weight.

    The rows are first counted into 512 fine cells (a 0.002-wide cell moves a score by at most
    half its width, far below any usable bandwidth), so a bootstrap resample costs O(n + 512 G).
    Bandwidth default: Silverman's rule 1.06 sd n^(-1/5), at least 0.01.
    """
    s = np.asarray(scores, dtype=float)
    o = np.asarray(outcomes, dtype=float)
    if grid is None:
        grid = np.linspace(s.min(), s.max(), 200) if s.size else np.linspace(0, 1, 200)
    grid = np.asarray(grid, dtype=float)
    if bandwidth is None:
        sd = float(np.std(s)) if s.size > 1 else 0.0
        bandwidth = max(1.06 * sd * max(s.size, 1) ** -0.2, 0.01)
    cells = 512
    cell = np.clip((s * cells).astype(int), 0, cells - 1)
    centres = (np.arange(cells) + 0.5) / cells
    w = np.exp(-0.5 * ((grid[:, None] - centres[None, :]) / bandwidth) ** 2)

    def fit(idx):
        c = np.bincount(cell[idx], minlength=cells)
        k = np.bincount(cell[idx], weights=o[idx], minlength=cells)
        mass = w @ c
        with np.errstate(invalid="ignore", divide="ignore"):
            out = (w @ k) / mass
        out[mass < 5] = np.nan
        return out

    curve = fit(np.arange(s.size))
    rng = np.random.default_rng(seed)
    boots = np.array([fit(rng.integers(0, s.size, s.size)) for _ in range(n_boot)])
    alpha = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        lower = np.nanquantile(boots, alpha, axis=0) if n_boot else np.full_like(curve, np.nan)
        upper = np.nanquantile(boots, 1 - alpha, axis=0) if n_boot else np.full_like(curve, np.nan)
    return grid, curve, lower, upper


def _draw(ax, ax_hist, s, o, bins, binning, smooth, n_boot, seed, true_curve, xlabel):
    table = reliability_table(s, o, bins, binning)
    if binning == "equal_mass" and s.size:
        # The outer equal-mass bins reach 0 and 1; drawn over the scores they hold only.
        table.loc[0, "lower"] = max(table.loc[0, "lower"], float(s.min()))
        table.loc[table.index[-1], "upper"] = min(table.loc[table.index[-1], "upper"],
                                                  float(s.max()))
    full = table[table["count"] > 0]
    ax.bar(full["lower"], full["accuracy"], width=full["upper"] - full["lower"], align="edge",
           color=COLOURS[1], alpha=0.35, edgecolor=COLOURS[1], linewidth=0.8,
           label="accuracy per bin")
    ax.errorbar(full["confidence"], full["accuracy"],
                yerr=_interval_bars(full["accuracy"], full["count"]), fmt="o",
                color=COLOURS[1], markersize=4, elinewidth=0.9, capsize=0,
                label="(mean score, accuracy), Wilson interval z = 2")
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.4", linewidth=1, label="perfect calibration")
    if smooth and s.size > 1:
        g, c, lo, hi = smooth_curve(s, o, n_boot=n_boot, seed=seed)
        ax.fill_between(g, lo, hi, color=COLOURS[0], alpha=0.2, linewidth=0,
                        label="95 % bootstrap band")
        ax.plot(g, c, color=COLOURS[0], linewidth=1.5, label="kernel smooth")
    if true_curve is not None:
        tx, ty = (np.asarray(v, dtype=float) for v in true_curve)
        ax.plot(tx, ty, color="black", linewidth=1.5, label="true curve")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_ylabel("observed frequency (fraction)")
    ax.label_outer()
    ax_hist.bar(table["lower"], table["count"], width=table["upper"] - table["lower"],
                align="edge", color="0.55", edgecolor="white", linewidth=0.5)
    ax_hist.set_xlim(0, 1)
    ax_hist.set_xlabel(xlabel)
    ax_hist.set_ylabel("rows per bin (count)")
    return ece_from_table(table)


def reliability_diagram(p, y, bins: int = 15, binning: str = "equal_width", true_curve=None,
                        smooth: bool = True, n_boot: int = 200, seed: int = 0,
                        title: str | None = None) -> Figure:
    """Top-label reliability diagram: accuracy against confidence per bin (bars and points),
    the diagonal, a kernel-smoothed curve with a 95 % bootstrap band (smooth=True), the true
    curve (x, y) when given, and the rows per bin beneath. The title carries calbench's ECE for
    these bins. p: (n, K) probabilities and labels y, or (n,) scores and 0/1 outcomes y.
    """
    s, o = _scores_outcomes(p, y)
    fig = Figure(figsize=(5.2, 5.6), layout="constrained")
    ax, ax_hist = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    ece = _draw(ax, ax_hist, s, o, bins, binning, smooth, n_boot, seed, true_curve,
                "confidence max p (probability)" if np.ndim(p) == 2 else "score (probability)")
    ax.set_title(title or f"ECE ({binning.replace('_', '-')}, {bins} bins) = {ece:.4f}",
                 fontsize=10)
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    return fig


def classwise_reliability(p, y, bins: int = 15, binning: str = "equal_width",
                          classes: Sequence[int] | None = None, max_classes: int = 4,
                          true_curves: dict | None = None, smooth: bool = False,
                          n_boot: int = 200, seed: int = 0) -> Figure:
    """One reliability diagram per class k: P(y = k | p_k) against p_k, for `classes` (default
    the first max_classes). true_curves maps a class to its (x, y) true curve."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y)
    if p.ndim != 2:
        raise ValueError(f"p has {p.ndim} dimensions; expected (n, K) probabilities")
    if y.shape != (p.shape[0],):
        raise ValueError(f"y has shape {y.shape}; expected ({p.shape[0]},), one label a row")
    _check_probabilities(p, y)
    if classes is None:
        classes = list(range(min(p.shape[1], max_classes)))
    m = len(classes)
    fig = Figure(figsize=(3.2 * m, 4.4), layout="constrained")
    axes = fig.subplots(2, m, sharex=True, sharey="row", squeeze=False,
                        gridspec_kw={"height_ratios": [3, 1]})
    for j, k in enumerate(classes):
        curve = (true_curves or {}).get(k)
        ece = _draw(axes[0, j], axes[1, j], p[:, k], (y == k).astype(float), bins, binning,
                    smooth, n_boot, seed, curve, f"p_{k} (probability)")
        axes[0, j].set_title(f"class {k}: CE = {ece:.4f}", fontsize=10)
    axes[0, 0].legend(loc="upper left", fontsize=7, frameon=False)
    return fig


# ---- curves of a reliability.csv (a run's `reliability` section, or `calbench eval --plot`) --


def _cell_title(results, cell: int) -> str:
    """'T = 0.7, n = 1,000' from the cell's swept values (or the cell index alone)."""
    row = results.summary[results.summary["cell"] == cell]
    parts = []
    for k in results.sweep_keys:
        if k in row.columns and len(row):
            v = row[k].iloc[0]
            name = {"sample_size": "n", "generator.miscalibration.temperature": "T"}.get(
                k, k.split(".")[-1])
            if isinstance(v, (int, float, np.number)):
                parts.append(f"{name} = {v:,.6g}")
            elif str(v).startswith(("{", "[")):  # a swept object: too long for a title
                parts.append(f"{name} of cell {cell}")
            else:
                parts.append(f"{name} = {v}")
    return ", ".join(parts) if parts else f"cell {cell}"


def _truth_value(results, cell: int, quantity: str) -> str:
    t = results.truth
    row = t[(t["cell"] == cell) & (t["quantity"] == quantity)]
    return f"{float(row['value'].iloc[0]):.4f}" if len(row) else "n/a"


def _curve_rows(results, cell: int) -> pd.DataFrame:
    table = getattr(results, "reliability", None)
    if table is None:
        raise ValueError(f"{results.path}: no reliability.csv (add a `reliability` section to "
                         "the config: docs/config.md)")
    rows = table[table["cell"] == cell]
    if rows.empty:
        raise ValueError(f"{results.path}: reliability.csv has no rows for cell {cell}")
    return rows


def _draw_curves(ax, ax_hist, rows: pd.DataFrame, binning: str, xlabel: str) -> float:
    """One panel of a reliability.csv's rows: the estimated bins of `binning` (bars; points with
    their Wilson intervals at z = 2), the true curve with its ±2 error band when present, the
    diagonal; the rows per bin beneath. Returns the estimated sum of weight
    |frequency - score| (the ECE)."""
    est = rows[(rows["curve"] == "estimated") & (rows["binning"] == binning)].sort_values("lower")
    tr = rows[rows["curve"] == "true"].sort_values("score")
    if binning == "isotonic":
        # CORP (Dimitriadis et al. 2021): the PAV fit as a step function over each step's
        # score range, with the Wilson interval of each step (a step of one row too).
        xs = np.ravel(np.column_stack([est["lower"], est["upper"]]))
        ys = np.repeat(est["frequency"].to_numpy(), 2)
        lower, upper = wilson_interval(est["frequency"], est["count"])
        ax.fill_between(xs, np.repeat(lower, 2), np.repeat(upper, 2), color=COLOURS[1],
                        alpha=0.2, linewidth=0)
        ax.plot(xs, ys, color=COLOURS[1], linewidth=1.6,
                label="isotonic (PAV) fit, Wilson interval z = 2")
    else:
        ax.bar(est["lower"], est["frequency"], width=est["upper"] - est["lower"], align="edge",
               color=COLOURS[1], alpha=0.3, edgecolor=COLOURS[1], linewidth=0.8,
               label="observed frequency per bin")
        ax.errorbar(est["score"], est["frequency"],
                    yerr=_interval_bars(est["frequency"], est["count"]), fmt="o",
                    color=COLOURS[1], markersize=3.5, elinewidth=0.9, capsize=0,
                    label="(mean score, frequency), Wilson interval z = 2")
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.4", linewidth=1, label="perfect calibration")
    if len(tr):
        ax.fill_between(tr["score"], tr["frequency"] - 2 * tr["error"],
                        tr["frequency"] + 2 * tr["error"], color=COLOURS[0], alpha=0.25,
                        linewidth=0)
        ax.plot(tr["score"], tr["frequency"], color=COLOURS[0], linewidth=1.6,
                label="true curve (±2 errors)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_ylabel("observed frequency (probability)")
    ax.tick_params(labelbottom=False)
    hist = est if len(est) or not len(tr) else tr  # only a true curve: its Monte Carlo draws
    # An isotonic step may hold a single score (zero width): drawn 0.005 wide.
    width = np.maximum(hist["upper"] - hist["lower"], 0.005 if binning == "isotonic" else 0.0)
    ax_hist.bar(hist["lower"], hist["count"], width=width, align="edge",
                color="0.55", edgecolor="white", linewidth=0.5)
    ax_hist.set_xlim(0, 1)
    ax_hist.set_xlabel(xlabel)
    ax_hist.set_ylabel("rows per bin (count)")
    return float(np.sum(est["weight"] * np.abs(est["frequency"] - est["score"])))


def curves_figure(panels, binning: str = "equal_width", columns: int = 4,
                  title: str | None = None) -> Figure:
    """Reliability diagrams from reliability.csv rows, one panel per (title, rows, xlabel); a
    panel's title may hold "{ece}", filled with its binned ECE. The building block of
    reliability_curves, class_reliability_curves and `calbench eval --plot`; binning
    "isotonic" draws eval's CORP curves (reliability.csv rows of that binning)."""
    if binning not in BINNINGS + ("isotonic",):
        raise ValueError(f"binning = {binning!r}: must be one of "
                         f"{', '.join(BINNINGS + ('isotonic',))}")
    panels = list(panels)
    if not panels:
        raise ValueError("no curves to draw")
    cols = min(len(panels), columns)
    rows = -(-len(panels) // cols)
    fig = Figure(figsize=(max(3.3 * cols, 4.4) + 0.4, 4.3 * rows + 0.4), layout="constrained")
    grid = fig.add_gridspec(2 * rows, cols, height_ratios=[3, 1] * rows)
    first = None
    for i, (name, sel, xlabel) in enumerate(panels):
        r, c = divmod(i, cols)
        ax = fig.add_subplot(grid[2 * r, c])
        ax_hist = fig.add_subplot(grid[2 * r + 1, c], sharex=ax)
        ece = _draw_curves(ax, ax_hist, sel, binning, xlabel)
        ax.set_title(name.format(ece=f"{ece:.4f}"), fontsize=8.5)
        if c > 0:
            ax.set_ylabel("")
            ax_hist.set_ylabel("")
        first = first or ax
    first.legend(loc="upper left", fontsize=7, frameon=False)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def reliability_curves(results, cells=None, binning: str = "equal_width",
                       max_cells: int = 12) -> Figure:
    """Top-label reliability diagrams of a run with a `reliability` section: per cell, replicate
    0's sample binned (equal_width or equal_mass, the config's `reliability.bins`) beside the
    generator's true curve P(correct | max p = z). cells: a list of cell indices (default: the
    first max_cells)."""
    table = getattr(results, "reliability", None)
    if table is None:
        _curve_rows(results, 0)  # raises the explanation
    if cells is None:
        cells = sorted(int(c) for c in table["cell"].unique())[:max_cells]
    panels = []
    for cell in cells:
        sel = _curve_rows(results, cell)
        panels.append((f"{_cell_title(results, cell)}\nECE {{ece}} (replicate 0), "
                       f"true {_truth_value(results, cell, 'ece_top_l1')}",
                       sel[sel["scope"] == "top_label"], "confidence max p (probability)"))
    return curves_figure(panels, binning)


def class_panels(rows: pd.DataFrame, classes=None, max_classes: int = 4):
    """(title, rows, xlabel) per class of reliability.csv rows (one panel when pooled)."""
    rows = rows[rows["scope"] != "top_label"]
    if (rows["scope"] == "classes_pooled").any():
        return [("all classes pooled (exchangeable)\nCE {ece}", rows, "p_k (probability)")]
    present = sorted(int(k) for k in rows["class"].dropna().unique())
    chosen = present[:max_classes] if classes is None else list(classes)
    return [(f"class {k}\nCE {{ece}}", rows[rows["class"] == k], f"p_{k} (probability)")
            for k in chosen]


def class_reliability_curves(results, cell: int = 0, binning: str = "equal_width",
                             classes=None, max_classes: int = 4) -> Figure:
    """Per-class reliability diagrams P(y = k | p_k = s) of one cell: replicate 0's binned curve
    and the true curve. When the generator's classes are exchangeable the run pools them into
    one curve (scope classes_pooled), drawn as one panel."""
    panels = class_panels(_curve_rows(results, cell), classes, max_classes)
    return curves_figure(panels, binning,
                         title=f"{_cell_title(results, cell)}: true classwise ECE "
                               f"{_truth_value(results, cell, 'classwise_ece_l1')}")


def recalibrated_curves(results, cell: int | None = None, max_methods: int = 8) -> Figure:
    """The true top-label reliability curve after each method, as fitted in replicate 0, of one
    cell of a recalibration run with a `reliability` section (default: the last cell), beside the
    uncalibrated model's; each title gives sum weight |frequency - score| over the curve's fine
    points, the true ECE of that fitted model up to the curve's resolution."""
    table = getattr(results, "reliability", None)
    if table is None:
        _curve_rows(results, 0)  # raises the explanation
    if cell is None:
        cell = int(table["cell"].max())
    rows = _curve_rows(results, cell)
    panels = []
    for method in list(dict.fromkeys(rows["method"]))[:max_methods]:
        sel = rows[rows["method"] == method]
        ece = float(np.sum(sel["weight"] * np.abs(sel["frequency"] - sel["score"])))
        panels.append((f"{method}\ntrue ECE {ece:.4f} (replicate 0's fit)", sel,
                       "confidence max q (probability)"))
    return curves_figure(panels, "equal_width",
                         title=f"{_cell_title(results, cell)}: true curves after recalibration")

