"""Figures of the three scenarios, each a function of a loaded `Results` returning a matplotlib
Figure. Nothing here touches pyplot's global state or shows a window: save the figure with
fig.savefig(...) or let a notebook display it."""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from ._style import colour, marker
from .results import Results

# The unit each ground-truth quantity is measured in, for axis labels.
UNITS = {
    "accuracy": "fraction", "ece_top_l1": "probability", "ece_top_l2": "probability",
    "classwise_ece_l1": "probability", "canonical_l1": "probability",
    "canonical_l2": "probability", "brier": "squared probability", "nll": "nats",
    "overconfidence": "probability",
}


def _units(quantity: Any) -> str:
    return UNITS.get(str(quantity), "metric units")


def _require(results: Results, scenario: str, figure: str) -> None:
    if results.scenario != scenario:
        raise ValueError(f"{figure} draws {scenario} results; {results.path} holds "
                         f"{results.scenario} results")


def _short(key: str) -> str:
    parts = key.split(".")
    return f"target {parts[-1]}" if len(parts) > 1 and parts[-2] == "target" else parts[-1]


def _groups(frame: pd.DataFrame, keys: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """(panel title, rows) for each combination of keys, in the order the values first occur."""
    keys = [k for k in keys if k in frame.columns]
    if not keys:
        return [("", frame)]
    out = []
    by = keys[0] if len(keys) == 1 else keys
    for values, rows in frame.groupby(by, sort=False, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        out.append((", ".join(f"{_short(k)} = {v:g}" if isinstance(v, float) else
                              f"{_short(k)} = {v}" for k, v in zip(keys, values)), rows))
    return out


def _panels(n: int, width: float = 3.6, height: float = 3.0, **kwargs):
    cols = max(1, math.ceil(math.sqrt(n))) if n > 3 else max(n, 1)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(width * cols + 0.6, height * rows + 0.6), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, **kwargs).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _label(axes, xlabel: str, ylabel: str) -> None:
    """x label under the lowest panel of each column, y label left of each row."""
    n = len(axes)
    for i, ax in enumerate(axes):
        spec = ax.get_subplotspec()
        cols = spec.get_geometry()[1]
        if i + cols >= n:
            ax.set_xlabel(xlabel)
        if spec.is_first_col():
            ax.set_ylabel(ylabel)


def _legend(axes, **kwargs) -> None:
    """The legend right of the first row, outside the data."""
    if not any(ax.get_legend_handles_labels()[0] for ax in axes):
        return  # nothing drawn (no estimator has a bias): no empty legend, no warning
    cols = axes[0].get_subplotspec().get_geometry()[1]
    axes[min(cols, len(axes)) - 1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0),
                                          fontsize=8, frameon=False, **kwargs)


SIZES = ("sample_size", "fit_size", "test_size")


def _resolve_x(results: Results, frame: pd.DataFrame, x: str) -> str:
    """x, or when x takes one value only (a sweep without sizes, such as configs/target_grid),
    the first swept key that varies."""
    if x in frame.columns and frame[x].nunique() > 1:
        return x
    for k in results.sweep_keys:
        if k in frame.columns and frame[k].nunique() > 1:
            return k
    if x not in frame.columns:
        raise ValueError(f"{results.path}: no column {x!r}")
    return x


def _ordinal_x(frame: pd.DataFrame, x: str) -> tuple[pd.DataFrame, str]:
    """(rows, x-axis label). A swept value that is not a number (a whole `generator` object, as
    in configs/papers/kyle_calibration_game.json, or a map name) becomes its position 1, 2, ...
    in sweep order, so that curves can be drawn against it; the report's truth table and
    cells.csv give the values."""
    values = frame[x]
    if pd.api.types.is_numeric_dtype(values):
        return frame, _x_label(x)
    order = {v: i + 1 for i, v in enumerate(dict.fromkeys(values))}
    return frame.assign(**{x: values.map(order)}), f"{_short(x)} (sweep value number)"


