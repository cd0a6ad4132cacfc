"""The reliability audit of issue #38 from Python (ctest: python.audit).

N3: the HTML report and calbench.plan(out=...) stage their files privately, never through a
link planted at a predictable name. N5: a recalibration method whose fits fail is a warning of
calbench.run. N7: calbench.sample, calbench.leaderboard and Recalibrator("kernel").fit end with
KeyboardInterrupt within seconds of Ctrl-C. D15: a model file that is /dev/zero or a FIFO is a
ValueError at once. D11: a cells.csv cut or edited against summary.json is refused, in every
scenario. Progress: calbench.run and calbench.fit show their progress on sys.stderr.
"""

import contextlib
import io
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

import numpy as np

import calbench
from calbench import _atomic

BIN = os.environ.get("CALBENCH_BIN", "")


def has_extension():
    try:
        import calbench._core  # noqa: F401
    except ImportError:
        return False
    return True


class StagingFiles(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.tmp = self.directory.name

    def tearDown(self):
        self.directory.cleanup()

    def test_a_planted_link_is_not_followed(self):
        victim = os.path.join(self.tmp, "victim.txt")
        with open(victim, "w") as f:
            f.write("victim")
        target = os.path.join(self.tmp, "index.html")
        for suffix in (".tmp", f".{os.getpid()}.tmp"):
            os.symlink(victim, target + suffix)
        _atomic.write_atomically(target, "<html>page</html>\n")
        with open(victim) as f:
            self.assertEqual(f.read(), "victim")
        with open(target) as f:
            self.assertEqual(f.read(), "<html>page</html>\n")
        self.assertFalse(os.path.islink(target))
        # The usual mode (0644 less the umask), not mkstemp's 0600; no staging file left.
        mask = os.umask(0o022)
        os.umask(mask)
        self.assertEqual(stat.S_IMODE(os.stat(target).st_mode), 0o644 & ~mask)
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         sorted(["victim.txt", "index.html", "index.html.tmp",
                                 f"index.html.{os.getpid()}.tmp"]))

    def test_the_report_writer_stages_privately(self):
        from calbench import report
        victim = os.path.join(self.tmp, "victim.txt")
        with open(victim, "w") as f:
            f.write("victim")
        page = os.path.join(self.tmp, "index.html")
        os.symlink(victim, page + ".tmp")
        report._write(page, "page")
        with open(victim) as f:
            self.assertEqual(f.read(), "victim")
        with open(page) as f:
            self.assertEqual(f.read(), "page")

    @unittest.skipUnless(os.access(BIN, os.X_OK), "CALBENCH_BIN names no calbench binary")
    def test_plan_out_is_not_written_through_a_link(self):
        previous = os.getcwd()
        os.chdir(self.tmp)
        try:
            with open("victim.txt", "w") as f:
                f.write("victim")
            os.symlink("victim.txt", f"plan_out.json.{os.getpid()}.tmp")
            answer = calbench.plan({"generator": {"family": "dirichlet", "classes": 2,
                                                  "alpha": 2},
                                    "estimator": {"name": "brier"},
                                    "question": {"width": 0.1}},
                                   out="plan_out.json", quiet=True)
            with open("victim.txt") as f:
                self.assertEqual(f.read(), "victim")
            self.assertFalse(os.path.islink("plan_out.json"))
            self.assertIn("n", str(answer))
        finally:
            os.chdir(previous)


@unittest.skipUnless(has_extension(), "calbench._core is not built")
class ReadModelFiles(unittest.TestCase):
    def test_special_files_are_refused_at_once(self):
        start = time.monotonic()
        with self.assertRaisesRegex(ValueError, r"/dev/zero: cannot open the file \(it is a "
                                    r"character device, not a regular file\)"):
            calbench.Recalibrator.load("/dev/zero")
        with tempfile.TemporaryDirectory() as tmp:
            fifo = os.path.join(tmp, "model.fifo")
            os.mkfifo(fifo)
            with self.assertRaisesRegex(ValueError, "it is a FIFO, not a regular file"):
                calbench.Recalibrator.load(fifo)
            with self.assertRaisesRegex(ValueError, "it is a directory, not a regular file"):
                calbench.Recalibrator.load(tmp)
        self.assertLess(time.monotonic() - start, 5.0)

    def test_bad_json_names_the_place_without_the_library_id(self):
        # D18: nlohmann's "[json.exception.parse_error.101]" reached the user.
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as f:
                f.write("{bad")
            for call in (calbench.Recalibrator.load, calbench.run):
                with self.assertRaises(ValueError) as caught:
                    call(bad)
                self.assertIn(f"{bad}: not valid JSON: parse error at line 1, column 2",
                              str(caught.exception))
                self.assertNotIn("json.exception", str(caught.exception))


