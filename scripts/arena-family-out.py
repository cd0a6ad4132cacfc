#!/usr/bin/env python3
"""The leave-method-family-out check of the arena (docs/arena.md, "The corpus"): does a family
of recalibrators lead a board only because the generators share its shape?

    /usr/bin/python3 scripts/arena-family-out.py RESULTS [RESULTS ...] [--kind truth]
                                                 [--key ece_top_l1]

RESULTS are finished recalibration runs (e.g. of configs/arena/corpus_*.json). Every cell's
generator is given a shape by what its calibration function is (SHAPES); every method a family
by the shape it fits (METHOD_FAMILIES). For the board (kind, key) the script prints, per method
family, its methods' mean win rate and its best method's rank over all cells, over the cells of
each generator shape alone, and over all cells but those of one shape (leave that shape out).
A family whose lead holds only on generators of its own shape is favoured by the generator.

A win rate over a set of cells is the cases-weighted mean of the cells' own boards
(leaderboard.csv, `scope` = `cell`), which is the pooled board's win rate over those cells:
CalArena's win rate is a mean over cases of the share of other methods strictly worse.
Point values only: intervals over generators are the leaderboard's own (issue #39).
"""
import argparse
import csv
import json
import os
import sys


# What a generator's calibration function is, from its config block.
def shape(generator):
    family = generator["family"]
    if family == "empirical":
        return "spline in the logit"
    if family == "dirichlet":
        mapping = generator.get("miscalibration", {}).get("map", "identity")
        return {"temperature": "temperature", "top_label": "temperature", "power":
                "log-linear", "quantize": "step", "identity": "calibrated"}.get(mapping, mapping)
    return {"class_conditional": "log-linear", "label_noise": "affine",
            "beta_binary": "beta curve", "dirichlet_mixture": "temperature"}.get(family, family)


# Which shape a method fits, by the name in leaderboard.csv (a wrapper's inner method decides:
# laplace_mixture(isotonic) is a binning method, subsample_2000(smoothing_spline) a spline).
METHOD_FAMILIES = [
    ("spline in the logit", ("sms", "svs", "quadratic", "smoothing_spline", "cdf_spline")),
    ("binning / isotonic", ("isotonic", "centred_isotonic", "histogram_binning", "bbq",
                            "scaling_binning", "venn_abers")),
    ("probability space", ("platt_probability", "kernel")),
    ("logit-linear", ("temperature", "ensemble_temperature", "vector", "matrix", "dirichlet",
                      "platt", "beta")),
]


def method_family(name):
    inner = name
    while "(" in inner:
        inner = inner[inner.index("(") + 1:inner.rindex(")")]
    if inner == "uncalibrated":
        return None
    for family, prefixes in METHOD_FAMILIES:
        if inner.startswith(prefixes):
            return family
    return "other"


def read(results, kind, key):
    """Per cell: its generator's shape and its board {method: (cases, win rate)}."""
    cells = []
    for folder in results:
        with open(os.path.join(folder, "summary.json")) as f:
            generators = {c["index"]: c["parameters"].get("generator", c["generator"])
                          for c in json.load(f)["cells"]}
        boards = {}
        with open(os.path.join(folder, "leaderboard.csv")) as f:
            for row in csv.DictReader(f):
                if row["scope"] == "cell" and row["kind"] == kind and row["key"] == key:
                    boards.setdefault(int(row["cell"]), {})[row["method"]] = (
                        int(row["cases"]), float(row["win_rate"]))
        if not boards:
            sys.exit(f"arena-family-out: {folder}: no cell board of {kind} {key}")
        for index, board in sorted(boards.items()):
            generator = generators[index]
            cells.append((shape(generator) if isinstance(generator, dict) else "unknown",
                          board))
    return cells


def pooled(cells):
    """Every method's win rate over `cells` (cases-weighted) and its rank (1 = best)."""
    total, weight = {}, {}
    for _, board in cells:
        for method, (cases, rate) in board.items():
            total[method] = total.get(method, 0.0) + cases * rate
            weight[method] = weight.get(method, 0) + cases
    rates = {m: total[m] / weight[m] for m in total if weight[m] > 0}
    order = sorted(rates, key=lambda m: -rates[m])
    return rates, {m: 1 + sum(rates[o] > rates[m] for o in order) for m in order}


def table(cells):
    shapes = sorted({s for s, _ in cells})
    subsets = [("all cells", cells)]
    subsets += [(f"only {s}", [c for c in cells if c[0] == s]) for s in shapes]
    subsets += [(f"without {s}", [c for c in cells if c[0] != s]) for s in shapes
                if len(shapes) > 1]
    families = [f for f, _ in METHOD_FAMILIES]
    lines = ["| cells | n | " + " | ".join(families) + " |",
             "|---|---|" + "---|" * len(families)]
    for label, subset in subsets:
        if not subset:
            continue
        rates, ranks = pooled(subset)
        parts = []
        for family in families:
            members = [m for m in rates if method_family(m) == family]
            if not members:
                parts.append("")
                continue
            mean = sum(rates[m] for m in members) / len(members)
            best = min(ranks[m] for m in members)
            parts.append(f"{mean:.3f} (best {best})")
        lines.append(f"| {label} | {len(subset)} | " + " | ".join(parts) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="finished recalibration result directories")
    ap.add_argument("--kind", default="truth", choices=["truth", "estimate"])
    ap.add_argument("--key", default="ece_top_l1",
                    help="the board's key: a true quantity (truth) or an estimator's label")
    args = ap.parse_args()
    cells = read(args.results, args.kind, args.key)
    print(f"{args.kind} {args.key}: each method family's mean win rate (its best method's "
          f"rank) over {len(cells)} cells")
    sys.stdout.write(table(cells))


if __name__ == "__main__":
    main()
