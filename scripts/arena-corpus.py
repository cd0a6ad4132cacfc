#!/usr/bin/env python3
"""The arena's corpus of real models (issue #39, docs/arena.md "The corpus"): at least 40 real
models' held-out outputs, each fitted by today's `calbench fit` (the `empirical` family with its
classwise map), plus generators of other calibration shapes matched to some of those models, and
the arena configs that run them.

    /usr/bin/python3 scripts/arena-corpus.py [--calbench BIN] [--out configs/arena/corpus]
                                             [--models NAME,...] [--configs-only]
                                             [--cost [--cost-configs corpus_binary_mid,...]]

Models (MODELS below; every split, subsample and model has a fixed seed):
- scikit-learn families (logistic regression, Gaussian naive Bayes, random forest, histogram
  gradient boosting, MLP, SVM with Platt's sigmoid, k-NN, decision tree) trained on half of a
  data set (at most TRAIN_CAP rows) and predicting the other half (the held-out rows), on
  scikit-learn's bundled sets, on tables of Debian's r-cran-mlbench and r-cran-modeldata (read
  with python3-rdata: `apt-get install -y r-cran-mlbench r-cran-modeldata python3-rdata`), and
  on make_classification;
- the 12 cached networks of tests/data/networks (their pool rows are the held-out rows), and
  binary models made from them: one class against the rest (p_1 = the class's probability) or
  two classes (the rows of those two labels, the softmax of their two logits).
The held-out rows are subsampled (seeded) to at most FIT_ROWS; those are the rows `calbench fit`
sees and the rows shipped (NAME.rows.npy). The model's accuracy and 15-bin ECE are on all its
held-out rows.

Shapes (SHAPES below): generators whose calibration function is not a spline in the logit,
each matched to one corpus model: `beta_binary` and `dirichlet` (power map) fitted by
`calbench fit --family ...`, `dirichlet` targets (temperature and top-label maps) solved by
calbench to the model's accuracy and ECE, `label_noise` (an affine map) and the `quantize`
map (a step function) at the model's accuracy, `class_conditional` (Dirichlet calibration's
log-linear form).

Writes OUT/NAME.json (+ OUT/NAME.rows.npy for the fakes), OUT/provenance.csv (a row per
generator), OUT/table.md (docs/arena.md's table) and configs/arena/corpus_*.json (the arena over
the corpus by task and size band); --cost measures one replicate of a cell per config x fit
size x K and writes OUT/cost.csv and OUT/cost.md (the study's estimated CPU time).
Deterministic: the same inputs, package versions and calbench build give the same bytes
(ctest slow.arena_corpus.rerun).
"""
import argparse
import csv
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

# scikit-learn's MLP at max_iter, python3-rdata's notes on R's encodings and classes: harmless.
warnings.filterwarnings("ignore", message=".*(Maximum iterations|Unknown encoding|Missing "
                        "constructor).*")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
NETWORKS = os.path.join(ROOT, "tests", "data", "networks")
R_LIBRARY = "/usr/lib/R/site-library"

TRAIN_CAP = 5000    # the most rows a model is trained on
FIT_ROWS = 3000     # the most held-out rows fitted and shipped per model
# The verdict is computed on a few fake samples only: it is reported, not used.
FIT_FLAGS = ["--verdict-samples", "50", "--replicates", "5", "--resamples", "5",
             "--sizes", "200", "--threads", "1", "--seed", "0", "--force"]


# ---- data ------------------------------------------------------------------------------------
def debian_version(package):
    done = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package],
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "not installed"


def bundled(loader):
    """A data set bundled with scikit-learn (sklearn.datasets.LOADER)."""
    def load():
        import sklearn.datasets
        X, y = getattr(sklearn.datasets, loader)(return_X_y=True)
        return X.astype(float), y.astype(np.int64)
    return load


def synthetic(classes, seed, n=10000, weights=None):
    def load():
        from sklearn.datasets import make_classification
        X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_redundant=4,
                                   n_classes=classes, n_clusters_per_class=2, class_sep=1.0,
                                   flip_y=0.03, weights=weights, random_state=seed)
        return X, y.astype(np.int64)
    return load


def r_frame(rdata, package, table):
    """An R package's data set: data/TABLE.rda (r-cran-mlbench), or the package's lazy-load
    database data/Rdata.rdx + Rdata.rdb (r-cran-modeldata), whose index is a gzipped
    serialisation and whose objects are serialisations after a 4-byte length and a type byte,
    'Z' being a raw LZMA2 stream (R's serialize.c, R_decompress3)."""
    folder = os.path.join(R_LIBRARY, package, "data")
    path = os.path.join(folder, table + ".rda")
    if os.path.isfile(path):
        return rdata.conversion.convert(rdata.parser.parse_file(path))[table]
    if not os.path.isfile(os.path.join(folder, "Rdata.rdx")):
        sys.exit(f"arena-corpus: {path} not found: apt-get install -y r-cran-{package}")
    import gzip
    import lzma
    with open(os.path.join(folder, "Rdata.rdx"), "rb") as f:
        index = rdata.conversion.convert(rdata.parser.parse_data(b"RDX2\n" +
                                                                 gzip.decompress(f.read())))
    offset, length = (int(v) for v in index["variables"][table])
    with open(os.path.join(folder, "Rdata.rdb"), "rb") as f:
        f.seek(offset)
        chunk = f.read(length)
    if chunk[4:5] != b"Z":
        sys.exit(f"arena-corpus: {package}'s {table}: compression {chunk[4:5]!r} not read here")
    body = lzma.decompress(chunk[5:], format=lzma.FORMAT_RAW,
                           filters=[{"id": lzma.FILTER_LZMA2, "dict_size": 1 << 26}])
    return rdata.conversion.convert(rdata.parser.parse_data(b"RDX2\n" + body))