def _log_x(ax, values) -> None:
    """Sizes on a log axis, other swept values on a linear one; ticked at the swept values (a
    sweep often spans less than a decade)."""
    if values.name in SIZES:
        ax.set_xscale("log")
    ticks = sorted(set(float(v) for v in values if pd.notna(v)))
    if 0 < len(ticks) <= 8:
        ax.set_xticks(ticks)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.6g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        if len(ticks) > 4:  # labels of many sizes would overlap on a narrow panel
            ax.tick_params(axis="x", labelrotation=45)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right")


def _other_keys(results: Results, x: str) -> list[str]:
    return [k for k in results.sweep_keys if k != x]


def _x_label(x: str) -> str:
    return {"sample_size": "sample size n (rows)", "fit_size": "fit sample size (rows)",
            "test_size": "test sample size (rows)"}.get(x, _short(x))


def _estimators(frame: pd.DataFrame, estimators: Iterable[str] | None) -> list[str]:
    labels = list(dict.fromkeys(frame["estimator"]))
    if estimators is None:
        return labels
    unknown = [e for e in estimators if e not in labels]
    if unknown:
        raise ValueError(f"estimator(s) {', '.join(unknown)} not in the results "
                         f"(have: {', '.join(labels)})")
    return list(estimators)


def _curve_panels(results: Results, figure: str, x: str, estimators):
    """What every estimator_bias curve starts from: the chosen estimators, the resolved x key,
    the rows grouped by the other swept parameters, and one panel per group."""
    _require(results, "estimator_bias", figure)
    df = results.summary
    labels = _estimators(df, estimators)
    x = _resolve_x(results, df, x)
    df, xlabel = _ordinal_x(df, x)
    groups = _groups(df, _other_keys(results, x))
    fig, axes = _panels(len(groups))
    return fig, axes, groups, labels, x, xlabel


# estimator_bias -----------------------------------------------------------------------------

def bias_curves(results: Results, x: str = "sample_size",
                estimators: Iterable[str] | None = None) -> Figure:
    """Bias (mean estimate - truth) with +-2 standard-error bars against x (log axis), one line
    per estimator, one panel per value of the other swept parameters."""
    fig, axes, groups, labels, x, xlabel = _curve_panels(results, "bias_curves", x, estimators)
    for ax, (title, rows) in zip(axes, groups):
        for i, label in enumerate(labels):
            r = rows[rows["estimator"] == label].sort_values(x)
            # An estimator without a target (a test's rejection rate) has no bias: no line,
            # rather than matplotlib's StopIteration on bars that are all NaN (issue #38).
            r = r[np.isfinite(r["bias"].astype(float)) & np.isfinite(r["se_bias"].astype(float))]
            if r.empty:
                continue
            ax.errorbar(r[x], r["bias"], yerr=2 * r["se_bias"], color=colour(i),
                        marker=marker(i), markersize=4, capsize=3, linewidth=1.2, label=label)
        ax.axhline(0, color="0.5", linewidth=0.8)
        _log_x(ax, rows[x])
        ax.set_title(title, fontsize=10)
    _label(axes, xlabel, "bias: mean estimate − truth\n(metric units; bars ±2 SE)")
    _legend(axes)
    return fig


def error_curves(results: Results, x: str = "sample_size",
                 estimators: Iterable[str] | None = None) -> Figure:
    """Standard deviation (dashed) and RMSE (solid) of each estimator against x, log-log."""
    fig, axes, groups, labels, x, xlabel = _curve_panels(results, "error_curves", x, estimators)
    for ax, (title, rows) in zip(axes, groups):
        for i, label in enumerate(labels):
            r = rows[rows["estimator"] == label].sort_values(x)
            ax.plot(r[x], r["rmse"], color=colour(i), marker=marker(i), markersize=4,
                    linewidth=1.2)
            ax.plot(r[x], r["sd"], color=colour(i), linestyle="--", linewidth=1.0)
        _log_x(ax, rows[x])
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
    _label(axes, xlabel, "error (metric units, log scale)")
    handles = [Line2D([], [], color=colour(i), marker=marker(i), label=label)
               for i, label in enumerate(labels)]
    handles += [Line2D([], [], color="0.3", label="RMSE"),
                Line2D([], [], color="0.3", linestyle="--", label="sd")]
    _legend(axes, handles=handles)
    return fig


