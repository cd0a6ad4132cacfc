#!/usr/bin/env python3
"""Alternatives for the `empirical` fit's calibration curve, measured on the transfer study's
models (docs/fit.md, "Alternatives for the curve measured"; issue #23): which choice puts the
fake's true top-label ECE closest to the model's, on the golden's fit rows and on other fit
splits?

A numpy transcription of lib/fit/empirical_fit (the same cubic B-spline on 8 knots at quantiles
0.5 % .. 99.5 % of the top-label logit, held constant beyond them, the same penalised Newton
fit; its own random folds and resamples, so the figures differ from `calbench fit`'s by the
shuffle). The fake's true top-label ECE is taken as the curve's distance from the diagonal over
the fit rows: mean |g(t) - sigmoid(t)| at K >= 3; at K = 2, where the top-label curve mixes
p_1 = z and p_1 = 1 - z, the mean of c_top - z within 50 equal-mass bins of z = max p, in
absolute value, weighted by the bins' rows (the bandwidth smoothing moves it by <= 0.0003,
docs/fit.md). Set 0 is the transfer study's fit rows (scripts/transfer-study.py); sets 1..S-1
are 5,000 rows drawn from the model's pool (numpy seed [77, s]).

Alternatives (columns of runs.csv):
- rows_em20, rows_em15: the fit rows' own plug-in ECE, 20 / 15 equal-mass bins;
- rows_em20_bc: the 20-bin one, bias-corrected by 20 bootstrap resamples (2 e - mean e*);
- cv: penalty by 5-fold cross-validated likelihood over {0.01, 0.1, 1, 10, 100, 1000,
  infinity (the identity)}, no correction;
- cv_shrink: cv with the noise correction (calbench fit's default until this study: bootstrap
  bias of the distance, coefficients shrunk, never enlarged);
- cv_sym: cv with the same correction allowed to enlarge the curve (kappa up to 3);
- bag: the mean of the 20 bootstrap refits' coefficients at the chosen penalty (bagging);
- fix0.1_raw, fix1.0_raw: a fixed penalty 0.1 or 1, no correction; *_sym: with the symmetric
  correction;
- target_bc20: the cv curve (penalty 1 when cv keeps the identity) scaled so that its distance
  equals rows_em20_bc (the fake's ECE set to the rows' bias-corrected ECE; kappa up to 5);
- cv_identity_0.1: cross-validated likelihood between the identity and the penalty 0.1 only,
  no correction (calbench fit's default since this study).

    /usr/bin/python3 scripts/curve-alternatives.py --out results/curve-alternatives
Writes OUT/runs.csv (one row per model and set) and OUT/table.md.

    /usr/bin/python3 scripts/curve-alternatives.py --rules --out results/penalty-rules
compares rules for choosing the penalty (no noise correction; all over the grid {0.01, 0.1, 1,
10, 100, 1000} and the identity) on 4 fit sets of 5,000 and of 1,000 rows per model (5,000:
the sets above; 1,000: drawn from the pool, numpy seed [78, s]), with the model's labels and
with labels redrawn from the model's own probabilities (calibrated: the truth is ECE 0,
tolerance 0.005; numpy seed [99, s, n]), where a good rule keeps the identity:
- identity_or_0.1: the likelihood's choice between the identity and 0.1;
- wide: the likelihood's choice over the whole grid (calbench fit's default before the rule);
- rule: calbench fit's default (lib/fit/empirical_fit.hpp): identity_or_0.1; then, if 0.1 won,
  0.01 when its cross-validated log-likelihood is higher by more than one standard error of the
  sum of the folds' differences; if the identity won, the likelihood's choice over the grid;
- rule_se: as rule, but the grid's best replaces the identity only when better by one SE.
Writes OUT/runs.csv (one row per model, size, labels and set) and OUT/table.md. --cache DIR keeps each model's
fit rows and pool as DIR/<model>.npz (made with the transfer study's data and models).
Needs numpy, scipy, scikit-learn.
"""

