"""Reference outputs of independent implementations for calbench's platt_probability,
quadratic and centred_isotonic methods (provenance: README.md beside this file).

Run once with /usr/bin/python3 (numpy 1.24.2, scikit-learn 1.2.1, pandas 1.5.3), CIR_MODEL
pointing at cir-model's src/cir_model/cir_model.py (mathijs02/cir-model @d59f692) and
VENN_ABERS at venn-abers' src/venn_abers.py (ip200/venn-abers @c122e53) and GUPTA_SPLINE at
spline-calibration's utilities/spline.py (kartikgupta-at-anu/spline-calibration @b6a2f60,
its imports of matplotlib and its own utilities stubbed: the Spline class uses neither) and
SPLINECALIB at a directory holding numeristical/splinecalib @ee658fa's splinecalib/ package
(run as is, its compiled loss_fun_c replaced by the numpy transcription below); the outputs are
committed, the tests read them and never run this script.
"""
import importlib.util
import os
import sys

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = np.finfo(float).tiny  # calbench's logit clamp, 2.2e-308


def model_outputs(classes, n_fit, n_test, seed):
    """(p, y) of a Gaussian naive Bayes model (overconfident) on held-out synthetic data."""
    n_train = 1000
    X, y = make_classification(n_samples=n_train + n_fit + n_test, n_features=8,
                               n_informative=5, n_classes=classes, n_clusters_per_class=1,
                               flip_y=0.05, random_state=seed)
    model = GaussianNB().fit(X[:n_train], y[:n_train])
    p = np.clip(model.predict_proba(X[n_train:]), 1e-12, 1.0)
    p /= p.sum(axis=1, keepdims=True)
    return (p[:n_fit], y[n_train:n_train + n_fit]), (p[n_fit:], y[n_train + n_fit:])


def write_rows(name, p, y=None):
    with open(os.path.join(HERE, name), "w") as f:
        for i in range(len(p)):
            head = [str(int(y[i]))] if y is not None else []
            f.write(",".join(head + [repr(float(v)) for v in p[i]]) + "\n")


class Identity(ClassifierMixin, BaseEstimator):
    """A prefit classifier whose predict_proba is its input (probmetrics' IdentityEstimator)."""

    def __init__(self, classes):
        self.classes = classes
        self.classes_ = np.arange(classes)

    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        return X


def logit(s):
    return np.log(np.maximum(s, TINY)) - np.log(np.maximum(1.0 - s, TINY))


def quadratic_fit(s, o):
    z = logit(s)
    F = np.stack([np.ones_like(z), z, z * z], axis=1)
    lr = LogisticRegression(penalty=None, fit_intercept=False, solver="lbfgs", tol=1e-12,
                            max_iter=100000).fit(F, o)
    return lr.coef_[0]


def load(variable, name):
    spec = importlib.util.spec_from_file_location(name, os.environ[variable])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def venn_abers(va, p, y, pt):
    """probmetrics' "ivap": VennAbersCalibrator().predict_proba(p_cal, y_cal, p_test,
    va_type="one_vs_all"), i.e. binary VennAbers for two classes, one_vs_all otherwise."""
    if p.shape[1] == 2:
        return va.VennAbers().fit(p, y).predict_proba(pt)[0]
    return va.predict_proba_prefitted_va(p, y, pt, va_tpe="one_vs_all")[0]


def cir_binary(CIR, s_fit, o_fit, s_test):
    """probmetrics' CenteredIsotonicRegressionCalibrator in float64."""
    model = CIR().fit(s_fit, o_fit)
    return np.clip(model.transform(np.clip(s_test, s_fit.min(), s_fit.max())), 0.0, 1.0)


def loss_fun_c_module():
    """numpy transcription of splinecalib's loss_fun_c.pyx (pen_ll_fun_grad, max_exp = 50)."""
    import types
    module = types.ModuleType("loss_fun_c")

    def pen_ll_fun_grad(beta, X, y, lam=0.0, weight_vec=None, max_exp=50):
        w = np.ones(len(y)) if weight_vec is None else weight_vec
        bx = X.dot(beta)
        z = 1 / (1 + np.exp(-bx))
        grad = np.mean(X * ((w * (-y * (1 - z) + (1 - y) * z)).reshape(-1, 1)), axis=0)
        grad = grad + beta * 2 * lam / len(beta)
        pos = np.where(bx >= -max_exp, np.log(np.exp(-np.maximum(bx, -max_exp)) + 1), -bx)
        neg = np.where(bx <= max_exp, np.log(np.exp(np.minimum(bx, max_exp)) + 1), bx)
        ll = np.sum(np.where(y > 0, w * y * pos, 0) + np.where(y < 1, w * (1 - y) * neg, 0))
        return ll / X.shape[0] + lam * np.sum(beta * beta) / len(beta), grad

    module.pen_ll_fun_grad = pen_ll_fun_grad
    module.pen_ll_fun = lambda *a, **k: pen_ll_fun_grad(*a, **k)[0]
    return module