def estimate_distribution(results: Results, cell: int, estimator: str, bins: int = 30) -> Figure:
    """Histogram of one estimator's replicate values in one cell, with the truth of its target,
    the mean estimate and (for binned estimators) the population value of the binned statistic.
    Needs replicates.csv (`"output": {"replicate_values": true}`)."""
    _require(results, "estimator_bias", "estimate_distribution")
    if results.replicates is None:
        raise ValueError(f"{results.path} has no replicates.csv: run the config with "
                         f'"output": {{"replicate_values": true}}')
    reps = results.replicates
    values = reps[(reps["cell"] == cell) & (reps["estimator"] == estimator)]["value"]
    if values.empty:
        raise ValueError(f"no replicates of estimator {estimator!r} in cell {cell} of "
                         f"{results.path}/replicates.csv")
    row = results.summary[(results.summary["cell"] == cell) &
                          (results.summary["estimator"] == estimator)].iloc[0]
    fig = Figure(figsize=(5.2, 3.6), layout="constrained")
    ax = fig.subplots()
    ax.hist(values, bins=bins, color=colour(0), alpha=0.55, edgecolor="white", linewidth=0.5)
    ax.axvline(row["truth"], color="black", linewidth=1.8, label=f"truth ({row['target']})")
    ax.axvline(row["mean"], color=colour(1), linestyle="--", linewidth=1.5,
               label="mean estimate")
    if "population" in row and pd.notna(row.get("population")):
        ax.axvline(row["population"], color=colour(2), linestyle=":", linewidth=1.8,
                   label="population value (n → ∞)")
    params = ", ".join(f"{_short(k)} = {row[k]}" for k in results.sweep_keys if k in row)
    ax.set_title(f"{estimator}, cell {cell}" + (f" ({params})" if params else ""), fontsize=10)
    ax.set_xlabel(f"{estimator} estimate ({_units(row['target'])})")
    ax.set_ylabel("replicates (count)")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=8, loc="best", framealpha=0.9)
    return fig


def bias_split(results: Results, x: str = "sample_size",
               estimators: Iterable[str] | None = None) -> Figure:
    """bias = binning_bias + finite_sample_bias (docs/config.md) against x: binning bias
    (population value of the binned statistic - truth, dashed) and finite-sample bias (mean -
    population value, solid) per estimator that has them."""
    _require(results, "estimator_bias", "bias_split")
    df = results.summary
    if "binning_bias" not in df.columns or df["binning_bias"].isna().all():
        raise ValueError(f"{results.path}: no estimator has binning_bias (binned estimators "
                         "whose target is a truth quantity have it)")
    df = df[df["binning_bias"].notna()]
    labels = _estimators(df, estimators)
    x = _resolve_x(results, df, x)
    df, xlabel = _ordinal_x(df, x)
    groups = _groups(df, _other_keys(results, x))
    fig, axes = _panels(len(groups))
    for ax, (title, rows) in zip(axes, groups):
        for i, label in enumerate(labels):
            r = rows[rows["estimator"] == label].sort_values(x)
            ax.plot(r[x], r["finite_sample_bias"], color=colour(i), marker=marker(i),
                    markersize=4, linewidth=1.2)
            ax.plot(r[x], r["binning_bias"], color=colour(i), linestyle="--", linewidth=1.2)
        ax.axhline(0, color="0.5", linewidth=0.8)
        _log_x(ax, rows[x])
        ax.set_title(title, fontsize=10)
    _label(axes, xlabel, "bias component (metric units)")
    handles = [Line2D([], [], color=colour(i), marker=marker(i), label=label)
               for i, label in enumerate(labels)]
    handles += [Line2D([], [], color="0.3", label="finite-sample bias"),
                Line2D([], [], color="0.3", linestyle="--", label="binning bias")]
    _legend(axes, handles=handles)
    return fig


# recalibration ------------------------------------------------------------------------------

