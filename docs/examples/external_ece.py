"""Top-label ECE with equal-width bins, as a calbench external estimator (docs/external.md).

    python3 external_ece.py [BINS] DIR

calbench appends DIR, the directory holding one cell's replicates; the script prints one
number per replicate, in the manifest's order. The bins follow calbench's convention for
`{"name": "ece", "bins": B}` (docs/estimators/binned.md): edges i/B, right-closed (a, b], a
confidence of 0 in the first bin and 1 in the last; so its numbers equal the built-in ones up to
the order of floating-point sums.
"""

import json
import os
import sys

import numpy as np


def ece(p, y, bins):
    confidence = p.max(axis=1)
    correct = p.argmax(axis=1) == y  # argmax: the lowest index on ties, as calbench
    edges = np.arange(bins + 1) / bins
    bin_of = np.searchsorted(edges[1:-1], confidence, side="left")
    gap = np.bincount(bin_of, weights=correct - confidence, minlength=bins)
    return np.abs(gap).sum() / len(y)


def main():
    directory = sys.argv[-1]
    bins = int(sys.argv[1]) if len(sys.argv) > 2 else 15
    with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    for p_file, y_file in manifest["files"]:
        p = np.load(os.path.join(directory, p_file))
        y = np.load(os.path.join(directory, y_file))
        print(repr(float(ece(p, y, bins))))


if __name__ == "__main__":
    main()