def calbench_knots(scores):
    """calbench's deterministic knot rule (smoothing_spline.hpp): min, max and 28 evenly spaced
    ranks among the interior distinct scores (the package samples them at random)."""
    u = np.unique(scores)
    if len(u) <= 30:
        return u
    interior = u[1:-1]
    ranks = [int(np.floor(i * (len(interior) - 1) / 27 + 0.5)) for i in range(28)]
    return np.concatenate(([u[0], u[-1]], interior[ranks]))


def smoothing_spline(s_fit, o_fit, s_test, lam):
    """SplineCalib with fixed knots (knot_sample_size=0, add_knots = calbench's knots plus
    0.1, ..., 0.9) and a fixed lambda, its final fit taken on every row (calbench's departure:
    the package refits on the training fifths only): logreg_cv replaced by one L-BFGS-B fit."""
    import scipy.optimize
    sys.path.insert(0, os.environ["SPLINECALIB"])
    sys.modules["loss_fun_c"] = loss_fun_c_module()
    import splinecalib.splinecalib as sc

    def fit_all_rows(X, y, num_folds, reg_param_vec, method, max_iter, tol, weightvec=None,
                     **kwargs):
        f = sys.modules["loss_fun_c"].pen_ll_fun_grad
        res = scipy.optimize.minimize(f, np.zeros(X.shape[1]), (X, y, float(reg_param_vec[0]),
                                      weightvec), method="L-BFGS-B", jac=True,
                                      options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 100000})
        return reg_param_vec[0], None, res

    sc.logreg_cv = fit_all_rows
    knots = np.concatenate((calbench_knots(s_fit), np.linspace(0.1, 0.9, 9)))
    model = sc.SplineCalib(knot_sample_size=0, add_knots=knots, reg_param_vec=[lam])
    model.fit(s_fit, o_fit)
    return model.calibrate(s_test)


def cdf_spline(Spline, s_fit, o_fit, s_test, knots=6):
    """Gupta et al.'s get_recalibration_function with its Spline class ("natural", 6 knots),
    then linear interpolation (numpy.interp) over the sorted fit scores, ties averaged, clipped
    to [0, 1] (calbench's two stated departures from the authors' interpolated_function)."""
    order = s_fit.argsort(kind="stable")
    scores, labels = s_fit[order], o_fit[order]
    n = len(scores)
    integrated = np.cumsum(labels) / n - np.cumsum(scores) / n
    percentile = np.linspace(0.0, 1.0, n)
    spline = Spline(percentile, integrated, np.linspace(0.0, 1.0, knots), runout="natural")
    acc = spline.evaluate_deriv(percentile) + scores
    x, inverse = np.unique(scores, return_inverse=True)
    y = np.bincount(inverse, weights=acc) / np.bincount(inverse)
    return np.clip(np.interp(s_test, x, y), 0.0, 1.0)


def structured_scaling(p, y, pt, matrix):
    """probmetrics' SVSCalibrator / SMSCalibrator with their defaults (ridge, lambdas 1,
    rho = tau = 1), written from calibrators.py in numpy/scipy: temperature scaling (here by
    scipy's bounded scalar search on log(1/T)), mixed with uniform at eps = 1/(n + 1), then the
    penalised vector or matrix scaling of log q0 by BFGS on its analytic gradient; logits are
    log p clamped at the smallest double (calbench's; probmetrics clamps at float32's)."""
    import scipy.optimize
    from scipy.special import log_softmax, softmax
    n, K = p.shape
    onehot = np.eye(K)[y]
    z = np.log(np.maximum(p, TINY))
    nll = lambda u: -np.mean(np.sum(onehot * log_softmax(np.exp(u) * z, axis=1), axis=1))
    u = scipy.optimize.minimize_scalar(nll, bounds=(-7, 7), method="bounded",
                                       options={"xatol": 1e-12}).x
    eps = 1.0 / (n + 1)

    def ts_mix(x):
        return (1 - eps) * softmax(np.exp(u) * np.log(np.maximum(x, TINY)), axis=1) + eps / K

    z0 = np.log(ts_mix(p))
    c = K / n
    c_off = K * (K - 1) / n

    def unpack(theta):
        if matrix:
            return np.eye(K) + theta[:K * K].reshape(K, K), theta[K * K:]
        return np.diag(1.0 + theta[:K]), theta[K:]

    def loss(theta):
        W, b = unpack(theta)
        logits = z0 @ W.T + b
        G = (softmax(logits, axis=1) - onehot) / n
        f = -np.mean(np.sum(onehot * log_softmax(logits, axis=1), axis=1))
        D = W - np.eye(K)
        diag = np.diag(D)
        off = D - np.diag(diag)
        f += c * np.sum(b * b) + c * np.sum(diag * diag) + c_off * np.sum(off * off)
        gW = G.T @ z0 + 2 * c * np.diag(diag) + 2 * c_off * off
        gb = G.sum(axis=0) + 2 * c * b
        return f, np.concatenate((gW.ravel() if matrix else np.diag(gW), gb))

    size = K * K + K if matrix else 2 * K
    theta = scipy.optimize.minimize(loss, np.zeros(size), jac=True, method="BFGS",
                                    options={"gtol": 1e-12, "maxiter": 100000}).x
    W, b = unpack(theta)
    return softmax(np.log(ts_mix(pt)) @ W.T + b, axis=1)


