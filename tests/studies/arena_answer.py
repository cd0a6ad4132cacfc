#!/usr/bin/env python3
"""The arena's answer (scripts/arena-answer.py, docs/arena.md "The answer"):

    arena_answer.py pooling  # ctest arena_answer.pooling (seconds): on a tiny run of three
                             # generators x two fit sizes, the script's pooling of the cells'
                             # boards is the run's own pooled board (scope all) for every key and
                             # method, and its agreements are the run's (tau-b of the boards, mean
                             # tau-b per case, same winner)
    arena_answer.py tables   # ctest arena_answer.tables (seconds): the answer recomputed from the
                             # shipped cells (configs/arena/corpus/answer_cells.csv.gz) is the
                             # text docs/arena.md holds between its arena-answer markers, byte for
                             # byte: every figure and sentence of the answer
    arena_answer.py rerun [CONFIG ...]
                             # ctest slow.arena_answer.rerun: the corpus configs run again
                             # (default: all seven, about 2,100 CPU seconds) give the shipped cells'
                             # rows of those configs byte for byte
"""

import gzip
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from study_checks import failing, three_shapes_k2

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
ARENA = os.path.join(ROOT, "configs", "arena")
SHIPPED = os.path.join(ARENA, "corpus", "answer_cells.csv.gz")
DOC = os.path.join(ROOT, "docs", "arena.md")
BEGIN, END = "<!-- arena-answer: begin -->\n", "<!-- arena-answer: end -->\n"
CALBENCH = os.environ.get("CALBENCH_BIN", os.path.join(ROOT, "build", "release", "calbench"))
fail = failing("arena_answer")


