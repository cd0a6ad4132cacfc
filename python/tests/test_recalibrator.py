"""calbench.Recalibrator (ctest: python.recalibrator): known answers on data calbench did not
generate (scikit-learn models' outputs), scikit-learn's estimator protocol, and one fitted model
shared with the command line (`calbench recalibrate fit|apply`, CALBENCH_BIN).

Known answers: `logistic` for K = 2 is the unpenalised maximum-likelihood logistic regression of
1{y = 1} on logit p_1 (scikit-learn's LogisticRegression(penalty=None); the one-vs-rest pair is
symmetric, so the renormalisation changes nothing), `platt` is scikit-learn's sigmoid
calibration with Platt's targets on the same feature (sklearn.calibration._sigmoid_calibration),
`isotonic` is IsotonicRegression(out_of_bounds="clip") per class, renormalised, and
`temperature` minimises the mean NLL over T (the derivative is 0 at the fitted T).
"""

import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import calbench

HERE = os.path.dirname(os.path.abspath(__file__))


def model_outputs(classes, n, seed):
    """(p, y) of a Gaussian naive Bayes model (overconfident) on held-out synthetic data."""
    from sklearn.datasets import make_classification
    from sklearn.naive_bayes import GaussianNB

    X, y = make_classification(n_samples=2 * n, n_features=8, n_informative=5,
                               n_classes=classes, n_clusters_per_class=1, random_state=seed)
    model = GaussianNB().fit(X[:n], y[:n])
    p = model.predict_proba(X[n:])
    return np.clip(p, 1e-12, 1.0) / np.clip(p, 1e-12, 1.0).sum(axis=1, keepdims=True), y[n:]


def logit(s):
    s = np.clip(s, np.finfo(float).tiny, 1.0)
    return np.log(s) - np.log1p(-np.minimum(s, 1 - 1e-16))


class KnownAnswers(unittest.TestCase):
    def test_logistic_is_unpenalised_logistic_regression(self):
        from sklearn.linear_model import LogisticRegression

        p, y = model_outputs(2, 800, seed=3)
        r = calbench.Recalibrator({"name": "logistic"}).fit(p, y)
        state = json.loads(r.to_json())["model"]["parts"][1]
        f = logit(p[:, 1]).reshape(-1, 1)
        ref = LogisticRegression(penalty=None, tol=1e-12, max_iter=100000,
                                 solver="newton-cg").fit(f, y == 1)
        # newton-cg to 1e-12: both are the MLE to about 1e-8.
        self.assertAlmostEqual(state["slope"], ref.coef_[0, 0], delta=1e-6)
        self.assertAlmostEqual(state["intercept"], ref.intercept_[0], delta=1e-6)
        q = r.predict_proba(p)
        np.testing.assert_allclose(q[:, 1], ref.predict_proba(f)[:, 1], atol=1e-7)

    def test_platt_is_sklearn_sigmoid_calibration(self):
        from sklearn.calibration import _sigmoid_calibration

        p, y = model_outputs(2, 800, seed=4)
        state = json.loads(calbench.Recalibrator("platt").fit(p, y).to_json())["model"]
        a, b = _sigmoid_calibration(logit(p[:, 1]), y == 1)  # 1 / (1 + exp(a f + b))
        self.assertAlmostEqual(state["parts"][1]["slope"], -a, delta=1e-5)
        self.assertAlmostEqual(state["parts"][1]["intercept"], -b, delta=1e-5)

    def test_platt_probability_is_calibrated_classifier_cv_sigmoid(self):
        # CalArena's "platt": scikit-learn's CalibratedClassifierCV(method="sigmoid") on the
        # probabilities of a prefit model (one map on p_1 for K = 2, one-vs-rest for K = 3).
        from sklearn.base import BaseEstimator, ClassifierMixin
        from sklearn.calibration import CalibratedClassifierCV

        class Prefit(ClassifierMixin, BaseEstimator):
            def __init__(self, classes=2):
                self.classes = classes
                self.classes_ = np.arange(classes)

            def fit(self, X, y):
                return self

            def predict_proba(self, X):
                return X

        for classes, seed in ((2, 5), (3, 6)):
            p, y = model_outputs(classes, 800, seed=seed)
            ours = calbench.Recalibrator("platt_probability").fit(p, y).predict_proba(p)
            theirs = CalibratedClassifierCV(Prefit(classes), cv="prefit", method="sigmoid")
            np.testing.assert_allclose(ours, theirs.fit(p, y).predict_proba(p), atol=1e-6)

    def test_new_methods_fit_save_and_load(self):
        # Every method of issue 26, and xgboost, goes through fit, predict_proba, save and load.
        p, y = model_outputs(3, 600, seed=7)
        for method in ("quadratic", "centred_isotonic", "venn_abers", "kernel", "smoothing_spline",
                       "cdf_spline", "svs", "sms", "xgboost",
                       {"name": "laplace_mixture", "method": {"name": "isotonic"}}):
            r = calbench.Recalibrator(method).fit(p, y)
            q = r.predict_proba(p)
            np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "model.json")
                r.save(path)
                np.testing.assert_array_equal(calbench.Recalibrator.load(path).predict_proba(p), q)

    def test_isotonic_is_sklearn_isotonic_regression(self):
        from sklearn.isotonic import IsotonicRegression

        p, y = model_outputs(3, 600, seed=5)
        p_new, _ = model_outputs(3, 300, seed=6)
        q = calbench.Recalibrator("isotonic").fit(p, y).predict_proba(p_new)
        ref = np.column_stack([
            IsotonicRegression(out_of_bounds="clip").fit(p[:, k], y == k).predict(p_new[:, k])
            for k in range(3)])
        sums = ref.sum(axis=1, keepdims=True)
        ref = np.where(sums > 0, ref / np.where(sums > 0, sums, 1), 1 / 3)
        np.testing.assert_allclose(q, ref, atol=1e-12)

    def test_temperature_is_the_nll_minimum(self):
        p, y = model_outputs(3, 1000, seed=7)
        r = calbench.Recalibrator("temperature").fit(p, y)
        T = r.parameters_["temperature"]
        z = np.log(p)

        def nll(t):
            s = z / t
            s = s - s.max(axis=1, keepdims=True)
            return np.mean(np.log(np.exp(s).sum(axis=1)) - s[np.arange(len(y)), y])

        # The central difference of the NLL in log T vanishes at the optimum: its size is
        # O(h^2) = 1e-10 there, while 1 % away from the optimum it is about 1e-2 NLL''.
        h = 1e-5
        slope = (nll(T * np.exp(h)) - nll(T * np.exp(-h))) / (2 * h)
        self.assertLess(abs(slope), 1e-7)
        self.assertLess(nll(T), nll(T * 1.01))
        self.assertLess(nll(T), nll(T / 1.01))
        self.assertGreater(T, 1.0)  # naive Bayes is overconfident


