#!/usr/bin/env python3
"""The arena's answer from the corpus study (docs/arena.md, "The answer"): the runs' boards
pooled over configs, with intervals that resample generators (models), not cells.

    /usr/bin/python3 scripts/arena-answer.py extract RESULTS [RESULTS ...] --out FILE
    /usr/bin/python3 scripts/arena-answer.py answer FILE [--out DIR] [--resamples 2000]

`extract` reads finished runs of configs/arena/corpus_*.json (their leaderboard.csv and
leaderboard_agreement.csv) and keeps what the answer needs: every cell's own board
(`scope` = `cell`: each method's win rate and mean per ranking key) and every cell's agreement
rows, with the generator named as in configs/arena/corpus/provenance.csv. The file is shipped
(configs/arena/corpus/answer_cells.csv.gz); `answer` needs nothing else, so the tables of the
docs are rebuilt from it in seconds (ctest arena_answer.tables) and the file itself from a rerun
of the study (ctest slow.arena_answer.rerun).

`answer` pools the cells of each arena (binary: K = 2; multiclass: K >= 3) and writes:
- board.csv: per (arena, kind, key, method) the pooled win rate with its interval, and its rank;
- agreement.csv: per (arena, estimator, truth) Kendall's tau-b between the pooled boards' win
  rates, the cases-weighted mean tau-b within a case and the share of cases whose test-set
  winner is the true winner, each with its interval;
- contrast.csv: per (arena, truth, estimator, other) the paired difference of those three;
- boards_agree.csv: tau-b between two pooled boards (e.g. test-set Kuiper and Brier);
- generators.csv: per (arena, truth, estimator, other) how many generators' own boards favour
  the estimator (its tau-b with the truth above the other's), the per-model breakdown;
- flattered.csv: per (arena, method) its win rate by the test-set 15-bin ECE minus by the true
  top-label ECE (paired);
- families.csv, family_contrast.csv: the leave-method-family-out check: each method family's
  mean win rate on the true calibration boards over all generators and over the generators of
  other shapes than a family's own, and the leading family against each other (paired);
- answer.md: the text docs/arena.md holds between its arena-answer markers.

Why pooling the cells' boards is exact: CalArena's win rate is a mean over cases of the share of
other methods a method beats, the within-case tau-b a mean over the cases where it is defined,
the winner agreement a mean over cases; so the pooled board over any set of cells is the
cases-weighted mean of the cells' boards (the leave-family-out script uses the same identity;
ctest arena_answer.pooling checks it against a run's own pooled board). Tau-b between pooled
boards is not a mean: it is computed from the pooled win rates.

Intervals: a generator is the independent unit (one model; its fit sizes are not independent
draws), so a resample draws the arena's generators with replacement, each bringing all its
cells and cases; 95 % percentile intervals over `--resamples` resamples (numpy's PCG64, seed
20261203). A shape generator (configs/arena/corpus: shape_*) is its own unit beside the fake
of the model whose accuracy and ECE it was matched to: its calibration function is another.
"""
import argparse
import glob
import importlib.util
import json
import os
import sys

import numpy as np
import pandas as pd

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CORPUS = os.path.join(ROOT, "configs", "arena", "corpus")
SEED = 20261203
LEVEL = 0.95

# The ranking keys the answer reads (kind, key), and the test-set estimators it compares.
ESTIMATORS = ["ece_ew15", "kuiper_calibration", "smooth_ece", "brier", "nll",
              "probmetrics_ece_15", "kuiper_calibration_binary"]
TRUTHS = ["ece_top_l1", "classwise_ece_l1", "brier", "nll", "accuracy"]


def generator_names():
    """Canonical generator JSON -> corpus name, for the generators without a rows file."""
    names = {}
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.json"))):
        with open(path) as f:
            names[json.dumps(json.load(f)["generator"], sort_keys=True)] = \
                os.path.basename(path)[:-len(".json")]
    return names


def name_of(generator_json, names):
    g = json.loads(generator_json)
    if g["family"] == "empirical":  # the rows file is the model's name
        return os.path.basename(g["rows"])[:-len(".rows.npy")]
    # A generator of no corpus file (a test's own run) is named by its JSON.
    return names.get(json.dumps(g, sort_keys=True), generator_json)


