#!/usr/bin/env python3
"""Runs scripts/plan-coverage.py (docs/plan.md, "Measured on fakes of real models") and checks
its figures.

    plan_coverage.py small   # ctest plan_coverage.small: gb_k2, default, normal and percentile
                             # intervals, 20 replicates; a refusal's advice
    plan_coverage.py docs    # ctest plan_coverage.docs: docs/plan.md publishes each golden
                             # run's table.md (tests/golden/plan_coverage/RUN), and its cells
                             # hold issue #36's bar
    plan_coverage.py full    # ctest slow.plan_coverage: reruns every golden run's command (RUNS)
                             # and compares every cell

Checked: one row per (model, method); every coverage's SE is the binomial SE of its replicates;
an answer is refused exactly when the plan's own coverage is below 0.85 (nominal 0.90 - 0.05);
and, in the golden runs, no answer that plan gives (not refused) has an independently measured
coverage (1,000 check replicates, SE about 0.011) below 0.85: issue #36's bar.
"""

import json
import math
import os
import sys
import tempfile

from study_checks import check_docs_table, failing, read_csv, run_study

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")  # the repository
SCRIPT = os.path.join(ROOT, "scripts", "plan-coverage.py")
GOLDEN = os.path.join(ROOT, "tests", "golden", "plan_coverage")
MODELS = ["gb_k2", "rf_k2", "nb_k2", "cancer_lr_k2", "mlp_k3"]
METHODS = ["default", "normal", "percentile", "basic", "bca", "consistency"]
BAR = 0.85
# The golden runs (tests/golden/plan_coverage/RUN) and the arguments that made each: 200 plan
# replicates, and README's audit's 50; both checked with 1,000 replicates.
RUNS = {
    "replicates200": ["--replicates", "200", "--check-replicates", "1000"],
    "replicates50": ["--replicates", "50", "--check-replicates", "1000"],
}

fail = failing("plan_coverage")


def option(arguments, name):
    return int(dict(zip(arguments[::2], arguments[1::2]))[name])


def check(cells, models, methods, replicates, check_replicates, bar_holds):
    keys = [(c["model"], c["method"]) for c in cells]
    if keys != [(m, k) for m in models for k in methods]:
        fail(f"cells: not one per (model, method) in order: {keys[:4]} ...")
    for c in cells:
        for column, count in (("plan", replicates), ("run", check_replicates)):
            coverage = float(c[f"{column}_coverage"])
            se = math.sqrt(coverage * (1 - coverage) / count)
            if not 0 <= coverage <= 1 or abs(float(c[f"{column}_se"]) - se) > 6e-4:
                fail(f"{column} coverage's SE is not the binomial SE of {count}: {c}")
            # A coverage is a count over the replicates (to the printed 3 decimals).
            if abs(coverage * count - round(coverage * count)) > 5e-4 * count:
                fail(f"{column} coverage is not a fraction of {count} replicates: {c}")
        if (c["status"] == "refused") != (float(c["plan_coverage"]) < BAR):
            fail(f"refused is not 'plan coverage below {BAR}': {c}")
        if c["method"] == "default" and c["interval"] != "bias_corrected":
            fail(f"the 15-bin ECE's default interval is bias_corrected, not {c['interval']}")
        if not int(c["n"]) >= 100 or not float(c["width"]) > 0:
            fail(f"an n below n_min or a width that is not positive: {c}")
        if bar_holds and c["status"] != "refused":
            if float(c["run_coverage"]) < BAR:
                fail(f"an answer whose independently measured coverage is below {BAR}: {c}")


def run(out, arguments):
    return run_study(SCRIPT, out, arguments, fail)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "small"
    if mode == "docs":
        for name, arguments in RUNS.items():
            golden = os.path.join(GOLDEN, name)
            check_docs_table("plan_coverage", golden, os.path.join(ROOT, "docs", "plan.md"))
            check(read_csv(os.path.join(golden, "cells.csv")), MODELS, METHODS,
                  option(arguments, "--replicates"), option(arguments, "--check-replicates"),
                  bar_holds=True)
        print("plan_coverage.docs: every answer's independent coverage is at least", BAR)
        return
    with tempfile.TemporaryDirectory() as out:
        if mode == "small":
            cells = run(out, ["--small"])
            # 20 replicates: too few for the bar, the machinery only.
            check(cells, ["gb_k2"], ["default", "normal", "percentile"], 20, 20, bar_holds=False)
            # A refused normal interval is sent to the default interval; a refused interval
            # method (the default, or one named) is not sent back to "default".
            for c in cells:
                if c["status"] != "refused":
                    continue
                with open(os.path.join(out, "work", f"gb_k2_{c['method']}.result.json")) as f:
                    reason = json.load(f)["answer"]["reason"]
                if ('"interval": "default"' in reason) != (c["method"] == "normal"):
                    fail(f"the refusal of {c['method']} gives the wrong advice: {reason}")
            if not any(c["status"] == "refused" and c["method"] == "percentile" for c in cells):
                fail("gb_k2's percentile interval (coverage about 0.01) is not refused")
            print(f"plan_coverage.small: {len(cells)} cells")
            return
        for name, arguments in RUNS.items():
            cells = run(os.path.join(out, name), arguments)
            if cells != read_csv(os.path.join(GOLDEN, name, "cells.csv")):
                fail(f"the rerun differs from tests/golden/plan_coverage/{name}")
        print("plan_coverage.full: every golden run reproduced")


if __name__ == "__main__":
    main()
