#!/usr/bin/env python3
"""Every script of scripts/ that no other test runs, in a small version (ctest `scripts.NAME`),
so that none of them can rot unnoticed: each runs on tiny inputs in a temporary directory and
its output is checked for the shape the docs describe (its figures at full size are the docs'
measurements, not checked here).

    scripts.py NAME      NAME: bench_references, fit_speed, real_models, arena_fits,
                         intervals_table, truth_precision, train_networks, setup

Environment: CALBENCH_BIN (the calbench binary), CALBENCH_TESTS (calbench_tests, for
truth_precision), PYTHONPATH with this checkout's python/ and CALBENCH_CORE_DIR (the compiled
module). Exit 0 on success, 1 with a message on failure, 77 (ctest's skip) when scikit-learn is
missing for a script that trains a model.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))  # the repository
sys.path.insert(0, HERE)
from study_checks import require_sklearn  # noqa: E402

CALBENCH = os.environ.get("CALBENCH_BIN", os.path.join(ROOT, "build", "release", "calbench"))
PYTHON = sys.executable


def fail(name, message):
    print(f"scripts.{name}: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(name, args, **kwargs):
    """Runs a script of scripts/ (Python scripts with this interpreter); returns its stdout."""
    script = os.path.join(ROOT, "scripts", args[0])
    command = ([PYTHON, "-B", script] if script.endswith(".py") else [script]) + args[1:]
    done = subprocess.run(command, capture_output=True, text=True, cwd=kwargs.pop("cwd", ROOT),
                          **kwargs)
    if done.returncode != 0:
        fail(name, f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def table_rows(text):
    """The body rows of the markdown tables in `text`, as lists of cells."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-:| ]+\|$", line):
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def bench_references(work):
    """The calbench side of the references' benchmark (no reference checkout given: every row
    says so), on 300 rows of a reference dataset."""
    data = os.path.join(work, "k3.csv")
    with open(os.path.join(ROOT, "tests", "reference", "datasets", "dir_k3_n2000.csv")) as f:
        lines = f.readlines()[:300]
    with open(data, "w") as f:
        f.writelines(lines)
    out = run("bench_references", ["bench_references.py", "--calbench", CALBENCH, "--runs", "1",
                                   "--repeat", "2", data])
    rows = table_rows(out)[1:]  # after the header
    names = [r[0] for r in rows]
    if names != ["smooth_ece", "kde_ece", "ece_sweep"]:
        fail("bench_references", f"rows {names}, expected smooth_ece, kde_ece, ece_sweep")
    for r in rows:
        if r[1] != "300, 3" or not float(r[2]) > 0 or r[3] != "(not given)":
            fail("bench_references", f"row {r}")
    return "3 rows, calbench side only"


def fit_speed(work):
    """fit-speed.py on 400 rows x K = 3 with a fit cut to its bones: one run's wall and CPU
    seconds and their medians."""
    out = run("fit_speed", ["fit-speed.py", "--calbench", CALBENCH, "--rows", "400", "--classes",
                            "3", "--runs", "1", "--threads", "1", "--", "--sizes", "100",
                            "--replicates", "2", "--resamples", "2", "--verdict-samples", "2"])
    numbers = re.findall(r"(\d+\.\d+) s", out)
    if "median" not in out or len(numbers) < 2:
        fail("fit_speed", f"no run times and medians in:\n{out}")
    return out.strip().splitlines()[-1]


def real_models(work):
    """real-models.py on one model with a 3,000-row pool and 500 fit rows: the table row and
    docs/fit.md's table format."""
    require_sklearn("scripts.real_models")
    out_dir = os.path.join(work, "real")
    run("real_models", ["real-models.py", "--calbench", CALBENCH, "--pool", "3000", "--fit", "500",
                        "--models", "nb_k3", "--out", out_dir])
    with open(os.path.join(out_dir, "real_models.csv")) as f:
        rows = list(csv.DictReader(f))
    if len(rows) != 1 or rows[0]["model"] != "nb_k3" or rows[0]["fake_family"] != "empirical":
        fail("real_models", f"real_models.csv: {rows}")
    for key in ("pool_accuracy", "pool_ece", "fake_accuracy", "fake_ece", "parametric_ece"):
        if not 0 <= float(rows[0][key]) <= 1:
            fail("real_models", f"{key} = {rows[0][key]}")
    table = open(os.path.join(out_dir, "table.md")).read()
    if len(table_rows(table)) != 2:
        fail("real_models", f"table.md:\n{table}")
    return f"nb_k3: pool ECE {float(rows[0]['pool_ece']):.3f}, fake {float(rows[0]['fake_ece']):.3f}"


def arena_fits(work):
    """arena-fits.py on one model: its fitted config, rows and provenance row."""
    require_sklearn("scripts.arena_fits")
    out_dir = os.path.join(work, "fakes")
    run("arena_fits", ["arena-fits.py", "--calbench", CALBENCH, "--models", "nb_k2", "--out",
                       out_dir])
    for name in ("nb_k2.json", "nb_k2.rows.npy", "provenance.csv"):
        if not os.path.isfile(os.path.join(out_dir, name)):
            fail("arena_fits", f"{name} not written")
    with open(os.path.join(out_dir, "provenance.csv")) as f:
        rows = list(csv.DictReader(f))
    if [r["model"] for r in rows] != ["nb_k2"] or rows[0]["verdict"] not in ("GOOD", "FAIR",
                                                                              "POOR"):
        fail("arena_fits", f"provenance.csv: {rows}")
    done = subprocess.run([CALBENCH, "validate", os.path.join(out_dir, "nb_k2.json")],
                          capture_output=True, text=True)
    if done.returncode != 0:
        fail("arena_fits", f"calbench validate nb_k2.json: {done.stderr}")
    return f"nb_k2: verdict {rows[0]['verdict']}"


