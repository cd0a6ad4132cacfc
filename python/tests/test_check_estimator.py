"""Tests of calbench.testing.check_estimator and `calbench check` (ctest: python.check_estimator).

The worked example of docs/python.md (docs/examples/metric_examples.py): scikit-learn's
calibration_curve-based ECE passes, the numpy ECE that hides confidences of 1.0 in an extra bin
is caught, on the generator that has such confidences only. And the z-tests themselves: an
unbiased metric passes with tolerance 0, the same metric shifted by 0.01 fails. The same two
metrics as external estimators (python3 -m calbench.external) in a config: `calbench check`
passes a rerun of the correct one with another seed and flags the buggy one.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import calbench
from calbench.testing import check_estimator

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "docs", "examples"))

import metric_examples  # noqa: E402  (docs/examples/metric_examples.py)

GENERATORS = metric_examples.GENERATORS


def accuracy(p, y):
    return float(np.mean(p.argmax(axis=1) == y))


class CheckEstimatorTest(unittest.TestCase):
    def test_sklearn_ece_passes(self):
        table = check_estimator(metric_examples.sklearn_ece, **metric_examples.CHECK)
        self.assertEqual(list(table.n), [500, 20000, 500, 20000])
        # Binned ECE is biased upward at small n, and far less at large n.
        self.assertTrue((table.bias[table.n == 500] > 0).all())
        self.assertTrue((table.bias[table.n == 20000].abs() < 0.005).all())
        # The same binning rule as calbench's ece, to rounding.
        self.assertTrue((table.reference_difference.abs() < 1e-12).all())

    def test_buggy_ece_is_caught_where_confidences_of_one_occur(self):
        with self.assertRaises(AssertionError) as caught:
            metric_examples.test_buggy_ece()
        message = str(caught.exception)
        self.assertTrue(message.startswith("buggy_ece fails 4 of 8 checks against calbench's "
                                           "truth of ece_top_l1"), message)
        self.assertIn('differs from calbench\'s {"name": "ece", "bins": 15} on the same samples',
                      message)
        self.assertIn("the metric does not converge to ece_top_l1", message)
        self.assertIn("|bias| grows with n", message)
        self.assertIn('"label_noise"', message)
        self.assertNotIn('"dirichlet"', message)  # no confidence of exactly 1.0 there
        # Without the reference the truth alone catches it.
        with self.assertRaisesRegex(AssertionError, r"does not converge to ece_top_l1"):
            check_estimator(metric_examples.buggy_ece, target="ece_top_l1",
                            generators=GENERATORS[:1], sizes=[500, 5000], replicates=50,
                            tolerance=0.005)

    def test_an_unbiased_metric_passes_with_tolerance_zero(self):
        generators = [{"family": "dirichlet", "classes": 4, "alpha": 0.8,
                       "miscalibration": {"map": "temperature", "temperature": 1.4}}]
        table = check_estimator(accuracy, target="accuracy", generators=generators,
                                sizes=[50, 400], replicates=300, tolerance=0.0,
                                reference={"name": "accuracy"})
        self.assertTrue((table.reference_difference == 0).all())
        shifted = lambda p, y: accuracy(p, y) + 0.01  # noqa: E731
        with self.assertRaisesRegex(AssertionError, r"bias \+0\.0\d+ .* exceeds the tolerance 0 "):
            check_estimator(shifted, target="accuracy", generators=generators, sizes=[50, 400],
                            replicates=300, tolerance=0.0)

    def test_export_cases_catch_the_bug_without_sampling(self):
        # `calbench export-cases`: the edge cases a test suite can load with numpy.load.
        directory = os.path.join(tempfile.mkdtemp(prefix="calbench_cases_"), "cases")
        try:
            done = subprocess.run([os.environ["CALBENCH_BIN"], "export-cases", directory],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(os.path.join(directory, "cases.json")) as f:
                cases = json.load(f)["cases"]
            wrong = []
            for case in cases:
                p = np.load(os.path.join(directory, case["p"]))
                y = np.load(os.path.join(directory, case["y"]))
                expected = {i["label"]: i.get("value") for i in case["expected"]}["ece_calbench"]
                # sklearn_ece follows calbench's 15-bin rule on every case.
                self.assertAlmostEqual(metric_examples.sklearn_ece(p, y), expected, delta=1e-12)
                if abs(metric_examples.buggy_ece(p, y) - expected) > 1e-12:
                    wrong.append(case["name"])
            # The cases where a confidence of exactly 1.0 is not always right, and bin_edges,
            # where floor(confidence * 15) also closes the bins on the left.
            self.assertEqual(wrong, ["confident_wrong", "confident_half_right",
                                     "zero_probabilities", "bin_edges"])
        finally:
            shutil.rmtree(os.path.dirname(directory), ignore_errors=True)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, r"target = 'ece': expected one of accuracy, "):
            check_estimator(accuracy, target="ece", generators=GENERATORS[1:], sizes=[10])
        with self.assertRaisesRegex(ValueError, r"/generator/alpha"):
            check_estimator(accuracy, target="accuracy",
                            generators=[{"family": "dirichlet", "classes": 3, "alpha": 0}],
                            sizes=[10])
        with self.assertRaisesRegex(ValueError, r"replicates = 1"):
            check_estimator(accuracy, target="accuracy", generators=GENERATORS[1:], sizes=[10],
                            replicates=1)
        # A NaN alpha passed a constant estimator (every comparison with NaN is false).
        for alpha in (float("nan"), 0.0, 1.0, -1.0):
            with self.assertRaisesRegex(ValueError, r"alpha = .*: expected a number in \(0, 1\)"):
                check_estimator(lambda p, y: 0.5, target="accuracy", generators=GENERATORS[1:],
                                sizes=[10, 20], alpha=alpha)
        with self.assertRaisesRegex(ValueError, r"tolerance = nan"):
            check_estimator(accuracy, target="accuracy", generators=GENERATORS[1:], sizes=[10],
                            tolerance=float("nan"))
        with self.assertRaisesRegex(AssertionError, r"returned nan on replicate 0"):
            check_estimator(lambda p, y: float("nan"), target="accuracy",
                            generators=GENERATORS[1:], sizes=[10], replicates=3)


def metric_config(function, seed, path):
    python_dir = os.path.join(REPO, "python")
    config = {
        "name": "metric_check", "scenario": "estimator_bias", "seed": seed, "replicates": 40,
        "sample_size": 300, "generator": GENERATORS[0],
        "estimators": [
            {"name": "ece", "bins": 15},
            {"name": "external", "label": "my_ece", "target": "ece_top_l1",
             "command": [sys.executable, "-m", "calbench.external", "--path",
                         os.path.join(REPO, "docs", "examples"), f"metric_examples:{function}"]}],
        "truth": {"samples": 20000},
        "sweep": {"sample_size": [300, 3000]}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)
    return dict(os.environ, PYTHONPATH=python_dir)


class CalbenchCheckTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="calbench_check_")
        cls.binary = os.environ["CALBENCH_BIN"]
        cls.baseline = os.path.join(cls.run_metric("sklearn_ece", 1), "summary.json")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def run_metric(cls, function, seed):
        config = os.path.join(cls.tmp, f"{function}_{seed}.json")
        env = metric_config(function, seed, config)
        out = os.path.join(cls.tmp, f"{function}_{seed}")
        done = subprocess.run([cls.binary, "run", config, "--out", out, "--quiet"],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"calbench run {config}: {done.stderr}")
        return out

    def check(self, results, baseline):
        return subprocess.run([self.binary, "check", results, "--baseline", baseline],
                              capture_output=True, text=True)

    def test_check_passes_a_rerun_and_flags_the_bug(self):
        rerun = self.check(self.run_metric("sklearn_ece", 2), self.baseline)
        self.assertEqual(rerun.returncode, 0, rerun.stdout + rerun.stderr)
        self.assertIn("no regression: none of the 8 tests moved", rerun.stdout)
        buggy = self.check(self.run_metric("buggy_ece", 2), self.baseline)
        self.assertEqual(buggy.returncode, 1, buggy.stdout + buggy.stderr)
        lines = buggy.stdout.splitlines()
        moved = [line for line in lines[lines.index("moved:") + 1:] if line.startswith("  cell")]
        # Only the buggy metric's bias moves, in both cells; the built-in ece does not.
        self.assertEqual(len(moved), 2, buggy.stdout)
        for line in moved:
            self.assertRegex(line, r"cell \d \(sample_size = \d+\)\s+my_ece\s+bias\s+\S+ -> -")
        self.assertIn("its parameters changed (command: ", buggy.stdout)
        self.assertTrue(lines[-1].startswith("regression: 2 of 8 tests moved"), buggy.stdout)

    def test_check_input_errors(self):
        results = os.path.dirname(self.baseline)
        other = os.path.join(self.tmp, "other.json")
        with open(self.baseline) as f:
            summary = json.load(f)
        summary["cells"][1]["generator"] = "dirichlet:K=3"
        with open(other, "w") as f:
            json.dump(summary, f)
        done = self.check(results, other)
        self.assertEqual(done.returncode, 2)
        self.assertIn("cell 1 (sample_size = 3000)", done.stderr)
        self.assertIn("not the same experiment", done.stderr)
        done = self.check(results, os.path.join(self.tmp, "missing.json"))
        self.assertEqual(done.returncode, 2)
        self.assertIn("missing.json: cannot open the baseline", done.stderr)
        summary["meta"]["scenario"] = "decision"
        with open(other, "w") as f:
            json.dump(summary, f)
        done = self.check(results, other)
        self.assertEqual(done.returncode, 2)
        self.assertIn("calbench check compares estimator_bias results; this is scenario decision",
                      done.stderr)


if __name__ == "__main__":
    unittest.main()