@unittest.skipUnless(has_extension(), "calbench._core is not built")
class FailedMethods(unittest.TestCase):
    def test_a_failing_method_is_a_warning(self):
        config = {"scenario": "recalibration", "seed": 3, "replicates": 3, "fit_size": 300,
                  "test_size": 100, "truth_samples": 2000,
                  "generator": {"family": "dirichlet", "classes": 3, "alpha": 0.5},
                  "methods": [{"name": "temperature"}, {"name": "logistic"}],
                  "estimators": [{"name": "brier"}], "truth": {"samples": 2000},
                  "sweep": {"fit_size": [4, 300]}}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = calbench.run(config, threads=1)
        messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        self.assertTrue(any("method logistic failed in" in m for m in messages), messages)
        self.assertIsNotNone(results)


@unittest.skipUnless(has_extension(), "calbench._core is not built")
class DamagedResults(unittest.TestCase):
    # D11: a cells.csv cut at a line boundary, or a value replaced by nan, loaded silently.
    # Each scenario's cells.csv is summary.json's cells row for row, failure rows included.
    CONFIGS = {
        "estimator_bias": ({"scenario": "estimator_bias", "seed": 1, "replicates": 5,
                            "sample_size": 50,
                            "generator": {"family": "dirichlet", "classes": 3, "alpha": 1},
                            "estimators": [{"name": "brier"}, {"name": "ece"}],
                            "truth": {"samples": 5000}, "sweep": {"sample_size": [50, 100]}},
                           "mean"),
        # logistic fails at fit_size 4 (separable outcomes): cells.csv has a failure row.
        "recalibration": ({"scenario": "recalibration", "seed": 3, "replicates": 3,
                           "fit_size": 300, "test_size": 100, "truth_samples": 2000,
                           "generator": {"family": "dirichlet", "classes": 3, "alpha": 0.5},
                           "methods": [{"name": "temperature"}, {"name": "logistic"}],
                           "estimators": [{"name": "brier"}], "truth": {"samples": 2000},
                           "sweep": {"fit_size": [4, 300]}}, "mean"),
        "decision": ({"scenario": "decision", "seed": 2, "replicates": 5, "sample_size": 100,
                      "generator": {"family": "dirichlet", "classes": 2, "alpha": 0.5,
                                    "miscalibration": {"map": "temperature",
                                                       "temperature": 1.5}},
                      "decision": {"task": "triage", "disease": 1, "benefit": 1.0,
                                   "harm": 0.25},
                      "sweep": {"generator.alpha": [0.3, 0.6]}}, "expected_utility"),
    }

    def damage(self, scenario):
        config, column = self.CONFIGS[scenario]
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the failing method's warning
            out = os.path.join(tmp, "r")
            calbench.run(config, out=out, threads=1)
            rows = len(calbench.load(out).cells)
            cells = os.path.join(out, "cells.csv")
            with open(cells) as f:
                lines = f.read().splitlines(True)
            self.assertEqual(len(lines), rows + 1)
            with open(cells, "w") as f:
                f.write("".join(lines[:-1]))
            with self.assertRaisesRegex(ValueError, f"cells.csv: {rows - 1} rows, but "
                                        f"summary.json has {rows}: the file is cut"):
                calbench.load(out)
            header = lines[0].rstrip("\n").split(",")
            last = lines[-1].rstrip("\n").split(",")
            last[header.index(column)] = "nan"
            with open(cells, "w") as f:
                f.write("".join([*lines[:-1], ",".join(last) + "\n"]))
            with self.assertRaisesRegex(ValueError, f"cells.csv: row {rows}: {column} = nan, "
                                        "but summary.json has"):
                calbench.load(out)
            return lines

    def test_estimator_bias(self):
        self.damage("estimator_bias")

    def test_recalibration(self):
        lines = self.damage("recalibration")
        self.assertTrue(any(",failure," in line for line in lines))

    def test_decision(self):
        self.damage("decision")


