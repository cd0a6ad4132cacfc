#!/usr/bin/env python3
"""The arena's corpus (scripts/arena-corpus.py, configs/arena/corpus/, docs/arena.md "The
corpus"):

    arena_corpus.py shipped  # ctest arena_corpus.shipped (seconds): provenance.csv against the
                             # files, the configs and docs/arena.md; every corpus config validates
    arena_corpus.py rerun    # ctest slow.arena_corpus.rerun: the script again on two generators
                             # that need numpy and calbench only (no scikit-learn, no R tables),
                             # byte for byte as shipped
    arena_corpus.py family_out  # ctest arena_corpus.family_out (seconds): the
                             # leave-method-family-out check (scripts/arena-family-out.py) on a
                             # tiny run agrees with the run's pooled board

`shipped` checks: at least 40 fakes of real models, at least 15 binary and 15 multiclass; each
fake's rows file has the SHA-256 of its provenance row and of its config's generator, and as
many columns as the row's K; every generator of provenance.csv is in exactly one arena config
(configs/arena/corpus_*.json), which runs it at the row's fit sizes, and every config generator
is in provenance.csv; table.md is what the script writes from provenance.csv, cost.md what it
writes from cost.csv, and docs/arena.md holds both verbatim and says what provenance.csv counts;
`calbench validate` accepts every corpus config.
"""

import csv
import glob
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from study_checks import failing, three_shapes_k2

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
ARENA = os.path.join(ROOT, "configs", "arena")
CORPUS = os.path.join(ARENA, "corpus")
CALBENCH = os.environ.get("CALBENCH_BIN", os.path.join(ROOT, "build", "release", "calbench"))
fail = failing("arena_corpus")


