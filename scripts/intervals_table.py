#!/usr/bin/env python3
"""The coverage tables of docs/intervals.md from the runs of configs/interval_coverage.json,
configs/interval_coverage_k100.json and configs/interval_coverage_realistic.json (their
intervals.csv files).

Usage: scripts/intervals_table.py RESULTS_DIR [RESULTS_DIR ...] > table.md
       scripts/intervals_table.py --realistic RESULTS_DIR > table.md
       scripts/intervals_table.py --caveats [--cpp] docs/intervals.md

One table per estimator: a row per (model, K, n), a column per method, the coverage and its
binomial standard error to two decimals ("0.88 ±0.02"; "-" where the method does not apply).
The parametric runs' model is the Dirichlet fake with a temperature map; --realistic prints
the run of empirical fakes of scikit-learn models (model "gb_k2 fake", and the truth of the
estimator's target). --caveats reads the doc's tables back and prints the table of regions
(K: 2, 3-10, >10; n: <500, 500-4999, >=5000) where the default method's lowest coverage over
the settings of all the tables is below 0.85 (nominal 0.90 - 0.05), with the setting where it
was lowest; --cpp the same rows as lib/estimators/coverage_caveats.cpp's initialisers.
tests/unit/test_doc_figures.cpp checks every figure against a fresh run, and
tests/test_coverage_caveats.cpp the caveat table against the doc's coverage tables and the
compiled table.
"""
import csv
import json
import os
import re
import subprocess
import sys

METHODS = ["percentile", "basic", "bca", "consistency", "analytic", "bias_corrected"]
MODELS = {"1": "calibrated (T = 1)", "0.7": "overconfident (T = 0.7)",
          "1.4": "underconfident (T = 1.4)"}
NOMINAL = 0.90


def rows(directory):
    with open(f"{directory}/intervals.csv") as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))


def cell(r):
    return "-" if r is None or r["coverage"] == "" else \
        f"{float(r['coverage']):.2f} ±{float(r['coverage_se']):.2f}"


def parametric(directories):
    """{(label, model, K, n): {method: row}} and the labels in order."""
    table, order = {}, []
    for d in directories:
        with open(f"{d}/config.resolved.json") as f:
            classes = json.load(f)["generator"]["classes"]
        for r in rows(d):
            if r.get("requested") == "default":
                continue
            label = r["estimator"]
            if label not in order:
                order.append(label)
            K = r.get("generator.classes", str(classes))
            model = MODELS[r["generator.miscalibration.temperature"]]
            table.setdefault((label, model, int(K), int(r["sample_size"])), {})[r["method"]] = r
    return table, order


def registry_defaults():
    """Each estimator name's default interval method, from `calbench list estimators` (the
    binary in $CALBENCH_BIN, else build/release/calbench)."""
    binary = os.environ.get("CALBENCH_BIN", "build/release/calbench")
    text = subprocess.run([binary, "list", "estimators"], check=True, capture_output=True,
                          text=True).stdout
    out, name = {}, None
    for line in text.splitlines():
        if re.match(r"^  [a-z_]+  ", line):
            name = line.split()[0]
        found = re.match(r"^\s+interval:\s+default method (\w+)", line)
        if found and name:
            out[name] = found.group(1)
            # A row with another default for its error-measure configurations (corp's mcb):
            # the configurations measured here are the defaults, which are.
            error = re.search(r"\((\w+) for its configurations that are error measures\)", line)
            if error:
                out[name] = error.group(1)
    return out


def realistic(directory):
    """As parametric, the model being the fake's name, plus each label's default method (this
    build's, which may differ from the run's if the defaults changed since)."""
    table, order, defaults = {}, [], {}
    methods = registry_defaults()
    for r in rows(directory):
        generator = json.loads(r["generator"])
        model = os.path.basename(generator["rows"]).removesuffix(".rows.npy") + " fake"
        key = (r["estimator"], model, int(generator["classes"]), int(r["sample_size"]))
        if r["estimator"] not in order:
            order.append(r["estimator"])
        defaults[r["estimator"]] = methods[r["name"]]
        if r["requested"] != "default":
            table.setdefault(key, {})[r["method"]] = r
    return table, order, defaults