def intervals_table(work):
    """intervals_table.py --caveats --cpp on docs/intervals.md: the rows compiled into
    lib/estimators/coverage_caveats.cpp, each of them there verbatim."""
    out = run("intervals_table", ["intervals_table.py", "--caveats", "--cpp",
                                  os.path.join(ROOT, "docs", "intervals.md")])
    rows = [line.strip() for line in out.splitlines() if line.strip().startswith("CoverageMiss{")]
    # The compiled file is clang-formatted: compare without white space.
    squeeze = lambda text: re.sub(r"\s+", "", text)  # noqa: E731
    compiled = squeeze(open(os.path.join(ROOT, "lib", "estimators", "coverage_caveats.cpp")).read())
    missing = [r for r in rows if squeeze(r) not in compiled]
    if not rows or missing:
        fail("intervals_table", f"{len(rows)} rows, not in coverage_caveats.cpp: {missing[:3]}")
    return f"{len(rows)} caveat rows, all compiled"


def truth_precision(work):
    """truth-precision.sh with truth-precision.py --quick at 200,000 samples: the K = 3 table
    from calbench_tests and a row per quantity of the long-run table."""
    out_file = os.path.join(work, "precision.md")
    tests = os.environ.get("CALBENCH_TESTS",
                           os.path.join(ROOT, "build", "release", "calbench_tests"))
    run("truth_precision", ["truth-precision.sh", out_file, "--", "--quick", "--samples",
                            "200000"], env=dict(os.environ, CALBENCH_TESTS=tests))
    rows = table_rows(open(out_file).read())
    k3 = [r for r in rows if r and "(K = 3)" not in r[0] and len(r) == 6]
    if len(k3) < 5:
        fail("truth_precision", f"K = 3 table: {len(k3)} rows in:\n{open(out_file).read()}")
    return f"{len(rows)} table rows"


def train_networks(work):
    """train-networks.py --only letter_linear --epochs 2 (the smallest data set, two epochs):
    the manifest entry and the pool's logits as the README describes them. Skipped where torch
    is not installed (the studies read the committed outputs; CI has no torch)."""
    try:
        import torch  # noqa: F401
        import rdata  # noqa: F401
    except ImportError:
        print("scripts.train_networks: SKIP: torch or rdata is not installed", file=sys.stderr)
        sys.exit(77)
    import numpy as np
    run("train_networks", ["train-networks.py", "--out", work, "--only", "letter_linear",
                           "--epochs", "2"])
    manifest = json.load(open(os.path.join(work, "manifest.json")))
    entry = manifest.get("letter_linear", {})
    logits = np.load(os.path.join(work, "letter", "letter_linear.npy"))
    labels = np.load(os.path.join(work, "letter", "labels.npy"))
    if entry.get("pool_rows") != 17000 or logits.shape != (17000, 26) or \
            logits.dtype != np.float32 or labels.shape != (17000,) or entry.get("epochs") != 2:
        fail("train_networks", f"manifest {entry}, logits {logits.shape} {logits.dtype}")
    return f"letter_linear: pool accuracy {entry['pool_accuracy']:.3f} after 2 epochs"


def setup(work):
    """setup.sh check, which installs and builds nothing: here, where the tests run, every
    package of the quick start is installed; with a dpkg-query that knows every package but
    one, that one is named and the status is 1 (the check can fail); an unknown purpose is
    refused with status 2. setup.sh itself installs as root; docs/ and README say when."""
    out = run("setup", ["setup.sh", "check", "quickstart"])
    if not re.fullmatch(r"calbench setup: all \d+ packages for quickstart are installed\n", out):
        fail("setup", f"setup.sh check quickstart printed:\n{out}")
    fake = os.path.join(work, "dpkg-query")
    with open(fake, "w") as f:  # dpkg-query -W -f=FORMAT PACKAGE: all installed but one
        f.write('#!/bin/sh\n[ "$3" = libeigen3-dev ] && exit 1\nprintf "install ok installed"\n')
    os.chmod(fake, 0o755)
    script = os.path.join(ROOT, "scripts", "setup.sh")
    env = dict(os.environ, PATH=work + os.pathsep + os.environ.get("PATH", ""))
    done = subprocess.run(["bash", script, "check", "tests"], capture_output=True, text=True,
                          env=env)
    if done.returncode != 1 or done.stdout != "calbench setup: missing for tests: libeigen3-dev\n":
        fail("setup", f"with libeigen3-dev missing: status {done.returncode}, {done.stdout!r}")
    done = subprocess.run(["bash", script, "check", "everything"], capture_output=True, text=True)
    if done.returncode != 2 or not done.stderr.startswith("usage: scripts/setup.sh"):
        fail("setup", f"an unknown purpose: status {done.returncode}, {done.stderr!r}")
    return out.strip()


CHECKS = {f.__name__: f for f in (bench_references, fit_speed, real_models, arena_fits,
                                  intervals_table, truth_precision, train_networks, setup)}


def main(argv):
    if len(argv) != 2 or argv[1] not in CHECKS:
        print(__doc__, file=sys.stderr)
        return 2
    name = argv[1]
    work = tempfile.mkdtemp(prefix=f"calbench_scripts_{name}.")
    try:
        print(f"scripts.{name}: ok ({CHECKS[name](work)})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