def script():
    spec = importlib.util.spec_from_file_location("arena_corpus",
                                                  os.path.join(ROOT, "scripts", "arena-corpus.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def shipped():
    with open(os.path.join(CORPUS, "provenance.csv")) as f:
        rows = list(csv.DictReader(f))
    fakes = [r for r in rows if not r["model"].startswith("shape_")]
    binary = [r for r in fakes if r["classes"] == "2"]
    if len(fakes) < 40 or len(binary) < 15 or len(fakes) - len(binary) < 15:
        fail(f"{len(fakes)} fakes ({len(binary)} binary): at least 40, 15 of each, wanted")
    if len({r["model"] for r in rows}) != len(rows):
        fail("provenance.csv names a generator twice")
    # Each generator's file; the fakes' rows against their SHA-256 and shape.
    generators = {}
    for r in rows:
        with open(os.path.join(CORPUS, r["model"] + ".json")) as f:
            g = json.load(f)["generator"]
        generators[r["model"]] = g
        if g.get("classes", 2) != int(r["classes"]):  # beta_binary: K = 2 implied
            fail(f"{r['model']}: K {g['classes']} in its config, {r['classes']} in provenance")
        if g["family"] != "empirical":
            if r["rows_sha256"]:
                fail(f"{r['model']}: a {g['family']} generator with a rows SHA-256")
            continue
        rows_file = os.path.join(CORPUS, g["rows"])
        digest = sha256(rows_file)
        if not digest == r["rows_sha256"] == g["sha256"]:
            fail(f"{g['rows']}: SHA-256 {digest}, provenance {r['rows_sha256']}, config "
                 f"{g['sha256']}")
        values = np.load(rows_file)
        if values.shape != (int(r["fit_rows"]), int(r["classes"])):
            fail(f"{g['rows']}: shape {values.shape}, provenance {r['fit_rows']} rows x K = "
                 f"{r['classes']}")
    # Every generator in one arena config, at its fit sizes; nothing else in the configs.
    configs = sorted(glob.glob(os.path.join(ARENA, "corpus_*.json")))
    seen = {}
    for path in configs:
        with open(path) as f:
            config = json.load(f)
        sizes = " ".join(str(s) for s in config["sweep"]["fit_size"])
        for g in config["sweep"]["generator"]:
            matches = [name for name, shipped_g in generators.items()
                       if (dict(shipped_g, rows="corpus/" + shipped_g["rows"])
                           if shipped_g["family"] == "empirical" else shipped_g) == g]
            if len(matches) != 1:
                fail(f"{os.path.basename(path)}: a generator ({g['family']}) that is not one "
                     f"generator of provenance.csv")
            name = matches[0]
            if name in seen:
                fail(f"{name} in {seen[name]} and {os.path.basename(path)}")
            seen[name] = os.path.basename(path)
            row = next(r for r in rows if r["model"] == name)
            if row["fit_sizes"] != sizes:
                fail(f"{name}: fit sizes {sizes} in {seen[name]}, {row['fit_sizes']} in "
                     f"provenance.csv")
    missing = [r["model"] for r in rows if r["model"] not in seen]
    if missing:
        fail(f"in no corpus config: {', '.join(missing)}")
    # The table, as the script writes it, in the docs.
    table = script().markdown_table(rows)
    with open(os.path.join(CORPUS, "table.md")) as f:
        if f.read() != table:
            fail("configs/arena/corpus/table.md is not markdown_table(provenance.csv): rerun "
                 "scripts/arena-corpus.py --configs-only")
    with open(os.path.join(ROOT, "docs", "arena.md")) as f:
        doc = " ".join(f.read().split())
    if " ".join(table.split()) not in doc:
        fail("docs/arena.md does not hold configs/arena/corpus/table.md verbatim")
    check_prose(doc, rows, generators)
    # The cost estimate: cost.md is the script's table of cost.csv and the configs'
    # replicates, and the docs hold it.
    with open(os.path.join(CORPUS, "cost.csv")) as f:
        cost = script().cost_table(list(csv.DictReader(f)), ARENA)
    with open(os.path.join(CORPUS, "cost.md")) as f:
        if f.read() != cost:
            fail("configs/arena/corpus/cost.md is not cost_table(cost.csv) at the configs' "
                 "replicates: rerun scripts/arena-corpus.py --configs-only")
    if " ".join(cost.split()) not in doc:
        fail("docs/arena.md does not hold configs/arena/corpus/cost.md verbatim")
    for path in configs:
        done = subprocess.run([CALBENCH, "validate", path], capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"calbench validate {os.path.basename(path)}: {done.stderr}")
    print(f"{len(rows)} generators ({len(fakes)} fakes, {len(binary)} binary) in "
          f"{len(configs)} configs: files, provenance, configs and docs agree; all validate")


WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def check_prose(doc, rows, generators):
    """docs/arena.md's sentences about the corpus, recounted from provenance.csv and the
    generators' files."""
    fakes = [r for r in rows if not r["model"].startswith("shape_")]
    poor = [r for r in fakes if r["verdict"] == "POOR"]
    ace = [r for r in poor if "ace15_nixon" in r["verdict_reasons"].split("; ")]
    histogram = [r for r in poor if "confidence histogram" in r["verdict_reasons"].split("; ")]
    top_label = [r for r in poor if "ece_ew15" in r["verdict_reasons"].split("; ")]
    identity = [r["model"] for r in fakes if generators[r["model"]].get("calibration") == {}
                and not generators[r["model"]].get("classwise")]  # calibrated: c = p
    fitted = [r for r in rows if r["model"].startswith("shape_") and r["verdict"] != "set"]
    fitted_poor = [r for r in fitted if r["verdict"] == "POOR"]
    big = sum(os.path.getsize(p) for p in glob.glob(os.path.join(CORPUS, "*.rows.npy")))
    k100 = sum(os.path.getsize(os.path.join(CORPUS, generators[r["model"]]["rows"]))
               for r in fakes if r["classes"] == "100")
    expected = [
        f"## The corpus: {len(fakes)} real models and {len(rows) - len(fakes)} other shapes",
        f"{WORDS[len(poor)].capitalize()} fakes are POOR, "
        f"{'none' if not top_label else 'some'} for its top-label ECE: "
        f"{WORDS[len(ace)]} fail ACE",
        f"and {WORDS[len(histogram)]} the confidence histogram",
        f"{WORDS[len(identity)].capitalize()} fakes of models with few held-out rows "
        f"({' and '.join(identity)},",
        f"({WORDS[len(fitted_poor)]} of {WORDS[len(fitted)]} POOR:",
        f"{len(fakes)} of {len(rows)} generators are splines",
        f"{big / 1e6:.1f} MB in all, {k100 / 1e6:.1f} MB of it the two K = 100 networks",
    ]
    # The shapes' table: how many generators of each kind.
    kinds = {}
    for r in rows:
        g = generators[r["model"]]
        kind = g["family"]
        if "target" in g:
            kind = "target"
        elif g.get("miscalibration", {}).get("map") in ("power", "quantize"):
            kind = g["miscalibration"]["map"]
        kinds[kind] = kinds.get(kind, 0) + 1
    expected += [f"| {kinds['empirical']} fakes (`empirical`) |",
                 f"| {kinds['target']} `dirichlet` targets,",
                 f"| {kinds['power']} `dirichlet` power maps fitted",
                 f"{kinds['class_conditional']} `class_conditional`",
                 f"| {kinds['beta_binary']} `beta_binary` fitted",
                 f"| {kinds['label_noise']} `label_noise`:",
                 f"| {kinds['quantize']} `dirichlet` with the `quantize` map"]
    for phrase in expected:
        if phrase not in doc:
            fail(f"docs/arena.md does not say {phrase!r} (recounted from provenance.csv)")


def rerun():
    """The script on a fake of a network (two classes of letter_mlp) and a shape matched to a
    network (label noise at fmnist_linear's accuracy and ECE): the same bytes as shipped."""
    names = ["letter_mlp_o_q", "shape_noise_fmnist_linear"]
    with tempfile.TemporaryDirectory() as work:
        done = subprocess.run([sys.executable, "-B", os.path.join(ROOT, "scripts",
                                                                  "arena-corpus.py"),
                               "--calbench", CALBENCH, "--out", work,
                               "--models", ",".join(names)],
                              capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            fail(f"arena-corpus.py exited {done.returncode}: {done.stderr}")
        files = ["letter_mlp_o_q.json", "letter_mlp_o_q.rows.npy",
                 "shape_noise_fmnist_linear.json"]
        for name in files:
            if sha256(os.path.join(work, name)) != sha256(os.path.join(CORPUS, name)):
                shutil.copy(os.path.join(work, name), "/tmp/arena_corpus_rerun_" + name)
                fail(f"{name} differs from the shipped one (kept in /tmp/arena_corpus_rerun_"
                     f"{name})")
        with open(os.path.join(work, "provenance.csv")) as f:
            again = list(csv.DictReader(f))
        with open(os.path.join(CORPUS, "provenance.csv")) as f:
            shipped_rows = {r["model"]: r for r in csv.DictReader(f)}
        for row in again:
            if row != shipped_rows[row["model"]]:
                fail(f"{row['model']}: provenance row {row}, shipped "
                     f"{shipped_rows[row['model']]}")
    print(f"{', '.join(names)}: {len(files)} files and the provenance rows byte-identical")


def family_out():
    """arena-family-out.py on a tiny run (three generator shapes x two fit sizes, three methods):
    its win rate over all cells is the run's pooled board's, for every method (the cases-weighted
    mean of the cells' boards is the pooled win rate), and it prints a row per subset."""
    fake, generators = three_shapes_k2(CORPUS)
    with tempfile.TemporaryDirectory() as work:
        config = {"name": "family_out", "scenario": "recalibration", "seed": 39,
                  "replicates": 3, "fit_size": 300, "test_size": 300, "truth_samples": 5000,
                  "generator": fake,
                  "methods": [{"name": "temperature"}, {"name": "isotonic"}, {"name": "sms"}],
                  "estimators": [{"name": "ece", "bins": 15}],
                  "sweep": {"generator": generators, "fit_size": [300, 500]},
                  "output": {"directory": os.path.join(work, "run")}}
        path = os.path.join(work, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        done = subprocess.run([CALBENCH, "run", path, "--threads", "2", "--quiet",
                               "--no-report"], capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"calbench run: {done.stderr}")
        spec = importlib.util.spec_from_file_location(
            "family_out", os.path.join(ROOT, "scripts", "arena-family-out.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cells = module.read([os.path.join(work, "run")], "truth", "ece_top_l1")
        shapes = sorted({s for s, _ in cells})
        if shapes != ["affine", "spline in the logit", "temperature"] or len(cells) != 6:
            fail(f"cells' shapes {[s for s, _ in cells]}")
        rates, _ = module.pooled(cells)
        with open(os.path.join(work, "run", "leaderboard.csv")) as f:
            board = {r["method"]: float(r["win_rate"]) for r in csv.DictReader(f)
                     if r["scope"] == "all" and r["kind"] == "truth"
                     and r["key"] == "ece_top_l1"}
        for method, rate in board.items():
            if abs(rates[method] - rate) > 1e-12:
                fail(f"{method}: win rate {rates[method]} over the cells' boards, {rate} in the "
                     f"pooled board")
        text = module.table(cells)
        if len(text.splitlines()) != 2 + 1 + 3 + 3:
            fail(f"the table has {len(text.splitlines())} lines:\n{text}")
    print(f"arena-family-out.py: the pooled win rates of {len(board)} methods; "
          f"{len(shapes)} shapes")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "shipped"
    {"shipped": shipped, "rerun": rerun, "family_out": family_out}[mode]()
