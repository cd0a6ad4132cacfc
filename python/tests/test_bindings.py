"""Tests of the compiled verbs calbench.sample, truth, estimate and run (ctest: python.bindings).

Each is checked against the command line (CALBENCH_BIN): sample against the very samples a run
hands an external estimator, truth against summary.json to the last digit, estimate against
`calbench eval` for every registry estimator and every convention, run against `calbench run`.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import pandas as pd

import calbench
import calbench._core  # the compiled module itself (estimator_rows)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def calbench_binary():
    path = os.environ.get("CALBENCH_BIN")
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError("CALBENCH_BIN must name the calbench binary (ctest sets it)")
    return path


def cli(*args, check=True):
    out = subprocess.run([calbench_binary(), *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise RuntimeError(f"calbench {' '.join(args)} exited {out.returncode}: {out.stderr}")
    return out


GENERATORS = [
    {"family": "dirichlet", "classes": 3, "alpha": 0.6,
     "miscalibration": {"map": "temperature", "temperature": 0.7}},
    {"family": "dirichlet", "classes": 4, "alpha": [0.5, 1, 1.5, 2],
     "miscalibration": {"map": "power", "exponents": [1.2, 0.8, 1, 1.5]}},
    {"family": "class_conditional", "classes": 2, "alpha": [[3, 1], [1, 3]]},
    {"family": "dirichlet", "classes": 3,
     "target": {"accuracy": 0.8, "ece_top_l1": 0.05, "direction": "overconfident"},
     "miscalibration": {"map": "temperature"}},
    # Not injective (DESIGN.md §1): its truth sums over preimages (truth/map_preimage.hpp).
    {"family": "dirichlet", "classes": 3, "alpha": 0.8,
     "miscalibration": {"map": "top_label", "gamma": 2}},
]
SETTINGS = {"samples": 20000}  # the truth settings of experiment()


def experiment(tmp, generator, estimators, sweep=None, **extra):
    config = {"name": "bindings", "scenario": "estimator_bias", "seed": 4242, "replicates": 5,
              "sample_size": 200, "generator": generator, "estimators": estimators,
              "truth": {"samples": 20000}, "output": {"replicate_values": True}}
    if sweep:
        config["sweep"] = sweep
    config.update(extra)
    path = os.path.join(tmp, "config.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)
    return config, path


class BindingsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="calbench_bindings_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_samples_equal_the_runs_draws(self):
        # An external estimator that copies its cell's NPY files out: the run's very samples.
        for gi, generator in enumerate(GENERATORS):
            dump = os.path.join(self.tmp, f"dump{gi}")
            os.makedirs(dump)
            script = (f'mkdir -p "{dump}/$(basename "$0")" && cp "$0"/*.npy "{dump}/$(basename "$0")/" '
                      f'&& grep -o \'"sample_size": [0-9]*\' "$0/manifest.json" > '
                      f'"{dump}/$(basename "$0")/size" && for f in "$0"/y_*.npy; do echo 0; done')
            config, path = experiment(
                self.tmp, generator,
                [{"name": "external", "label": "dump", "target": "accuracy",
                  "command": ["sh", "-c", script]}],
                sweep={"sample_size": [50, 120]})
            cli("run", path, "--out", os.path.join(self.tmp, f"out{gi}"), "--quiet",
                "--threads", "2")
            dirs = sorted(os.listdir(dump))
            self.assertEqual(len(dirs), 2)
            for d in dirs:
                with open(os.path.join(dump, d, "size")) as f:
                    n = int(f.read().split(":")[1])
                cell = [50, 120].index(n)
                for r in range(5):
                    p, y = calbench.sample(generator, n, seed=4242, replicate=r, cell=cell,
                                           settings=SETTINGS)
                    np.testing.assert_array_equal(p, np.load(os.path.join(dump, d, f"p_{r:06d}.npy")))
                    np.testing.assert_array_equal(y, np.load(os.path.join(dump, d, f"y_{r:06d}.npy")))
                    self.assertEqual(p.dtype, np.float64)
                    self.assertEqual(y.dtype, np.int64)

    def test_sample_with_c_and_determinism(self):
        g = GENERATORS[0]
        p, y = calbench.sample(g, 1000, seed=1)
        p2, y2, c = calbench.sample(g, 1000, seed=1, with_c=True)
        np.testing.assert_array_equal(p, p2)
        np.testing.assert_array_equal(y, y2)
        self.assertEqual(c.shape, p.shape)
        np.testing.assert_allclose(c.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
        # temperature 0.7: p_k proportional to c_k^(1/0.7)
        q = c ** (1 / 0.7)
        np.testing.assert_allclose(p, q / q.sum(axis=1, keepdims=True), rtol=1e-9, atol=1e-300)
        p3, _ = calbench.sample(g, 1000, seed=1, replicate=1)
        self.assertFalse(np.array_equal(p, p3))

    def test_empirical_generator_from_fit_out(self):
        # The config `calbench fit --out` writes (the empirical family, its rows in an NPY file
        # beside it) drives sample() and truth(): the rows file is read relative to
        # `directory`, the draws are those of the same generator with its rows inline, the
        # truth is the fit's own, and the draws agree with that truth statistically.
        data_generator = {"family": "dirichlet", "classes": 3, "alpha": 0.8,
                          "miscalibration": {"map": "temperature", "temperature": 0.6}}
        p0, y0 = calbench.sample(data_generator, 1500, seed=31)
        data = os.path.join(self.tmp, "model.csv")
        np.savetxt(data, np.column_stack([y0, p0]), delimiter=",", fmt="%.17g")
        folder = os.path.join(self.tmp, "fake")
        os.makedirs(folder)
        config_path = os.path.join(folder, "fake.json")
        fit = json.loads(cli("fit", data, "--out", config_path, "--force", "--json",
                             "--replicates", "5", "--resamples", "5", "--sizes", "100",
                             "--verdict-samples", "20").stdout)
        with open(config_path, encoding="utf-8") as f:
            config = json.load(f)
        g = config["generator"]
        self.assertEqual(g["family"], "empirical")
        self.assertEqual(g["rows"], "fake.rows.npy")
        self.assertGreater(g["bandwidth"], 0)  # smoothed: draws are not just the rows

        # Relative to the current directory (the test's, not the config's) it is not found,
        # and the error names the key.
        with self.assertRaisesRegex(ValueError, "/generator/rows"):
            calbench.sample(g, 10, seed=1)
        p, y, c = calbench.sample(g, 40000, seed=7, with_c=True, directory=folder)
        rows = np.load(os.path.join(folder, "fake.rows.npy"))
        inline = {k: v for k, v in g.items() if k != "sha256"}
        inline["rows"] = rows.tolist()
        p2, y2 = calbench.sample(inline, 40000, seed=7)
        np.testing.assert_array_equal(p, p2)
        np.testing.assert_array_equal(y, y2)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(c.sum(axis=1), 1.0, atol=1e-12)

        # The truth: the fit's (same generator, default settings) to the last digit.
        t = calbench.truth(g, config.get("truth"), directory=folder)
        self.assertEqual(t["accuracy"].value, fit["fake"]["accuracy"]["value"])
        self.assertEqual(t["ece_top_l1"].value, fit["fake"]["ece_top_l1"]["value"])
        # The draws against it: accuracy (binomial SE) and mean confidence (SE of the mean),
        # within 4 standard errors plus the truth's own error.
        n = len(y)
        top = p.argmax(axis=1)
        correct = (y == top).astype(float)
        accuracy = t["accuracy"]
        se = np.sqrt(accuracy.value * (1 - accuracy.value) / n)
        self.assertLess(abs(correct.mean() - accuracy.value), 4 * se + accuracy.error)
        confidence = accuracy.value + t["overconfidence"].value
        z = p.max(axis=1)
        self.assertLess(abs(z.mean() - confidence),
                        4 * z.std(ddof=1) / np.sqrt(n) + accuracy.error
                        + t["overconfidence"].error)
        # y ~ c: the labels agree with c's top-class probability (Rao-Blackwell), and the
        # top-label gap E[c_top - z] is the truth's overconfidence with its sign.
        c_top = c[np.arange(n), top]
        self.assertLess(abs(correct.mean() - c_top.mean()), 4 * se)
        gap = c_top - z
        self.assertLess(abs(gap.mean() + t["overconfidence"].value),
                        4 * gap.std(ddof=1) / np.sqrt(n) + t["overconfidence"].error)
        # The data were overconfident (temperature 0.6): so is the fake.
        self.assertLess(gap.mean(), 0)

    def test_truth_equals_the_command_line_to_the_last_digit(self):
        settings = SETTINGS
        for gi, generator in enumerate(GENERATORS):
            _, path = experiment(self.tmp, generator, [{"name": "accuracy"}])
            out = os.path.join(self.tmp, f"truth{gi}")
            cli("run", path, "--out", out, "--quiet")
            with open(os.path.join(out, "summary.json")) as f:
                cli_truth = json.load(f)["cells"][0]["truth"]
            py_truth = calbench.truth(generator, settings)
            self.assertEqual(set(py_truth), set(cli_truth))
            for q, t in py_truth.items():
                with self.subTest(generator=gi, quantity=q):
                    self.assertEqual(t.value, cli_truth[q]["value"])
                    self.assertEqual(t.method, cli_truth[q]["method"])
                    self.assertEqual(t.error, cli_truth[q]["error"])
        self.assertEqual(calbench.truth(GENERATORS[0], settings)["accuracy"].method, "quadrature")

    def test_estimate_equals_eval_for_every_estimator_and_convention(self):
        p, y = calbench.sample(GENERATORS[1], 300, seed=9)
        data = os.path.join(self.tmp, "data.csv")
        np.savetxt(data, np.column_stack([y, p]), delimiter=",",
                   fmt=["%d"] + ["%.17g"] * p.shape[1])
        # What the CSV holds, read back: eval reads the same doubles.
        table = np.loadtxt(data, delimiter=",")
        p, y = table[:, 1:], table[:, 0].astype(np.int64)
        entries = []
        for example in calbench.estimator_examples():
            entries.append(dict(example, label=f"{example['name']}_example"))
        conventions = calbench.conventions()
        self.assertIn("calbench", conventions)
        for name, _text, keys in calbench._core.estimator_rows():
            if "convention" in keys:
                for c in conventions:
                    entries.append({"name": name, "convention": c, "label": f"{name}_{c}"})
        self.assertGreater(len(entries), 20)
        out = cli("eval", data, "--estimators", json.dumps(entries), "--resamples", "1", "--json")
        values = json.loads(out.stdout)["estimators"]
        for entry in entries:
            with self.subTest(entry=entry):
                self.assertEqual(calbench.estimate(entry, p, y), values[entry["label"]]["value"])

    def test_bad_arguments_raise_value_error_naming_the_key(self):
        g = dict(GENERATORS[0], alpha=-1)
        with self.assertRaisesRegex(ValueError, r"calbench.sample: /generator/alpha: .*must be > 0"):
            calbench.sample(g, 10, seed=1)
        g = dict(GENERATORS[0], miscalibration={"map": "temperature", "temperature": "hot"})
        with self.assertRaisesRegex(ValueError, r"/generator/miscalibration/temperature"):
            calbench.truth(g)
        with self.assertRaisesRegex(ValueError, r"/generator/colour: unknown key"):
            calbench.sample(dict(GENERATORS[0], colour=1), 10, seed=1)
        with self.assertRaisesRegex(ValueError, r"^n = 0: expected an integer >= 1"):
            calbench.sample(GENERATORS[0], 0, seed=1)
        with self.assertRaisesRegex(ValueError, r"^seed = -1"):
            calbench.sample(GENERATORS[0], 10, seed=-1)
        p, y = calbench.sample(GENERATORS[0], 50, seed=1)
        with self.assertRaisesRegex(ValueError, r"/estimator/bins: .*>= 1"):
            calbench.estimate({"name": "ece", "bins": 0}, p, y)
        with self.assertRaisesRegex(ValueError, r'/estimator/name: unknown estimator "eca"; valid:'):
            calbench.estimate({"name": "eca"}, p, y)
        with self.assertRaisesRegex(ValueError, r"/estimator/convention: unknown convention"):
            calbench.estimate({"name": "ece", "convention": "mine"}, p, y)
        bad = p.copy()
        bad[3, 0] += 0.1
        with self.assertRaisesRegex(ValueError, r"^p: row 3: probabilities sum to"):
            calbench.estimate({"name": "ece"}, bad, y)
        wrong = y.copy()
        wrong[7] = 3
        with self.assertRaisesRegex(ValueError, r"^y: row 7: label 3 is out of range"):
            calbench.estimate({"name": "ece"}, p, wrong)
        # Whole-number float labels (numpy.loadtxt's) are labels; any other float is refused.
        self.assertEqual(calbench.estimate({"name": "ece"}, p, y.astype(float)),
                         calbench.estimate({"name": "ece"}, p, y))
        half = y.astype(float)
        half[4] = 0.5
        with self.assertRaisesRegex(ValueError, r"^y: row 4: label 0.5 is not an integer"):
            calbench.estimate({"name": "ece"}, p, half)
        with self.assertRaisesRegex(ValueError, r"^y: expected an integer array"):
            calbench.estimate({"name": "ece"}, p, y.astype(str))
        with self.assertRaisesRegex(ValueError, r"^y: expected a 1-D array of 50 labels"):
            calbench.estimate({"name": "ece"}, p, y[:10])
        with self.assertRaisesRegex(ValueError, r"calbench.run: /replicates: "):
            calbench.run({"scenario": "estimator_bias", "seed": 1, "replicates": 0,
                          "sample_size": 10, "generator": GENERATORS[0],
                          "estimators": [{"name": "ece"}]})

    def test_run_checks_the_preflight_like_the_command_line(self):
        # calbench.run refuses what `calbench run` refuses before computing (docs/config.md,
        # "Pre-flight"), with the same message, and creates nothing.
        config, path = experiment(self.tmp, GENERATORS[0], [{"name": "ece"}])
        config = dict(config, sample_size=10**12)
        with open(path, "w") as f:
            json.dump(config, f)
        out = os.path.join(self.tmp, "preflight")
        done = cli("run", path, "--out", out, "--quiet", "--threads", "1", check=False)
        self.assertEqual(done.returncode, 2, done.stderr)
        line = done.stderr.strip().splitlines()[0]
        self.assertRegex(line, r"/sample_size: the run needs about .* of memory")
        expected = line[len("error: "):]
        with self.assertRaises(ValueError) as raised:
            calbench.run(path, out=out, threads=1)
        self.assertEqual(str(raised.exception), expected)
        self.assertFalse(os.path.exists(out))

    def test_run_returns_the_command_lines_results(self):
        config, path = experiment(self.tmp, GENERATORS[0],
                                  [{"name": "ece"}, {"name": "brier"}],
                                  sweep={"sample_size": [100, 200]})
        out = os.path.join(self.tmp, "cli")
        cli("run", path, "--out", out, "--quiet")
        expected = calbench.load(out)
        for got in (calbench.run(config, threads=1), calbench.run(path, threads=2)):
            pd.testing.assert_frame_equal(got.summary, expected.summary)
            pd.testing.assert_frame_equal(got.replicates, expected.replicates)
            pd.testing.assert_frame_equal(got.truth, expected.truth)
        kept = os.path.join(self.tmp, "kept")
        r = calbench.run(config, out=kept)
        self.assertTrue(os.path.exists(os.path.join(kept, "summary.json")))
        for name in ("summary.json", "cells.csv", "replicates.csv"):
            with open(os.path.join(kept, name)) as a, open(os.path.join(out, name)) as b:
                text_a, text_b = a.read(), b.read()
            if name == "summary.json":  # the meta's config hash covers the output directory
                text_a = json.loads(text_a)["cells"]
                text_b = json.loads(text_b)["cells"]
            self.assertEqual(text_a, text_b, name)
        self.assertEqual(r.scenario, "estimator_bias")

    def test_run_writes_a_whole_result_set_or_nothing(self):
        # run(out=...) commits through the command line's transaction (report/result_set.hpp):
        # a run that fails halfway leaves the previous set byte for byte, and no work files.
        config, _ = experiment(self.tmp, GENERATORS[0], [{"name": "ece"}],
                               sweep={"sample_size": [100, 200]})
        kept = os.path.join(self.tmp, "kept")
        calbench.run(config, out=kept)

        def files():
            found = {}
            for root, _dirs, names in os.walk(self.tmp):
                for name in names:
                    path = os.path.join(root, name)
                    if not path.endswith("config.json"):
                        with open(path, "rb") as f:
                            found[os.path.relpath(path, self.tmp)] = f.read()
            return found

        before = files()
        self.assertIn(os.path.join("kept", "summary.json"), before)
        # An external estimator that fails in cell 1, after cell 0 has been computed.
        failing = dict(config, estimators=[
            {"name": "ece"},
            {"name": "external", "label": "fails_late", "target": "ece_top_l1",
             "command": ["sh", "-c", "if grep -q '\"sample_size\": 200' \"$0/manifest.json\"; "
                         "then exit 3; fi; for f in \"$0\"/y_*.npy; do echo 0.5; done"]}])
        with self.assertRaisesRegex(RuntimeError, r'"fails_late", cell 1 \(sample_size = 200\)'):
            calbench.run(failing, out=kept, overwrite=True)
        self.assertEqual(files(), before)
        # A rerun into the finished set is refused without overwrite=True (issue #28), which
        # replaces it whole.
        with self.assertRaisesRegex(OSError, "already holds a finished calbench result set.*"
                                    "overwrite=True"):
            calbench.run(config, out=kept)
        self.assertEqual(files(), before)
        calbench.run(config, out=kept, overwrite=True)
        cells = os.path.join("kept", "cells.csv")
        self.assertEqual(files()[cells], before[cells])
        # A directory that is not a result set, and an interrupted command-line run's journal,
        # are refused (OSError) and left alone.
        other = os.path.join(self.tmp, "other")
        os.makedirs(other)
        with open(os.path.join(other, "notes.txt"), "w") as f:
            f.write("mine\n")
        with self.assertRaisesRegex(OSError, "other"):
            calbench.run(config, out=other)
        partial = os.path.join(self.tmp, ".kept.partial")
        os.makedirs(partial)
        with open(os.path.join(partial, "journal.bin"), "wb") as f:
            f.write(b"an interrupted run's journal")
        before = files()
        with self.assertRaisesRegex(OSError, "journal of an interrupted run.*--resume"):
            calbench.run(config, out=kept)
        self.assertEqual(files(), before)

    def test_keyboard_interrupt_stops_a_run_and_writes_nothing(self):
        # A run of some minutes, interrupted once it has started: KeyboardInterrupt within
        # seconds, and no result set, staging directory or lock left behind.
        out = os.path.join(self.tmp, "long")
        code = ("import signal, sys, calbench\n"
                # a background process may inherit SIGINT ignored; Python's own handler back
                "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
                "g = {'family': 'dirichlet', 'classes': 10, 'alpha': 0.5}\n"
                "calbench.run({'scenario': 'estimator_bias', 'seed': 1, 'replicates': 200000,\n"
                "              'sample_size': 2000, 'generator': g, 'truth': {'samples': 20000},\n"
                "              'estimators': [{'name': 'ece'}]}, out=sys.argv[1], threads=1)\n")
        child = subprocess.Popen([sys.executable, "-B", "-c", code, out], text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        partial = os.path.join(self.tmp, ".long.partial")
        for _ in range(600):
            if os.path.isdir(partial) or child.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        try:
            _, stderr = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            self.fail("calbench.run went on for 60 s after SIGINT")
        self.assertNotEqual(child.returncode, 0)
        self.assertIn("KeyboardInterrupt", stderr)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_keyboard_interrupt_stops_kde_canonical_within_seconds(self):
        # kde_canonical's O(n^2 K) pass at n = 20,000 takes about a minute; Ctrl-C used to wait
        # for it (issue #28). Now KeyboardInterrupt within a second or two.
        code = ("import signal, sys, time, numpy as np, calbench\n"
                "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
                "p, y = calbench.sample({'family': 'dirichlet', 'classes': 3, 'alpha': 1},"
                " 20000, seed=1)\n"
                "print('start', flush=True)\n"
                "try:\n"
                "    calbench.estimate({'name': 'kde_canonical'}, p, y)\n"
                "except KeyboardInterrupt:\n"
                "    print('interrupted', time.monotonic(), flush=True)\n"
                "    sys.exit(3)\n")
        child = subprocess.Popen([sys.executable, "-B", "-c", code], text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(child.stdout.readline().strip(), "start")
        time.sleep(1.0)
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            out, stderr = child.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            self.fail("calbench.estimate(kde_canonical) went on for 30 s after SIGINT")
        self.assertEqual(child.returncode, 3, stderr)
        self.assertIn("interrupted", out)
        # CLOCK_MONOTONIC is system-wide: the child's clock at the KeyboardInterrupt, not
        # counting the interpreter's exit. Within a second of work; 5 s of wall time on a
        # loaded machine (the pass used to hold Ctrl-C for the whole minute).
        waited = float(out.split()[-1]) - sent
        self.assertLess(waited, 5.0)

    def test_nan_and_huge_labels_are_named(self):
        # A NaN in a dict is reported with its JSON pointer; a uint64 label past int64 as its
        # own value, not as the -1 it wrapped to (issue #28).
        with self.assertRaisesRegex(ValueError, r"calbench: generator: /generator/alpha: nan "
                                    r"is not a finite number"):
            calbench.sample(dict(GENERATORS[0], alpha=float("nan")), 10, seed=1)
        with self.assertRaisesRegex(ValueError, r"calbench: config: /estimators/0/bins: inf"):
            calbench.run({"scenario": "estimator_bias", "replicates": 2, "sample_size": 10,
                          "generator": GENERATORS[0],
                          "estimators": [{"name": "ece", "bins": float("inf")}]})
        p, y = calbench.sample(GENERATORS[0], 50, seed=1)
        big = y.astype(np.uint64)
        big[5] = 2**64 - 1
        with self.assertRaisesRegex(ValueError, r"^y: row 5: label 18446744073709551615 is "
                                    r"out of range"):
            calbench.estimate({"name": "ece"}, p, big)
        huge = y.astype(float)
        huge[2] = 1e30
        with self.assertRaisesRegex(ValueError, r"^y: row 2: label 1e\+30 is out of range"):
            calbench.estimate({"name": "ece"}, p, huge)

    def test_external_example_config_reproduces_the_builtin_ece_on_any_thread_count(self):
        # docs/examples/external_ece.json as a user runs it (from the repository root): the
        # numpy script computes the built-in 15-bin ECE, so every replicate agrees up to the
        # order of the floating-point sums, and the result files do not depend on the threads.
        config = os.path.join(REPO, "docs", "examples", "external_ece.json")
        outs = []
        for threads in ("1", "2"):
            outs.append(os.path.join(self.tmp, f"external{threads}"))
            done = subprocess.run([calbench_binary(), "run", config, "--out", outs[-1],
                                   "--threads", threads, "--quiet", "--no-report"],
                                  capture_output=True, text=True, cwd=REPO)
            self.assertEqual(done.returncode, 0, done.stderr)
        for name in ("summary.json", "cells.csv", "replicates.csv", "config.resolved.json"):
            with open(os.path.join(outs[0], name), "rb") as a, \
                    open(os.path.join(outs[1], name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)
        r = calbench.load(outs[1])
        values = r.replicates.pivot_table(index=["cell", "replicate"], columns="estimator",
                                          values="value")
        self.assertEqual(len(values), 4 * 100)
        self.assertLessEqual((values["numpy_ece"] - values["ece_ew15"]).abs().max(), 1e-12)
        self.assertGreater(values["ece_ew15"].min(), 0.0)
        s = r.summary.set_index(["cell", "estimator"])
        for cell in range(4):
            builtin, external = s.loc[(cell, "ece_ew15")], s.loc[(cell, "numpy_ece")]
            self.assertEqual(external["target"], "ece_top_l1")
            self.assertEqual(external["truth"], builtin["truth"])
            for column in ("mean", "bias", "sd", "rmse", "se_bias"):
                self.assertAlmostEqual(external[column], builtin[column], delta=1e-12)

    def test_export_cases(self):
        directory = os.path.join(self.tmp, "cases")
        out = cli("export-cases", directory)
        self.assertIn("8 cases", out.stdout)
        with open(os.path.join(directory, "cases.json")) as f:
            document = json.load(f)
        cases = {c["name"]: c for c in document["cases"]}
        self.assertEqual(set(cases), {"confident_wrong", "confident_half_right",
                                      "zero_probabilities", "ties", "bin_edges", "empty_class",
                                      "single_row", "uniform"})
        compared = 0
        for case in document["cases"]:
            p = np.load(os.path.join(directory, case["p"]))
            y = np.load(os.path.join(directory, case["y"]))
            self.assertEqual(p.shape, (case["n"], case["classes"]))
            for item in case["expected"]:
                if "value" in item and item["value"] is not None:
                    with self.subTest(case=case["name"], estimator=item["label"]):
                        self.assertEqual(calbench.estimate(item["estimator"], p, y),
                                         item["value"])
                    compared += 1
        self.assertGreater(compared, 300)
        # By hand: confidence exactly 1 everywhere, wrong everywhere / on half of the rows.
        for name, ece in (("confident_wrong", 1.0), ("confident_half_right", 0.5)):
            values = {i["label"]: i.get("value") for i in cases[name]["expected"]}
            self.assertEqual(cases[name]["plugin_truth"]["ece_top_l1"], ece)
            self.assertEqual(values["ece_calbench"], ece)
            self.assertEqual(values["ece_binary_calbench"], ece)
        self.assertIsNone(cases["confident_wrong"]["plugin_truth"]["nll"])  # log 0
        # The NLL of rows whose label has probability 0 is not estimable: null with the reason
        # in the file, NaN with a RuntimeWarning from calbench.estimate.
        nll = {i["label"]: i for i in cases["confident_wrong"]["expected"]}["nll"]
        self.assertIsNone(nll["value"])
        self.assertEqual(nll["error"], "not estimable: 4 rows with label probability 0")
        case = cases["confident_wrong"]
        p = np.load(os.path.join(directory, case["p"]))
        y = np.load(os.path.join(directory, case["y"]))
        with self.assertWarnsRegex(RuntimeWarning, "nll is not estimable: 4 of 4 rows"):
            self.assertTrue(np.isnan(calbench.estimate({"name": "nll"}, p, y)))
        uniform = {i["label"]: i.get("value") for i in cases["uniform"]["expected"]}
        for convention in calbench.conventions():
            self.assertEqual(uniform[f"ece_{convention}"], 0.0)
        # An existing non-empty directory is refused, and left alone.
        again = cli("export-cases", directory, check=False)
        self.assertEqual(again.returncode, 2)
        self.assertIn("exists and is not an empty directory", again.stderr)
        self.assertTrue(os.path.exists(os.path.join(directory, "cases.json")))

    def test_import_without_the_extension(self):
        # A copy of the pure-Python package without _core: import works, the verbs explain.
        copy = os.path.join(self.tmp, "pkg")
        shutil.copytree(os.path.join(REPO, "python", "calbench"), os.path.join(copy, "calbench"),
                        ignore=shutil.ignore_patterns("_core*", "__pycache__"))
        code = ("import calbench\n"
                "assert callable(calbench.load) and callable(calbench.reliability_table)\n"
                "try:\n"
                "    calbench.sample({'family': 'dirichlet', 'classes': 3}, 10, seed=1)\n"
                "except ImportError as e:\n"
                "    print(e)\n")
        env = dict(os.environ, PYTHONPATH=copy)
        env.pop("CALBENCH_CORE_DIR", None)
        out = subprocess.run([sys.executable, "-B", "-c", code], capture_output=True, text=True,
                             env=env, cwd=self.tmp)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("calbench._core, which is not built", out.stdout)
        self.assertIn("scripts/setup.sh", out.stdout)


if __name__ == "__main__":
    unittest.main()