def r_table(package, table, target, positive=None, drop=()):
    """A data frame of an R package's data/ folder: numeric columns as they are (missing values
    by the column's median), factors one-hot (pandas get_dummies, first level dropped), the
    target's levels in sorted order as classes 0..K-1 (`positive`: that level is class 1)."""
    def load():
        try:
            import rdata
        except ImportError:
            sys.exit("arena-corpus: python3-rdata is needed for the R tables: apt-get install -y "
                     "r-cran-mlbench r-cran-modeldata python3-rdata")
        import pandas as pd
        frame = r_frame(rdata, package, table)
        frame = frame.drop(columns=list(drop)).dropna(subset=[target]).reset_index(drop=True)
        labels = frame[target].astype(str)
        if positive is not None:
            y = (labels == positive).to_numpy().astype(np.int64)
        else:
            levels = sorted(labels.unique())
            y = labels.map({v: i for i, v in enumerate(levels)}).to_numpy().astype(np.int64)
        X = frame.drop(columns=[target])
        numeric = X.select_dtypes(include="number")
        numeric = numeric.fillna(numeric.median())
        factors = X.drop(columns=numeric.columns).astype(str)
        parts = [numeric] + ([pd.get_dummies(factors, drop_first=True)] if len(factors.columns)
                             else [])
        return pd.concat(parts, axis=1).to_numpy(dtype=float), y
    return load


DATA = {
    # name: (loader, source as the provenance says it)
    "breast_cancer": (bundled("load_breast_cancer"), "sklearn"),
    "digits": (bundled("load_digits"), "sklearn"),
    "wine": (bundled("load_wine"), "sklearn"),
    "pima": (r_table("mlbench", "PimaIndiansDiabetes", "diabetes", positive="pos"), "mlbench"),
    "ionosphere": (r_table("mlbench", "Ionosphere", "Class", positive="good"), "mlbench"),
    "sonar": (r_table("mlbench", "Sonar", "Class", positive="M"), "mlbench"),
    "vehicle": (r_table("mlbench", "Vehicle", "Class"), "mlbench"),
    "satellite": (r_table("mlbench", "Satellite", "classes"), "mlbench"),
    "vowel": (r_table("mlbench", "Vowel", "Class", drop=("V1",)), "mlbench"),  # V1: speaker
    "dna": (r_table("mlbench", "DNA", "Class"), "mlbench"),
    "credit": (r_table("modeldata", "credit_data", "Status", positive="bad"), "modeldata"),
    "churn": (r_table("modeldata", "mlc_churn", "churn", positive="yes"), "modeldata"),
    "cells": (r_table("modeldata", "cells", "class", positive="PS", drop=("case",)),
              "modeldata"),
    "attrition": (r_table("modeldata", "attrition", "Attrition", positive="Yes"), "modeldata"),
    "hpc": (r_table("modeldata", "hpc_data", "class", drop=("protocol",)), "modeldata"),
    "penguins": (r_table("modeldata", "penguins", "species"), "modeldata"),
    "synth_k2": (synthetic(2, 11), "make_classification"),
    "synth_k2_imbalanced": (synthetic(2, 12, weights=[0.85]), "make_classification"),
    "synth_k4": (synthetic(4, 14), "make_classification"),
    "synth_k6": (synthetic(6, 16), "make_classification"),
}


