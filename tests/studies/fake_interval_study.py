#!/usr/bin/env python3
"""Runs scripts/fake-interval-study.py (docs/intervals.md, "Fake-calibrated intervals",
"Measured on real models") and checks its machinery.

    fake_interval_study.py small   # ctest fake_interval_study.small: one network, n = 200,
                                   # 2 replicates per cell
    fake_interval_study.py docs    # ctest fake_interval_study.docs: docs/intervals.md
                                   # publishes each golden run's table.md
                                   # (tests/golden/fake_interval_study/RUN, the runs
                                   # before the join with 0 under before_join/RUN and
                                   # before the hull under pivot/RUN); each current run's
                                   # cells follow from its replicates.csv
                                   # (done_when/: every replicate of the done-when
                                   # table, whose summary.md docs/intervals.md holds)
    fake_interval_study.py full    # ctest slow.fake_interval_study: reruns every golden
                                   # run's command (RUNS, DONE_WHEN: about an hour on
                                   # one core per 2 replicates) and compares every cell

Checked: one row per (model, n, estimator, method) for the seven estimators and the two
methods; every coverage is covered / replicates with its binomial SE; widths are positive; the
table's shares follow from the rows.
"""

import math
import os
import sys
import tempfile

from study_checks import check_docs_table, failing, read_csv, run_study

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")  # the repository
SCRIPT = os.path.join(ROOT, "scripts", "fake-interval-study.py")
GOLDEN = os.path.join(ROOT, "tests", "golden", "fake_interval_study")
ESTIMATORS = ["ece_ew15", "ece_em15", "dece_em15", "smooth_ece", "kde_ece", "cwece_ew15",
              "ace15_nixon"]
# The golden runs (tests/golden/fake_interval_study/RUN) and the arguments that made each.
RUNS = {
    "fmnist_cnn": ["--models", "fmnist_cnn", "--sizes", "200,1000", "--replicates", "10"],
    "fmnist_cnn_ts": ["--models", "fmnist_cnn_ts", "--sizes", "200,1000", "--replicates", "10"],
}
# The done-when run (issue #36; its replicates were written by the current script, so its cells
# follow from them as they are) and its arguments; docs/intervals.md publishes its summary.md.
# --replicates: the complete rounds when the run was stopped (README.md).
DONE_WHEN_MODELS = ("fmnist_cnn,fmnist_cnn_ts,fmnist_mlp,letter_mlp,k100_mlp,gaussian_nb_k10,"
                    "random_forest_k10,logistic_regression_k10,mlp_k10,hist_gradient_boosting_k10")
DONE_WHEN = ["--models", DONE_WHEN_MODELS, "--sizes", "200,1000,5000", "--replicates", "7"]
# The runs kept for docs/intervals.md's comparisons (not reproducible by the current binary):
# before_join/ (the fake interval before its join with 0) and pivot/ (joined, before eval
# reported its hull with the default interval), with more replicates.
KEPT = {
    "fmnist_cnn": ["--models", "fmnist_cnn", "--sizes", "200,1000", "--replicates", "40"],
    "fmnist_cnn_ts": ["--models", "fmnist_cnn_ts", "--sizes", "200,1000", "--replicates", "20"],
}


def shape(arguments):
    """(models, sizes, replicates) of a run's arguments."""
    a = dict(zip(arguments[::2], arguments[1::2]))
    return a["--models"].split(","), [int(n) for n in a["--sizes"].split(",")], \
        int(a["--replicates"])


fail = failing("fake_interval_study")


def check(cells, models, sizes, replicates):
    keys = sorted((c["model"], int(c["n"]), c["estimator"], c["method"]) for c in cells)
    want = sorted((m, n, e, k) for m in models for n in sizes for e in ESTIMATORS
                  for k in ("fake", "default"))
    if keys != want:
        fail(f"cells: not one per (model, n, estimator, method): {keys[:4]} ...")
    for c in cells:
        count, covered = int(c["replicates"]), int(c["covered"])
        if count != replicates:
            fail(f"replicates {count}, expected {replicates}: {c}")
        coverage = covered / count
        if abs(float(c["coverage"]) - round(coverage, 4)) > 1e-9:
            fail(f"coverage is not covered / replicates: {c}")
        if abs(float(c["se"]) - round(math.sqrt(coverage * (1 - coverage) / count), 4)) > 1e-9:
            fail(f"se is not the binomial SE: {c}")
        if not float(c["mean_width"]) > 0:
            fail(f"a width that is not positive: {c}")


def run(out, arguments):
    return run_study(SCRIPT, out, arguments, fail)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "small"
    if mode == "docs":
        for kept, runs in (("", RUNS), ("before_join", KEPT), ("pivot", KEPT)):
            for run_name, arguments in runs.items():
                golden = os.path.join(GOLDEN, kept, run_name)
                check_docs_table("fake_interval_study", golden,
                                 os.path.join(ROOT, "docs", "intervals.md"))
                check(read_csv(os.path.join(golden, "cells.csv")), *shape(arguments))
        # The current runs' cells are their replicates' (made before the hull: the fake rows
        # hold the fake-calibrated interval alone) with each fake interval's hull with the
        # default, as eval reports it. The script needs numpy to start.
        try:
            import numpy  # noqa: F401
        except ImportError:
            print("fake_interval_study.docs: numpy is not installed: the replicates not replayed",
                  file=sys.stderr)
            return
        with tempfile.TemporaryDirectory() as out:
            for run_name, arguments in RUNS.items():
                golden = os.path.join(GOLDEN, run_name)
                cells = run(out, arguments[:2] + ["--hull-from",
                                                  os.path.join(golden, "replicates.csv")])
                if cells != read_csv(os.path.join(golden, "cells.csv")):
                    fail(f"{golden}/cells.csv is not the hull of its replicates.csv")
            golden = os.path.join(GOLDEN, "done_when")
            check(read_csv(os.path.join(golden, "cells.csv")), *shape(DONE_WHEN))
            cells = run(out, DONE_WHEN[:2] + ["--cells-from",
                                              os.path.join(golden, "replicates.csv")])
            if cells != read_csv(os.path.join(golden, "cells.csv")):
                fail(f"{golden}/cells.csv does not follow from its replicates.csv")
            for name in ("table.md", "summary.md"):
                if open(os.path.join(out, name)).read() != \
                        open(os.path.join(golden, name)).read():
                    fail(f"{golden}/{name} does not follow from its replicates.csv")
            summary = open(os.path.join(golden, "summary.md")).read()
            if summary not in open(os.path.join(ROOT, "docs", "intervals.md")).read():
                fail("docs/intervals.md does not hold tests/golden/fake_interval_study/"
                     "done_when/summary.md verbatim")
            print("docs/intervals.md publishes tests/golden/fake_interval_study/done_when/"
                  "summary.md")
        return
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("fake_interval_study: SKIP: numpy is not installed", file=sys.stderr)
        sys.exit(77)
    with tempfile.TemporaryDirectory() as out:
        if mode == "small":
            cells = run(out, ["--small"])
            check(cells, ["fmnist_cnn"], [200], 2)
            print(f"fake_interval_study.small: {len(cells)} cells")
            return
        for run_name, arguments in list(RUNS.items()) + [("done_when", DONE_WHEN)]:
            cells = run(os.path.join(out, run_name), arguments)
            if cells != read_csv(os.path.join(GOLDEN, run_name, "cells.csv")):
                fail(f"the rerun differs from tests/golden/fake_interval_study/{run_name}")
        print("fake_interval_study.full: every golden run reproduced")


if __name__ == "__main__":
    main()
