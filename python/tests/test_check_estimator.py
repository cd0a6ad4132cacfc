"""Tests of calbench.testing.check_estimator (ctest: python.check_estimator).

The worked example of docs/python.md (docs/examples/metric_examples.py): scikit-learn's
calibration_curve-based ECE passes, the numpy ECE that hides confidences of 1.0 in an extra bin
is caught, on the generator that has such confidences only. And the z-tests themselves: an
unbiased metric passes with tolerance 0, the same metric shifted by 0.01 fails.
"""

import os
import sys
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
        metric_examples.test_sklearn_ece()
        table = check_estimator(metric_examples.sklearn_ece, target="ece_top_l1",
                                generators=GENERATORS, sizes=[500, 20000], replicates=100,
                                tolerance=0.005)
        self.assertEqual(list(table.n), [500, 20000, 500, 20000])
        # Binned ECE is biased upward at small n, and far less at large n.
        self.assertTrue((table.bias[table.n == 500] > 0).all())
        self.assertTrue((table.bias[table.n == 20000].abs() < 0.005).all())

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
                            generators=GENERATORS[:1], sizes=[500, 20000], replicates=100,
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
        with self.assertRaisesRegex(AssertionError, r"returned nan on replicate 0"):
            check_estimator(lambda p, y: float("nan"), target="accuracy",
                            generators=GENERATORS[1:], sizes=[10], replicates=3)


if __name__ == "__main__":
    unittest.main()
