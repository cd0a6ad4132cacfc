#!/usr/bin/env python3
"""Reference values of the library conventions added for issue #27.

Runs, unmodified, the code of four independent implementations on the probability datasets of
datasets/, and evaluates two TensorFlow functions transcribed to numpy (TensorFlow is not in
Debian), and writes conventions.json:

  {dataset: {case: {"estimator": <calbench estimator config>, "implementation": KEY,
                    "value": float, "tolerance": float}}}

The test (tests/unit/test_conventions.cpp) builds each "estimator" through the registry, as a config
or `calbench eval --estimators` would, and compares its value with "value".

Implementations (KEY):
- `mapie`: scikit-learn-contrib/MAPIE @60031ac, mapie/metrics/calibration.py
  `expected_calibration_error(y_true, y_scores, num_bins, split_strategy ("uniform",
  "quantile"), classwise)`, imported as is (top label: y_true = correctness, y_scores the n x K matrix, whose
  row maxima MAPIE takes; classwise: class_labels = labels).
- `outlier_exposure`: hendrycks/outlier-exposure @e6ede98, utils/calibration_tools.py
  `calib_err(confidence, correct, p, beta)`, imported as is. It sorts with np.argsort
  (quicksort, not stable): datasets whose confidences tie are skipped for it.
- `kumar`: p-lambda/verified_calibration @ee81c34, calibration/utils.py `_get_ce(probs, labels,
  p, debias=False, num_bins, binning_scheme, mode)`, imported as is: the plug-in Lp error for
  any p (get_equal_prob_bins: equal width; get_equal_bins: equal mass; top-label and marginal).
- `relplot`: apple/ml-calibration @18ff21a (relplot 1.0.3), `relplot.smECE(f=p_1, y=1{y=1})`,
  the binary smooth ECE, K = 2 sets only; imported with a do-nothing `deprecation` stub (its
  decorator marks two plotting helpers) and without the package's __init__, which imports
  seaborn for its diagrams: relplot.metrics alone is imported. Tolerance 1e-9, as tests/unit/test_kernel.cpp's smECE
  values (calbench convolves by FFT).
- `tensorflow_transcribed`: tf.histogram_fixed_width_bins (tensorflow/python/ops/
  histogram_ops.py: indices = floor(nbins * (x - lo) / (hi - lo)), clipped to [0, nbins - 1])
  in uncertainty_metrics/tensorflow/calibration.py ExpectedCalibrationError (google/
  uncertainty-metrics @c046458: per-bin sums by unsorted_segment_sum, ECE = sum over non-empty
  bins of counts / total * |accuracy - confidence|), evaluated in float64.
- `tfp_transcribed`: tensorflow/probability @c847a41, tensorflow_probability/python/stats/
  calibration.py `expected_calibration_error_quantiles(hit, pred_log_prob, num_buckets)` with
  stats/quantiles.py `quantiles` (percentile, interpolation 'nearest': index
  round_half_even((n - 1) q / 100), q = tf.linspace(0, 100, B + 1)) and its `_find_bins`
  (bucket = first edge > x, minus one; x >= the last edge in bucket B - 1). TFP compares
  log p with log(exp(log p)) of the edge rows (Eigen's exp and log): whether the row that is
  itself an edge falls below or above it depends on those rounding errors. This transcription
  compares in probability space, as calbench does; `tfp_logspace` below records the value with
  numpy's log/exp as TFP's code orders them, and the case carries "logspace_agrees".
- `own_direct`: the top-class Brier score mean((max p - 1{argmax p = y})^2), numpy.

Usage: conventions_ref.py MAPIE_DIR OUTLIER_EXPOSURE_DIR VERIFIED_CALIBRATION_DIR RELPLOT_SRC
       > conventions.json   (numpy 1.24.2, scipy 1.10.1, scikit-learn 1.2.1; directories are
       checkouts of the commits above)
"""
import json
import os
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    data = np.loadtxt(os.path.join(HERE, "datasets", name + ".csv"), delimiter=",", ndmin=2)
    return data[:, 1:], data[:, 0].astype(int)


def tf_ece(conf, correct, bins):
    idx = np.clip(np.floor(bins * ((conf - 0.0) / (1.0 - 0.0))), 0, bins - 1).astype(int)
    counts = np.bincount(idx, minlength=bins).astype(float)
    correct_sums = np.bincount(idx, weights=correct, minlength=bins)
    prob_sums = np.bincount(idx, weights=conf, minlength=bins)
    ne = counts != 0
    accs, confs = correct_sums[ne] / counts[ne], prob_sums[ne] / counts[ne]
    return float(np.sum(counts[ne] / np.sum(counts[ne]) * np.abs(accs - confs)))


