"""The HTML report of a run: `python3 -m calbench.report RESULT_DIR` writes RESULT_DIR/report/
index.html (docs/python.md, "The HTML report"). `calbench run` calls it after writing its results.

One self-contained page: the run's meta block, the ground truth per cell, the scenario's
figures as inline SVG, its cells.csv as a table and the resolved config. The bytes are a pure
function of the result files (and the matplotlib version): no dates, SVG ids from a fixed salt
per figure (rcParams['svg.hashsalt']), no metadata date, text kept as text (svg.fonttype
'none'). No script: the page has nothing to log.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import os
import re
import sys
from typing import Callable

import matplotlib
import pandas as pd

from . import figures, reliability
from ._atomic import write_atomically
from .results import Results, load, read_csv

MAX_TABLE_ROWS = 500

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto;
       max-width: 80rem; padding: 0 1rem; color: #1a1a1a; background: #ffffff; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #c8c8c8; }
nav a { margin-right: 1rem; color: #0060a0; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.6rem 0; }
th, td { border: 1px solid #d0d0d0; padding: 0.2rem 0.45rem; text-align: right; }
th { background: #eef2f6; }
td.text, th.text { text-align: left; }
figure { margin: 1.2rem 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9rem; color: #333333; max-width: 60rem; }
pre { background: #f5f5f5; padding: 0.8rem; overflow-x: auto; font-size: 0.8rem; }
.meta td { text-align: left; }
.scroll { overflow-x: auto; max-width: 100%; }
.headline { display: inline-block; vertical-align: top; margin-right: 1.2rem; }
.note { color: #5a5a5a; font-style: italic; }
"""


