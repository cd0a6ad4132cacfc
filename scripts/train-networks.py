#!/usr/bin/env python3
"""Trains the deep networks of the classwise transfer study (issue #35, docs/fit.md) and writes
their held-out outputs, so that studies and tests rerun without torch and without retraining.

Three data sets, all from Debian's archive or made here:
- fashion_mnist (K = 10): package dataset-fashion-mnist, /usr/share/datasets/fashion-mnist/*.gz,
  70,000 images; the first 3,000 of the training file train, the next 2,000 validate
  (temperature scaling only), the other 65,000 are the pool;
- letter (K = 26): package r-cran-mlbench, LetterRecognition.rda (20,000 rows, 16 integer
  features, read with python3-rdata); rows in a seeded permutation: 2,000 train, 1,000
  validate, 17,000 pool;
- synthetic_k100 (K = 100): 100 Gaussian classes in 32 dimensions (class means N(0, 0.6^2 I),
  unit noise, uniform prior; numpy seed 100), 10,000 train, 2,000 validate, 25,000 pool.

Recipes (RECIPES below): a linear model and an MLP; small CNNs trained on few images without
regularisation (overconfident), with label smoothing or mixup (underconfident), with focal loss
or temperature scaling on the validation rows (near-calibrated). Every network: torch seed 0 +
its index, torch.set_num_threads(1), Adam, full determinism on CPU.

Writes, per data set, OUT/<dataset>/labels.npy (int64, the pool's labels) and per network
OUT/<dataset>/<network>.npy (float32 logits, pool rows x K), and OUT/manifest.json (accuracy,
top-label ECE on the pool, training time). Logits, not probabilities: a softmax in float64
gives every tail probability exactly (`calbench fit --logits`).

    nice -n 15 /usr/bin/python3 scripts/train-networks.py --out tests/data/networks
    nice -n 15 /usr/bin/python3 scripts/train-networks.py --out /tmp/n --only letter_linear
"""

import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

FASHION = "/usr/share/datasets/fashion-mnist"
LETTER = "/usr/lib/R/site-library/mlbench/data/LetterRecognition.rda"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def fashion_mnist():
    x = np.concatenate([read_idx(f"{FASHION}/train-images-idx3-ubyte.gz"),
                        read_idx(f"{FASHION}/t10k-images-idx3-ubyte.gz")])
    y = np.concatenate([read_idx(f"{FASHION}/train-labels-idx1-ubyte.gz"),
                        read_idx(f"{FASHION}/t10k-labels-idx1-ubyte.gz")])
    x = (x.astype(np.float32) / 255.0 - 0.2860) / 0.3530
    return x[:, None, :, :], y.astype(np.int64), (3000, 5000)


def letter():
    import rdata
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = rdata.conversion.convert(rdata.parser.parse_file(LETTER))["LetterRecognition"]
    y = frame["lettr"].cat.codes.to_numpy().astype(np.int64)
    x = frame.drop(columns=["lettr"]).to_numpy().astype(np.float32)
    order = np.random.default_rng(26).permutation(len(y))
    x, y = x[order], y[order]
    x = (x - x[:2000].mean(0)) / x[:2000].std(0)
    return x, y, (2000, 3000)


def synthetic_k100():
    rng = np.random.default_rng(100)
    K, d, n = 100, 32, 37000
    means = rng.normal(0.0, 0.6, (K, d))
    y = rng.integers(0, K, n)
    x = (means[y] + rng.normal(0.0, 1.0, (n, d))).astype(np.float32)
    return x, y.astype(np.int64), (10000, 12000)


DATASETS = {"fashion_mnist": fashion_mnist, "letter": letter, "synthetic_k100": synthetic_k100}


class SmallCnn(nn.Module):
    def __init__(self, K, dropout=0.0):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 16, 3), nn.Conv2d(16, 32, 3)
        self.f1, self.f2 = nn.Linear(32 * 5 * 5, 64), nn.Linear(64, K)
        self.dropout = dropout

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = F.dropout(F.relu(self.f1(x.flatten(1))), self.dropout, self.training)
        return self.f2(x)


def mlp(d, K, hidden):
    layers, width = [nn.Flatten()], d
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    return nn.Sequential(*layers, nn.Linear(width, K))


def focal_loss(logits, y, gamma):
    logp = F.log_softmax(logits, 1).gather(1, y[:, None])[:, 0]
    return (-(1 - logp.exp()) ** gamma * logp).mean()


# (name, dataset, model, loss, epochs, options): loss is "ce", "smooth:<eps>", "mixup:<alpha>",
# "focal:<gamma>"; options: "temperature" scales the logits by the temperature fitted on the
# validation rows.
RECIPES = [
    ("fmnist_linear", "fashion_mnist", "linear", "ce", 30, ""),
    ("fmnist_mlp", "fashion_mnist", "mlp:256", "ce", 40, ""),
    ("fmnist_cnn", "fashion_mnist", "cnn", "ce", 40, ""),
    ("fmnist_cnn_smooth", "fashion_mnist", "cnn", "smooth:0.1", 40, ""),
    ("fmnist_cnn_mixup", "fashion_mnist", "cnn", "mixup:0.4", 40, ""),
    ("fmnist_cnn_focal", "fashion_mnist", "cnn", "focal:3", 40, ""),
    ("fmnist_cnn_ts", "fashion_mnist", "cnn", "ce", 40, "temperature"),
    ("letter_linear", "letter", "linear", "ce", 300, ""),
    ("letter_mlp", "letter", "mlp:128,128", "ce", 150, ""),
    ("letter_mlp_smooth", "letter", "mlp:128,128", "smooth:0.2", 150, ""),
    ("k100_mlp", "synthetic_k100", "mlp:256", "ce", 40, ""),
    ("k100_mlp_smooth", "synthetic_k100", "mlp:256", "smooth:0.1", 40, ""),
]