def recalibration_error(results: Results, quantity: str = "ece_top_l1",
                        x: str = "fit_size") -> Figure:
    """The true value of `quantity` (the truth engine on the recalibrated model) after each
    method against x, mean over replicates with +-1 sd bars (the spread of the fitted model)."""
    _require(results, "recalibration", "recalibration_error")
    df = results.summary
    df = df[(df["kind"] == "truth") & (df["quantity"] == quantity)]
    if df.empty:
        have = sorted(set(results.summary.loc[results.summary["kind"] == "truth", "quantity"]))
        raise ValueError(f"no truth quantity {quantity!r} in {results.path} "
                         f"(have: {', '.join(have)})")
    x = _resolve_x(results, df, x)
    df, xlabel = _ordinal_x(df, x)
    groups = _groups(df, _other_keys(results, x))
    fig, axes = _panels(len(groups), width=4.4, height=3.4)
    for ax, (title, rows) in zip(axes, groups):
        for i, method in enumerate(dict.fromkeys(rows["method"])):
            r = rows[rows["method"] == method].sort_values(x)
            style = ({"color": "0.45", "linestyle": "--"} if method == "uncalibrated"
                     else {"color": colour(i), "marker": marker(i)})
            ax.errorbar(r[x], r["mean"], yerr=r["sd"], capsize=3, markersize=4,
                        linewidth=1.2, label=method, **style)
        _log_x(ax, rows[x])
        ax.set_title(title, fontsize=10)
    _label(axes, xlabel,
           f"true {quantity} after recalibration\n({_units(quantity)}; bars ±1 sd)")
    _legend(axes)
    return fig


def method_comparison(results: Results, quantity: str = "ece_top_l1") -> Figure:
    """Guo et al.'s table as a figure: the true value of `quantity` after each method (mean over
    replicates, bars +-2 standard errors of the mean, sd/sqrt(fits)), one panel per cell, the
    uncalibrated model's value as a dashed line. A method that failed in every replicate is
    listed as "failed" without a bar."""
    _require(results, "recalibration", "method_comparison")
    df = results.summary
    truth = df[(df["kind"] == "truth") & (df["quantity"] == quantity)]
    if truth.empty:
        have = sorted(set(df.loc[df["kind"] == "truth", "quantity"]))
        raise ValueError(f"no truth quantity {quantity!r} in {results.path} "
                         f"(have: {', '.join(have)})")
    methods = list(dict.fromkeys(df["method"]))
    cells = list(dict.fromkeys(df["cell"]))
    fig, axes = _panels(len(cells), width=4.2, height=0.32 * len(methods) + 1.4)
    for ax, cell in zip(axes, cells):
        rows = truth[truth["cell"] == cell].set_index("method")
        ys = np.arange(len(methods))[::-1]
        for y, (i, method) in zip(ys, enumerate(methods)):
            if method not in rows.index:
                ax.text(0, y, " failed", va="center", fontsize=8, color="0.3")
                continue
            r = rows.loc[method]
            se = r["sd"] / math.sqrt(r["fits"]) if r["fits"] else 0.0
            ax.barh(y, r["mean"], xerr=2 * se, color="0.75" if method == "uncalibrated" else
                    colour(i), capsize=3, height=0.7, label=method)
        if "uncalibrated" in rows.index:
            ax.axvline(rows.loc["uncalibrated", "mean"], color="0.4", linestyle="--",
                       linewidth=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels(methods, fontsize=8)
        ax.set_title(f"cell {cell}", fontsize=10)
        ax.set_xlabel(f"true {quantity} after recalibration\n({_units(quantity)}; bars ±2 SE)")
    return fig


def measured_vs_true(results: Results) -> Figure:
    """Each estimator's mean test-set estimate against the true value of its target, one point
    per (cell, method), with +-1 sd bars and the diagonal; one panel per estimator."""
    _require(results, "recalibration", "measured_vs_true")
    df = results.summary
    truth = df[df["kind"] == "truth"].set_index(["cell", "method", "quantity"])["mean"]
    est = df[(df["kind"] == "estimate") & df["target"].notna()]
    labels = list(dict.fromkeys(est["quantity"]))
    methods = list(dict.fromkeys(df["method"]))
    fig, axes = _panels(len(labels), width=3.4, height=3.2)
    for ax, label in zip(axes, labels):
        rows = est[est["quantity"] == label]
        target = rows["target"].iloc[0]
        xs = [truth.get((c, m, t), np.nan) for c, m, t in
              zip(rows["cell"], rows["method"], rows["target"])]
        rows = rows.assign(true=xs)
        for i, method in enumerate(methods):
            r = rows[rows["method"] == method]
            ax.errorbar(r["true"], r["mean"], yerr=r["sd"], linestyle="none", marker=marker(i),
                        color=colour(i), markersize=5, capsize=2, label=method)
        lo = np.nanmin([rows["true"].min(), rows["mean"].min()])
        hi = np.nanmax([rows["true"].max(), rows["mean"].max()])
        pad = 0.05 * (hi - lo if hi > lo else 1.0)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.5", linestyle="--",
                linewidth=0.8)
        ax.set_title(f"{label} → {target}", fontsize=10)
        ax.set_xlabel(f"true {target} ({_units(target)})")
        ax.set_ylabel(f"measured {label} ({_units(target)})")
    _legend(axes)
    return fig