# The columns of the extract: a cell's, then a board row's and an agreement row's.
CELL = ["config", "cell", "generator", "classes", "fit_size", "cases"]
BOARD = ["kind", "key", "method", "mean", "win_rate", "failed"]
AGREEMENT = ["estimator", "truth", "tau_b", "case_tau_b", "tau_cases", "winner_agreement"]


def extract(results, out):
    names = generator_names()
    boards, agreements = [], []
    for run in results:
        with open(os.path.join(run, "config.resolved.json")) as f:
            config = json.load(f)["name"]
        board = pd.read_csv(os.path.join(run, "leaderboard.csv"))
        board = board[board["scope"] == "cell"]
        agree = pd.read_csv(os.path.join(run, "leaderboard_agreement.csv"))
        agree = agree[agree["scope"] == "cell"]
        for frame in (board, agree):
            frame.insert(0, "config", config)
            frame["classes"] = [json.loads(g).get("classes", 2) for g in frame["generator"]]
            frame["generator"] = [name_of(g, names) for g in frame["generator"]]
        board.insert(0, "record", "board")
        agree.insert(0, "record", "agreement")
        boards.append(board[["record"] + CELL + BOARD])
        agreements.append(agree[["record"] + CELL + AGREEMENT])
    # One long file: rows of record "board" (a cell's board: its columns CELL + BOARD) and
    # "agreement" (a cell's agreement of an estimator with a truth: CELL + AGREEMENT); a row
    # leaves the other record's columns empty.
    b, a = pd.concat(boards), pd.concat(agreements)
    frame = pd.concat([b, a])[["record"] + CELL + BOARD + AGREEMENT]
    frame.to_csv(out, index=False, float_format="%.10g",
                 compression={"method": "gzip", "mtime": 0} if out.endswith(".gz") else None)
    print(f"arena-answer: {len(b)} board and {len(a)} agreement rows of "
          f"{frame[['config', 'cell']].drop_duplicates().shape[0]} cells written to {out}")


def load(path):
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""], low_memory=False)
    board = frame[frame["record"] == "board"][CELL + BOARD].copy()
    agree = frame[frame["record"] == "agreement"][CELL + AGREEMENT].copy()
    for f in (board, agree):
        f["arena"] = np.where(f["classes"] == 2, "binary", "multiclass")
        f["cell_id"] = f["config"] + ":" + f["cell"].astype(int).astype(str)
    return board, agree


class Arena:
    """One arena's cells as arrays, pooled under many generator resamples at once: `counts` is
    an R x G matrix, row r giving how often resample r draws each generator."""

    def __init__(self, board, agree):
        self.cells = sorted(board["cell_id"].unique())
        index = {c: i for i, c in enumerate(self.cells)}
        first = board.drop_duplicates("cell_id").set_index("cell_id").loc[self.cells]
        self.generators = sorted(first["generator"].unique())
        self.cell_generator = np.array([self.generators.index(g) for g in first["generator"]])
        self.cases = first["cases"].to_numpy(float)
        self.methods = sorted(board["method"].unique())
        self.keys = list(dict.fromkeys(zip(board["kind"], board["key"])))
        # keys x cells x methods win rates.
        self.rates = np.full((len(self.keys), len(self.cells), len(self.methods)), np.nan)
        for k, ((kind, key), rows) in enumerate(board.groupby(["kind", "key"], sort=False)):
            assert (kind, key) == self.keys[k]
            self.rates[k, [index[c] for c in rows["cell_id"]],
                       [self.methods.index(x) for x in rows["method"]]] = rows["win_rate"]
        if np.isnan(self.rates).any():
            sys.exit("arena-answer: a board misses a (cell, method)")
        # (estimator, truth) -> row of the per-case means: mean tau-b per case (weighted by the
        # cases where it is defined), tau cases, winner agreement.
        self.pairs = list(dict.fromkeys(zip(agree["estimator"], agree["truth"])))
        self.case_tau = np.zeros((len(self.pairs), len(self.cells)))
        self.tau_cases = np.zeros_like(self.case_tau)
        self.winner = np.zeros_like(self.case_tau)
        for p, ((est, truth), rows) in enumerate(agree.groupby(["estimator", "truth"],
                                                               sort=False)):
            assert (est, truth) == self.pairs[p]
            order = [index[c] for c in rows["cell_id"]]
            self.case_tau[p, order] = np.nan_to_num(rows["case_tau_b"].to_numpy(float))
            self.tau_cases[p, order] = rows["tau_cases"].to_numpy(float)
            self.winner[p, order] = rows["winner_agreement"].to_numpy(float)

    def key(self, kind, key):
        return self.keys.index((kind, key))

    def has(self, kind, key):
        return (kind, key) in self.keys

    def boards(self, counts):
        """R x keys x methods: every pooled board under each resample."""
        w = counts[:, self.cell_generator] * self.cases
        return np.einsum("rc,kcm->rkm", w, self.rates) / w.sum(axis=1)[:, None, None]

    def case_means(self, counts):
        """R x pairs x 2: the mean tau-b per case and the share of same winners."""
        w = counts[:, self.cell_generator]
        tau = (w @ (self.tau_cases * self.case_tau).T) / (w @ self.tau_cases.T)
        same = ((w * self.cases) @ self.winner.T) / (w @ self.cases)[:, None]
        return np.stack([tau, same], axis=2)

    def agreement(self, counts, boards=None):
        """R x pairs x 3: tau-b of the pooled boards, mean tau-b per case, same winner."""
        boards = self.boards(counts) if boards is None else boards
        tau = np.stack([tau_b(boards[:, self.key("estimate", e)],
                              boards[:, self.key("truth", t)]) for e, t in self.pairs], axis=1)
        return np.concatenate([tau[:, :, None], self.case_means(counts)], axis=2)


