#!/usr/bin/env python3
"""docs/arena.md's tables from the two arena runs' pooled boards (scope = all):

    build/release/calbench run configs/arena/binary.json
    build/release/calbench run configs/arena/multiclass.json
    /usr/bin/python3 scripts/arena-tables.py [results/arena_binary results/arena_multiclass]

Prints markdown: (1) per test-set metric and true quantity, Kendall's tau-b between the two
boards' win rates, the mean per-case tau-b and the share of cases whose test-set winner is the
true winner, each with its 95 % interval; (2) per key, the first three methods, the winners of
the test-set and the true ECE boards, and histogram binning with rank, win rate [95 %] and the key's mean; (3) tau-b between the test-set ECE and
Brier boards and between the true ECE and Brier boards (CalArena's comparison; no interval).
tests/unit/test_doc_figures.cpp ("the recalibration arena") rebuilds every line from the same files.
"""
import sys

import pandas as pd
from scipy.stats import kendalltau

ESTIMATORS = ["ece_ew15", "kuiper_calibration", "smooth_ece", "brier", "nll"]
TRUTHS = ["ece_top_l1", "classwise_ece_l1", "brier", "nll"]
KEYS = [("estimate", "ece_ew15"), ("truth", "ece_top_l1"), ("estimate", "brier"),
        ("truth", "brier"), ("truth", "nll")]
BINNING = "histogram_binning_em10"


def interval(r, column, digits):
    return (f"{r[column]:.{digits}f} [{r[column + '_lower']:.{digits}f}, "
            f"{r[column + '_upper']:.{digits}f}]")


def main():
    dirs = sys.argv[1:] or ["results/arena_binary", "results/arena_multiclass"]
    names = [d.rstrip("/").split("arena_")[-1] for d in dirs]
    runs = []
    for d in dirs:
        board = pd.read_csv(d + "/leaderboard.csv")
        agreement = pd.read_csv(d + "/leaderboard_agreement.csv")
        runs.append((board[board.scope == "all"], agreement[agreement.scope == "all"]))
    print("| arena | test-set metric | true quantity | τ-b of the boards | mean τ-b per case | "
          "same winner |")
    print("|---|---|---|---|---|---|")
    for name, (_, agreement) in zip(names, runs):
        for e in ESTIMATORS:
            for t in TRUTHS:
                r = agreement[(agreement.estimator == e) & (agreement.truth == t)].iloc[0]
                print(f"| {name} | {e} | {t} | {interval(r, 'tau_b', 2)} | "
                      f"{interval(r, 'case_tau_b', 2)} | {interval(r, 'winner_agreement', 2)} |")
    print()
    print("| arena | board | key | rank | method | win rate | mean |")
    print("|---|---|---|---|---|---|---|")
    for name, (board, _) in zip(names, runs):
        ece = board[(board.kind == "estimate") & (board.key == "ece_ew15")]
        ece_winner = ece.sort_values(["rank", "method"], kind="stable").method.iloc[0]
        true = board[(board.kind == "truth") & (board.key == "ece_top_l1")]
        true_winner = true.sort_values(["rank", "method"], kind="stable").method.iloc[0]
        for kind, key in KEYS:
            b = board[(board.kind == kind) & (board.key == key)].sort_values(
                ["rank", "method"], kind="stable")
            shown = b.head(3)
            for extra in [ece_winner, true_winner, BINNING]:
                if extra not in set(shown.method):
                    shown = pd.concat([shown, b[b.method == extra]])
            shown = shown.sort_values(["rank", "method"], kind="stable")
            for _, r in shown.iterrows():
                print(f"| {name} | {kind} | {key} | {int(r['rank'])} | {r.method} | "
                      f"{interval(r, 'win_rate', 3)} | {r['mean']:.4f} |")
    print()
    print("| arena | boards | τ-b |")
    print("|---|---|---|")
    for name, (board, _) in zip(names, runs):
        def rates(kind, key):
            return board[(board.kind == kind) & (board.key == key)].set_index("method").win_rate
        for a, b in [(("estimate", "ece_ew15"), ("estimate", "brier")),
                     (("estimate", "kuiper_calibration"), ("estimate", "brier")),
                     (("truth", "ece_top_l1"), ("truth", "brier"))]:
            x, y = rates(*a), rates(*b)
            tau = kendalltau(x, y.loc[x.index]).statistic
            print(f"| {name} | {a[0]} {a[1]} vs {b[0]} {b[1]} | {tau:.2f} |")


if __name__ == "__main__":
    main()
