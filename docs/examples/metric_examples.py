"""The worked example of docs/python.md, "Testing a metric": a top-label ECE built on
scikit-learn's calibration_curve, and a numpy ECE with the kind of bug of torchmetrics #3510 (a
confidence of exactly 1.0 lands in a hidden extra bin, so those rows are never counted).
python/tests/test_check_estimator.py runs both through calbench.testing.check_estimator."""

import numpy as np
from sklearn.calibration import calibration_curve


def sklearn_ece(p, y, bins=15):
    """Top-label ECE: calibration_curve's per-bin accuracy and confidence, weighted by the bins'
    counts (calibration_curve drops empty bins and does not return counts; the counts come from
    its own rule, np.searchsorted on the inner edges of np.linspace(0, 1, bins + 1))."""
    confidence = p.max(axis=1)
    correct = (p.argmax(axis=1) == y).astype(int)
    accuracy, mean_confidence = calibration_curve(correct, confidence, n_bins=bins,
                                                  strategy="uniform")
    edges = np.linspace(0.0, 1.0, bins + 1)
    counts = np.bincount(np.searchsorted(edges[1:-1], confidence), minlength=bins)
    counts = counts[counts > 0]
    return float(np.sum(counts * np.abs(accuracy - mean_confidence)) / len(y))


def buggy_ece(p, y, bins=15):
    """The bug: floor(confidence * bins) puts a confidence of exactly 1.0 into bin `bins`, one
    past the last, and the loop over bins 0 .. bins-1 never visits it."""
    confidence = p.max(axis=1)
    correct = p.argmax(axis=1) == y
    bin_of = np.floor(confidence * bins).astype(int)
    total = 0.0
    for b in range(bins):
        rows = bin_of == b
        if rows.any():
            total += rows.sum() * abs(correct[rows].mean() - confidence[rows].mean())
    return total / len(y)


# A sharp model whose labels are 10% noise (10% of the labels are replaced by class 0): a fifth
# of its confidences round to exactly 1.0, and those rows are right only 93% of the time. And a
# ten-class overconfident model with no confidence of 1.0: the bug shows only where they occur.
GENERATORS = [
    {"family": "label_noise", "classes": 3, "alpha": 0.02, "weight": 0.1},
    {"family": "dirichlet", "classes": 10, "alpha": 0.5,
     "miscalibration": {"map": "temperature", "temperature": 0.7}},
]


# The check a maintainer's test suite runs (pytest or unittest).
CHECK = dict(target="ece_top_l1", generators=GENERATORS, sizes=[500, 20000], replicates=100,
             tolerance=0.005, reference={"name": "ece", "bins": 15})


def test_sklearn_ece():
    from calbench.testing import check_estimator
    check_estimator(sklearn_ece, **CHECK)


def test_buggy_ece():
    from calbench.testing import check_estimator
    check_estimator(buggy_ece, **CHECK)  # raises AssertionError: the bug is caught