def ranking_disagreement(results: Results, x: str = "fit_size") -> Figure:
    """How often the test-set ranking of the models by an estimator differs from their ranking
    by the truth of its target: whole order (solid) and best model (dashed), against x."""
    _require(results, "recalibration", "ranking_disagreement")
    rk = results.rankings
    if rk is None or rk.empty:
        raise ValueError(f"{results.path}: summary.json has no rankings")
    x = _resolve_x(results, rk, x)
    rk, xlabel = _ordinal_x(rk, x)
    groups = _groups(rk, _other_keys(results, x))
    fig, axes = _panels(len(groups), width=4.4, height=3.2)
    for ax, (title, rows) in zip(axes, groups):
        for i, label in enumerate(dict.fromkeys(rows["estimator"])):
            r = rows[rows["estimator"] == label].sort_values(x)
            ax.plot(r[x], r["disagreement"], color=colour(i), marker=marker(i), markersize=4,
                    linewidth=1.2)
            ax.plot(r[x], r["best_disagreement"], color=colour(i), linestyle="--",
                    linewidth=1.0)
        _log_x(ax, rows[x])
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(title, fontsize=10)
    _label(axes, xlabel, "replicates with a wrong ranking\n(fraction)")
    labels = list(dict.fromkeys(rk["estimator"]))
    handles = [Line2D([], [], color=colour(i), marker=marker(i), label=label)
               for i, label in enumerate(labels)]
    handles += [Line2D([], [], color="0.3", label="order of all models"),
                Line2D([], [], color="0.3", linestyle="--", label="best model")]
    _legend(axes, handles=handles)
    return fig


# decision -----------------------------------------------------------------------------------

def _accuracy_key(results: Results) -> str:
    req = results.raw.get("requirements")
    if isinstance(req, dict) and req.get("accuracy_key"):
        return req["accuracy_key"]
    for k in results.sweep_keys:
        if "alpha" in k or "accuracy" in k:
            return k
    if not results.sweep_keys:
        raise ValueError(f"{results.path}: nothing is swept")
    return results.sweep_keys[0]


def _frontier_points(results: Results, df: pd.DataFrame) -> tuple[list, list]:
    """(accuracy, overconfidence) of each group's frontier, the overconfidence interpolated
    between the bracketing cells like the accuracy (docs/decisions.md section 5)."""
    req = results.requirements
    reached, unreachable = [], []
    if req is None:
        return reached, unreachable
    by_cell = df.set_index("cell")
    for _, row in req.iterrows():
        if row["status"] == "unreachable":
            cell = row["lower_cell"]
            if pd.notna(cell):
                c = by_cell.loc[int(cell)]
                unreachable.append((c["accuracy"], c["overconfidence"]))
            continue
        a = row["minimal_accuracy"]
        if pd.notna(row.get("lower_cell")) and pd.notna(row.get("upper_cell")):
            lo, hi = by_cell.loc[int(row["lower_cell"])], by_cell.loc[int(row["upper_cell"])]
            t = 0.0 if hi["accuracy"] == lo["accuracy"] else \
                (a - lo["accuracy"]) / (hi["accuracy"] - lo["accuracy"])
            oc = lo["overconfidence"] + t * (hi["overconfidence"] - lo["overconfidence"])
        else:
            oc = by_cell.loc[int(row["upper_cell"])]["overconfidence"]
        reached.append((a, oc))
    return reached, unreachable