def tau_b(x, y):
    """Kendall's tau-b between the rows of x and of y (R x M each), vectorised over rows: with
    s the signs of all pairwise differences, sum(s_x s_y) / sqrt(sum s_x^2 sum s_y^2), which is
    (P - Q) / sqrt((n0 - n1)(n0 - n2)) (scipy.stats.kendalltau's default variant; checked
    against it by ctest arena_answer.pooling)."""
    i, j = np.triu_indices(x.shape[1], 1)
    sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    return (sx * sy).sum(axis=1) / np.sqrt((sx * sx).sum(axis=1) * (sy * sy).sum(axis=1))


# The leave-method-family-out check's vocabulary (scripts/arena-family-out.py): a generator's
# shape from its config block, a method's family from its name. OWN_SHAPES: the generator shapes
# whose calibration function is the model a family fits (docs/arena.md, "Shapes").
_spec = importlib.util.spec_from_file_location(
    "family_out", os.path.join(ROOT, "scripts", "arena-family-out.py"))
family_out = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(family_out)
OWN_SHAPES = {"spline in the logit": ("spline in the logit",),
              "binning / isotonic": ("step",),
              "logit-linear": ("temperature", "log-linear", "beta curve"),
              "probability space": ("affine",)}


def generator_shape(name):
    """The shape of a corpus generator (by its file) or of a generator named by its JSON."""
    path = os.path.join(CORPUS, name + ".json")
    if os.path.exists(path):
        with open(path) as f:
            return family_out.shape(json.load(f)["generator"])
    return family_out.shape(json.loads(name))


def spread(name, value, lower, upper):
    """A value and its interval as the columns NAME, NAME_lower, NAME_upper."""
    return {name: value, name + "_lower": lower, name + "_upper": upper}


def agreement_spread(suffix, values, lower, upper):
    """The three agreements of two boards (tau-b, mean tau-b per case, same winner), each with
    its interval; `suffix` names a difference of them ("_difference")."""
    out = {}
    for i, name in enumerate(("tau_b", "case_tau_b", "winner_agreement")):
        out.update(spread(name + suffix, values[i], lower[i], upper[i]))
    return out


def interval(values):
    a = (1 - LEVEL) / 2
    return np.quantile(values, a, axis=0), np.quantile(values, 1 - a, axis=0)