def print_tables(table, order, defaults):
    """One table per label; with `defaults` (the realistic run) a truth column and the default
    method in the heading."""
    with_truth = defaults is not None
    models = []
    for k in table:
        if k[1] not in models:
            models.append(k[1])
    for label in order:
        keys = sorted((k for k in table if k[0] == label),
                      key=lambda k: (models.index(k[1]), k[2], k[3]))
        first = next(iter(table[keys[0]].values()))
        default = f"; default {defaults[label]}" if with_truth else ""
        print(f"#### {label} (target {first['target']}{default})\n")
        truth = "truth | " if with_truth else ""
        print("| model | K | n | " + truth + " | ".join(METHODS) + " |")
        print("|---|---:|---:|" + ("---:|" if with_truth else "") + "---:|" * len(METHODS))
        for k in keys:
            cells = [cell(table[k].get(m)) for m in METHODS]
            if with_truth:
                cells.insert(0, f"{float(first_of(table[k])['truth']):.4f}")
            print(f"| {k[1]} | {k[2]} | {k[3]} | " + " | ".join(cells) + " |")
        print()


def first_of(methods):
    return next(iter(methods.values()))


def class_region(K):
    return "2" if K <= 2 else "3-10" if K <= 10 else ">10"


def size_region(n):
    return "<500" if n < 500 else "500-4999" if n < 5000 else ">=5000"


def doc_tables(path):
    """The coverage tables of docs/intervals.md: [(label, model, K, n, {method: coverage})] in
    the doc's order, and each label's default method (from the realistic tables' headings,
    "#### LABEL (target T; default METHOD)")."""
    out, defaults, label, header = [], {}, None, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#### "):
                label = line[5:].split(" ")[0]
                if "; default " in line:
                    defaults[label] = line.split("; default ")[1].rstrip(")")
                header = None
            elif label and line.startswith("| model"):
                # A coverage table has a column per method; other tables (the fake-calibrated
                # interval's study) are not read.
                header = [c.strip() for c in line.strip("|").split("|")]
                header = header if set(METHODS) <= set(header) else None
            elif label and header and line.startswith("| ") and not line.startswith("|---"):
                cells = dict(zip(header, (c.strip() for c in line.strip("|").split("|"))))
                coverage = {m: float(cells[m].split(" ")[0]) for m in METHODS
                            if cells[m] != "-"}
                out.append((label, cells["model"], int(cells["K"]), int(cells["n"]), coverage))
            elif not line.startswith("|"):
                header = None if line.startswith("#") else header
    return out, defaults


def caveats(path):
    """[(label, method, K region, n region, coverage, setting)]: the regions whose lowest
    default coverage (two decimals, as printed) is below NOMINAL - 0.05, by label in the doc's
    order, then K and n region; on ties the first setting in the doc's order."""
    settings, defaults = doc_tables(path)
    lowest, labels = {}, []
    for label, model, K, n, coverage in settings:
        if label not in labels:
            labels.append(label)
        c = coverage.get(defaults[label])
        if c is None:
            continue
        region = (label, class_region(K), size_region(n))
        if region not in lowest or c < lowest[region][0]:
            lowest[region] = (c, f"{model}, K = {K}, n = {n}")
    out = []
    for label in labels:
        for K in ["2", "3-10", ">10"]:
            for n in ["<500", "500-4999", ">=5000"]:
                found = lowest.get((label, K, n))
                if found and found[0] < NOMINAL - 0.05 - 1e-9:
                    out.append((label, defaults[label], K, n, found[0], found[1]))
    return out


CPP_CLASSES = {"2": "two", "3-10": "three_to_ten", ">10": "over_ten"}
CPP_SIZES = {"<500": "below_500", "500-4999": "below_5000", ">=5000": "from_5000"}


def main(argv):
    if argv and argv[0] == "--realistic":
        table, order, defaults = realistic(argv[1])
        print_tables(table, order, defaults)
    elif argv and argv[0] == "--caveats":
        cpp = argv[1] == "--cpp"
        found = caveats(argv[2] if cpp else argv[1])
        if cpp:
            for label, method, K, n, c, setting in found:
                print(f'    CoverageMiss{{"{label}", M::{method}, {CPP_CLASSES[K]}, '
                      f'{CPP_SIZES[n]}, {c:.2f}, "{setting}"}},')
        else:
            print("| estimator | default | K | n | lowest coverage | where |")
            print("|---|---|---|---|---:|---|")
            for label, method, K, n, c, setting in found:
                print(f"| {label} | {method} | {K} | {n} | {c:.2f} | {setting} |")
    else:
        table, order = parametric(argv)
        print_tables(table, order, None)


if __name__ == "__main__":
    main(sys.argv[1:])
