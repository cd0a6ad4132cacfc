#!/usr/bin/env python3
"""How long `calbench fit` takes at issue #23's size: 20,000 rows x K = 10 with the defaults
(the empirical family, the cross-fitted verdict, the predictions beside the bootstrap).

The rows are calbench's own sample (dirichlet, K = 10, alpha 0.3, temperature 0.7: an
overconfident model; calbench.sample, seed 20261126), written as CSV; `calbench fit` runs on
them `--runs` times and the wall-clock and CPU seconds (user + system of the child) of each run
are printed, with the median, as docs/performance.md quotes them.

    PYTHONPATH=python /usr/bin/python3 scripts/fit-speed.py [--calbench BIN] [--rows 20000]
        [--classes 10] [--runs 3] [--threads 2] [-- extra fit flags]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import calbench


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "calbench"))
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="extra flags for calbench fit (after --)")
    args = parser.parse_args()
    generator = {"family": "dirichlet", "classes": args.classes, "alpha": 0.3,
                 "miscalibration": {"map": "temperature", "temperature": 0.7}}
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
          f"{statistics.median(cpus):.1f} s CPU; {args.rows} rows x K = {args.classes}, "
          f"--threads {args.threads}")


if __name__ == "__main__":
    main()
