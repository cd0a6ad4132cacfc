#!/usr/bin/env python3
"""calbench's heavy estimators beside their Python reference implementations, on the same data,
one core each (docs/performance.md, "Heavy estimators against their references").

    OMP_NUM_THREADS=1 /usr/bin/python3 scripts/bench_references.py \\
        --relplot ML_CALIBRATION/src --caltrain GOOGLE_RESEARCH \\
        --mixnmatch MIX_N_MATCH --kdepy KDEPY --ece-kde ECE_KDE DATA.csv [DATA.csv ...]

Each reference is imported from a checkout given on the command line and skipped when absent;
nothing of theirs is copied here. The paths:
  --relplot    the directory holding relplot/ (github.com/apple/ml-calibration, src/): smECE
  --caltrain   the directory holding caltrain/ (github.com/google-research/google-research):
               CalibrationMetric("em_ece_sweep", norm=1).compute_error, the ECE_sweep
  --mixnmatch  the directory holding util_evaluation.py (github.com/zhang64-llnl/
               Mix-n-Match-Calibration): ece_kde_binary, the KDE ECE
  --kdepy      the directory holding KDEpy/ (github.com/tommyod/KDEpy), which ece_kde_binary uses
  --ece-kde    the directory holding ece_kde.py (github.com/tpopordanoska/ece-kde): get_ece_kde
               with mc_type "canonical", the kde_canonical estimator's reference. It needs
               PyTorch (Debian: python3-torch, for this benchmark only, not a calbench
               dependency); without it the row is skipped with a message. Run on data sets of
               at most --kde-max-rows rows (both sides are quadratic in n), in float32 as the
               authors' code computes (its one-hot labels are float32).
  --verified-calibration  the directory holding calibration/ (github.com/p-lambda/
               verified_calibration, Kumar et al. 2019): its bootstrap_uncertainty (the basic
               bootstrap that get_calibration_error_uncertainties calls) of get_calibration_error
               (p = 2, top-label, not debiased: 15 equal-mass bins), with --bootstrap-resamples
               resamples, against the whole process `calbench eval --estimators '[{"name": "ece",
               "binning": "equal_mass", "norm": "l2", "convention": "kumar"}]' --interval basic
               --level 0.9 --resamples R --threads 1` (which also runs R consistency-test
               resamples: more work than the reference's). CPU seconds of a whole run each.
Stand-ins, for what cannot be installed offline (each only supplies what the reference calls):
  relplot/__init__ imports its plotting code (seaborn): the package is loaded without it;
  relplot imports `deprecation` for a decorator: a no-op decorator when it is missing;
  ece_kde_binary uses PyTorch for argmax, sum and a (N, 1) buffer: numpy arrays stand in;
  KDEpy's compiled linear binning (_cutils, Cython): numpy.bincount, the same sums.
calbench's times come from `calbench bench --data FILE --estimator JSON` (one thread, the
workspace reused as eval's resamples reuse it, thread CPU time). Times are CPU seconds per
evaluation, medians of --runs runs; the printed table is Markdown.
"""
import argparse
import contextlib
import importlib
import json
import os
import subprocess
import sys
import time
import types

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402  (after the thread limits)


def bare_package(name, path):
    """Registers package `name` at `path` without running its __init__."""
    package = types.ModuleType(name)
    package.__path__ = [os.path.join(path, name)]
    sys.modules[name] = package
    return package


def stub_deprecation():
    if importlib.util.find_spec("deprecation") is None:
        module = types.ModuleType("deprecation")
        module.deprecated = lambda *args, **kwargs: (lambda f: f)
        sys.modules["deprecation"] = module


class _Tensor(np.ndarray):
    def numpy(self):
        return np.asarray(self)


def stub_torch():
    """The torch calls of ece_kde_binary, on numpy arrays."""
    if importlib.util.find_spec("torch") is not None:
        return
    torch = types.ModuleType("torch")
    torch.no_grad = contextlib.nullcontext
    torch.from_numpy = lambda a: np.asarray(a).view(_Tensor)
    torch.zeros = lambda *shape: np.zeros(shape).view(_Tensor)
    torch.argmax = lambda a: np.asarray(np.argmax(a)).view(_Tensor)
    torch.sum = np.sum
    nn = types.ModuleType("torch.nn")
    parallel = types.ModuleType("torch.nn.parallel")
    torch.nn = nn
    nn.parallel = parallel
    sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.parallel": parallel})