def build(kind, x, K):
    if kind == "cnn":
        return SmallCnn(K)
    d = int(np.prod(x.shape[1:]))
    if kind == "linear":
        return mlp(d, K, [])
    return mlp(d, K, [int(h) for h in kind.split(":")[1].split(",")])


def train(model, loss_name, x, y, epochs, seed):
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    kind, _, value = loss_name.partition(":")
    mix = torch.distributions.Beta(float(value), float(value)) if kind == "mixup" else None
    for _ in range(epochs):
        model.train()
        order = torch.randperm(len(yt), generator=generator)
        for start in range(0, len(yt), 64):
            idx = order[start:start + 64]
            xb, yb = xt[idx], yt[idx]
            if kind == "mixup":
                lam = float(mix.sample())
                perm = torch.randperm(len(yb), generator=generator)
                out = model(lam * xb + (1 - lam) * xb[perm])
                loss = lam * F.cross_entropy(out, yb) + (1 - lam) * F.cross_entropy(out, yb[perm])
            elif kind == "smooth":
                loss = F.cross_entropy(model(xb), yb, label_smoothing=float(value))
            elif kind == "focal":
                loss = focal_loss(model(xb), yb, float(value))
            else:
                loss = F.cross_entropy(model(xb), yb)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return model


@torch.no_grad()
def logits_of(model, x):
    model.eval()
    out = [model(torch.from_numpy(x[i:i + 4096])) for i in range(0, len(x), 4096)]
    return torch.cat(out).double().numpy()


def fit_temperature(logits, y):
    """The temperature T minimising the validation NLL of softmax(logits / T) (golden section
    on log T in [-3, 3])."""
    def nll(log_t):
        z = logits / np.exp(log_t)
        z = z - z.max(1, keepdims=True)
        return float(np.mean(np.log(np.exp(z).sum(1)) - z[np.arange(len(y)), y]))
    lo, hi = -3.0, 3.0
    ratio = (np.sqrt(5) - 1) / 2
    for _ in range(80):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if nll(a) < nll(b):
            hi = b
        else:
            lo = a
    return float(np.exp(0.5 * (lo + hi)))


def top_label_ece(logits, y, bins=15):
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    z, correct = p.max(1), (p.argmax(1) == y)
    b = np.minimum((z * bins).astype(int), bins - 1)
    return float(sum(abs(correct[b == j].sum() - z[b == j].sum()) for j in range(bins)) / len(y))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", default="", help="comma-separated networks (default: all)")
    parser.add_argument("--epochs", type=int, default=0,
                        help="override every recipe's epochs (a quick check; 0: the recipes')")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    only = [o for o in args.only.split(",") if o]
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {}
    loaded = {}
    for index, (name, dataset, kind, loss, epochs, options) in enumerate(RECIPES):
        if only and name not in only:
            continue
        if dataset not in loaded:
            loaded[dataset] = DATASETS[dataset]()
        x, y, (train_end, valid_end) = loaded[dataset]
        K = int(y.max()) + 1
        started = time.time()
        torch.manual_seed(index)
        model = build(kind, x, K)
        epochs = args.epochs or epochs
        train(model, loss, x[:train_end], y[:train_end], epochs, index)
        pool = logits_of(model, x[valid_end:])
        temperature = 1.0
        if options == "temperature":
            temperature = fit_temperature(logits_of(model, x[train_end:valid_end]),
                                          y[train_end:valid_end])
            pool = pool / temperature
        directory = os.path.join(args.out, dataset)
        os.makedirs(directory, exist_ok=True)
        np.save(os.path.join(directory, f"{name}.npy"), pool.astype(np.float32))
        np.save(os.path.join(directory, "labels.npy"), y[valid_end:])
        pool32 = pool.astype(np.float32).astype(np.float64)
        manifest[name] = {
            "dataset": dataset, "classes": K, "model": kind, "loss": loss, "epochs": epochs,
            "options": options, "torch_seed": index, "train_rows": train_end,
            "validation_rows": valid_end - train_end, "pool_rows": len(y) - valid_end,
            "temperature": temperature,
            "pool_accuracy": float((pool32.argmax(1) == y[valid_end:]).mean()),
            "pool_ece_ew15": top_label_ece(pool32, y[valid_end:]),
            "seconds": round(time.time() - started, 1)}
        print(f"{name}: {manifest[name]}", file=sys.stderr)
        with open(manifest_path, "w") as f:
            json.dump(dict(sorted(manifest.items())), f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