import argparse
import csv
import importlib.util
import os
import sys
import types

import numpy as np
from scipy.interpolate import BSpline

HERE = os.path.dirname(os.path.abspath(__file__))
def curve_data(p, y):
    p = p / p.sum(1, keepdims=True)
    K = p.shape[1]
    if K == 2:
        q = np.clip(p[:, 1], 1e-300, None); r = np.clip(p[:, 0], 1e-300, None)
        t = np.log(q) - np.log(r); yy = (y == 1).astype(float)
    else:
        top = p.argmax(1); z = p.max(1)
        rest = np.clip(1 - z, 1e-300, None)
        t = np.log(z) - np.log(rest); yy = (y == top).astype(float)
    return t, yy

def quantile_knots(t, count=8):
    t = np.sort(np.clip(t, -15, 15))
    out = []
    for j in range(count):
        q = 0.005 + 0.99 * j / (count - 1)
        pos = q * (len(t) - 1); b = int(pos); fr = pos - b
        v = t[b] + fr * (t[b + 1] - t[b]) if b + 1 < len(t) else t[b]
        if not out or v > out[-1] + 1e-6: out.append(v)
    return np.array(out) if len(out) >= 2 else None

def basis(t, knots):
    kv = np.r_[[knots[0]] * 3, knots, [knots[-1]] * 3]
    u = np.clip(t, knots[0], knots[-1])
    B = BSpline.design_matrix(u, kv, 3).toarray()
    return B, u

def sig(x): return 1 / (1 + np.exp(-x))
def softplus(x): return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))

def newton(B, u, y, lam, w=None):
    m = B.shape[1]; beta = np.zeros(m)
    if w is None: w = np.ones(len(y))
    obj = lambda b: lam * b @ b + np.sum(w * (softplus(u + B @ b) - y * (u + B @ b)))
    cur = obj(beta)
    for _ in range(100):
        s = u + B @ beta; g = sig(s)
        grad = B.T @ (w * (g - y)) + 2 * lam * beta
        H = (B * (w * g * (1 - g))[:, None]).T @ B + 2 * lam * np.eye(m)
        step = np.linalg.solve(H, grad)
        sc = 1.0
        for _ in range(40):
            cand = beta - sc * step; nxt = obj(cand)
            if nxt <= cur: break
            sc *= 0.5
        if not nxt <= cur: break
        gain = cur - nxt; beta = cand; cur = nxt
        if gain <= 1e-12 * (1 + abs(cur)) or sc * np.linalg.norm(step) < 1e-10: break
    return beta

def ll(beta, B, u, y):
    s = u + B @ beta
    return np.sum(y * s - softplus(s))

TOPBINS = {}
def set_k2(t):
    """K = 2: the top-label distance averages c_top within fine equal-mass bins of z = max(p1, 1 - p1)."""
    z = np.maximum(sig(t), 1 - sig(t)); order = np.argsort(z, kind="stable")
    bins = np.empty(len(t), int); nb = 50
    bins[order] = (np.arange(len(t)) * nb) // len(t)
    TOPBINS["t"] = t; TOPBINS["bins"] = bins; TOPBINS["nb"] = nb
def D(beta, B, u, t, kappa=1.0):
    c = sig(u + B @ (kappa * beta)); p = sig(t)
    if TOPBINS.get("t") is t:
        up = p >= 0.5
        r = np.where(up, c - p, (1 - c) - (1 - p))
        b = TOPBINS["bins"]
        s = np.bincount(b, r, TOPBINS["nb"])
        return np.sum(np.abs(s)) / len(t)
    return np.mean(np.abs(c - p))

PEN = [1000., 100., 10., 1., 0.1, 0.01]

def cv_scores(B, u, y, folds, pens=PEN):
    out = {np.inf: ll(np.zeros(B.shape[1]), B, u, y)}
    for lam in pens:
        sc = 0
        for f in range(folds.max() + 1):
            tr = folds != f; te = ~tr
            b = newton(B[tr], u[tr], y[tr], lam)
            sc += ll(b, B[te], u[te], y[te])
        out[lam] = sc
    return out