def answer(path, out, resamples):
    board, agree = load(path)
    os.makedirs(out, exist_ok=True)
    tables = {name: [] for name in ("board", "agreement", "contrast", "boards_agree",
                                    "generators", "families", "family_contrast",
                                    "flattered")}
    for arena_name in ("binary", "multiclass"):
        if not (board["arena"] == arena_name).any():
            continue
        arena = Arena(board[board["arena"] == arena_name], agree[agree["arena"] == arena_name])
        G = len(arena.generators)
        rng = np.random.Generator(np.random.PCG64(SEED))
        draws = np.array([np.bincount(rng.integers(0, G, G), minlength=G)
                          for _ in range(resamples)], dtype=float)
        ones = np.ones((1, G))
        point_boards, boot_boards = arena.boards(ones), arena.boards(draws)
        # Boards.
        for k, (kind, key) in enumerate(arena.keys):
            point = point_boards[0, k]
            lo, hi = interval(boot_boards[:, k])
            ranks = (-point).argsort(kind="stable").argsort() + 1
            for m, method in enumerate(arena.methods):
                tables["board"].append({"arena": arena_name, "kind": kind, "key": key,
                                        "method": method, "rank": ranks[m],
                                        **spread("win_rate", point[m], lo[m], hi[m]),
                                        "cells": len(arena.cells), "generators": G})
        # Each method's win rate by the test-set 15-bin ECE minus by the true top-label ECE
        # (paired: a method the estimator flatters has a difference above 0).
        if arena.has("estimate", "ece_ew15"):
            test, truth = arena.key("estimate", "ece_ew15"), arena.key("truth", "ece_top_l1")
            gap = point_boards[0, test] - point_boards[0, truth]
            glo, ghi = interval(boot_boards[:, test] - boot_boards[:, truth])
            for m, method in enumerate(arena.methods):
                tables["flattered"].append({"arena": arena_name, "method": method,
                                            **spread("win_rate_difference", gap[m], glo[m],
                                                     ghi[m]),
                                            "generators": G})
        # Agreement of each estimator with each truth, paired contrasts, and per model.
        point = arena.agreement(ones, point_boards)[0]
        boot = arena.agreement(draws, boot_boards)
        alone = arena.agreement(np.eye(G))[:, :, 0]  # each generator's own tau-b
        lo, hi = interval(boot)
        cases = int(arena.cases.sum())
        where = {pair: p for p, pair in enumerate(arena.pairs)}
        truths = [t for t in TRUTHS if arena.has("truth", t)]
        ests = [e for e in ESTIMATORS if arena.has("estimate", e)]
        for t in truths:
            for e in ests:
                if (e, t) not in where:
                    continue
                p = where[(e, t)]
                tables["agreement"].append({"arena": arena_name, "estimator": e, "truth": t,
                                            **agreement_spread("", point[p], lo[p], hi[p]),
                                            "cases": cases, "generators": G})
                for o in ests:
                    if o == e or (o, t) not in where:
                        continue
                    q = where[(o, t)]
                    dlo, dhi = interval(boot[:, p] - boot[:, q])
                    pair = {"arena": arena_name, "truth": t, "estimator": e, "other": o}
                    tables["contrast"].append({**pair, **agreement_spread(
                        "_difference", point[p] - point[q], dlo, dhi),
                        "cases": cases, "generators": G})
                    tables["generators"].append({
                        **pair, "generators_favouring": int((alone[:, p] > alone[:, q]).sum()),
                        "generators": G})
        # Leave-method-family-out: each family's mean win rate over all generators, and over
        # the generators of other shapes than a family's own (resamples drawn within the set,
        # the same for every family and both truths: differences are paired).
        shapes = [generator_shape(g) for g in arena.generators]
        families = {f: [i for i, m in enumerate(arena.methods)
                        if family_out.method_family(m) == f] for f in OWN_SHAPES}
        families = {f: members for f, members in families.items() if members}
        names = list(families)
        subsets = {"all": list(range(G))}
        for f in families:
            without = [g for g in range(G) if shapes[g] not in OWN_SHAPES[f]]
            if 0 < len(without) < G:  # a set that differs from all
                subsets["without " + f] = without
        family_truths = ("ece_top_l1", "classwise_ece_l1")
        rows = {(t, name): [] for t in family_truths for name in ("families", "family_contrast")}
        for subset, inside in subsets.items():
            sub = np.random.Generator(np.random.PCG64(SEED + 1))
            counts = np.array([np.bincount(sub.choice(inside, len(inside)), minlength=G)
                               for _ in range(resamples)], dtype=float)
            pick = np.bincount(inside, minlength=G)[None, :].astype(float)
            point_sub, boot_sub = arena.boards(pick), arena.boards(counts)
            for truth in family_truths:
                k = arena.key("truth", truth)

                def rates(b):
                    return np.stack([b[:, k, members].mean(axis=1)
                                     for members in families.values()], axis=1)

                mine, theirs = rates(point_sub)[0], rates(boot_sub)
                flo, fhi = interval(theirs)
                where_set = {"arena": arena_name, "truth": truth, "subset": subset,
                             "generators": len(inside)}
                for i, f in enumerate(names):
                    rows[(truth, "families")].append(
                        {**where_set, "family": f,
                         **spread("mean_win_rate", mine[i], flo[i], fhi[i])})
                lead = int(np.argmax(mine))
                for i, f in enumerate(names):
                    if i != lead:
                        dlo, dhi = interval(theirs[:, lead] - theirs[:, i])
                        rows[(truth, "family_contrast")].append(
                            {**where_set, "leader": names[lead], "family": f,
                             **spread("difference", mine[lead] - mine[i], dlo, dhi)})
        for (_, name), found in rows.items():  # truth by truth, as the answer reads them
            tables[name] += found
        # Agreement between pooled boards of any two keys (CalArena's Kuiper against Brier).
        for i, (ka, a) in enumerate(arena.keys):
            for j in range(i + 1, len(arena.keys)):
                kb, b = arena.keys[j]
                blo, bhi = interval(tau_b(boot_boards[:, i], boot_boards[:, j]))
                tables["boards_agree"].append({
                    "arena": arena_name, "kind_a": ka, "key_a": a, "kind_b": kb, "key_b": b,
                    **spread("tau_b", tau_b(point_boards[:, i], point_boards[:, j])[0], blo,
                             bhi),
                    "generators": G})
    frames = {name: pd.DataFrame.from_records(rows) for name, rows in tables.items()}
    for name, frame in frames.items():
        frame.to_csv(os.path.join(out, name + ".csv"), index=False, float_format="%.6f")
    with open(os.path.join(out, "answer.md"), "w") as f:
        f.write(markdown(frames, resamples))
    print(f"arena-answer: tables and answer.md written to {out}")