def tfp_ece_quantiles(conf, hit, buckets, logspace):
    n = len(conf)
    q = np.array([j * (100.0 / buckets) for j in range(buckets)] + [100.0])
    index = np.clip(np.round((n - 1) * (q / 100.0)).astype(int), 0, n - 1)
    if logspace:
        x = np.log(conf)
        edges = np.log(np.sort(np.exp(x))[index])
    else:
        x = conf
        edges = np.sort(conf)[index]
    pred = x[None, :] < edges[:, None]  # (B + 1) x n
    first_larger = np.argmax(pred, axis=0)
    bucket = np.where(pred[-1], first_larger, buckets) - 1
    ece = 0.0
    for i in range(buckets):
        keep = bucket == i
        count = keep.sum()
        m = max(count, 1)
        acc = hit[keep].sum() / m
        confidence = conf[keep].sum() / m
        ece += count * abs(acc - confidence)
    return float(ece / n)


def main():
    mapie_dir, oe_dir, kumar_dir, relplot_dir = sys.argv[1:5]
    sys.path[:0] = [mapie_dir, os.path.join(oe_dir, "utils"), kumar_dir, relplot_dir]
    stub = types.ModuleType("deprecation")
    stub.deprecated = lambda *a, **k: (lambda f: f)
    sys.modules.setdefault("deprecation", stub)
    from mapie.metrics.calibration import expected_calibration_error as mapie_ece
    from calibration_tools import calib_err
    import calibration.utils as kumar
    # relplot/__init__.py imports its plotting modules (seaborn, absent here): the package is
    # entered without it, and only relplot.metrics is imported.
    package = types.ModuleType("relplot")
    package.__path__ = [os.path.join(relplot_dir, "relplot")]
    sys.modules["relplot"] = package
    import relplot.metrics as relplot_metrics

    manifest = json.load(open(os.path.join(HERE, "datasets", "manifest.json")))
    out = {}
    for name in sorted(manifest):
        if manifest[name]["kind"] != "probs":
            continue
        p, y = load(name)
        n, K = p.shape
        pred = np.argmax(p, axis=1)
        conf = p[np.arange(n), pred]
        correct = (pred == y).astype(float)
        ties = len(np.unique(conf)) < n
        cases = {}

        def add(key, estimator, implementation, value, tolerance=1e-12, **extra):
            cases[key] = dict(estimator=estimator, implementation=implementation,
                              value=float(value), tolerance=tolerance, **extra)

        for B in (50, 10, 2):
            for strategy, binning in (("uniform", "equal_width"), ("quantile", "equal_mass")):
                add(f"mapie_top_{strategy}_{B}",
                    {"name": "ece", "convention": "mapie", "bins": B, "binning": binning},
                    "mapie", mapie_ece(correct.astype(int), p, num_bins=B,
                                       split_strategy=strategy))
                add(f"mapie_classwise_{strategy}_{B}",
                    {"name": "classwise_ece", "convention": "mapie", "bins": B,
                     "binning": binning}, "mapie",
                    mapie_ece(correct.astype(int), p, num_bins=B, split_strategy=strategy,
                              classwise=True, class_labels=y))
        if not ties:
            for beta in (100, 10, 7):
                if n < beta:
                    continue
                for pname, norm in (("2", "l2"), ("1", "l1"), ("infty", "max")):
                    add(f"calib_err_{beta}_{norm}",
                        {"name": "calib_err", "beta": beta, "norm": norm}, "outlier_exposure",
                        calib_err(conf.copy(), correct.copy(), p=pname, beta=beta))
        for power in (1.5, 3.0):
            for scheme, binning in ((kumar.get_equal_prob_bins, "equal_width"),
                                    (kumar.get_equal_bins, "equal_mass")):
                for mode, row in (("top-label", "ece"), ("marginal", "classwise_ece")):
                    add(f"kumar_lp{power}_{binning}_{row}",
                        {"name": row, "norm": "lp", "p": power, "bins": 15,
                         "binning": binning, "convention": "kumar"}, "kumar",
                        kumar._get_ce(p, y, power, False, 15, scheme, mode=mode))
        for B in (15, 10, 7):
            add(f"tensorflow_{B}", {"name": "ece", "convention": "tensorflow", "bins": B},
                "tensorflow_transcribed", tf_ece(conf, correct, B))
        for B in (20, 10, 3):
            if n < 2:
                continue
            value = tfp_ece_quantiles(conf, correct, B, logspace=False)
            logspace = tfp_ece_quantiles(conf, correct, B, logspace=True)
            add(f"tfp_quantiles_{B}",
                {"name": "ece", "convention": "tfp", "binning": "equal_mass", "bins": B},
                "tfp_transcribed", value, tfp_logspace=logspace,
                logspace_agrees=bool(abs(value - logspace) <= 1e-12))
        if K == 2:
            add("relplot_binary_smece", {"name": "smooth_ece", "scope": "binary"}, "relplot",
                relplot_metrics.smECE(f=p[:, 1], y=(y == 1).astype(int)), tolerance=1e-9)
        add("brier_top", {"name": "brier", "scope": "top"}, "own_direct",
            np.mean((conf - correct) ** 2))
        out[name] = cases
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