def scale_to(beta, B, u, t, target, kmax=1.0):
    if D(beta, B, u, t, 0.0) >= target: return 0.0
    lo, hi = 0.0, kmax
    if D(beta, B, u, t, kmax) <= target: return kmax
    for _ in range(50):
        mid = (lo + hi) / 2
        if D(beta, B, u, t, mid) < target: lo = mid
        else: hi = mid
    return hi

def binned_ece(conf, correct, bins=15):
    order = np.argsort(conf, kind="stable"); n = len(conf)
    edges = (np.arange(bins + 1) * n) // bins
    tot = 0
    for b in range(bins):
        idx = order[edges[b]:edges[b + 1]]
        if len(idx): tot += abs(correct[idx].mean() - conf[idx].mean()) * len(idx)
    return tot / n


def transfer_study():
    """scripts/transfer-study.py as a module (its name has a hyphen; calbench is not needed for
    its data and models)."""
    sys.modules.setdefault("calbench", types.ModuleType("calbench"))
    spec = importlib.util.spec_from_file_location("transfer_study",
                                                  os.path.join(HERE, "transfer-study.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def model_data(ts, name, K, seed, factory, cache):
    path = os.path.join(cache, f"{name}.npz") if cache else None
    if path and os.path.exists(path):
        return np.load(path)
    X, y = ts.make_data(K, seed, 20000 + 5000 + 500000)
    a, b = 20000, 25000
    model = factory().fit(X[:a], y[:a])
    d = {"p_fit": model.predict_proba(X[a:b]), "y_fit": y[a:b],
         "p_pool": model.predict_proba(X[b:]), "y_pool": y[b:]}
    if path:
        np.savez(path, **d)
    return d


def alternatives(m, s, p, y):
    t, yy = curve_data(p, y)
    knots = quantile_knots(t)
    TOPBINS.clear()
    if p.shape[1] == 2:
        set_k2(t)
    B, u = basis(t, knots)
    rng = np.random.default_rng([5, s, len(m)])
    folds = rng.permutation(len(y)) % 5
    sc = cv_scores(B, u, yy, folds)
    lam = max(sc, key=sc.get)
    res = {"model": m, "set": s, "lam": lam}
    c_b = p.max(1) / p.sum(1)
    corr_b = (p.argmax(1) == y).astype(float)
    e15 = binned_ece(c_b, corr_b, 15)
    e20 = binned_ece(c_b, corr_b, 20)
    boots = []
    for _ in range(20):
        j = rng.integers(0, len(yy), len(yy))
        boots.append(binned_ece(c_b[j], corr_b[j], 20))
    res["rows_em20"] = e20
    res["rows_em20_bc"] = 2 * e20 - np.mean(boots)
    res["rows_em15"] = e15
    beta = newton(B, u, yy, lam) if np.isfinite(lam) else np.zeros(B.shape[1])
    d0 = D(beta, B, u, t)
    res["cv"] = d0
    if np.isfinite(lam):
        Ds, betas = [], []
        for _ in range(20):
            j = rng.integers(0, len(yy), len(yy))
            bb = newton(B[j], u[j], yy[j], lam)
            betas.append(bb)
            Ds.append(D(bb, B, u, t))
        tgt = 2 * d0 - np.mean(Ds)
        res["cv_shrink"] = D(beta, B, u, t, scale_to(beta, B, u, t, tgt, 1.0)) if tgt < d0 else d0
        res["cv_sym"] = D(beta, B, u, t, scale_to(beta, B, u, t, max(tgt, 0), 3.0))
        res["bag"] = D(np.mean(betas, 0), B, u, t)
    else:
        res["cv_shrink"] = res["cv_sym"] = res["bag"] = 0.0
    for lamf in (0.1, 1.0):
        bf = newton(B, u, yy, lamf)
        df = D(bf, B, u, t)
        Ds = []
        for _ in range(20):
            j = rng.integers(0, len(yy), len(yy))
            Ds.append(D(newton(B[j], u[j], yy[j], lamf), B, u, t))
        tg = max(2 * df - np.mean(Ds), 0)
        res[f"fix{lamf}_raw"] = df
        res[f"fix{lamf}_sym"] = D(bf, B, u, t, scale_to(bf, B, u, t, tg, 3.0))
    bb = beta if np.isfinite(lam) else newton(B, u, yy, 1.0)
    res["target_bc20"] = D(bb, B, u, t, scale_to(bb, B, u, t, max(res["rows_em20_bc"], 0), 5.0))
    # calbench fit's default since this study: cross-validated likelihood between the identity
    # and the penalty 0.1 only, no correction.
    sc01 = cv_scores(B, u, yy, folds, pens=[0.1])
    lam01 = max(sc01, key=sc01.get)
    res["cv_identity_0.1"] = D(newton(B, u, yy, lam01), B, u, t) if np.isfinite(lam01) else 0.0
    return res


RULES = ["identity_or_0.1", "wide", "rule", "rule_se"]


def fold_scores(B, u, y, folds, lam):
    out = []
    for f in range(folds.max() + 1):
        tr = folds != f; te = ~tr
        b = ca_newton(B, u, y, tr, lam)
        out.append(ll(b, B[te], u[te], y[te]))
    return np.array(out)


def ca_newton(B, u, y, rows, lam):
    return np.zeros(B.shape[1]) if not np.isfinite(lam) else newton(B[rows], u[rows], y[rows], lam)


def better_by_one_se(a, b):
    """Fold scores a beat b by more than one standard error of the sum of the differences."""
    d = a - b
    return d.sum() > np.sqrt(len(d)) * d.std(ddof=1)


def penalty_rules(m, s, p, y):
    """The penalty each rule chooses and the fake's top-label ECE (the curve's distance) it gives."""
    t, yy = curve_data(p, y)
    TOPBINS.clear()
    if p.shape[1] == 2:
        set_k2(t)
    B, u = basis(t, quantile_knots(t))
    rng = np.random.default_rng([5, s, len(m)])
    folds = rng.permutation(len(y)) % 5
    scores = {lam: fold_scores(B, u, yy, folds, lam) for lam in [np.inf] + PEN}
    total = {lam: v.sum() for lam, v in scores.items()}
    best = lambda grid: max(grid, key=lambda lam: (total[lam], lam == np.inf))
    first = best([np.inf, 0.1])
    wide = best([np.inf] + PEN)
    if np.isfinite(first):
        rule = rule_se = 0.01 if better_by_one_se(scores[0.01], scores[0.1]) else 0.1
    else:
        rule = wide
        finite = best(PEN)
        rule_se = finite if better_by_one_se(scores[finite], scores[np.inf]) else np.inf
    out = {}
    for name, lam in zip(RULES, (first, wide, rule, rule_se)):
        beta = newton(B, u, yy, lam) if np.isfinite(lam) else np.zeros(B.shape[1])
        out[name] = (lam, D(beta, B, u, t))
    return out


def rules_main(args, ref, ts, only):
    rows = []
    for name, K, seed, factory in ts.study_models(False, only):
        d = model_data(ts, name, K, seed, factory, args.cache)
        for n in (5000, 1000):
            for s in range(args.sets):
                if n == 5000 and s == 0:
                    p, y = d["p_fit"], d["y_fit"]
                else:
                    rng = np.random.default_rng([77 if n == 5000 else 78, s])
                    i = rng.choice(len(d["y_pool"]), n, replace=False)
                    p, y = d["p_pool"][i], d["y_pool"][i]
                for labels in ("model", "calibrated"):
                    if labels == "calibrated":
                        q = p / p.sum(1, keepdims=True)
                        rng = np.random.default_rng([99, s, n])
                        y = (rng.random(n)[:, None] > np.cumsum(q, 1)).sum(1)
                        truth, tol = 0.0, 0.005
                    else:
                        truth, tol = ref[name]
                    row = {"model": name, "n": n, "labels": labels, "set": s, "truth": truth,
                           "tolerance": tol}
                    for rule, (lam, ece) in penalty_rules(name, s, p, y).items():
                        row[rule + "_penalty"] = lam
                        row[rule] = ece
                    rows.append(row)
            print(name, n, file=sys.stderr, flush=True)
    write_results(args.out, rows, rules_table(rows))


def rules_table(rows):
    groups = [(labels, n) for labels in ("model", "calibrated") for n in (5000, 1000)]
    head = " | ".join(f"{labels} labels, n = {n}" for labels, n in groups)
    lines = [f"| rule | {head} |", "|---|" + "---|" * len(groups)]
    for rule in RULES:
        cells = []
        for labels, n in groups:
            rs = [r for r in rows if r["labels"] == labels and r["n"] == n]
            hits = sum(abs(r[rule] - r["truth"]) <= r["tolerance"] for r in rs)
            mae = np.mean([abs(r[rule] - r["truth"]) for r in rs])
            cells.append(f"{hits}/{len(rs)} ({mae:.4f})")
        lines.append(f"| {rule} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Fits whose fake's top-label ECE is within the tolerance of the truth (model "
                 "labels: the pool's, max(0.005, 3 pool SEs); calibrated labels: 0, 0.005), of "
                 "the models x 4 fit sets; in brackets the mean absolute error.")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--sets", type=int, default=4)
    parser.add_argument("--cache", default="")
    parser.add_argument("--models", default="", help="comma-separated subset")
    parser.add_argument("--rules", action="store_true",
                        help="compare the penalty rules (above) instead of the alternatives")
    parser.add_argument("--reference", default=os.path.join(HERE, "..", "tests", "golden",
                                                            "transfer_study", "models.csv"),
                        help="the models' pool ECEs and tolerances (the transfer study's)")
    args = parser.parse_args()
    ref = {r["model"]: (float(r["ece_top_pool"]), float(r["ece_tolerance"]))
           for r in csv.DictReader(open(args.reference))}
    ts = transfer_study()
    only = [m for m in args.models.split(",") if m]
    if args.rules:
        return rules_main(args, ref, ts, only)
    rows = []
    for name, K, seed, factory in ts.study_models(False, only):
        d = model_data(ts, name, K, seed, factory, args.cache)
        for s in range(args.sets):
            if s == 0:
                p, y = d["p_fit"], d["y_fit"]
            else:
                rng = np.random.default_rng([77, s])
                i = rng.choice(len(d["y_pool"]), 5000, replace=False)
                p, y = d["p_pool"][i], d["y_pool"][i]
            rows.append(alternatives(name, s, p, y))
            print(name, s, file=sys.stderr, flush=True)
    write_results(args.out, rows, table(rows, ref, args.sets))


def write_results(out, rows, text):
    """OUT/runs.csv (the rows) and OUT/table.md (the text, also printed)."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    print(text)


def table(rows, ref, sets):
    keys = [k for k in rows[0] if k not in ("model", "set", "lam")]
    models = sorted({r["model"] for r in rows})
    head = " | ".join(f"set {s}" for s in range(sets))
    lines = [f"| alternative | {head} | all | mean abs. error |",
             "|---|" + "---|" * sets + "---|---|"]
    for k in keys:
        hits = [sum(abs(r[k] - ref[r["model"]][0]) <= ref[r["model"]][1]
                    for r in rows if r["set"] == s) for s in range(sets)]
        mae = np.mean([abs(r[k] - ref[r["model"]][0]) for r in rows])
        lines.append(f"| {k} | " + " | ".join(str(h) for h in hits) +
                     f" | {sum(hits)}/{len(models) * sets} | {mae:.4f} |")
    lines.append("")
    lines.append(f"Models within max(0.005, 3 pool SEs) of the pool's top-label ECE, per fit set "
                 f"(of {len(models)}).")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