def stub_kdepy_cutils():
    cutils = types.ModuleType("KDEpy._cutils")

    def iterate_data_1D(transformed_data, result):
        whole = np.floor(transformed_data).astype(np.int64)
        fraction = transformed_data - whole
        size = len(result)
        return (np.asarray(result) + np.bincount(whole, 1.0 - fraction, size)[:size] +
                np.bincount(whole + 1, fraction, size)[:size])

    cutils.iterate_data_1D = iterate_data_1D
    cutils.grid_is_sorted = lambda grid: bool(np.all(np.diff(np.asarray(grid)[:, 0]) >= 0))
    sys.modules["KDEpy._cutils"] = cutils


def load_references(args):
    refs = {}
    if args.relplot:
        stub_deprecation()
        bare_package("relplot", args.relplot)
        metrics = importlib.import_module("relplot.metrics")
        refs["smooth_ece"] = ("relplot smECE", lambda f, o, p, y: metrics.smECE(f, o))
    if args.caltrain:
        sys.path.insert(0, args.caltrain)
        cm = importlib.import_module("caltrain.calibration_metrics")
        sweep = cm.CalibrationMetric(ce_type="em_ece_sweep", bin_method="equal_examples", norm=1)
        refs["ece_sweep"] = ("caltrain em_ece_sweep",
                             lambda f, o, p, y: sweep.compute_error(p, np.eye(p.shape[1])[y]))
    if args.mixnmatch and args.kdepy:
        stub_torch()
        package = bare_package("KDEpy", args.kdepy)
        stub_kdepy_cutils()
        package.FFTKDE = importlib.import_module("KDEpy.FFTKDE").FFTKDE
        sys.path.insert(0, args.mixnmatch)
        evaluation = importlib.import_module("util_evaluation")
        refs["kde_ece"] = ("Mix-n-Match ece_kde_binary",
                           lambda f, o, p, y: evaluation.ece_kde_binary(p, np.eye(p.shape[1])[y]))
        # Most of ece_kde_binary's time is a nearest-node search per grid node (O(G^2), G = 2^14);
        # its two KDEs alone (their bandwidth, mirror_1d and FFTKDE calls) are the fairer floor.
        grid = np.linspace(-0.6, 1.6, num=2**14)

        def kdes_only(f, o, p, y):
            bandwidth = np.std(f[o == 1]) * (2 * len(f)) ** -0.2
            for data in (f[o == 1], f):
                mirrored = evaluation.mirror_1d(data.reshape(-1, 1), 0.0, 1.0)
                package.FFTKDE(bw=bandwidth, kernel="triweight").fit(mirrored).evaluate(grid)
            return None

        refs["kde_ece (its two KDEs only)"] = ("KDEpy FFTKDE x 2", kdes_only)
    if args.ece_kde:
        if importlib.util.find_spec("torch") is None:
            print("kde_canonical: skipped: the kde_ece authors' ece_kde.py needs PyTorch, which "
                  "is not installed (Debian: apt-get install python3-torch)", file=sys.stderr)
        else:
            import torch
            torch.set_num_threads(1)
            sys.path.insert(0, args.ece_kde)
            ece_kde = importlib.import_module("ece_kde")

            def canonical(bandwidth):
                def run(f, o, p, y):
                    pt = torch.from_numpy(p.astype(np.float32))
                    yt = torch.from_numpy(y)
                    b = ece_kde.get_bandwidth(pt, "cpu") if bandwidth is None else bandwidth
                    return float(ece_kde.get_ece_kde(pt, yt, b, 1, "canonical", "cpu"))
                return run

            for b in args.kde_bandwidths:
                refs[f"kde_canonical b={b}"] = ("ece-kde get_ece_kde (float32)", canonical(b))
            refs["kde_canonical b=loo"] = (
                "ece-kde get_bandwidth + get_ece_kde (float32; its own grid search)",
                canonical(None))
    return refs