# How the answer names the keys in prose.
WORDS = {"ece_ew15": "the 15-bin ECE", "kuiper_calibration": "Kuiper",
         "smooth_ece": "smooth ECE", "brier": "the Brier score", "nll": "the log loss",
         "probmetrics_ece_15": "CalArena's ece-15 on P(y = 1)",
         "kuiper_calibration_binary": "Kuiper on P(y = 1)", "ece_top_l1": "top-label ECE",
         "classwise_ece_l1": "classwise ECE", "accuracy": "accuracy"}
# The scopes the answer reads: (arena, true key, what it is called).
SCOPES = [("binary", "ece_top_l1", "the true top-label ECE"),
          ("binary", "classwise_ece_l1", "the true ECE of P(y = 1) (CalArena's scope)"),
          ("binary", "brier", "the true Brier score"),
          ("multiclass", "ece_top_l1", "the true top-label ECE"),
          ("multiclass", "classwise_ece_l1", "the true classwise ECE"),
          ("multiclass", "brier", "the true Brier score")]
CALARENA = "CalArena's committed results (issue #26): Kuiper against Brier 0.75; the " \
    "15-bin ECE against Brier −0.07 (tabarena-binary) and −0.24 (tabrepo-binary)"


def ci(value, lower, upper, digits=2):
    def f(x):
        text = f"{x:.{digits}f}"
        return "0." + "0" * digits if float(text) == 0 else text.replace("-", "−")
    return f"{f(value)} [{f(lower)}, {f(upper)}]"