class Progress(unittest.TestCase):
    """calbench.run and calbench.fit printed nothing while they ran (issue #38): their progress
    lines go to sys.stderr, after 2 s and then every 5 s (here both 0, so that a short run
    shows them), and quiet=True hides them."""

    def setUp(self):
        from calbench import _progress
        self.saved = (_progress.FIRST_AFTER, _progress.EVERY)
        _progress.FIRST_AFTER = _progress.EVERY = 0.0

    def tearDown(self):
        from calbench import _progress
        _progress.FIRST_AFTER, _progress.EVERY = self.saved

    def test_lines_and_their_timing(self):
        from calbench import _progress
        _progress.FIRST_AFTER, _progress.EVERY = 2.0, 5.0
        stream = io.StringIO()
        progress = _progress.Progress("calbench.run: x", "replicates", stream=stream)
        progress(1, 10)  # within the first 2 s: silent
        progress.finish()
        self.assertEqual(stream.getvalue(), "")
        progress.start -= 3.0
        progress(3, 10)
        progress(4, 10)  # within 5 s of the last line: silent
        progress.last -= 5.0
        progress(5, 10)
        progress.finish()
        lines = stream.getvalue().splitlines()
        self.assertEqual(len(lines), 3, lines)
        self.assertRegex(lines[0], r"^calbench.run: x: 3/10 replicates \(30%\), 3 s$")
        self.assertRegex(lines[1], r"^calbench.run: x: 5/10 replicates \(50%\), 3 s$")
        self.assertRegex(lines[2], r"^calbench.run: x: done in 3 s$")

    @unittest.skipUnless(has_extension(), "calbench._core is not built")
    def test_run_prints_its_progress(self):
        config = {"name": "progress", "scenario": "estimator_bias", "seed": 1,
                  "replicates": 400, "sample_size": 2000,
                  "generator": {"family": "dirichlet", "classes": 10, "alpha": 0.5},
                  "estimators": [{"name": "ece"}], "truth": {"samples": 100000}}
        for quiet in (False, True):
            stream = io.StringIO()
            with contextlib.redirect_stderr(stream):
                calbench.run(config, threads=1, quiet=quiet)
            lines = stream.getvalue().splitlines()
            if quiet:
                self.assertEqual(lines, [])
                continue
            self.assertTrue(any(re.fullmatch(r"calbench.run: progress: \d+/400 replicates "
                                             r"\(\d+%\), \d+ s", line) for line in lines), lines)
            self.assertRegex(lines[-1], r"^calbench.run: progress: done in \d+ s$")

    def test_fit_copies_the_command_progress(self):
        # A stand-in for the executable: calbench.fit's plumbing, not the fit, is tested here
        # (runners/fit.cpp prints its lines; tests/cli/fit.sh).
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "calbench")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n"
                        "echo \"fit: fakes of the verdict's folds: 2/5 fits\" >&2\n"
                        "echo '{\"verdict\": {\"verdict\": \"GOOD\"}}'\n")
            os.chmod(fake, 0o755)
            data = os.path.join(tmp, "outputs.csv")
            with open(data, "w") as f:
                f.write("0,0.5,0.5\n")
            previous = os.environ.get("CALBENCH_BIN")
            os.environ["CALBENCH_BIN"] = fake
            try:
                for quiet in (False, True):
                    stream = io.StringIO()
                    with contextlib.redirect_stderr(stream):
                        report = calbench.fit(data, quiet=quiet)
                    self.assertEqual(report["verdict"]["verdict"], "GOOD")
                    self.assertEqual(stream.getvalue(),
                                     "" if quiet else "fit: fakes of the verdict's folds: 2/5 fits\n")
            finally:
                if previous is None:
                    del os.environ["CALBENCH_BIN"]
                else:
                    os.environ["CALBENCH_BIN"] = previous


@unittest.skipUnless(has_extension(), "calbench._core is not built")
class LongRuns(unittest.TestCase):
    def test_a_run_of_days_needs_long(self):
        # D14: 1e9 replicates of 1e4 x 50, 145 days on one thread, started without a word.
        config = {"scenario": "estimator_bias", "seed": 1, "replicates": 1000000000,
                  "sample_size": 10000,
                  "generator": {"family": "dirichlet", "classes": 50, "alpha": 0.5},
                  "estimators": [{"name": "brier"}]}
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r")
            with self.assertRaisesRegex(ValueError, r"calbench.run: /replicates: this run may "
                                        r"take up to about 144.7 days on 1 threads.*long=True"):
                calbench.run(config, out=out, threads=1)
            self.assertFalse(os.path.exists(out))
        with self.assertRaisesRegex(TypeError, "long must be True or False"):
            calbench.run(config, threads=1, long="yes")


