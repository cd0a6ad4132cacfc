"""calbench's `xgboost` against probmetrics' XGBoostCalibrator, by hand (docs/recalibration.md).

Not run by the test suite: it needs Debian's python3-xgboost (1.7.4, the library calbench links),
which calbench does not depend on. The calibrator is re-stated here from its definition
(probmetrics/calibrators/trees.py at probkit/probmetrics 9d991bf: logit features floored at
log(FLT_MIN), max_depth 3, xgb.train's 10 rounds, StratifiedKFold(5, shuffle, seed 42), the
folds' mean probability), with the two XGBoost 2 defaults calbench sets explicitly
(tree_method "hist", the binary intercept by one Newton step). Temperature-miscalibrated
Dirichlet samples (alpha 0.6, T = 0.6), 2,000 fit and 2,000 new rows, K = 2 and 4.

    /usr/bin/python3 tests/data/xgboost/agreement.py build/release/calbench   (in a scratch folder)

Measured on 2026-12-03: folds 1 (use_cv = False) agree to 6.2e-8 (K = 2) and 7.1e-8 (K = 4),
XGBoost's float32 sigmoid and softmax against calbench's double; with 5 folds, drawn by
scikit-learn there and by a calbench stream here, the outputs differ by 0.0062 (K = 2) and
0.0077 (K = 4) on average, at most 0.058 and 0.068: the spread of the method over fold draws.
"""
import json, subprocess, sys
import numpy as np, xgboost as xgb
from sklearn.model_selection import StratifiedKFold
cb = sys.argv[1]
rng = np.random.default_rng(7)
def sample(K, n):
    c = rng.dirichlet([0.6] * K, size=n)
    y = np.array([rng.choice(K, p=ci) for ci in c])
    p = c ** (1 / 0.6); p /= p.sum(1, keepdims=True)
    return p, y
def feats(p):
    K = p.shape[1]
    t = np.log(np.finfo(np.float32).tiny)
    if K == 2:
        with np.errstate(divide="ignore"):
            a = np.clip(np.log(p[:, 1]), t, -t); b = np.clip(np.log1p(-p[:, 1]), t, -t)
        return (a - b).reshape(-1, 1)
    with np.errstate(divide="ignore"):
        return np.clip(np.log(p), t, None)
def probmetrics(p, y, q, cv):
    K = p.shape[1]; X = feats(p); Z = feats(q)
    params = {"objective": "binary:logistic" if K == 2 else "multi:softprob", "max_depth": 3,
              "tree_method": "hist", "nthread": 1}
    if K > 2: params["num_class"] = K
    splits = StratifiedKFold(5, shuffle=True, random_state=42).split(X, y) if cv else [(np.arange(len(y)), None)]
    out = []
    for tr, _ in splits:
        prm = dict(params)
        if K == 2: prm["base_score"] = 1 / (1 + np.exp(-4 * (y[tr].mean() - 0.5)))
        b = xgb.train(prm, xgb.DMatrix(X[tr], label=y[tr]), 10)
        r = b.predict(xgb.DMatrix(Z))
        out.append(np.vstack([1 - r, r]).T if K == 2 else r)
    return np.mean(out, 0)
def calbench(p, y, q, folds):
    np.savetxt("fit.csv", np.column_stack([y, p]), delimiter=",", fmt="%.17g")
    np.savetxt("new.csv", np.column_stack([np.zeros(len(q), int), q]), delimiter=",", fmt="%.17g")
    subprocess.run([cb, "recalibrate", "fit", "fit.csv", "--renormalize", "--method",
                    json.dumps({"name": "xgboost", "folds": folds}), "--out", "m.json"], check=True, capture_output=True)
    subprocess.run([cb, "recalibrate", "apply", "m.json", "new.csv", "--renormalize", "--out", "q.csv"], check=True, capture_output=True)
    import pandas as pd
    d = pd.read_csv("q.csv")
    return d[[c for c in d.columns if c.startswith("p_")]].to_numpy()
for K in (2, 4):
    p, y = sample(K, 2000); q, _ = sample(K, 2000)
    a = calbench(p, y, q, 1); b = probmetrics(p, y, q, False)
    print(f"K={K} folds=1 (use_cv=False): max |calbench - probmetrics| = {np.abs(a - b).max():.2e}")
    a = calbench(p, y, q, 5); b = probmetrics(p, y, q, True)
    print(f"K={K} 5 folds (different draws): mean |diff| = {np.abs(a - b).mean():.4f}, max {np.abs(a - b).max():.4f}")