def markdown(frames, resamples):
    """The answer's tables and sentences, every figure from the frames (docs/arena.md holds
    this text verbatim between its arena-answer markers; ctest arena_answer.tables checks it)."""
    agreement, contrast = frames["agreement"], frames["contrast"]
    board, generators = frames["board"], frames["generators"]
    lines = []
    counts = board.drop_duplicates("arena").set_index("arena")
    cases = agreement.drop_duplicates("arena").set_index("arena")["cases"]
    lines.append(f"Pooled over the corpus runs: binary {counts.loc['binary', 'generators']} "
                 f"generators, {counts.loc['binary', 'cells']} cells, "
                 f"{cases['binary']:,} cases; multiclass "
                 f"{counts.loc['multiclass', 'generators']} generators, "
                 f"{counts.loc['multiclass', 'cells']} cells, {cases['multiclass']:,} cases. "
                 f"Brackets: 95 % percentile intervals over {resamples:,} resamples of the "
                 f"generators (models).")
    lines.append("")
    lines.append("| arena | truth | test-set metric | τ-b of the boards | mean τ-b per case "
                 "| same winner |")
    lines.append("|---|---|---|---|---|---|")
    for arena, truth, _ in SCOPES:
        rows = agreement[(agreement["arena"] == arena) & (agreement["truth"] == truth)]
        for r in rows.sort_values("tau_b", ascending=False, kind="stable").itertuples():
            lines.append(f"| {arena} | {truth} | {r.estimator} | "
                         f"{ci(r.tau_b, r.tau_b_lower, r.tau_b_upper)} | "
                         f"{ci(r.case_tau_b, r.case_tau_b_lower, r.case_tau_b_upper)} | "
                         f"{ci(r.winner_agreement, r.winner_agreement_lower, r.winner_agreement_upper)} |")
    lines.append("")
    for arena, truth, called in SCOPES:
        rows = agreement[(agreement["arena"] == arena) & (agreement["truth"] == truth)]
        lead = rows.sort_values("tau_b", ascending=False, kind="stable").iloc[0]
        ahead, tied = [], []
        for r in contrast[(contrast["arena"] == arena) & (contrast["truth"] == truth) &
                          (contrast["estimator"] == lead.estimator)].itertuples():
            text = (f"{WORDS[r.other]} "
                    f"({ci(r.tau_b_difference, r.tau_b_difference_lower, r.tau_b_difference_upper)})")
            (ahead if r.tau_b_difference_lower > 0 else tied).append(text)
        favour = generators[(generators["arena"] == arena) & (generators["truth"] == truth) &
                            (generators["estimator"] == lead.estimator)]
        sentence = (f"- {arena.capitalize()}, against {called}: {WORDS[lead.estimator]}'s "
                    f"board agrees best, τ-b "
                    f"{ci(lead.tau_b, lead.tau_b_lower, lead.tau_b_upper)}")
        if ahead:
            sentence += "; ahead, by a difference whose interval excludes 0, of " + \
                ", ".join(ahead)
        if tied:
            sentence += "; not told apart from " + ", ".join(tied)
        second = rows.sort_values("tau_b", ascending=False, kind="stable").iloc[1].estimator
        count = favour[favour["other"] == second].iloc[0]
        sentence += (f". Per model, its board agrees better than {WORDS[second]}'s on "
                     f"{count.generators_favouring} of {count.generators} generators.")
        lines.append(sentence)
    lines.append("")
    lines += boards_text(board, frames["flattered"])
    lines.append("")
    lines += calarena_text(frames["boards_agree"])
    lines.append("")
    lines += families_text(frames["family_contrast"])
    return "\n".join(lines) + "\n"


def boards_text(board, flattered):
    """Who leads the true and the test-set boards, and where the binning methods stand."""
    def rows(arena, kind, key):
        return board[(board["arena"] == arena) & (board["kind"] == kind) &
                     (board["key"] == key)].set_index("method")

    def first(frame, n=3):
        top = frame.sort_values("rank", kind="stable").head(n)
        return ", ".join(f"`{m}` {ci(r.win_rate, r.win_rate_lower, r.win_rate_upper, 3)}"
                         for m, r in top.iterrows())

    out = []
    for arena in ("binary", "multiclass"):
        truth, test = rows(arena, "truth", "ece_top_l1"), rows(arena, "estimate", "ece_ew15")
        brier = rows(arena, "truth", "brier")
        n = len(truth)
        binning = [m for m in ("subsample_10000(bbq)", "histogram_binning_em10") if m in truth.index]
        gaps = flattered[flattered["arena"] == arena].set_index("method")

        def where(m):
            g = gaps.loc[m]
            return (f"`{m}` ranks {test.loc[m, 'rank']} by the test-set ECE, "
                    f"{truth.loc[m, 'rank']} by the true top-label ECE (win rate by the former "
                    f"minus the latter "
                    f"{ci(g.win_rate_difference, g.win_rate_difference_lower, g.win_rate_difference_upper, 3)}"
                    f") and {brier.loc[m, 'rank']} by the true Brier score")

        where = "; ".join(where(m) for m in binning)
        most = gaps.sort_values("win_rate_difference", ascending=False, kind="stable").head(3)
        most = ", ".join(f"`{m}` {ci(g.win_rate_difference, g.win_rate_difference_lower, g.win_rate_difference_upper, 3)}"
                         for m, g in most.iterrows())
        out.append(f"- {arena.capitalize()} boards ({n} models, win rates): first by the true "
                   f"top-label ECE {first(truth)}; by the test-set 15-bin ECE {first(test)}; "
                   f"by the true Brier score {first(brier)}. Of the {n}, {where}. The test-set "
                   f"ECE flatters most (its win rate minus the true top-label ECE's): {most}.")
    return out