def utility_map(results: Results, value: str = "expected_utility") -> Figure:
    """`value` (exact, per cell) as a heat map over the generator's accuracy and its signed
    miscalibration (overconfidence E[max p] - accuracy; ECE_top_l1 is its absolute value for
    sign-constant maps such as temperature), with the requirement frontier of requirements.csv.
    Cells on a regular sweep grid are shaded by interpolation; otherwise drawn as points."""
    _require(results, "decision", "utility_map")
    df = results.summary
    if value not in df.columns:
        raise ValueError(f"no column {value!r} in the decision summary of {results.path}")
    acc_key = _accuracy_key(results)
    groups = [rows.sort_values("accuracy") for _, rows in
              _groups(df, [k for k in results.sweep_keys if k != acc_key])]
    groups.sort(key=lambda r: r["overconfidence"].mean())
    fig = Figure(figsize=(6.4, 4.6), layout="constrained")
    ax = fig.subplots()
    vmin, vmax = df[value].min(), df[value].max()
    regular = len(groups) > 1 and len({len(g) for g in groups}) == 1 and len(groups[0]) > 1
    if regular:
        grid = lambda col: np.array([g[col].to_numpy(dtype=float) for g in groups])
        mesh = ax.pcolormesh(grid("accuracy"), grid("overconfidence"), grid(value),
                             shading="gouraud", cmap="viridis", vmin=vmin, vmax=vmax)
        ax.plot(df["accuracy"], df["overconfidence"], ".", color="white", markersize=3)
    else:
        mesh = ax.scatter(df["accuracy"], df["overconfidence"], c=df[value], cmap="viridis",
                          vmin=vmin, vmax=vmax, s=60, edgecolors="0.3")
    fig.colorbar(mesh, ax=ax, label=f"{value.replace('_', ' ')} (utility per case)")
    reached, unreachable = _frontier_points(results, df)
    req = results.raw.get("requirements") or {}
    if reached:
        reached.sort(key=lambda p: p[1])
        ax.plot(*zip(*reached), color="white", linewidth=3.5)
        ax.plot(*zip(*reached), color="black", marker="o", markersize=4, linewidth=1.5,
                label=f"frontier: {req.get('metric', '')} {req.get('bound', '')} "
                      f"{req.get('value', '')}".replace("_", " "))
    if unreachable:
        ax.plot(*zip(*unreachable), "X", color=colour(1), markersize=8, linestyle="none",
                label="unreachable (closest cell)")
    ax.axhline(0, color="white", linewidth=0.6, linestyle=":")
    ax.set_xlabel("accuracy P(y = argmax p) (fraction)")
    ax.set_ylabel("overconfidence E[max p] − accuracy\n(probability; < 0: underconfident)")
    if reached or unreachable:
        ax.legend(fontsize=8, loc="best")
    return fig


def cost_vs_ece(results: Results) -> Figure:
    """Cost of miscalibration (oracle minus policy expected utility, +-2 errors) against the
    generator's ECE_top_l1, one line per accuracy level; filled markers overconfident, open
    markers underconfident."""
    _require(results, "decision", "cost_vs_ece")
    df = results.summary
    acc_key = _accuracy_key(results)
    fig = Figure(figsize=(7.0, 4.2), layout="constrained")
    ax = fig.subplots()
    for i, (_, rows) in enumerate(_groups(df, [acc_key])):
        acc = rows["accuracy"].mean()
        for side, fill in (("over", True), ("under", False)):
            oc = rows["overconfidence"]
            r = rows[(oc >= 0) if side == "over" else (oc <= 0)].sort_values("ece_top_l1")
            if r.empty:
                continue
            ax.errorbar(r["ece_top_l1"], r["miscalibration_cost"],
                        yerr=2 * r["miscalibration_cost_error"], color=colour(i),
                        marker=marker(i), markersize=5, linewidth=1.1,
                        markerfacecolor=colour(i) if fill else "white",
                        label=f"accuracy {acc:.3f}" if side == "over" else None)
    ax.set_xlabel("ECE_top_l1 of the generator (probability)")
    ax.set_ylabel("cost of miscalibration:\noracle − policy utility (utility per case)")
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], color="0.3", marker="o", linestyle="none", label="overconfident"),
                Line2D([], [], color="0.3", marker="o", markerfacecolor="white",
                       linestyle="none", label="underconfident")]
    ax.legend(handles=handles, fontsize=8, frameon=False, loc="upper left",
              bbox_to_anchor=(1.02, 1.0))
    return fig