def _svg(fig, name: str) -> str:
    """The figure as inline SVG, every id (and reference to one) prefixed by `name`, so that
    several figures share a page without clashing ids (matplotlib numbers its elements
    figure_1, axes_1, ... in every figure). Ids are fixed: the hash salt is the name."""
    with matplotlib.rc_context({"svg.hashsalt": f"calbench-{name}", "svg.fonttype": "none"}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    start = text.find("<svg")
    text = text[start:] if start >= 0 else text
    text = re.sub(r' id="([^"]+)"', rf' id="{name}-\1"', text)
    text = re.sub(r'url\(#([^)]+)\)', rf'url(#{name}-\1)', text)
    return re.sub(r'href="#([^"]+)"', rf'href="#{name}-\1"', text)


def _table(frame: pd.DataFrame, caption: str = "") -> str:
    """The frame as an HTML table in a box that scrolls sideways when the table is wider than
    the page (cells.csv has 20 and more columns), so the page itself keeps its width."""
    shown = frame.head(MAX_TABLE_ROWS)
    out = ['<div class="scroll"><table>']
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<thead><tr>")
    text_cols = {c for c in shown.columns if shown[c].dtype == object}
    for c in shown.columns:
        cls = ' class="text"' if c in text_cols else ""
        out.append(f"<th{cls} scope=\"col\">{html.escape(str(c))}</th>")
    out.append("</tr></thead><tbody>")
    for row in shown.itertuples(index=False):
        out.append("<tr>")
        for c, v in zip(shown.columns, row):
            cls = ' class="text"' if c in text_cols else ""
            out.append(f"<td{cls}>{html.escape(_fmt(v))}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    if len(frame) > MAX_TABLE_ROWS:
        out.append(f'<p class="note">First {MAX_TABLE_ROWS} of {len(frame)} rows; all are in '
                   "the CSV file.</p>")
    return "".join(out)


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _truth_table(r: Results) -> str:
    t = r.truth
    if t is None or t.empty:
        return '<p class="note">No ground truth in summary.json.</p>'
    keys = [k for k in r.sweep_keys if k in t.columns]
    t = t.assign(entry=[f"{v:.6g} ± {e:.2g} ({m})" for v, e, m in
                        zip(t["value"], t["error"], t["method"])])
    wide = t.pivot_table(index=["cell"] + keys, columns="quantity", values="entry",
                         aggfunc="first", sort=False)
    order = [q for q in figures.UNITS if q in wide.columns]
    wide = wide[order].reset_index()
    return _table(wide, "value ± error (method) of each quantity, per cell")


def _headline_tables(r: Results) -> str:
    """estimator_bias: per estimator, the figures a reader looks for first (truth, mean,
    bias ± its standard error, sd, RMSE) per cell, 4 significant digits, narrow enough to sit
    side by side on a 1,400 px page; the full table (every column) follows."""
    if r.scenario != "estimator_bias" or r.cells is None or r.cells.empty:
        return ""
    c = r.cells
    keys = [k for k in r.sweep_keys if k in c.columns]
    if "sample_size" in c.columns and "sample_size" not in keys:
        keys.append("sample_size")
    out = []
    for label, g in c.groupby("estimator", sort=False):
        short = {"sample_size": "n"}
        frame = pd.DataFrame({short.get(k, k.split(".")[-1]): g[k].to_numpy() for k in keys})
        frame["truth"] = [f"{v:.4g}" for v in g["truth"]]
        frame["mean"] = [f"{v:.4g}" for v in g["mean"]]
        frame["bias ± SE"] = [f"{b:+.3g} ± {s:.2g}" for b, s in zip(g["bias"], g["se_bias"])]
        frame["sd"] = [f"{v:.3g}" for v in g["sd"]]
        frame["RMSE"] = [f"{v:.3g}" for v in g["rmse"]]
        target = g["target"].iloc[0] if "target" in g.columns else ""
        out.append(f'<div class="headline">{_table(frame, f"{label} (target {target})")}</div>')
    return "".join(out)


def _figure_list(r: Results) -> list[tuple[str, str, Callable[[], object]]]:
    """(id, caption, draw) of the figures this run's files support."""
    out: list[tuple[str, str, Callable[[], object]]] = []
    if r.scenario == "estimator_bias":
        out.append(("bias", "Bias of each estimator against the truth of its target, ±2 standard "
                    "errors, against the sample size (one panel per value of the other swept "
                    "parameters).", lambda: figures.bias_curves(r)))
        out.append(("error", "RMSE (solid) and standard deviation (dashed) of each estimator, "
                    "log–log.", lambda: figures.error_curves(r)))
        s = r.summary
        if "binning_bias" in s.columns and s["binning_bias"].notna().any():
            out.append(("split", "Bias of the binned estimators split into binning bias "
                        "(population value − truth, dashed) and finite-sample bias (solid).",
                        lambda: figures.bias_split(r)))
        if r.reliability is not None:
            out.append(("reliability", "Top-label reliability diagrams: replicate 0's sample in "
                        "equal-width bins (bars; points with ±2 binomial standard errors) beside "
                        "the generator's true curve P(correct | max p = z) with ±2 errors (blue), "
                        "and the rows per bin beneath.",
                        lambda: reliability.reliability_curves(r, binning="equal_width")))
            out.append(("reliability-mass", "The same with equal-mass bins.",
                        lambda: reliability.reliability_curves(r, binning="equal_mass")))
            last = int(r.reliability["cell"].max())
            out.append(("classwise", f"Per-class reliability P(y = k | p_k = s) of cell {last}: "
                        "replicate 0's sample and the true curve.",
                        lambda: reliability.class_reliability_curves(r, cell=last)))
        if r.replicates is not None and not r.replicates.empty:
            first = r.replicates.iloc[0]
            out.append(("distribution", f"Distribution of {first['estimator']} over the "
                        f"replicates of cell {int(first['cell'])}, with the truth, the mean and "
                        "the population value.",
                        lambda: figures.estimate_distribution(r, int(first["cell"]),
                                                              str(first["estimator"]))))
    elif r.scenario == "recalibration":
        out.append(("recalibration", "True top-label ECE after each method against the fit "
                    "size, ±1 sd over fits.", lambda: figures.recalibration_error(r)))
        out.append(("methods", "True top-label ECE after each method per cell (Guo et al.'s "
                    "table as bars), ±2 standard errors of the mean; dashed: uncalibrated.",
                    lambda: figures.method_comparison(r)))
        if r.reliability is not None:
            out.append(("recalibrated-curves", "True top-label reliability curve of each model "
                        "as fitted in replicate 0 (last cell), ±2 errors, with the Monte Carlo "
                        "draws per point beneath.",
                        lambda: reliability.recalibrated_curves(r)))
        out.append(("measured", "Each estimator's mean test-set value against the truth of its "
                    "target, per cell and method.", lambda: figures.measured_vs_true(r)))
        out.append(("ranking", "How often the test-set ranking of the models differs from the "
                    "true one.", lambda: figures.ranking_disagreement(r)))
        if r.leaderboard is not None and not r.leaderboard.empty:
            out.append(("leaderboard", "Leaderboards (CalArena's rule): each model's win rate "
                        "(the share of the other models strictly worse per case, ties for "
                        "neither, averaged over cases) with its 95 % bootstrap interval, per "
                        "true quantity (blue) and per test-set estimator (orange); pooled over "
                        "cells when the run has several.", lambda: figures.leaderboard_figure(r)))
            out.append(("leaderboard-elo", "The same as Bradley–Terry Elo (ties half a win, "
                        "1000 the mean).", lambda: figures.leaderboard_figure(r, measure="elo")))
        if r.leaderboard_agreement is not None and not r.leaderboard_agreement.empty:
            out.append(("rank-agreement", "Does the test-set metric rank the methods as the "
                        "truth does? Kendall tau-b between each estimator's leaderboard and each "
                        "true quantity's, and the share of cases whose test-set winner is the "
                        "true winner, with 95 % bootstrap intervals.",
                        lambda: figures.rank_agreement_figure(r)))
    elif r.scenario == "decision":
        out.append(("utility", "Expected utility over accuracy × miscalibration, with the "
                    "requirement frontier.", lambda: figures.utility_map(r)))
        out.append(("cost", "Cost of miscalibration (oracle − policy utility) against ECE.",
                    lambda: figures.cost_vs_ece(r)))
    return out


def _head(title: str) -> list[str]:
    return ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            f"<title>calbench: {html.escape(title)}</title>",
            f"<style>{STYLE}</style>", "</head>", "<body>"]


def render(r: Results) -> str:
    meta = r.meta
    name = str(meta.get("name", ""))
    parts = _head(f"report of {name}") + [
             f"<h1>calbench report: {html.escape(name)}</h1>",
             '<nav aria-label="sections"><a href="#truth">Ground truth</a>'
             '<a href="#figures">Figures</a><a href="#results">Results</a>'
             '<a href="#config">Configuration</a></nav>',
             '<table class="meta" aria-label="run">']
    for k in ("scenario", "seed", "calbench_version", "git_revision", "config_hash",
              "schema_version"):
        if k in meta:
            parts.append(f"<tr><th class=\"text\" scope=\"row\">{html.escape(k)}</th>"
                         f"<td>{html.escape(str(meta[k]))}</td></tr>")
    parts.append("</table>")
    parts.append(f"<p>Files of this run are in <code>{html.escape('..')}</code> (summary.json, "
                 "cells.csv, config.resolved.json, run.json); load them with "
                 "<code>calbench.load(...)</code> (docs/python.md).</p>")

    parts.append('<h2 id="truth">Ground truth</h2>')
    parts.append(_truth_table(r))

    parts.append('<h2 id="figures">Figures</h2>')
    for fig_id, caption, draw in _figure_list(r):
        try:
            svg = _svg(draw(), fig_id)
        except (ValueError, KeyError, IndexError) as e:
            parts.append(f'<p class="note">Figure {html.escape(fig_id)} not drawn: '
                         f"{html.escape(str(e))}</p>")
            continue
        parts.append(f'<figure id="fig-{fig_id}" role="group">{svg}'
                     f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    parts.append('<h2 id="results">Results (cells.csv)</h2>')
    headline = _headline_tables(r)
    if headline:
        parts.append(headline)
        parts.append("<h3>All columns</h3>")
    parts.append(_table(r.cells))
    if r.requirements is not None:
        parts.append("<h3>requirements.csv</h3>")
        parts.append(_table(r.requirements))

    parts.append('<h2 id="config">Configuration (config.resolved.json)</h2>')
    parts.append(f"<pre>{html.escape(json.dumps(r.config, indent=2, ensure_ascii=False))}</pre>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(path: str) -> str:
    """Writes PATH/report/index.html for the result directory PATH; returns its path. The file
    is written to a temporary name and renamed, like every result file."""
    r = load(path)
    text = render(r)
    out_dir = os.path.join(path, "report")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "index.html")
    _write(out, text)
    return out


def _write(path: str, text: str) -> None:
    write_atomically(path, text)


def write_eval_report(path: str, max_classes: int = 4) -> str:
    """`calbench eval DATA --plot PATH`: from PATH/reliability.csv, the model's reliability
    diagrams as PATH/reliability_equal_width.svg, reliability_equal_mass.svg,
    reliability_isotonic.svg (CORP), reliability_classes.svg, and PATH/index.html showing them. Returns the page's path."""
    csv = os.path.join(path, "reliability.csv")
    if not os.path.exists(csv):
        raise ValueError(f"{csv}: missing (written by calbench eval DATA --plot {path})")
    rows, meta = read_csv(csv)
    summary = os.path.join(path, "summary.json")
    if os.path.exists(summary):  # the meta block (reliability.csv has none since schema 1's tidy CSVs)
        with open(summary, encoding="utf-8") as f:
            meta = json.load(f).get("meta", meta)
    data = str(meta.get("name", ""))
    top = rows[rows["scope"] == "top_label"]
    figures_ = [
        ("reliability_equal_width", "Top-label reliability diagram, 15 equal-width bins: "
         "observed frequency of a correct prediction per bin (points with ±2 binomial "
         "standard errors) against the mean confidence, rows per bin beneath.",
         reliability.curves_figure([("top label: ECE {ece}", top,
                                     "confidence max p (probability)")], "equal_width")),
        ("reliability_equal_mass", "The same with 15 equal-mass bins.",
         reliability.curves_figure([("top label: ECE {ece}", top,
                                     "confidence max p (probability)")], "equal_mass")),
        ("reliability_isotonic", "CORP reliability diagram (Dimitriadis, Gneiting & Jordan "
         "2021): the isotonic (pool-adjacent-violators) regression of correctness on the "
         "confidence, with ±2 binomial standard errors per step; rows per step beneath.",
         reliability.curves_figure([("top label, isotonic: sum weight |freq - score| {ece}",
                                     top, "confidence max p (probability)")], "isotonic")),
        ("reliability_classes", f"Per-class reliability P(y = k | p_k = s), the first "
         f"{max_classes} classes, equal-width bins (reliability.csv has every class).",
         reliability.curves_figure(reliability.class_panels(rows, max_classes=max_classes),
                                   "equal_width")),
    ]
    body = []
    for name, caption, fig in figures_:
        svg = _svg(fig, name)
        _write(os.path.join(path, name + ".svg"),
               '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + svg)
        body.append(f'<figure id="fig-{name}" role="group">{svg}'
                    f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    page = "\n".join(_head(f"reliability of {data}") + [
        f"<h1>calbench eval: reliability of {html.escape(data)}</h1>",
        "<p>Binned as calbench's <code>ece</code> (docs/estimators/binned.md): the ECE in each "
        "title is the one <code>calbench eval</code> reports for the same bins. Data: "
        "reliability.csv beside this page.</p>"] + body + ["</body></html>"]) + "\n"
    out = os.path.join(path, "index.html")
    _write(out, page)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m calbench.report",
                                     description="write RESULT_DIR/report/index.html")
    parser.add_argument("result_dir")
    parser.add_argument("--eval", action="store_true",
                        help="RESULT_DIR is `calbench eval --plot`'s: draw its reliability.csv")
    args = parser.parse_args(argv)
    try:
        out = (write_eval_report if args.eval else write_report)(args.result_dir)
    except ValueError as e:  # ResultsError names the file
        print(f"calbench.report: {e}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