def families_text(contrast):
    """The leave-method-family-out check: does the leading family lead without its own
    shape's generators?"""
    out = []
    for arena, truth, called in SCOPES:
        rows = contrast[(contrast["arena"] == arena) & (contrast["truth"] == truth)]
        if rows.empty:
            continue
        every = rows[rows["subset"] == "all"]
        lead = every["leader"].iloc[0]

        def against(frame):
            return ", ".join(f"“{r.family}” by "
                             f"{ci(r.difference, r.difference_lower, r.difference_upper, 3)}"
                             for r in frame.itertuples())

        text = (f"- Leave-family-out, {arena}, against {called}: over all "
                f"{every['generators'].iloc[0]} generators the family “{lead}” leads (mean win "
                f"rate of its methods ahead of {against(every)})")
        without = rows[rows["subset"] == "without " + lead]
        if without.empty:
            text += "; no generator has its shape."
        elif without["leader"].iloc[0] == lead:
            text += (f"; over the {without['generators'].iloc[0]} generators of other shapes "
                     f"it still leads, ahead of {against(without)}.")
        else:
            mine = without[without["family"] == lead].iloc[0]
            text += (f"; over the {without['generators'].iloc[0]} generators of other shapes "
                     f"“{mine.leader}” leads, ahead of it by "
                     f"{ci(mine.difference, mine.difference_lower, mine.difference_upper, 3)}.")
        out.append(text)
    return out


def calarena_text(agree):
    """Test-set boards against each other in the binary arena, as CalArena compares them."""
    def tau(arena, a, b):
        for (ka, kb) in ((a, b), (b, a)):
            r = agree[(agree["arena"] == arena) & (agree["kind_a"] == ka[0]) &
                      (agree["key_a"] == ka[1]) & (agree["kind_b"] == kb[0]) &
                      (agree["key_b"] == kb[1])]
            if len(r):
                r = r.iloc[0]
                return ci(r.tau_b, r.tau_b_lower, r.tau_b_upper)
        raise KeyError((arena, a, b))

    e = "estimate"
    return [f"- CalArena's comparison, binary, test-set boards: Kuiper on P(y = 1) against "
            f"the Brier score τ-b {tau('binary', (e, 'kuiper_calibration_binary'), (e, 'brier'))}"
            f", CalArena's ece-15 on P(y = 1) against the Brier score "
            f"{tau('binary', (e, 'probmetrics_ece_15'), (e, 'brier'))}, the 15-bin top-label "
            f"ECE against the Brier score {tau('binary', (e, 'ece_ew15'), (e, 'brier'))} "
            f"({CALARENA}). The true boards: the ECE of P(y = 1) against the Brier score "
            f"{tau('binary', ('truth', 'classwise_ece_l1'), ('truth', 'brier'))}, the "
            f"top-label ECE against the Brier score "
            f"{tau('binary', ('truth', 'ece_top_l1'), ('truth', 'brier'))}; multiclass, "
            f"test-set Kuiper against the Brier score "
            f"{tau('multiclass', (e, 'kuiper_calibration'), (e, 'brier'))}."]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("extract")
    e.add_argument("results", nargs="+")
    e.add_argument("--out", required=True)
    a = sub.add_parser("answer")
    a.add_argument("cells")
    a.add_argument("--out", default="results/arena-answer")
    a.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    if args.command == "extract":
        extract(args.results, args.out)
    else:
        answer(args.cells, args.out, args.resamples)


if __name__ == "__main__":
    main()
