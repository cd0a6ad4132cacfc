"""calbench.leaderboard and calbench.rank_agreement (ctest: python.leaderboard).

Known answers: a tiny CalArena-layout table (data/calarena_tiny, three methods, four
experiments in two datasets) whose win rates are worked by hand below, and an excerpt of
CalArena's committed results (tests/reference/calarena, four cv-binary methods; provenance in
tests/reference/README.md) against win rates and a Bradley–Terry fit computed here
independently (a loop over the rule; scipy's minimiser on the likelihood).
"""

import os
import unittest

import numpy as np
import pandas as pd

import calbench

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "data", "calarena_tiny")
EXCERPT = os.path.join(HERE, "..", "..", "tests", "reference", "calarena", "cv-binary")

# The tiny table, per experiment (d1 m1, d1 m2, d2 m1, d2 m2):
#   brier     A .1 .2 .3 .4   B .2 .2 .1 .5   C .3 .1 .1 .3   (lower is better)
#   win rate  A  1  0  0 1/2  B 1/2 0 1/2 0   C  0  1 1/2 1
#   mean      A 3/8           B 1/4           C 5/8
#   accuracy  A .9 .8 .7 .6   B .9 .9 .9 .9   C .5 (all)      (higher is better)
#   win rate  A 1/2 each      B 1/2 1 1 1     C 0
#   mean      A 1/2           B 7/8           C 0
TINY_BRIER = {"A": 3 / 8, "B": 1 / 4, "C": 5 / 8}
TINY_ACCURACY = {"A": 1 / 2, "B": 7 / 8, "C": 0.0}


def independent_win_rates(values):
    """values (cases, methods), lower is better: per case the share of the others strictly
    worse, averaged over cases."""
    cases, methods = values.shape
    total = np.zeros(methods)
    for c in range(cases):
        for a in range(methods):
            worse = sum(1 for b in range(methods) if b != a and values[c, b] > values[c, a])
            total[a] += worse / (methods - 1)
    return total / cases


def independent_elo(values):
    """Bradley–Terry by scipy's BFGS on the summed log-likelihood, ties half a win, the
    ratings centred; Elo = 1000 + 400 / ln 10 * theta."""
    from scipy.optimize import minimize

    cases, methods = values.shape
    pairs = []
    for c in range(cases):
        for a in range(methods):
            for b in range(a + 1, methods):
                x, y = values[c, a], values[c, b]
                pairs.append((a, b, 1.0 if x < y else 0.0 if y < x else 0.5))
    a_idx = np.array([p[0] for p in pairs])
    b_idx = np.array([p[1] for p in pairs])
    outcome = np.array([p[2] for p in pairs])

    def loss(theta):
        d = theta[a_idx] - theta[b_idx]
        return -np.sum(outcome * d - np.logaddexp(0.0, d))

    theta = minimize(loss, np.zeros(methods), method="BFGS", options={"gtol": 1e-10}).x
    return 1000 + 400 / np.log(10) * (theta - theta.mean())