def split(X, y, seed):
    """Half the rows (at most TRAIN_CAP) to train on, the rest held out, by a seeded
    permutation."""
    order = np.random.default_rng(seed).permutation(len(y))
    train = min(len(y) // 2, TRAIN_CAP)
    return X[order[:train]], y[order[:train]], X[order[train:]], y[order[train:]]


# ---- models ----------------------------------------------------------------------------------
def family(name):
    """A fresh scikit-learn model of the family `name` (seeds fixed)."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier
    scaled = lambda model: make_pipeline(StandardScaler(), model)  # noqa: E731
    return {
        "lr": lambda: scaled(LogisticRegression(max_iter=5000)),
        "nb": GaussianNB,
        "rf": lambda: RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1),
        "hgb": lambda: HistGradientBoostingClassifier(random_state=0),
        "mlp": lambda: scaled(MLPClassifier(hidden_layer_sizes=(64,), max_iter=500,
                                            random_state=0)),
        "svm": lambda: scaled(SVC(probability=True, random_state=0)),
        "knn": lambda: scaled(KNeighborsClassifier(n_neighbors=15)),
        "tree": lambda: DecisionTreeClassifier(min_samples_leaf=10, random_state=0),
    }[name]()


def network(name, reduce=None):
    """A cached network's pool rows as held-out rows: probabilities (float64) and labels.
    reduce: None (K classes), ("ovr", c) class c against the rest, ("pair", a, b) the rows
    labelled a or b with the softmax of those two logits (label 1: b)."""
    with open(os.path.join(NETWORKS, "manifest.json")) as f:
        folder = os.path.join(NETWORKS, json.load(f)[name]["dataset"])
    logits = np.load(os.path.join(folder, name + ".npy")).astype(np.float64)
    labels = np.load(os.path.join(folder, "labels.npy")).astype(np.int64)
    if reduce and reduce[0] == "pair":
        keep = (labels == reduce[1]) | (labels == reduce[2])
        logits, labels = logits[keep][:, [reduce[1], reduce[2]]], (labels[keep] == reduce[2])
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    if reduce and reduce[0] == "ovr":
        p = np.column_stack([1.0 - p[:, reduce[1]], p[:, reduce[1]]])
        labels = labels == reduce[1]
    return p, labels.astype(np.int64)


class Model:
    def __init__(self, name, data, family, size, reduce=None):
        self.name, self.data, self.family, self.size, self.reduce = name, data, family, size, reduce

    def held_out(self, seed):
        """(probabilities, labels) on the held-out rows."""
        if self.data == "networks":
            p, y = network(self.family, self.reduce)
            return p, y
        X, y = DATA[self.data][0]()
        Xtr, ytr, Xte, yte = split(X, y, seed)
        p = family(self.family).fit(Xtr, ytr).predict_proba(Xte)
        return p / p.sum(axis=1, keepdims=True), yte


# name, data set, family, size band. The band is the calibration-set sizes the arena runs the
# model at (SIZES): small data sets small, as CalArena's calibration sets are a part of each
# data set (docs/arena.md "The corpus").
MODELS = [Model(*m) for m in [
    # binary
    ("cancer_lr", "breast_cancer", "lr", "small"),
    ("cancer_svm", "breast_cancer", "svm", "small"),
    ("pima_lr", "pima", "lr", "small"),
    ("pima_rf", "pima", "rf", "small"),
    ("ionosphere_svm", "ionosphere", "svm", "small"),
    ("sonar_rf", "sonar", "rf", "small"),
    ("attrition_lr", "attrition", "lr", "mid"),
    ("credit_hgb", "credit", "hgb", "mid"),
    ("credit_nb", "credit", "nb", "mid"),
    ("churn_hgb", "churn", "hgb", "mid"),
    ("churn_tree", "churn", "tree", "mid"),
    ("cells_rf", "cells", "rf", "mid"),
    ("cells_lr", "cells", "lr", "mid"),
    ("synth_k2_nb", "synth_k2", "nb", "large"),
    ("synth_k2_knn", "synth_k2", "knn", "large"),
    ("synth_k2_mlp", "synth_k2", "mlp", "large"),
    ("synth_k2_imb_hgb", "synth_k2_imbalanced", "hgb", "large"),
    ("synth_k2_imb_rf", "synth_k2_imbalanced", "rf", "large"),
    ("fmnist_cnn_shirt", "networks", "fmnist_cnn", "large", ("ovr", 6)),
    ("fmnist_mlp_pullover", "networks", "fmnist_mlp", "large", ("ovr", 2)),
    ("fmnist_mixup_shirt_tshirt", "networks", "fmnist_cnn_mixup", "mid", ("pair", 0, 6)),
    ("letter_mlp_o_q", "networks", "letter_mlp", "small", ("pair", 14, 16)),
    # multiclass
    ("wine_nb", "wine", "nb", "small"),
    ("penguins_lr", "penguins", "lr", "small"),
    ("vehicle_lr", "vehicle", "lr", "small"),
    ("vehicle_rf", "vehicle", "rf", "small"),
    ("vowel_knn", "vowel", "knn", "small"),
    ("digits_svm", "digits", "svm", "small"),
    ("digits_rf", "digits", "rf", "small"),
    ("dna_nb", "dna", "nb", "mid"),
    ("hpc_hgb", "hpc", "hgb", "mid"),
    ("satellite_rf", "satellite", "rf", "mid"),
    ("satellite_mlp", "satellite", "mlp", "mid"),
    ("synth_k4_tree", "synth_k4", "tree", "mid"),
    ("synth_k4_lr", "synth_k4", "lr", "mid"),
    ("synth_k6_hgb", "synth_k6", "hgb", "mid"),
    ("synth_k6_nb", "synth_k6", "nb", "mid"),
    ("fmnist_linear", "networks", "fmnist_linear", "large"),
    ("fmnist_mlp", "networks", "fmnist_mlp", "large"),
    ("fmnist_cnn", "networks", "fmnist_cnn", "large"),
    ("fmnist_cnn_smooth", "networks", "fmnist_cnn_smooth", "large"),
    ("fmnist_cnn_mixup", "networks", "fmnist_cnn_mixup", "large"),
    ("fmnist_cnn_focal", "networks", "fmnist_cnn_focal", "large"),
    ("fmnist_cnn_ts", "networks", "fmnist_cnn_ts", "large"),
    ("letter_linear", "networks", "letter_linear", "mid"),
    ("letter_mlp", "networks", "letter_mlp", "mid"),
    ("letter_mlp_smooth", "networks", "letter_mlp_smooth", "mid"),
    ("k100_mlp", "networks", "k100_mlp", "k100"),
    ("k100_mlp_smooth", "networks", "k100_mlp_smooth", "k100"),
]]
BY_NAME = {m.name: m for m in MODELS}


def source(model):
    """Where the data come from and their version, as provenance.csv says it."""
    if model.data == "networks":
        return "tests/data/networks (scripts/train-networks.py, PyTorch 1.13.1)"
    kind = DATA[model.data][1]
    if kind in ("mlbench", "modeldata"):
        return f"r-cran-{kind} {debian_version('r-cran-' + kind)}"
    import sklearn
    return f"scikit-learn {sklearn.__version__} ({kind})"


# ---- shapes: generators whose calibration is not a spline in the logit -----------------------
# name: (matched model, how). "fit:FAMILY[:MAP]" runs calbench fit --family FAMILY on the
# model's rows; "target:MAP" is a dirichlet target at the model's accuracy and ECE (solved by
# calbench when the arena runs); "label_noise" and "quantize:L" are set at the model's accuracy
# (and ECE); "class_conditional" is given below.
SHAPES = {
    "shape_beta_pima_lr": ("pima_lr", "fit:beta_binary"),
    "shape_beta_credit_nb": ("credit_nb", "fit:beta_binary"),
    "shape_beta_synth_k2_mlp": ("synth_k2_mlp", "fit:beta_binary"),
    "shape_temperature_synth_k2_nb": ("synth_k2_nb", "target:temperature"),
    "shape_temperature_cells_rf": ("cells_rf", "target:temperature"),
    "shape_noise_churn_hgb": ("churn_hgb", "label_noise"),
    "shape_quantize_attrition_lr": ("attrition_lr", "quantize:10"),
    "shape_classcond_k2": ("synth_k2_imb_hgb", "class_conditional"),
    "shape_power_satellite_mlp": ("satellite_mlp", "fit:dirichlet:power"),
    "shape_power_vehicle_lr": ("vehicle_lr", "fit:dirichlet:power"),
    "shape_toplabel_fmnist_mlp": ("fmnist_mlp", "target:top_label"),
    "shape_temperature_letter_mlp_smooth": ("letter_mlp_smooth", "target:temperature"),
    "shape_noise_fmnist_linear": ("fmnist_linear", "label_noise"),
    "shape_quantize_fmnist_cnn_ts": ("fmnist_cnn_ts", "quantize:10"),
    "shape_classcond_k4": ("synth_k4_lr", "class_conditional"),
}
CLASS_CONDITIONAL = {
    # Dirichlet calibration's generative model (Kull et al. 2019): log-linear in log p, not
    # symmetric (a prior and a full matrix), so neither a temperature nor a top-label curve.
    2: {"family": "class_conditional", "classes": 2, "prior": [0.8, 0.2],
        "alpha": [[4.0, 1.5], [1.2, 2.5]]},
    4: {"family": "class_conditional", "classes": 4, "prior": [0.4, 0.3, 0.2, 0.1],
        "alpha": [[3.0, 1.0, 0.8, 0.8], [1.0, 2.5, 1.0, 0.6], [0.7, 1.2, 2.0, 1.0],
                  [0.8, 0.6, 1.0, 1.6]]},
}


# ---- sizes and the arena configs -------------------------------------------------------------
# Fit (calibration) sizes per task and band; a config is one task x band, so that every
# generator meets every size of its config (a sweep is a Cartesian product). Over all cells:
# 100 to 100,000 rows, median 2,300 (docs/arena.md "The corpus"). Multiclass starts at 200 rows
# (matrix scaling has K (K + 1) parameters: 132 at K = 11) and stops at 30,000 (K = 10: the
# cost); K = 100 runs at 20,000 rows only (matrix scaling's 10,100 parameters).
SIZES = {("binary", "small"): [100, 300], ("binary", "mid"): [1000, 2300, 5000],
         ("binary", "large"): [10000, 100000], ("multiclass", "small"): [200, 500],
         ("multiclass", "mid"): [1000, 2300, 5000], ("multiclass", "large"): [10000, 30000],
         ("multiclass", "k100"): [20000]}
# Replicates per config, set by the measured cost (--cost; docs/arena.md "Cost of the corpus
# study") so that the whole study stays within about 1.5 CPU-hours. The statistics resample
# generators: many generators at a few replicates beat few at many.
REPLICATES = {("binary", "small"): 20, ("binary", "mid"): 10, ("binary", "large"): 10,
              ("multiclass", "small"): 10, ("multiclass", "mid"): 5,
              ("multiclass", "large"): 4, ("multiclass", "k100"): 1}


def top_label_ece(p, y, bins=15):
    """Equal-width 15-bin top-label ECE (Guo et al.)."""
    z = p.max(axis=1)
    correct = (p.argmax(axis=1) == y).astype(float)
    idx = np.minimum((z * bins).astype(int), bins - 1)
    return float(sum(abs(correct[idx == b].sum() - z[idx == b].sum())
                     for b in range(bins)) / len(y))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run_calbench(args, what, allowed=(0,), cwd=None):
    done = subprocess.run(args, capture_output=True, text=True, cwd=cwd)
    if done.returncode not in allowed:
        sys.exit(f"arena-corpus: {what}: {' '.join(args)} exited {done.returncode}:\n"
                 f"{done.stderr}")
    return done.stdout


def fit_rows(model, seed):
    """The model's held-out rows, the subsample fitted and shipped, and the held-out count."""
    p, y = model.held_out(seed)
    keep = np.sort(np.random.default_rng([seed, 1]).permutation(len(y))[:FIT_ROWS])
    return p, y, p[keep], y[keep]


def fit_model(model, args, tmp, family_flags=(), name=None):
    """calbench fit on the model's rows; returns the fit's JSON and the held-out rows."""
    name = name or model.name
    p, y, pf, yf = fit_rows(model, args.seed)
    # Run in `tmp` with the data named relative to it: the written config's provenance names
    # the data file, and a temporary folder's name would differ from run to run.
    data, labels = name + ".npy", name + ".labels.npy"
    np.save(os.path.join(tmp, data), pf)
    np.save(os.path.join(tmp, labels), yf)
    out = os.path.abspath(os.path.join(args.out, name + ".json"))
    text = run_calbench([os.path.abspath(args.calbench), "fit", data, "--labels", labels,
                         "--json", "--out", out] + FIT_FLAGS + list(family_flags),
                        "calbench fit " + name, cwd=tmp)
    return json.loads(text), p, y, len(yf)


def generator_truth(generator, args, tmp):
    """calbench's truth of a generator (and a target's solution), by a tiny estimator_bias run
    in `tmp`."""
    config = {"name": "truth", "scenario": "estimator_bias", "seed": 1, "replicates": 2,
              "sample_size": 100, "generator": generator,
              "estimators": [{"name": "ece", "bins": 15}],
              "output": {"directory": os.path.join(tmp, "truth"), "replicate_values": False}}
    path = os.path.join(tmp, "truth.json")
    with open(path, "w") as f:
        json.dump(config, f)
    run_calbench([args.calbench, "run", path, "--threads", "1", "--quiet", "--overwrite"],
                 "truth")
    with open(os.path.join(tmp, "truth", "summary.json")) as f:
        cell = json.load(f)["cells"][0]
    return cell["truth"], cell.get("target")


def why(verdict):
    """The checks a verdict failed (else its reasons), for provenance.csv."""
    failing = [c["check"] for c in verdict.get("checks", []) if c.get("fails")]
    return "; ".join(failing) if failing else "; ".join(verdict.get("reasons", []))


def data_name(model):
    """The data set as the table names it; a network's with its reduction to K = 2."""
    if model.data != "networks":
        return model.data
    with open(os.path.join(NETWORKS, "manifest.json")) as f:
        dataset = json.load(f)[model.family]["dataset"]
    if model.reduce is None:
        return dataset
    if model.reduce[0] == "ovr":
        return f"{dataset}: class {model.reduce[1]} against the rest"
    return f"{dataset}: classes {model.reduce[1]} and {model.reduce[2]}"


def provenance_row(name, model, fam, p, y, n_fit, truth, verdict, rows_sha, reasons=""):
    """provenance.csv's row, every value a string (as csv reads it back)."""
    row = {"model": name, "family": fam, "data": data_name(model),
           "source": source(model), "classes": p.shape[1], "band": model.size,
           "fit_sizes": " ".join(str(s) for s in sizes(model, p.shape[1])),
           "fit_rows": n_fit, "held_out_rows": len(y),
           "accuracy": f"{float((p.argmax(axis=1) == y).mean()):.4f}",
           "ece15": f"{top_label_ece(p, y):.4f}",
           "fake_accuracy": f"{truth['accuracy']['value']:.4f}",
           "fake_ece_top_l1": f"{truth['ece_top_l1']['value']:.4f}",
           "fake_classwise_ece_l1": f"{truth['classwise_ece_l1']['value']:.4f}",
           "verdict": verdict, "verdict_reasons": reasons, "rows_sha256": rows_sha}
    return {key: str(value) for key, value in row.items()}


def sizes(model, classes):
    return SIZES[("binary" if classes == 2 else "multiclass", model.size)]


def fake(model, args, tmp):
    d, p, y, n_fit = fit_model(model, args, tmp)
    rows = os.path.join(args.out, model.name + ".rows.npy")
    fam = "network " + model.family if model.data == "networks" else {
        "lr": "logistic regression", "nb": "Gaussian naive Bayes", "rf": "random forest",
        "hgb": "histogram gradient boosting", "mlp": "MLP", "svm": "SVM (Platt)",
        "knn": "k-NN (k = 15)", "tree": "decision tree"}[model.family]
    return provenance_row(model.name, model, fam, p, y, n_fit, d["fake"],
                          d["verdict"]["verdict"], sha256(rows), why(d["verdict"]))


def shape(name, args, tmp):
    """A shape generator matched to its model (SHAPES); writes OUT/NAME.json, a generator
    block, and returns its provenance row."""
    model, how = BY_NAME[SHAPES[name][0]], SHAPES[name][1]
    p, y, pf, yf = fit_rows(model, args.seed)
    K = p.shape[1]
    accuracy = float((p.argmax(axis=1) == y).mean())
    ece = top_label_ece(p, y)
    overconfident = float(p.max(axis=1).mean()) >= accuracy
    verdict, reasons = "set", ""
    if how.startswith("fit:"):
        parts = how.split(":")
        flags = ["--family", parts[1]] + (["--map", parts[2]] if len(parts) > 2 else [])
        d, _, _, _ = fit_model(model, args, tmp, flags, name=name)
        generator, truth, verdict = d["generator"], d["fake"], d["verdict"]["verdict"]
        reasons = why(d["verdict"])
        os.remove(os.path.join(args.out, name + ".json"))   # fit's config: only its generator
    else:
        if how.startswith("target:"):
            generator = {"family": "dirichlet", "classes": K,
                         "target": {"accuracy": round(accuracy, 4), "ece_top_l1": round(ece, 4),
                                    "direction": "overconfident" if overconfident
                                    else "underconfident"},
                         "miscalibration": {"map": how.split(":")[1]}}
        elif how == "class_conditional":
            generator = CLASS_CONDITIONAL[K]
        else:
            # label_noise: c = (1 - w) p + w e_0 with p ~ Dir(alpha) symmetric has accuracy
            # A - w (A - 1/K) and ECE w (A - 1/K), A = E max p: A = accuracy + ECE.
            # quantize: the dirichlet's accuracy E max c is the model's; ECE from rounding.
            wanted = accuracy + ece if how == "label_noise" else accuracy
            solve = {"family": "dirichlet", "classes": K,
                     "target": {"accuracy": round(wanted, 4), "ece_top_l1": 0.0},
                     "miscalibration": {"map": "temperature"}}
            alpha = round(generator_truth(solve, args, tmp)[1]["solved"]["alpha"], 6)
            if how == "label_noise":
                weight = round(ece / (wanted - 1.0 / K), 4)
                generator = {"family": "label_noise", "classes": K, "alpha": alpha,
                             "weight": weight, "beta": 0}
            else:
                generator = {"family": "dirichlet", "classes": K, "alpha": alpha,
                             "miscalibration": {"map": "quantize",
                                                "levels": int(how.split(":")[1])}}
        truth, target = generator_truth(generator, args, tmp)
        if target:
            truth = dict(truth, **target["achieved"])
    with open(os.path.join(args.out, name + ".json"), "w") as f:
        json.dump({"generator": generator}, f, indent=1)
        f.write("\n")
    fam = generator["family"] + ("" if "miscalibration" not in generator else
                                 " " + generator["miscalibration"]["map"])
    if "calibration" in generator and "curve" in generator.get("calibration", {}):
        fam += " " + generator["calibration"]["curve"]
    return provenance_row(name, model, fam, p, y, len(yf), truth, verdict, "", reasons)


# ---- the arena configs -----------------------------------------------------------------------
def arena_configs(out, rows):
    """configs/arena/corpus_{binary,multiclass}_{band}.json from the provenance rows."""
    folder = os.path.dirname(out.rstrip("/"))
    spec = importlib_arena_fits()
    corpus = os.path.basename(out.rstrip("/"))
    groups = {}
    for row in rows:
        task = "binary" if int(row["classes"]) == 2 else "multiclass"
        groups.setdefault((task, row["band"]), []).append(row)
    written = []
    for (task, band), members in sorted(groups.items()):
        generators = []
        for row in members:
            with open(os.path.join(out, row["model"] + ".json")) as f:
                g = json.load(f)["generator"]
            if g["family"] == "empirical":
                g["rows"] = corpus + "/" + g["rows"]
            generators.append(g)
        name = f"corpus_{task}_{band}"
        size_list = SIZES[(task, band)]
        # CalArena's scope beside the top label at K = 2: its ece-15 and Kuiper on P(y = 1).
        estimators = list(spec.ESTIMATORS)
        if task == "binary":
            estimators += [{"name": "probmetrics_ece"},
                           {"name": "kuiper_calibration", "scope": "binary"}]
        config = {"name": name, "scenario": "recalibration",
                  "seed": 20261203 + len(written), "replicates": REPLICATES[(task, band)],
                  "fit_size": size_list[0], "test_size": 2000, "truth_samples": 50000,
                  "generator": generators[0], "methods": spec.methods(),
                  "estimators": estimators,
                  # The models are the independent unit: each generator's cells one block.
                  "leaderboard": {"block": "generator", "generator_boards": True},
                  "sweep": {"generator": generators, "fit_size": size_list},
                  "output": {"directory": "results/" + name}}
        path = os.path.join(folder, name + ".json")
        with open(path, "w") as f:
            json.dump(config, f, indent=1)
            f.write("\n")
        written.append(path)
        print("wrote", path, f"({len(generators)} generators x {len(size_list)} sizes)")
    return written


def importlib_arena_fits():
    """scripts/arena-fits.py (its methods and estimators: the arena's own)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("arena_fits",
                                                  os.path.join(HERE, "arena-fits.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def markdown_table(rows):
    """OUT/table.md, which docs/arena.md holds verbatim (ctest arena_corpus.shipped): a row
    per generator and the counts."""
    fakes = [r for r in rows if not r["model"].startswith("shape_")]
    shapes = [r for r in rows if r["model"].startswith("shape_")]
    binary = sum(int(r["classes"]) == 2 for r in fakes)
    verdicts = {v: sum(r["verdict"] == v for r in fakes) for v in ("GOOD", "FAIR", "POOR")}
    cells = {t: sum(len(r["fit_sizes"].split()) for r in rows
                    if (int(r["classes"]) == 2) == (t == "binary")) for t in ("binary",
                                                                             "multiclass")}
    sizes = sorted(int(s) for r in rows for s in r["fit_sizes"].split())
    middle = len(sizes) // 2
    median = sizes[middle] if len(sizes) % 2 else (sizes[middle - 1] + sizes[middle]) / 2
    lines = ["| generator | K | family | data | held-out rows | fit rows | fit sizes | "
             "model's accuracy | model's 15-bin ECE | fake's true accuracy | fake's true ECE "
             "| fake's classwise ECE | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| " + " | ".join([r["model"], r["classes"], r["family"], r["data"],
                                        r["held_out_rows"], r["fit_rows"],
                                        r["fit_sizes"].replace(" ", ", "), r["accuracy"],
                                        r["ece15"], r["fake_accuracy"], r["fake_ece_top_l1"],
                                        r["fake_classwise_ece_l1"], r["verdict"]]) + " |")
    lines += ["", f"{len(fakes)} fakes of real models ({binary} binary, {len(fakes) - binary} "
              f"multiclass; verdicts {verdicts['GOOD']} GOOD, {verdicts['FAIR']} FAIR, "
              f"{verdicts['POOR']} POOR) and {len(shapes)} generators of other shapes; "
              f"{cells['binary']} binary and {cells['multiclass']} multiclass cells, fit "
              f"sizes {sizes[0]:,} to {sizes[-1]:,}, median {median:,.0f}."]
    return "\n".join(lines) + "\n"


def cost(out, calbench, tmp, only=None):
    """One replicate of one cell per arena config x fit size x K (its first generator of that
    K), on one thread; its CPU time (user + system, of calbench and its children) times the
    config's generators of that K and replicates is the config's estimate. Writes
    OUT/cost.csv and prints the total."""
    import resource
    folder = os.path.dirname(out.rstrip("/"))
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "corpus_*.json"))):
        if only and os.path.basename(path)[:-len(".json")] not in only:
            continue
        with open(path) as f:
            config = json.load(f)
        by_k = {}
        for g in config["sweep"]["generator"]:
            by_k.setdefault(g.get("classes", 2), []).append(g)
        preflight = run_calbench([calbench, "validate", path], "validate").strip()
        for size in config["sweep"]["fit_size"]:
            for k, generators in sorted(by_k.items()):
                g = dict(generators[0])
                if g["family"] == "empirical":
                    g["rows"] = os.path.abspath(os.path.join(folder, g["rows"]))
                one = dict(config, replicates=1, fit_size=size, generator=g,
                           output={"directory": os.path.join(tmp, "cost")})
                del one["sweep"]
                cell = os.path.join(tmp, "cell.json")
                with open(cell, "w") as f:
                    json.dump(one, f)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                # Exit 1: a method failed in every fit (one replicate: e.g. beta on a
                # separable sample); the cell's cost is measured all the same.
                run_calbench([calbench, "run", cell, "--threads", "1", "--quiet", "--overwrite",
                              "--no-report"], "cost " + os.path.basename(path), allowed=(0, 1))
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                rows.append({"config": os.path.basename(path), "fit_size": str(size),
                             "classes": str(k), "generators": str(len(generators)),
                             "cpu_seconds_one_replicate": f"{seconds:.1f}"})
                print(rows[-1], flush=True)
        print(os.path.basename(path), preflight.splitlines()[-1], flush=True)
    # --cost-configs measures some configs: the other configs' rows of cost.csv stay.
    path = os.path.join(out, "cost.csv")
    if only and os.path.isfile(path):
        with open(path) as f:
            measured = {r["config"] for r in rows}
            rows += [r for r in csv.DictReader(f) if r["config"] not in measured]
        rows.sort(key=lambda r: (r["config"], int(r["fit_size"]), int(r["classes"])))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "cost.md"), "w") as f:
        f.write(cost_table(rows, folder))
    print(cost_table(rows, folder))


def cost_table(rows, folder):
    """OUT/cost.md from cost.csv's rows, which docs/arena.md holds verbatim: per config (in
    `folder`) its cells, replicates, the measured CPU seconds of one replicate of a cell and
    the estimate, one replicate's CPU time x the generators of its K x the config's
    replicates."""
    configs = {}
    for r in rows:
        configs.setdefault(r["config"], []).append(r)
    lines = ["| config | K | fit sizes | cells | replicates | CPU s of one replicate of a cell "
             "| estimated CPU s |", "|---|---|---|---|---|---|---|"]
    total, replicates_seen = 0.0, []
    for name, members in configs.items():
        ks = sorted({int(r["classes"]) for r in members})
        sizes = sorted({int(r["fit_size"]) for r in members})
        cells = sum(int(r["generators"]) for r in members)
        one = [float(r["cpu_seconds_one_replicate"]) for r in members]
        with open(os.path.join(folder, name)) as f:
            replicates = json.load(f)["replicates"]
        replicates_seen.append(replicates)
        estimate = replicates * sum(float(r["cpu_seconds_one_replicate"]) * int(r["generators"])
                                    for r in members)
        total += estimate
        lines.append(f"| {name} | {', '.join(map(str, ks))} | "
                     f"{', '.join(f'{n:,}' for n in sizes)} | {cells} | {replicates} | "
                     f"{min(one):.1f} to {max(one):.1f} | {estimate:,.0f} |")
    # No empty cells: docs/arena.md's table parser (tests/unit/test_doc_figures.cpp) needs
    # a word in every cell.
    ks = [int(r["classes"]) for r in rows]
    sizes = [int(r["fit_size"]) for r in rows]
    one = [float(r["cpu_seconds_one_replicate"]) for r in rows]
    lines.append(f"| all | {min(ks)} to {max(ks)} | {min(sizes):,} to {max(sizes):,} | "
                 f"{sum(int(r['generators']) for r in rows)} | {min(replicates_seen)} to "
                 f"{max(replicates_seen)} | {min(one):.1f} to {max(one):.1f} | {total:,.0f} "
                 f"({total / 3600:.2f} CPU-hours) |")
    return "\n".join(lines) + "\n"


FIELDS = ["model", "family", "data", "source", "classes", "band", "fit_sizes", "fit_rows",
          "held_out_rows", "accuracy", "ece15", "fake_accuracy", "fake_ece_top_l1",
          "fake_classwise_ece_l1", "verdict", "verdict_reasons", "rows_sha256"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calbench", default=os.environ.get("CALBENCH_BIN", "build/release/calbench"))
    ap.add_argument("--out", default="configs/arena/corpus")
    ap.add_argument("--models", default="",
                    help="fit only these (fakes or shapes), comma-separated; OUT/provenance.csv "
                         "keeps its other rows, and the arena configs are written when it "
                         "holds every generator")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--configs-only", action="store_true",
                    help="only (re)write configs/arena/corpus_*.json and OUT/table.md from "
                         "OUT/provenance.csv (and OUT/cost.md from OUT/cost.csv)")
    ap.add_argument("--cost", action="store_true",
                    help="measure one replicate of a cell per config x fit size x K and "
                         "extrapolate the study's CPU time (OUT/cost.csv)")
    ap.add_argument("--cost-configs", default="",
                    help="with --cost: only these configs (corpus_binary_mid,...); cost.csv "
                         "keeps the others' rows")
    args = ap.parse_args()
    provenance = os.path.join(args.out, "provenance.csv")
    if args.cost:
        with tempfile.TemporaryDirectory() as tmp:
            cost(args.out, args.calbench, tmp,
                 args.cost_configs.split(",") if args.cost_configs else None)
        return
    if args.configs_only:
        with open(provenance) as f:
            rows = list(csv.DictReader(f))
        with open(os.path.join(args.out, "table.md"), "w") as f:
            f.write(markdown_table(rows))
        arena_configs(args.out, rows)
        if os.path.isfile(os.path.join(args.out, "cost.csv")):
            with open(os.path.join(args.out, "cost.csv")) as f:
                measured = list(csv.DictReader(f))
            with open(os.path.join(args.out, "cost.md"), "w") as f:
                f.write(cost_table(measured, os.path.dirname(args.out.rstrip("/"))))
        return
    names = args.models.split(",") if args.models else [m.name for m in MODELS] + list(SHAPES)
    unknown = [n for n in names if n not in BY_NAME and n not in SHAPES]
    if unknown:
        sys.exit(f"arena-corpus: --models: unknown {', '.join(unknown)}")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            row = fake(BY_NAME[name], args, tmp) if name in BY_NAME else shape(name, args, tmp)
            rows.append(row)
            print(" ".join(f"{k}={row[k]}" for k in ("model", "classes", "held_out_rows",
                                                     "accuracy", "ece15", "fake_accuracy",
                                                     "fake_ece_top_l1", "verdict")), flush=True)
    # --models refits some generators: the other rows of OUT/provenance.csv stay.
    if os.path.isfile(provenance):
        with open(provenance) as f:
            kept = {r["model"]: r for r in csv.DictReader(f)}
        kept.update({r["model"]: r for r in rows})
        order = [m.name for m in MODELS] + list(SHAPES)
        rows = [kept[n] for n in order if n in kept]
    with open(provenance, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(markdown_table(rows))
    if len(rows) == len(MODELS) + len(SHAPES):
        arena_configs(args.out, rows)


if __name__ == "__main__":
    main()
