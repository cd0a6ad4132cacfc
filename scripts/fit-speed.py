#!/usr/bin/env python3
"""How long `calbench fit` takes at issue #23's size: 20,000 rows x K = 10 with the defaults
(the empirical family, the cross-fitted verdict, the predictions beside the bootstrap).

The rows are calbench's own sample (dirichlet, K = `--classes`, alpha 0.3, temperature 0.7:
an overconfident model; calbench.sample, seed 20261126), or with `--network NAME` the first
`--rows` held-out rows of a cached network (tests/data/networks: fmnist_cnn has 65,000 rows at
K = 10, k100_mlp 25,000 at K = 100), written as CSV; `calbench fit` runs on them `--runs` times
and the wall-clock and CPU seconds (user + system of the child) of each run are printed, with
the median, as docs/performance.md quotes them.

    PYTHONPATH=python /usr/bin/python3 scripts/fit-speed.py [--calbench BIN] [--rows 20000]
        [--classes 10 | --network k100_mlp] [--runs 3] [--threads 2] [-- extra fit flags]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import calbench

NETWORKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
                        "networks")


def network_rows(name, rows):
    """The first `rows` held-out rows of a cached network: probabilities (float64) and labels."""
    manifest = json.load(open(os.path.join(NETWORKS, "manifest.json")))
    if name not in manifest:
        sys.exit(f"--network {name}: not in {NETWORKS}/manifest.json ({', '.join(manifest)})")
    directory = os.path.join(NETWORKS, manifest[name]["dataset"])
    logits = np.load(os.path.join(directory, f"{name}.npy")).astype(np.float64)[:rows]
    labels = np.load(os.path.join(directory, "labels.npy")).astype(np.int64)[:rows]
    if len(labels) < rows:
        sys.exit(f"--network {name}: {len(labels)} rows, fewer than --rows {rows}")
    p = np.exp(logits - logits.max(1, keepdims=True))
    return p / p.sum(1, keepdims=True), labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "calbench"))
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--network", default="",
                        help="a cached network's rows (tests/data/networks) instead of a sample")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="extra flags for calbench fit (after --)")
    args = parser.parse_args()
    generator = {"family": "dirichlet", "classes": args.classes, "alpha": 0.3,
                 "miscalibration": {"map": "temperature", "temperature": 0.7}}
    if args.network:
        p, y = network_rows(args.network, args.rows)
    else:
        p, y = calbench.sample(generator, args.rows, seed=20261126)
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "model.csv")
        with open(path, "w") as f:
            for label, row in zip(y, p):
                f.write(str(int(label)) + "," + ",".join(repr(float(v)) for v in row) + "\n")
        command = [args.calbench, "fit", path, "--threads", str(args.threads)] + args.extra
        for run in range(args.runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True)
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode not in (0, 3):
                sys.exit(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            walls.append(wall)
            cpus.append(cpu)
            verdict = next((line for line in done.stdout.splitlines()
                            if line.startswith("verdict:")), "")
            print(f"run {run + 1}: {wall:.1f} s wall, {cpu:.1f} s CPU ({verdict})")
    print(f"median of {args.runs}: {statistics.median(walls):.1f} s wall, "
          f"{statistics.median(cpus):.1f} s CPU; {args.rows} rows x K = {p.shape[1]}"
          f"{' (' + args.network + ')' if args.network else ''}, "
          f"--threads {args.threads}")


if __name__ == "__main__":
    main()
