#!/usr/bin/env python3
"""The coverage tables of docs/intervals.md from the runs of configs/interval_coverage.json and
configs/interval_coverage_k100.json (their intervals.csv files).

Usage: scripts/intervals_table.py RESULTS_DIR [RESULTS_DIR ...] > table.md

One table per estimator: a row per (model, K, n), a column per method, the coverage and its
binomial standard error to two decimals ("0.88 ±0.02"; "-" where the method does not apply). tests/test_doc_figures.cpp checks every figure
against a fresh run.
"""
import csv
import sys

METHODS = ["percentile", "basic", "bca", "consistency", "analytic", "bias_corrected"]
MODELS = {"1": "calibrated (T = 1)", "0.7": "overconfident (T = 0.7)",
          "1.4": "underconfident (T = 1.4)"}


def rows(directory):
    with open(f"{directory}/intervals.csv") as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))


def main(directories):
    table = {}
    order = []
    for d in directories:
        with open(f"{d}/config.resolved.json") as f:
            import json
            classes = json.load(f)["generator"]["classes"]
        for r in rows(d):
            label = r["estimator"]
            if label not in order:
                order.append(label)
            K = r.get("generator.classes", str(classes))
            key = (label, r["generator.miscalibration.temperature"], int(K), int(r["sample_size"]))
            table.setdefault(key, {})[r["method"]] = r
    for label in order:
        keys = sorted((k for k in table if k[0] == label),
                      key=lambda k: (list(MODELS).index(k[1]), k[2], k[3]))
        first = next(iter(table[keys[0]].values()))
        print(f"#### {label} (target {first['target']})\n")
        print("| model | K | n | " + " | ".join(METHODS) + " |")
        print("|---|---:|---:|" + "---:|" * len(METHODS))
        for k in keys:
            cells = []
            for m in METHODS:
                r = table[k].get(m)
                cells.append("-" if r is None or r["coverage"] == "" else
                             f"{float(r['coverage']):.2f} ±{float(r['coverage_se']):.2f}")
            print(f"| {MODELS[k[1]]} | {k[2]} | {k[3]} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