def script():
    spec = importlib.util.spec_from_file_location(
        "arena_answer", os.path.join(ROOT, "scripts", "arena-answer.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(config_path, out):
    done = subprocess.run([CALBENCH, "run", config_path, "--out", out, "--threads", "2",
                           "--quiet", "--no-report"], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"calbench run {config_path}: {done.stderr}")


def pooling():
    module = script()
    fake, generators = three_shapes_k2(os.path.join(ARENA, "corpus"))
    with tempfile.TemporaryDirectory() as work:
        config = {"name": "arena_answer_pooling", "scenario": "recalibration", "seed": 41,
                  "replicates": 3, "fit_size": 300, "test_size": 300, "truth_samples": 5000,
                  "generator": fake,
                  "methods": [{"name": "temperature"}, {"name": "isotonic"}, {"name": "sms"},
                              {"name": "histogram_binning"}],
                  "estimators": [{"name": "ece", "bins": 15}, {"name": "brier"}],
                  "leaderboard": {"block": "generator"},
                  "sweep": {"generator": generators, "fit_size": [300, 500]}}
        path = os.path.join(work, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        out = os.path.join(work, "run")
        run(path, out)
        cells = os.path.join(work, "cells.csv")
        module.extract([out], cells)
        board, agree = module.load(cells)
        arena = module.Arena(board, agree)
        if len(arena.cells) != 6 or len(arena.generators) != 3:
            fail(f"{len(arena.cells)} cells of {len(arena.generators)} generators, 6 of 3 wanted")
        ones = np.ones((1, len(arena.generators)))
        boards = arena.boards(ones)[0]
        pooled = pd.read_csv(os.path.join(out, "leaderboard.csv"))
        pooled = pooled[pooled["scope"] == "all"]
        checked = 0
        for (kind, key), rows in pooled.groupby(["kind", "key"]):
            mine = dict(zip(arena.methods, boards[arena.key(kind, key)]))
            for r in rows.itertuples():
                if abs(mine[r.method] - r.win_rate) > 1e-9:
                    fail(f"{kind} {key} {r.method}: win rate {mine[r.method]} pooled from the "
                         f"cells, {r.win_rate} in the run's pooled board")
                checked += 1
        agreement = pd.read_csv(os.path.join(out, "leaderboard_agreement.csv"))
        agreement = agreement[agreement["scope"] == "all"]
        values = arena.agreement(ones)[0]
        for r in agreement.itertuples():
            mine = values[arena.pairs.index((r.estimator, r.truth))]
            for value, theirs, what in zip(mine, (r.tau_b, r.case_tau_b, r.winner_agreement),
                                           ("tau-b", "mean tau-b per case", "same winner")):
                if abs(value - theirs) > 1e-9:
                    fail(f"{r.estimator} against {r.truth}: {what} {value} pooled from the "
                         f"cells, {theirs} in the run's agreement")
        # The vectorised tau-b against scipy's on every pair of the run's boards.
        for i in range(len(arena.keys)):
            for j in range(len(arena.keys)):
                mine = module.tau_b(boards[None, i], boards[None, j])[0]
                theirs = kendalltau(boards[i], boards[j]).statistic
                if abs(mine - theirs) > 1e-12:
                    fail(f"tau-b of {arena.keys[i]} and {arena.keys[j]}: {mine}, scipy {theirs}")
    print(f"arena-answer.py: {checked} pooled win rates and {3 * len(agreement)} agreements "
          f"are the run's own")


class Answer:
    """The answer's tables (arena-answer.py's CSV files) and the questions the docs' sentences ask
    of them."""

    def __init__(self, folder):
        self.t = {name: pd.read_csv(os.path.join(folder, name + ".csv"))
                  for name in ("agreement", "contrast", "board", "boards_agree", "flattered",
                               "family_contrast")}

    def _one(self, name, **where):
        f = self.t[name]
        for column, value in where.items():
            f = f[f[column] == value]
        if len(f) != 1:
            fail(f"{name}: {len(f)} rows for {where}")
        return f.iloc[0]

    def leader(self, arena, truth):
        f = self.t["agreement"]
        f = f[(f["arena"] == arena) & (f["truth"] == truth)]
        return f.sort_values("tau_b", ascending=False, kind="stable").iloc[0]["estimator"]

    def tau(self, arena, truth, estimator):
        return self._one("agreement", arena=arena, truth=truth, estimator=estimator)

    def ahead(self, arena, truth, estimator, other):
        """estimator tracks truth better than other: the paired interval excludes 0."""
        return self._one("contrast", arena=arena, truth=truth, estimator=estimator,
                         other=other)["tau_b_difference_lower"] > 0

    def tied(self, arena, truth, a, b):
        return not self.ahead(arena, truth, a, b) and not self.ahead(arena, truth, b, a)

    def boards(self, arena, a, b):
        f = self.t["boards_agree"]
        for (ka, kb) in ((a, b), (b, a)):
            r = f[(f["arena"] == arena) & (f["kind_a"] == ka[0]) & (f["key_a"] == ka[1]) &
                  (f["kind_b"] == kb[0]) & (f["key_b"] == kb[1])]
            if len(r) == 1:
                return r.iloc[0]
        fail(f"no board agreement {arena} {a} {b}")

    def rank(self, arena, kind, key, method):
        return self._one("board", arena=arena, kind=kind, key=key, method=method)["rank"]

    def flattered(self, arena, method):
        return self._one("flattered", arena=arena, method=method)[
            "win_rate_difference_lower"] > 0

    def family(self, arena, truth, subset, family):
        return self._one("family_contrast", arena=arena, truth=truth, subset=subset,
                         family=family)


# Each sentence of docs/arena.md's "What the corpus says", by a phrase only it holds, and what
# must be true of the tables for it to stand.
CALIBRATION_ESTIMATORS = ["ece_ew15", "kuiper_calibration", "smooth_ece"]
BINARY_ESTIMATORS = CALIBRATION_ESTIMATORS + ["brier", "nll", "probmetrics_ece_15",
                                              "kuiper_calibration_binary"]
BINNING = ["subsample_10000(bbq)", "histogram_binning_em10"]
SPLINE, LINEAR = "spline in the logit", "logit-linear"


def claims(a):
    top, cw = "ece_top_l1", "classwise_ece_l1"
    return [
        ("At K = 2 no test-set metric tracks the true top-label ECE board well",
         a.leader("binary", top) == "ece_ew15" and a.tau("binary", top, "ece_ew15").tau_b < 0.6
         and all(a.tied("binary", top, "ece_ew15", o) for o in ("brier", "nll", "smooth_ece"))),
        ("The five-generator study's reading that the Brier score tracks",
         a.tied("binary", top, "brier", "ece_ew15")),
        ("The scope decides",
         a.leader("binary", top) == "ece_ew15" and a.leader("binary", cw) == "probmetrics_ece_15"
         and a.ahead("binary", top, "ece_ew15", "probmetrics_ece_15")
         and a.ahead("binary", cw, "probmetrics_ece_15", "ece_ew15")),
        ("A metric should be chosen for the quantity it is to rank",
         all(a.leader(arena, "brier") == "brier" and
             a.tau(arena, "brier", "brier").tau_b >= 0.95 and
             all(a.ahead(arena, "brier", "brier", e) for e in CALIBRATION_ESTIMATORS)
             for arena in ("binary", "multiclass"))
         and all(a.ahead("binary", "brier", "brier", e)
                 for e in ("probmetrics_ece_15", "kuiper_calibration_binary"))),
        ("At K ≥ 3 the three top-label calibration-error estimators",
         all(a.ahead("multiclass", top, e, o) for e in CALIBRATION_ESTIMATORS
             for o in ("brier", "nll"))
         and all(a.tied("multiclass", top, e, o) for e in CALIBRATION_ESTIMATORS
                 for o in CALIBRATION_ESTIMATORS if e < o)),
        ("Against the true classwise ECE at K ≥ 3 no top-label estimator",
         a.leader("multiclass", cw) == "brier"),
        ("Within a case the test-set ranking is a weak guide",
         (a.t["agreement"][a.t["agreement"]["truth"].isin([top, cw])]["winner_agreement"]
          <= 0.30).all()),
        ("The binning methods' lead by the test-set ECE does not survive the truth",
         all(a.flattered(arena, m) for arena in ("binary", "multiclass") for m in BINNING)
         and all(a.rank(arena, "estimate", "ece_ew15", BINNING[0]) == 1 and
                 a.rank(arena, "truth", top, BINNING[0]) > 5
                 for arena in ("binary", "multiclass"))),
        ("CalArena's Kuiper–Brier agreement is not reproduced",
         a.boards("binary", ("estimate", "kuiper_calibration_binary"),
                  ("estimate", "brier")).tau_b_upper < 0.75
         and a.boards("binary", ("truth", cw), ("truth", "brier")).tau_b_upper < 0.75),
        ("The 15-bin ECE and Brier boards do not run opposite here",
         a.boards("binary", ("estimate", "ece_ew15"), ("estimate", "brier")).tau_b_lower
         > -0.07),
        ("The generator's shape favours its own methods",
         all(a.family(arena, truth, "all", LINEAR).leader == SPLINE
             for arena in ("binary", "multiclass") for truth in (top, cw))
         and all((a.family(arena, truth, "without " + SPLINE, LINEAR).difference_lower > 0)
                 == (arena == "multiclass" and truth == cw)
                 for arena in ("binary", "multiclass") for truth in (top, cw))),
    ]


def tables():
    with open(DOC) as f:
        doc = f.read()
    if doc.count(BEGIN) != 1 or doc.count(END) != 1:
        fail(f"docs/arena.md must hold one {BEGIN.strip()} ... {END.strip()} block")
    held = doc[doc.index(BEGIN) + len(BEGIN):doc.index(END)]
    with tempfile.TemporaryDirectory() as work:
        done = subprocess.run([sys.executable, "-B", os.path.join(ROOT, "scripts",
                                                                  "arena-answer.py"),
                               "answer", SHIPPED, "--out", work],
                              capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            fail(f"arena-answer.py answer exited {done.returncode}: {done.stderr}")
        with open(os.path.join(work, "answer.md")) as f:
            text = f.read()
        answer = Answer(work)
        checks = claims(answer)
    # "The study" counts the generators and cells the answer pools.
    counts = answer.t["board"].drop_duplicates("arena").set_index("arena")
    flat = " ".join(doc.split())
    for said in (f"{counts.loc['binary', 'generators']} generators are binary, "
                 f"{counts.loc['multiclass', 'generators']} multiclass",
                 f"{counts.loc['binary', 'cells']} binary and "
                 f"{counts.loc['multiclass', 'cells']} multiclass cells"):
        if said not in flat:
            fail(f"docs/arena.md's \"The study\" does not say \"{said}\"")
    section = doc[doc.index("**What the corpus says**"):]
    section = section[:section.index("\n\n", section.index("\n- "))]
    sentences = [line for line in section.splitlines() if line.startswith("- ")]
    if len(sentences) != len(checks):
        fail(f"docs/arena.md's \"What the corpus says\" has {len(sentences)} sentences, "
             f"{len(checks)} checks")
    for (phrase, holds), sentence in zip(checks, sentences):
        if not sentence.startswith("- " + phrase):
            fail(f"the sentence checked as \"{phrase}\" is not in its place: {sentence[:80]}")
        if not holds:
            fail(f"docs/arena.md says \"{phrase} ...\", which the tables do not support")
    if text != held:
        with open("/tmp/arena_answer.md", "w") as f:
            f.write(text)
        fail("docs/arena.md's answer is not what scripts/arena-answer.py computes from the "
             "shipped cells (written to /tmp/arena_answer.md; paste it between the markers)")
    print(f"docs/arena.md's answer: {len(text.splitlines())} lines, recomputed byte for byte; "
          f"{len(checks)} sentences of what it says checked")


def rerun(configs):
    shipped = pd.read_csv(SHIPPED, dtype=str, keep_default_na=False)
    names = configs or sorted(shipped["config"].unique())
    with tempfile.TemporaryDirectory() as work:
        outs = []
        for name in names:
            out = os.path.join(work, name)
            run(os.path.join(ARENA, name + ".json"), out)
            outs.append(out)
        again = os.path.join(work, "cells.csv")
        script().extract(outs, again)
        with open(again) as f:
            lines = f.read().splitlines()
    with gzip.open(SHIPPED, "rt") as f:
        reference = f.read().splitlines()
    header = reference[0]
    wanted = [line for line in reference[1:] if line.split(",")[1] in names]
    got = lines[1:]
    if lines[0] != header or sorted(got) != sorted(wanted):
        missing = set(wanted) - set(got)
        fail(f"the rerun of {', '.join(names)} differs from the shipped cells: "
             f"{len(missing)} of {len(wanted)} shipped rows not reproduced")
    print(f"{', '.join(names)}: {len(got)} rows as shipped")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "tables"
    if mode == "rerun":
        rerun(sys.argv[2:])
    else:
        {"pooling": pooling, "tables": tables}[mode]()