# leaderboards (recalibration) ---------------------------------------------------------------

def _leaderboard_rows(results: Results, table: pd.DataFrame | None, scope: str | int,
                      name: str) -> tuple[pd.DataFrame, str]:
    """The rows of one scope ("all", "generator:G" or a cell's index) and a title naming it;
    "all" falls back to the last cell when the run has no pooled board (one cell)."""
    _require(results, "recalibration", name)
    if table is None or table.empty:
        raise ValueError(f"{results.path}: no leaderboard files")
    if scope == "all" and not (table["scope"] == "all").any():
        scope = int(table["cell"].max())
    if scope == "all":
        rows = table[table["scope"] == "all"]
        title = f"all cells ({int(rows['cases'].iloc[0])} cases, {int(rows['blocks'].iloc[0])} " \
                "bootstrap blocks)"
    elif isinstance(scope, str) and scope.startswith("generator:"):
        rows = table[table["scope"] == scope]
        if rows.empty:
            raise ValueError(f"{results.path}: no leaderboard of {scope} (the config's "
                             "leaderboard.generator_boards asks for them)")
        title = f"{scope} ({int(rows['cases'].iloc[0])} cases)"
    else:
        rows = table[(table["scope"] == "cell") & (table["cell"] == int(scope))]
        if rows.empty:
            raise ValueError(f"{results.path}: no leaderboard of cell {scope}")
        title = f"cell {int(scope)} ({int(rows['cases'].iloc[0])} replicates)"
    return rows, title


def leaderboard_figure(results: Results, scope: str | int = "all",
                       measure: str = "win_rate") -> Figure:
    """Each model's win rate (or Elo: measure="elo") per ranking key with its 95 % bootstrap
    interval, a panel per key: the true quantities first, then the test-set estimators. The
    models keep one order in every panel, best first by the true top-label ECE (else the first
    key)."""
    if measure not in ("win_rate", "elo"):
        raise ValueError(f"measure = {measure!r}: expected 'win_rate' or 'elo'")
    rows, title = _leaderboard_rows(results, results.leaderboard, scope, "leaderboard_figure")
    keys = list(dict.fromkeys(zip(rows["kind"], rows["key"])))
    by = ("truth", "ece_top_l1") if ("truth", "ece_top_l1") in keys else keys[0]
    first = rows[(rows["kind"] == by[0]) & (rows["key"] == by[1])]
    order = list(first.sort_values(["rank", "method"])["method"])
    fig, axes = _panels(len(keys), width=3.2, height=0.28 * len(order) + 1.2)
    for ax, (kind, key) in zip(axes, keys):
        r = rows[(rows["kind"] == kind) & (rows["key"] == key)].set_index("method").loc[order]
        y = np.arange(len(order))[::-1]
        colour_of = colour(0) if kind == "truth" else colour(1)
        ax.errorbar(r[measure], y, xerr=[r[measure] - r[f"{measure}_lower"],
                                         r[f"{measure}_upper"] - r[measure]],
                    fmt=marker(0) if kind == "truth" else marker(1), color=colour_of,
                    markersize=4, linewidth=1.0, capsize=2)
        ax.set_yticks(y)
        ax.set_yticklabels(order, fontsize=8)
        ax.set_title(f"{'true' if kind == 'truth' else 'test-set'} {key}", fontsize=9)
        if measure == "win_rate":
            ax.set_xlim(-0.03, 1.03)
        ax.grid(axis="x", linewidth=0.3)
    _label(axes, "win rate (fraction of other models beaten)" if measure == "win_rate"
           else "Bradley–Terry Elo (points)", "")
    fig.suptitle(f"Leaderboards, {title}", fontsize=10)
    return fig