def bootstrap_rows(args, cal, path, p, y):
    """The bootstrap interval: Kumar et al.'s bootstrap beside `calbench eval`, CPU seconds."""
    data = list(zip(p, y))

    def functional(rows):
        probs, labels = zip(*rows)
        return cal.get_calibration_error(np.array(probs), np.array(labels), p=2, debias=False,
                                         mode="top-label")

    R = args.bootstrap_resamples
    np.random.seed(0)
    theirs, interval = cpu_seconds(
        lambda: cal.bootstrap_uncertainty(data, functional, num_samples=R, alpha=10.0),
        max(1, min(args.runs, 3)), 1)
    spec = {"name": "ece", "binning": "equal_mass", "norm": "l2", "convention": "kumar"}
    command = [args.calbench, "eval", path, "--estimators", json.dumps([spec]), "--interval",
               "basic", "--level", "0.9", "--resamples", str(R), "--threads", "1", "--json"]
    mine = []
    for _ in range(max(1, min(args.runs, 3))):
        before = os.times()
        out = json.loads(subprocess.run(command, check=True, capture_output=True,
                                        text=True).stdout)
        after = os.times()
        mine.append((after.children_user + after.children_system) -
                    (before.children_user + before.children_system))
    seconds = float(np.median(mine))
    (row,) = out["estimators"].values()
    print(f"| bootstrap interval (ece l2 top equal-mass, kumar; {R} resamples, 90 %) | "
          f"{p.shape[0]}, {p.shape[1]} | {1e3 * seconds:.1f} (whole run) | Kumar et al. "
          f"bootstrap_uncertainty | {1e3 * theirs:.1f} | {theirs / seconds:.0f} | value "
          f"{abs(row['value'] - functional(data)):.1e}; 90 % intervals [{row['ci'][0]:.4f}, "
          f"{row['ci'][1]:.4f}] and [{interval[0]:.4f}, {interval[2]:.4f}] |", flush=True)


def cpu_seconds(fn, runs, repeat):
    times = []
    for _ in range(runs):
        start = time.process_time()
        for _ in range(repeat):
            value = fn()
        times.append((time.process_time() - start) / repeat)
    return float(np.median(times)), value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="+", help="CSV of label,p_0..p_K-1 rows (calbench eval's)")
    parser.add_argument("--calbench", default="build/release/calbench")
    parser.add_argument("--relplot")
    parser.add_argument("--caltrain")
    parser.add_argument("--mixnmatch")
    parser.add_argument("--kdepy")
    parser.add_argument("--ece-kde", dest="ece_kde")
    parser.add_argument("--verified-calibration", dest="verified_calibration")
    parser.add_argument("--bootstrap-resamples", type=int, default=1000)
    parser.add_argument("--kde-bandwidths", type=float, nargs="*", default=[0.05],
                        help="fixed bandwidths compared value for value (besides loo)")
    parser.add_argument("--kde-max-rows", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20, help="calbench evaluations per run")
    args = parser.parse_args()
    refs = load_references(args)
    cal = None
    if args.verified_calibration:
        sys.path.insert(0, args.verified_calibration)
        cal = importlib.import_module("calibration")
    print("| estimator | data (n, K) | calbench ms | reference | reference ms | ratio | "
          "|difference| |")
    print("|---|---|---:|---|---:|---:|---:|")
    for path in args.data:
        table = np.loadtxt(path, delimiter=",")
        y = table[:, 0].astype(np.int64)
        p = table[:, 1:]
        f = p.max(axis=1)
        o = (p.argmax(axis=1) == y).astype(float)
        estimators = [("smooth_ece", {"name": "smooth_ece"}), ("kde_ece", {"name": "kde_ece"}),
                      ("ece_sweep", {"name": "ece_sweep"})]
        if any(r.startswith("kde_canonical") for r in refs) and p.shape[0] <= args.kde_max_rows:
            estimators += [(f"kde_canonical b={b}", {"name": "kde_canonical", "bandwidth": b})
                           for b in args.kde_bandwidths]
            estimators.append(("kde_canonical b=loo", {"name": "kde_canonical"}))
        if cal is not None:
            bootstrap_rows(args, cal, path, p, y)
        command = [args.calbench, "bench", "--data", path, "--runs", str(args.runs), "--repeat",
                   str(args.repeat)]
        for _, spec in estimators:
            command += ["--estimator", json.dumps(spec)]
        lines = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        rows = [json.loads(line) for line in lines.splitlines()]
        for (name, _), mine in zip(estimators, rows):
            for ref_name in [r for r in refs if r == name or r.split(" ")[0] == name and
                             not name.startswith("kde_canonical")] or [None]:
                if ref_name is None:
                    print(f"| {name} | {p.shape[0]}, {p.shape[1]} | {1e3 * mine['seconds']:.3f} | "
                          "(not given) | | | |")
                    continue
                label, fn = refs[ref_name]
                # Slow references: fewer repetitions, at least one.
                seconds, value = cpu_seconds(lambda: fn(f, o, p, y), max(1, min(args.runs, 3)), 1)
                difference = "" if value is None else f"{abs(float(value) - mine['value']):.1e}"
                print(f"| {ref_name} | {p.shape[0]}, {p.shape[1]} | {1e3 * mine['seconds']:.3f} | "
                      f"{label} | {1e3 * seconds:.1f} | {seconds / mine['seconds']:.0f} | "
                      f"{difference} |", flush=True)


if __name__ == "__main__":
    main()