def log_kernel(p_at, centres, b):
    """log Dir(p_at_i; centres_j / b + 1), from the formula (Popordanoska et al. 2022)."""
    from scipy.special import gammaln
    a = centres / b + 1.0
    log_norm = gammaln(a).sum(axis=1) - gammaln(a.sum(axis=1))
    return np.log(np.maximum(p_at, TINY)) @ (a - 1.0).T - log_norm[None, :]


def kernel_calibration(p, y, pt):
    """Nadaraya-Watson with the Dirichlet kernel, b on the grid by leave-one-out log loss."""
    from scipy.special import logsumexp
    grid = list(np.logspace(-5, -1, 15)) + list(np.linspace(0.2, 1, 5))
    onehot = np.eye(p.shape[1])[y]
    floor = np.log(TINY)
    best, best_loss = None, np.inf
    for b in grid:
        L = log_kernel(p, p, b)
        np.fill_diagonal(L, -np.inf)
        log_total = logsumexp(L, axis=1)
        log_own = np.array([logsumexp(L[i, y == y[i]]) if np.any(np.isfinite(L[i, y == y[i]]))
                            else -np.inf for i in range(len(y))])
        loss = -np.maximum(log_own - log_total, floor).sum()
        if loss < best_loss:
            best, best_loss = b, loss
    L = log_kernel(pt, p, best)
    w = np.exp(L - L.max(axis=1, keepdims=True))
    q = w @ onehot
    return best, q / q.sum(axis=1, keepdims=True)


def main():
    CIR = load("CIR_MODEL", "cir_model_src").CenteredIsotonicRegression
    va = load("VENN_ABERS", "venn_abers_src")
    import types
    for stub in ("matplotlib", "matplotlib.pyplot", "utilities"):
        sys.modules.setdefault(stub, types.ModuleType(stub))
    Spline = load("GUPTA_SPLINE", "gupta_spline_src").Spline
    for classes, seed in ((2, 11), (3, 12)):
        (p, y), (pt, yt) = model_outputs(classes, 500, 300, seed)
        write_rows(f"k{classes}_fit.csv", p, y)
        write_rows(f"k{classes}_test.csv", pt, yt)
        platt = CalibratedClassifierCV(Identity(classes), cv="prefit", method="sigmoid")
        write_rows(f"platt_probability_k{classes}.csv", platt.fit(p, y).predict_proba(pt))
        # On the test rows and in sample (every score tied with a fit score).
        write_rows(f"venn_abers_k{classes}.csv", venn_abers(va, p, y, pt))
        write_rows(f"venn_abers_k{classes}_in_sample.csv", venn_abers(va, p, y, p))
        # Top label: g(max p) on the test rows.
        top = cdf_spline(Spline, p.max(axis=1), (p.argmax(axis=1) == y).astype(float),
                         pt.max(axis=1))
        write_rows(f"cdf_spline_k{classes}_top.csv", top.reshape(-1, 1))
        if classes == 2:
            g = smoothing_spline(p[:, 1], (y == 1).astype(float), pt[:, 1], 0.1)
            write_rows("smoothing_spline_k2_l0.1.csv", np.stack([1 - g, g], axis=1))
        if classes == 3:
            write_rows("svs_k3.csv", structured_scaling(p, y, pt, matrix=False))
            write_rows("sms_k3.csv", structured_scaling(p, y, pt, matrix=True))
        b, q = kernel_calibration(p, y, pt)
        write_rows(f"kernel_k{classes}_bandwidth.csv", [[b]])
        write_rows(f"kernel_k{classes}.csv", q)
        if classes == 2:
            w = quadratic_fit(p[:, 1], (y == 1).astype(float))
            z = logit(pt[:, 1])
            q1 = 1.0 / (1.0 + np.exp(-(w[0] + w[1] * z + w[2] * z * z)))
            write_rows("quadratic_k2_coefficients.csv", [w])
            write_rows("quadratic_k2.csv", np.stack([1 - q1, q1], axis=1))
            g = cir_binary(CIR, p[:, 1], (y == 1).astype(float), pt[:, 1])
            write_rows("centred_isotonic_k2.csv", np.stack([1 - g, g], axis=1))
        else:
            q = np.stack([cir_binary(CIR, p[:, k], (y == k).astype(float), pt[:, k])
                          for k in range(classes)], axis=1)
            q = np.clip(q, 1e-30, np.inf)
            write_rows(f"centred_isotonic_k{classes}.csv", q / q.sum(axis=1, keepdims=True))


if __name__ == "__main__":
    sys.exit(main())