def rank_agreement_figure(results: Results, scope: str | int = "all") -> Figure:
    """Kendall's tau-b between each test-set estimator's leaderboard and each true quantity's
    (win rates), as a heat map annotated with the value and its 95 % bootstrap interval; and
    beside it the share of cases whose test-set winner is the true winner."""
    rows, title = _leaderboard_rows(results, results.leaderboard_agreement, scope,
                                    "rank_agreement_figure")
    estimators = list(dict.fromkeys(rows["estimator"]))
    truths = list(dict.fromkeys(rows["truth"]))
    fig = Figure(figsize=(1.2 * len(truths) * 2 + 3.0, 0.5 * len(estimators) + 1.8),
                 layout="constrained")
    axes = fig.subplots(1, 2)
    # Two colour maps: each colorbar is a raster whose SVG id is a hash of its pixels, so two
    # identical colorbars would share an id on the page.
    for ax, column, label, lo, cmap in (
            (axes[0], "tau_b", "Kendall tau-b of the leaderboards", -1, "viridis"),
            (axes[1], "winner_agreement", "cases whose test-set winner is the true winner", 0,
             "cividis")):
        grid = np.full((len(estimators), len(truths)), np.nan)
        for _, r in rows.iterrows():
            grid[estimators.index(r["estimator"]), truths.index(r["truth"])] = r[column]
        # pcolormesh, not imshow: vector cells, no raster (its SVG id is a hash of its pixels,
        # which two identical panels would share).
        image = ax.pcolormesh(np.ma.masked_invalid(grid), cmap=cmap, vmin=lo, vmax=1)
        ax.invert_yaxis()
        for _, r in rows.iterrows():
            i, j = estimators.index(r["estimator"]), truths.index(r["truth"])
            if pd.isna(r[column]):
                continue
            text = f"{r[column]:.2f}\n[{r[column + '_lower']:.2f}, {r[column + '_upper']:.2f}]"
            ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=6,
                    color="white" if r[column] < (lo + 1) / 2 else "black")
        ax.set_xticks(np.arange(len(truths)) + 0.5)
        ax.set_xticklabels([f"true {t}" for t in truths], rotation=45, ha="right", fontsize=8)
        ax.set_yticks(np.arange(len(estimators)) + 0.5)
        # With a decision task the true regret's board is compared with the true boards too.
        ax.set_yticklabels([f"true {e}" if e == "decision_regret" else e for e in estimators],
                           fontsize=8)
        ax.set_title(label, fontsize=9)
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.suptitle(f"Test-set rankings against true rankings, {title}", fontsize=10)
    return fig


def oc_curve(gate_result: dict) -> Figure:
    """The operating characteristic of an acceptance gate (`calbench.gate(...)`, docs/gates.md):
    P(pass) against each member's true error, with its 95 % Monte Carlo band
    (P ± 1.96 se), each clause's own pass rate when there are several, and the risks: the
    false-reject rate at the good true error, the false-accept rate at the bad one."""
    points = gate_result["points"]
    x = np.array([p["true_error"] for p in points])
    p = np.array([p["p_pass"] for p in points])
    se = np.array([p["se"] for p in points])
    order = np.argsort(x)
    x, p, se = x[order], p[order], se[order]
    fig = Figure(figsize=(5.2, 3.6), layout="constrained")
    ax = fig.subplots()
    ax.fill_between(x, np.clip(p - 1.96 * se, 0, 1), np.clip(p + 1.96 * se, 0, 1),
                    color=colour(0), alpha=0.2, linewidth=0, label="95 % Monte Carlo band")
    ax.plot(x, p, marker=marker(0), color=colour(0), label="P(pass): " + gate_result["rule"])
    clauses = points[0]["clauses"]
    if len(clauses) > 1:
        for i, clause in enumerate(clauses):
            rates = np.array([pt["clauses"][i]["pass"] for pt in points])[order]
            ax.plot(x, rates, linestyle="--", marker=marker(i + 1), color=colour(i + 1),
                    label="P(" + clause["label"] + " passes)")
    risks = gate_result.get("risks", {})
    for name, key, text in (("good", "false_reject", "false reject"),
                            ("bad", "false_accept", "false accept")):
        if name in risks:
            r = risks[name]
            ax.axvline(r["true_error"], color="grey", linestyle=":", linewidth=1)
            ax.annotate(f"{text} {r[key]:.3f}", (r["true_error"], r["p_pass"]),
                        textcoords="offset points", xytext=(4, 4), fontsize=8)
    quantity = gate_result["gate"]["family"]["quantity"]
    ax.set_xlabel(f"true {quantity} of the member")
    ax.set_ylabel("P(pass)")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    return fig