class BinIntervals(unittest.TestCase):
    """Bins whose observed frequency is 0 or 1 (one row, or every row right) had no error bar:
    f +- 2 sqrt(f(1 - f)/n) is f. The diagrams draw Wilson intervals at z = 2."""

    def test_wilson_interval_solves_its_quadratic(self):
        from calbench.reliability import wilson_interval
        # Independently: the Wilson interval's ends are the p with |k/n - p| =
        # z sqrt(p (1 - p)/n), the roots of (n + z^2) p^2 - (2k + z^2) p + k^2/n = 0.
        z = 2.0
        for k, n in [(1, 1), (0, 1), (0, 10), (10, 10), (50, 100), (3, 7), (999, 1000)]:
            roots = np.sort(np.roots([n + z * z, -(2 * k + z * z), k * k / n]).real)
            lower, upper = wilson_interval(k / n, n)
            self.assertAlmostEqual(float(lower), max(roots[0], 0.0), places=12, msg=(k, n))
            self.assertAlmostEqual(float(upper), min(roots[1], 1.0), places=12, msg=(k, n))
        # By hand: one right row gives [0.2, 1]; a bin without rows gives nothing.
        lower, upper = wilson_interval([1.0, 0.0, 0.5], [1, 1, 0])
        np.testing.assert_allclose(lower[:2], [0.2, 0.0], atol=1e-15)
        np.testing.assert_allclose(upper[:2], [1.0, 0.8], atol=1e-15)
        self.assertTrue(np.isnan(lower[2]) and np.isnan(upper[2]))

    def test_every_bin_with_rows_has_a_bar(self):
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.container import ErrorbarContainer
        rng = np.random.default_rng(5)
        # 40 rows near 0.55, all right in the bin (0.6, 0.667], and one row alone at 0.97.
        top = np.concatenate([rng.uniform(0.5, 0.6, 40), [0.62, 0.63, 0.64, 0.97]])
        p = np.column_stack([1 - top, top])
        y = np.concatenate([rng.integers(0, 2, 40), [1, 1, 1, 1]])
        figure = calbench.reliability_diagram(p, y, bins=15, smooth=False)
        bars = [c for ax in figure.axes for c in ax.containers
                if isinstance(c, ErrorbarContainer)]
        self.assertEqual(len(bars), 1)
        segments = bars[0].lines[2][0].get_segments()
        table = calbench.reliability_table(p, y, bins=15)
        self.assertEqual(len(segments), int((table["count"] > 0).sum()))
        for segment in segments:
            self.assertGreater(abs(segment[1][1] - segment[0][1]), 0.05, segment)


# N7: SIGINT once a long call has started must end it with KeyboardInterrupt. Each call runs
# uninterrupted for far longer than its bound (on a quiet machine: sample ~19 s against 10 s,
# leaderboard ~10 minutes and kernel fit several minutes against 30 s), so the bound separates
# polling from running to the end even on a loaded machine, where a poll answers more slowly.
LONG_CALLS = {
    "sample": ("calbench.sample({'family': 'dirichlet', 'classes': 10, 'alpha': 0.5}, 10000000,"
               " seed=1)", 10.0),
    "leaderboard": ("calbench.leaderboard(__import__('pandas').DataFrame({"
                    "'case': np.repeat(np.arange(200000), 4),"
                    " 'method': np.tile(['a', 'b', 'c', 'd'], 200000),"
                    " 'err': np.random.default_rng(1).random(800000)}), 'err',"
                    " resamples=100000)", 30.0),
    "kernel": ("calbench.Recalibrator('kernel').fit(*calbench.sample({'family': 'dirichlet',"
               " 'classes': 3, 'alpha': 1}, 200000, seed=1))", 30.0),
}