class TinyTable(unittest.TestCase):
    def test_win_rates_by_hand_from_the_files(self):
        board = calbench.leaderboard(TINY, key=["brier", "accuracy"])
        for key, expected in (("brier", TINY_BRIER), ("accuracy", TINY_ACCURACY)):
            rows = board[board.key == key].set_index("method")
            for method, rate in expected.items():
                self.assertAlmostEqual(rows.loc[method, "win_rate"], rate, places=15)
            self.assertTrue((rows.cases == 4).all())
            self.assertTrue((rows.blocks == 2).all())  # the datasets d1 and d2
        self.assertEqual(list(board[board.key == "brier"].method), ["C", "A", "B"])
        self.assertEqual(set(board[board.key == "accuracy"].better), {"higher"})

    def test_the_long_layout_gives_the_same_board(self):
        wide = calbench.read_calarena([os.path.join(TINY, f) for f in ("A.csv", "B.csv", "C.csv")])
        long = pd.DataFrame([
            {"case": f"{r.dataset}/{r.model}", "dataset": r.dataset, "method": m,
             "brier": getattr(r, f"{m}_brier")}
            for r in wide.itertuples() for m in "ABC"])
        a = calbench.leaderboard(wide, key="brier")
        b = calbench.leaderboard(long, key="brier", block="dataset")
        pd.testing.assert_frame_equal(a, b)

    def test_bad_input_names_the_problem(self):
        long = pd.DataFrame({"case": [0, 0, 1], "method": ["A", "B", "A"], "x": [1.0, 2.0, 3.0]})
        with self.assertRaisesRegex(ValueError, "case 1 has no value for method 'B'"):
            calbench.leaderboard(long, key="x")
        with self.assertRaisesRegex(ValueError, "no column <Method>_nope"):
            calbench.leaderboard(TINY, key="nope")

    def test_missing_values_are_an_error_or_left_out(self):
        wide = calbench.read_calarena(TINY)
        wide.loc[1, "B_brier"] = np.nan
        with self.assertRaisesRegex(ValueError, "key brier, case 1, method B: the value is not"):
            calbench.leaderboard(wide, key="brier")
        with self.assertWarnsRegex(RuntimeWarning, "1 of 4 cases"):
            board = calbench.leaderboard(wide, key="brier", missing="drop")
        # Without experiment d1 m2 (A 0, B 0, C 1): A (1 + 0 + 1/2) / 3, B 1/3, C 1/2.
        rows = board.set_index("method")
        self.assertAlmostEqual(rows.loc["A", "win_rate"], 0.5, places=15)
        self.assertAlmostEqual(rows.loc["B", "win_rate"], 1 / 3, places=15)
        self.assertAlmostEqual(rows.loc["C", "win_rate"], 0.5, places=15)
        self.assertEqual(rows.loc["A", "cases"], 3)

    def test_a_missing_value_can_lose_its_case(self):
        wide = calbench.read_calarena(TINY)
        wide.loc[1, "B_brier"] = np.nan
        board = calbench.leaderboard(wide, key="brier", missing="lose").set_index("method")
        # Experiment d1 m2 stays: A .2 beats the failed B (1/2), C .1 beats both (1), B 0. The
        # others as in the tiny table: A (1 + 1/2 + 0 + 1/2) / 4, B (1/2 + 0 + 1/2 + 0) / 4,
        # C (0 + 1 + 1/2 + 1) / 4. B's mean is over its three other experiments.
        self.assertAlmostEqual(board.loc["A", "win_rate"], 1 / 2, places=15)
        self.assertAlmostEqual(board.loc["B", "win_rate"], 1 / 4, places=15)
        self.assertAlmostEqual(board.loc["C", "win_rate"], 5 / 8, places=15)
        self.assertEqual(board.loc["B", "failed"], 1)
        self.assertEqual(board.loc["A", "failed"], 0)
        self.assertAlmostEqual(board.loc["B", "mean"], (0.2 + 0.1 + 0.5) / 3, places=15)
        self.assertEqual(board.loc["A", "cases"], 4)
        with self.assertRaisesRegex(ValueError, "expected 'error', 'drop' or 'lose'"):
            calbench.leaderboard(wide, key="brier", missing="keep")

    def test_contrasts_are_paired_differences_of_agreements(self):
        keys = ["brier", "accuracy"]
        agree = calbench.rank_agreement(TINY, keys, "brier", resamples=200).set_index("key")
        contrast = calbench.rank_contrast(TINY, keys, "brier", resamples=200)
        self.assertEqual(len(contrast), 1)
        row = contrast.iloc[0]
        self.assertEqual((row["key"], row["other"], row["reference"]),
                         ("brier", "accuracy", "brier"))
        for name in ("tau_b", "case_tau_b", "winner_agreement"):
            self.assertEqual(row[name + "_difference"],
                             agree.loc["brier", name] - agree.loc["accuracy", name])
            self.assertLessEqual(row[name + "_difference_lower"], row[name + "_difference_upper"])
        # brier against itself has tau-b 1 in every resample: the difference's interval is
        # 1 minus accuracy's interval, end for end.
        self.assertEqual(row["tau_b_difference_lower"], 1 - agree.loc["accuracy", "tau_b_upper"])
        self.assertEqual(row["tau_b_difference_upper"], 1 - agree.loc["accuracy", "tau_b_lower"])


class CalArenaExcerpt(unittest.TestCase):
    def setUp(self):
        self.frame = calbench.read_calarena(EXCERPT)
        self.methods = ["Base-model", "Hist-quantile", "Isotonic", "TS"]

    def test_win_rates_and_elo_match_independent_computations(self):
        self.assertEqual(len(self.frame), 13)
        for key in ("brier", "ece-15", "logloss"):
            values = self.frame[[f"{m}_{key}" for m in self.methods]].to_numpy()
            board = calbench.leaderboard(self.frame, key=key).set_index("method")
            rates = independent_win_rates(values)
            elo = independent_elo(values)
            for i, m in enumerate(self.methods):
                self.assertAlmostEqual(board.loc[m, "win_rate"], rates[i], places=14)
                self.assertAlmostEqual(board.loc[m, "elo"], elo[i], delta=0.01)
                self.assertLessEqual(board.loc[m, "win_rate_lower"], board.loc[m, "win_rate"])
                self.assertGreaterEqual(board.loc[m, "win_rate_upper"], board.loc[m, "win_rate"])
            self.assertTrue((board.blocks == 3).all())  # c10, breast, pneumonia

    def test_agreement_and_determinism(self):
        same = calbench.rank_agreement(self.frame, "brier", "brier")
        self.assertEqual(same.tau_b[0], 1.0)
        self.assertEqual(same.winner_agreement[0], 1.0)
        one = calbench.rank_agreement(self.frame, ["ece-15", "kuiper"], "brier", seed=4)
        two = calbench.rank_agreement(self.frame, ["ece-15", "kuiper"], "brier", seed=4)
        pd.testing.assert_frame_equal(one, two)
        self.assertEqual(list(one.key), ["ece-15", "kuiper"])
        rates = {k: calbench.leaderboard(self.frame, key=k).set_index("method").win_rate
                 for k in ("ece-15", "brier")}
        from scipy.stats import kendalltau
        expected = kendalltau(rates["ece-15"][self.methods], rates["brier"][self.methods])[0]
        self.assertAlmostEqual(one.tau_b[0], expected, places=14)


if __name__ == "__main__":
    unittest.main()