class Protocol(unittest.TestCase):
    def test_estimator_protocol(self):
        from sklearn.base import clone

        p, y = model_outputs(3, 300, seed=8)
        r = calbench.Recalibrator({"name": "histogram_binning", "bins": 5})
        self.assertEqual(r.get_params(), {"method": {"name": "histogram_binning", "bins": 5},
                                          "renormalize": False})
        with self.assertRaises(calbench.NotFittedError) as caught:
            r.predict_proba(p)
        self.assertIn("not fitted yet", str(caught.exception))
        self.assertIs(r.fit(p, y), r)
        q = r.predict_proba(p)
        self.assertEqual(q.shape, p.shape)
        np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
        c = clone(r)
        self.assertEqual(c.get_params(), r.get_params())
        with self.assertRaises(calbench.NotFittedError):
            c.predict_proba(p)
        r.set_params(method="temperature")
        with self.assertRaises(calbench.NotFittedError):
            r.predict_proba(p)  # a new method needs a new fit
        with self.assertRaises(ValueError):
            r.set_params(bins=3)

    def test_bad_input(self):
        p, y = model_outputs(3, 100, seed=9)
        with self.assertRaisesRegex(ValueError, "unknown recalibration method \"nope\""):
            calbench.Recalibrator("nope").fit(p, y)
        with self.assertRaisesRegex(ValueError, "y: row 2: label 1.5"):
            calbench.Recalibrator("temperature").fit(p[:3], np.array([0.0, 1.0, 1.5]))
        r = calbench.Recalibrator("temperature").fit(p, y)
        with self.assertRaisesRegex(ValueError, "4 classes, but the model was fitted on 3"):
            r.predict_proba(np.full((2, 4), 0.25))

    def test_rounded_rows_and_float_labels(self):
        p, y = model_outputs(3, 400, seed=10)
        rounded = np.round(p, 4)
        with self.assertRaisesRegex(ValueError, "renormalize=True"):
            calbench.Recalibrator("temperature").fit(rounded, y)
        r = calbench.Recalibrator("temperature", renormalize=True).fit(rounded, y.astype(float))
        self.assertAlmostEqual(r.parameters_["temperature"],
                               calbench.Recalibrator("temperature").fit(p, y)
                               .parameters_["temperature"], delta=1e-2)
        self.assertGreater(calbench.estimate({"name": "ece"}, rounded, y.astype(float),
                                             renormalize=True), 0)


class SharedWithCommandLine(unittest.TestCase):
    def test_same_model_file_and_outputs(self):
        binary = os.environ.get("CALBENCH_BIN")
        if not binary:
            self.skipTest("CALBENCH_BIN is not set")
        p, y = model_outputs(3, 500, seed=11)
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "fit.csv")
            # %.17g reads back as the same doubles, so both sides fit on the same numbers.
            np.savetxt(data, np.column_stack([y, p]), delimiter=",", fmt="%.17g",
                       header="label,p0,p1,p2", comments="")
            for method in ({"name": "dirichlet", "lambda": 0.1, "mu": 0.1}, {"name": "bbq"},
                           {"name": "classwise", "method": {"name": "isotonic"}}):
                model = os.path.join(d, "model.json")
                subprocess.run([binary, "recalibrate", "fit", data, "--method",
                                json.dumps(method), "--out", model], check=True,
                               capture_output=True)
                r = calbench.Recalibrator(method).fit(p, y)
                with open(model, encoding="utf-8") as f:
                    self.assertEqual(f.read(), r.to_json(), method)
                out = os.path.join(d, "q.npy")
                subprocess.run([binary, "recalibrate", "apply", model, data, "--out", out],
                               check=True, capture_output=True)
                np.testing.assert_array_equal(np.load(out), r.predict_proba(p))
                loaded = calbench.Recalibrator.load(model)
                np.testing.assert_array_equal(loaded.predict_proba(p), r.predict_proba(p))
                r.save(os.path.join(d, "again.json"))
                with open(os.path.join(d, "again.json"), encoding="utf-8") as f:
                    self.assertEqual(f.read(), r.to_json())


if __name__ == "__main__":
    unittest.main()