@unittest.skipUnless(has_extension(), "calbench._core is not built")
class Interruptible(unittest.TestCase):
    def interrupt(self, name):
        call, bound = LONG_CALLS[name]
        code = ("import signal, sys, time, numpy as np, calbench\n"
                "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
                "print('start', flush=True)\n"
                "try:\n"
                f"    {call}\n"
                "except KeyboardInterrupt:\n"
                "    print('interrupted', time.monotonic(), flush=True)\n"
                "    sys.exit(3)\n")
        child = subprocess.Popen([sys.executable, "-B", "-c", code], text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(child.stdout.readline().strip(), "start")
        time.sleep(1.5)
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            out, stderr = child.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            self.fail(f"{call} went on for 120 s after SIGINT")
        if child.returncode == 0:
            self.skipTest(f"{call} finished within 1.5 s on this machine")
        self.assertEqual(child.returncode, 3, stderr)
        waited = float(out.split()[-1]) - sent
        self.assertLess(waited, bound, call)

    def test_sample(self):
        self.interrupt("sample")

    def test_leaderboard(self):
        self.interrupt("leaderboard")

    def test_kernel_fit(self):
        self.interrupt("kernel")


class FuzzerFindings(unittest.TestCase):
    """What tests/cli/fuzz_python.py found (the Python fuzzer of issue #38), one probe each:
    each of these returned a result or raised an undocumented exception on today's main."""

    def setUp(self):
        rng = np.random.default_rng(38)
        self.p = rng.dirichlet(np.ones(3), size=40)
        self.y = rng.integers(0, 3, size=40)

    def test_reliability_table_refuses_what_is_not_a_real_array(self):
        with self.assertRaisesRegex(ValueError, "p: expected an array of real numbers, found "
                                    "dtype complex128"):
            calbench.reliability_table(self.p.astype(complex), self.y)
        with self.assertRaisesRegex(ValueError, "p: expected an array of real numbers"):
            calbench.reliability_table(self.p.astype(str), self.y)
        # Was AttributeError: 'bool' object has no attribute 'astype'.
        with self.assertRaisesRegex(ValueError, "y: expected an array of numbers, found dtype "
                                    "<U"):
            calbench.reliability_table(self.p, self.y.astype(str))

    def test_reliability_table_bins_are_checked(self):
        # inf was OverflowError, nan numpy's text, 2^63 silently one bin.
        for bins in (float("inf"), float("nan"), 2**63, 0, 1.5, "15", True):
            with self.subTest(bins=bins), self.assertRaisesRegex(
                    ValueError, r"bins = .*: must be an integer in 1 \.\. 1000000"):
                calbench.reliability_table(self.p, self.y, bins=bins)
        self.assertEqual(len(calbench.reliability_table(self.p, self.y, bins=15.0)), 15)

    @unittest.skipUnless(has_extension(), "calbench._core is not built")
    def test_leaderboard_arguments_are_checked_before_the_binding(self):
        import pandas as pd
        frame = pd.DataFrame({"method": ["a", "b"] * 3, "case": [0, 0, 1, 1, 2, 2],
                              "brier": [0.1, 0.2, 0.3, 0.1, 0.2, 0.4]})
        cases = [({"seed": 2**64}, r"leaderboard: seed = 18446744073709551616: expected an "
                                   r"integer >= 0 and < 2\^64"),  # was pybind11's own text
                 ({"seed": 1.5}, r"leaderboard: seed = 1\.5: expected an integer"),
                 ({"resamples": "10"}, r"leaderboard: resamples = '10': expected an integer"),
                 ({"resamples": 2**63}, r"resamples = 9223372036854775808: must be <= "
                                        r"1000000"),  # was MemoryError: std::bad_alloc
                 ({"level": "0.95"}, r"leaderboard: level = '0\.95': expected a number in "
                                     r"\(0, 1\)"),
                 ({"level": 1.0}, r"level = 1\.0: expected a number in \(0, 1\)")]
        for kwargs, message in cases:
            with self.subTest(**{k: repr(v) for k, v in kwargs.items()}), \
                    self.assertRaisesRegex(ValueError, message):
                calbench.leaderboard(frame, "brier", resamples=kwargs.pop("resamples", 50),
                                     elo_resamples=10, **kwargs)
        board = calbench.leaderboard(frame, "brier", resamples=50, elo_resamples=10,
                                     seed=np.uint64(2**63), level=np.float32(0.9))
        self.assertEqual(sorted(board["method"]), ["a", "b"])


if __name__ == "__main__":
    unittest.main()
