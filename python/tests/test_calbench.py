"""Tests of the calbench Python package against the calbench binary (ctest: python.package).

CALBENCH_BIN names the binary (CMake passes $<TARGET_FILE:calbench>). The test runs it on tiny
configs of the three scenarios, loads the results, checks the DataFrames against the JSON and
the CSV files, renders every figure, and checks that the reliability diagram's bins reproduce
the `ece` of `calbench eval` on the same rows.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import pandas as pd

import calbench
from calbench.reliability import assign_bins, bin_edges, ece_from_table, smooth_curve

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CONFIGS = {
    "estimator_bias": os.path.join(REPO, "tests", "data", "tiny.json"),
    "recalibration": os.path.join(REPO, "tests", "data", "tiny_recalibration.json"),
    "decision": os.path.join(HERE, "data", "tiny_decision.json"),
    # estimator_bias with a `reliability` section: reliability.csv
    "reliability": os.path.join(REPO, "tests", "data", "tiny_report.json"),
    # a whole `generator` object swept (as configs/papers/kyle_calibration_game.json)
    "swept_generator": os.path.join(HERE, "data", "tiny_swept_generator.json"),
    # recalibration with a `reliability` section: true curves after each method
    "recalibration_curves": os.path.join(HERE, "data", "tiny_recalibration_curves.json"),
}


def calbench_binary():
    path = os.environ.get("CALBENCH_BIN")
    if not path:
        raise RuntimeError("CALBENCH_BIN is not set: run through ctest, or set it to the "
                           "calbench binary (build/release/calbench)")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"CALBENCH_BIN={path} is not an executable")
    return path


def run(*args):
    out = subprocess.run([calbench_binary(), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"calbench {' '.join(args)} exited {out.returncode}: {out.stderr}")
    return out.stdout


_RUNS = {}


def setUpModule():
    # One run of each scenario serves every test.
    tmp = tempfile.mkdtemp(prefix="calbench_python_")
    _RUNS["tmp"] = tmp
    for scenario, config in CONFIGS.items():
        run("run", config, "--out", os.path.join(tmp, scenario), "--threads", "1", "--quiet")


def tearDownModule():
    shutil.rmtree(_RUNS["tmp"], ignore_errors=True)


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(dir=_RUNS["tmp"])
        cls.dirs = {s: os.path.join(_RUNS["tmp"], s) for s in CONFIGS}
        cls.results = {s: calbench.load(d) for s, d in cls.dirs.items()}
        cls.json = {}
        for s, d in cls.dirs.items():
            with open(os.path.join(d, "summary.json")) as f:
                cls.json[s] = json.load(f)


class LoadTest(Base):
    def test_meta_and_config(self):
        for scenario, r in self.results.items():
            with open(CONFIGS[scenario]) as f:
                config = json.load(f)
            self.assertEqual(r.scenario, config["scenario"])
            self.assertEqual(r.meta["schema_version"], 1)
            self.assertEqual(r.meta["seed"], config["seed"])
            for k in ("calbench_version", "git_revision", "config_hash"):
                self.assertIn(k, r.meta)
            self.assertEqual(r.config["name"], config["name"])
            self.assertEqual(r.config["calbench"]["version"], r.meta["calbench_version"])

    def test_truth_table(self):
        for scenario, r in self.results.items():
            cells = self.json[scenario]["cells"]
            self.assertEqual(len(r.truth), sum(len(c["truth"]) for c in cells))
            for c in cells:
                for q, t in c["truth"].items():
                    row = r.truth[(r.truth["cell"] == c["index"]) & (r.truth["quantity"] == q)]
                    self.assertEqual(len(row), 1)
                    self.assertEqual(row["value"].iloc[0], t["value"])
                    self.assertEqual(row["method"].iloc[0], t["method"])

    def test_estimator_bias(self):
        r, js = self.results["estimator_bias"], self.json["estimator_bias"]
        n_cells, n_est = len(js["cells"]), len(js["cells"][0]["estimators"])
        self.assertEqual(r.summary.shape[0], n_cells * n_est)
        self.assertEqual(r.cells.shape[0], n_cells * n_est)
        for c in js["cells"]:
            for label, e in c["estimators"].items():
                row = r.summary[(r.summary["cell"] == c["index"]) &
                                (r.summary["estimator"] == label)].iloc[0]
                for k in ("truth", "mean", "sd", "bias", "rmse", "se_bias"):
                    self.assertEqual(row[k], e[k], (label, k))
                for k, v in c["parameters"].items():
                    self.assertEqual(row[k], v)
        # cells.csv is the same table: read back exactly (shortest round-trip text).
        merged = r.summary.merge(r.cells, on=["cell", "estimator"], suffixes=("", "_csv"))
        self.assertEqual(len(merged), len(r.summary))
        for k in ("truth", "mean", "sd", "bias", "rmse", "se_bias", "binning_bias"):
            pd.testing.assert_series_equal(merged[k], merged[k + "_csv"], check_names=False)
        # replicates.csv: the summary's mean and sd are those of the replicate values.
        reps = r.replicates
        self.assertEqual(len(reps), n_cells * n_est * js["cells"][0]["replicates"])
        agg = reps.groupby(["cell", "estimator"])["value"].agg(["mean", "std"]).reset_index()
        m = r.summary.merge(agg, on=["cell", "estimator"], suffixes=("", "_rep"))
        np.testing.assert_allclose(m["mean_rep"], m["mean"], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(m["std"], m["sd"], rtol=1e-9, atol=1e-15)
        self.assertIsNone(r.requirements)

    def test_recalibration(self):
        r, js = self.results["recalibration"], self.json["recalibration"]
        self.assertEqual(len(r.summary), len(r.cells))
        key = ["cell", "method", "kind", "quantity"]
        merged = r.summary.merge(r.cells, on=key, suffixes=("", "_csv"))
        self.assertEqual(len(merged), len(r.cells))
        pd.testing.assert_series_equal(merged["mean"], merged["mean_csv"], check_names=False)
        c = js["cells"][1]
        t = c["methods"]["temperature"]["truth"]["ece_top_l1"]["mean"]
        row = r.summary[(r.summary["cell"] == 1) & (r.summary["method"] == "temperature") &
                        (r.summary["kind"] == "truth") & (r.summary["quantity"] == "ece_top_l1")]
        self.assertEqual(row["mean"].iloc[0], t)
        self.assertEqual(len(r.rankings), sum(len(c["rankings"]) for c in js["cells"]))
        self.assertIsNone(r.replicates)

    def test_decision(self):
        r, js = self.results["decision"], self.json["decision"]
        self.assertEqual(len(r.summary), len(js["cells"]))
        self.assertEqual(len(r.cells), len(js["cells"]))
        for c in js["cells"]:
            row = r.summary[r.summary["cell"] == c["index"]].iloc[0]
            self.assertEqual(row["expected_utility"], c["decision"]["expected_utility"])
            self.assertEqual(row["realised_utility.mean"],
                             c["decision"]["realised_utility"]["mean"])
            self.assertEqual(row["accuracy"], c["truth"]["accuracy"]["value"])
        pd.testing.assert_series_equal(r.summary["expected_utility"],
                                       r.cells["expected_utility"], check_names=False)
        frontier = js["requirements"]["frontier"]
        self.assertEqual(len(r.requirements), len(frontier))
        np.testing.assert_array_equal(r.requirements["minimal_accuracy"],
                                      [g["minimal_accuracy"] for g in frontier])

    def test_csv_meta_comments(self):
        path = os.path.join(self.dirs["estimator_bias"], "cells.csv")
        # calbench writes plain CSV files (the meta block is summary.json's); files of earlier
        # versions start with '# key: value' lines, which read_csv still reads as meta.
        plain, meta = calbench.read_csv(path)
        self.assertEqual(meta, {})
        with open(path) as f:
            body = "".join(line for line in f if not line.startswith("#"))
        commented = os.path.join(self.tmp, "commented.csv")
        with open(commented, "w") as f:
            f.write("# schema_version: 1\n# calbench_version: 0.1.0\n# seed: 7\n" + body)
        frame, meta = calbench.read_csv(commented)
        self.assertEqual(meta, {"schema_version": 1, "calbench_version": "0.1.0", "seed": 7})
        pd.testing.assert_frame_equal(frame, plain)
        # load() checks a CSV's meta against summary.json's.
        copy = os.path.join(self.tmp, "other_seed")
        shutil.copytree(self.dirs["estimator_bias"], copy)
        with open(os.path.join(copy, "cells.csv"), "w") as f:
            f.write("# schema_version: 1\n# seed: 8\n" + body)
        with self.assertRaisesRegex(calbench.ResultsError, "cells.csv: meta seed = 8 but"):
            calbench.load(copy)
        with open(os.path.join(copy, "cells.csv"), "w") as f:
            f.write("# schema_version: 1\n# seed: 7\n" + body)
        self.assertEqual(len(calbench.load(copy).cells), len(plain))
        with open(commented, "w") as f:
            f.write("# schema_version: 2\n" + body)
        with self.assertRaisesRegex(calbench.ResultsError, "schema_version 2 is not one"):
            calbench.read_csv(commented)

    def test_unknown_schema_version(self):
        copy = os.path.join(self.tmp, "future")
        shutil.copytree(self.dirs["decision"], copy)
        summary = os.path.join(copy, "summary.json")
        with open(summary) as f:
            data = json.load(f)
        data["meta"]["schema_version"] = 99
        with open(summary, "w") as f:
            json.dump(data, f)
        with self.assertRaisesRegex(calbench.ResultsError, r"summary.json: schema_version 99"):
            calbench.load(copy)
        with self.assertRaisesRegex(calbench.ResultsError, "not a directory"):
            calbench.load(os.path.join(self.tmp, "absent"))


    def test_truncated_csv(self):
        # A cells.csv cut in half gave a truncated last number and NaNs without an error.
        copy = os.path.join(self.tmp, "truncated")
        shutil.copytree(self.dirs["estimator_bias"], copy)
        cells = os.path.join(copy, "cells.csv")
        with open(cells, "rb") as f:
            data = f.read()
        with open(cells, "wb") as f:
            f.write(data[: len(data) // 2])
        with self.assertRaisesRegex(calbench.ResultsError, r"cells.csv: truncated"):
            calbench.load(copy)
        # Cut at a line break: a row with too few fields is still found.
        lines = data.decode().split("\n")
        lines[-2] = ",".join(lines[-2].split(",")[:3])
        with open(cells, "w") as f:
            f.write("\n".join(lines))
        with self.assertRaisesRegex(calbench.ResultsError, r"cells.csv: data row \d+ has 3 fields"):
            calbench.load(copy)


class FigureTest(Base):
    def render(self, fig, name):
        path = os.path.join(self.tmp, name + ".png")
        fig.savefig(path, dpi=80)
        self.assertGreater(os.path.getsize(path), 5000, name)
        import matplotlib.image
        img = matplotlib.image.imread(path)
        h, w = img.shape[:2]
        self.assertTrue(200 <= h <= 2000 and 200 <= w <= 2000, (name, h, w))
        self.assertGreater(float(img[..., :3].std()), 0.05, f"{name} is blank")

    def test_every_figure(self):
        eb, rc, dc = (self.results[s] for s in ("estimator_bias", "recalibration", "decision"))
        self.render(calbench.bias_curves(eb), "bias_curves")
        self.render(calbench.error_curves(eb), "error_curves")
        self.render(calbench.estimate_distribution(eb, 0, "ece_ew15"), "distribution")
        self.render(calbench.bias_split(eb), "bias_split")
        self.render(calbench.recalibration_error(rc), "recalibration_error")
        self.render(calbench.measured_vs_true(rc), "measured_vs_true")
        self.render(calbench.ranking_disagreement(rc), "ranking_disagreement")
        self.render(calbench.utility_map(dc), "utility_map")
        self.render(calbench.cost_vs_ece(dc), "cost_vs_ece")
        p, y = sample(2000, seed=3)
        self.render(calbench.reliability_diagram(p, y, n_boot=50), "reliability_ew")
        self.render(calbench.reliability_diagram(
            p, y, binning="equal_mass", true_curve=([0.3, 1], [0.3, 1])), "reliability_em")
        self.render(calbench.classwise_reliability(p, y), "classwise")
        rr = self.results["reliability"]
        self.render(calbench.reliability_curves(rr), "reliability_curves")
        self.render(calbench.reliability_curves(rr, binning="equal_mass"), "curves_em")
        self.render(calbench.class_reliability_curves(rr, cell=3), "class_curves")
        # Figures come from matplotlib.figure.Figure: pyplot (and a GUI backend) never loads.
        self.assertNotIn("matplotlib.pyplot", sys.modules)

    def test_wrong_scenario_and_missing_replicates(self):
        with self.assertRaisesRegex(ValueError, "draws estimator_bias results"):
            calbench.bias_curves(self.results["decision"])
        r = self.results["estimator_bias"]
        no_reps = calbench.Results(**{**r.__dict__, "replicates": None})
        with self.assertRaisesRegex(ValueError, "replicate_values"):
            calbench.estimate_distribution(no_reps, 0, "ece_ew15")


def _containers(fig):
    """{label: (x, y)} of every labelled errorbar / bar container in the figure, over panels."""
    from matplotlib.container import BarContainer, ErrorbarContainer
    out = {}
    for ax in fig.axes:
        for c in ax.containers:
            label = c.get_label()
            if isinstance(c, ErrorbarContainer):  # (data line, caps, bars)
                if c.lines[0] is None:  # the error bars of a bar chart
                    continue
                xy = (list(c.lines[0].get_xdata()), list(c.lines[0].get_ydata()))
            elif isinstance(c, BarContainer):  # barh: (lengths, positions)
                xy = ([p.get_width() for p in c.patches], [p.get_y() for p in c.patches])
            else:
                continue
            old = out.get(label, ([], []))
            out[label] = (old[0] + xy[0], old[1] + xy[1])
    return out


class FigureInputTest(unittest.TestCase):
    def test_bad_probabilities_and_labels(self):
        from calbench.reliability import classwise_reliability, reliability_diagram
        p = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])
        y = np.array([1, 0, 1])
        reliability_diagram(p, y, bins=2)  # valid input draws
        bad = [
            (np.array([[np.nan, 1.0], [0.6, 0.4], [0.5, 0.5]]), y, r"p row 0: every probability"),
            (np.array([[1.5, 1.5], [0.6, 0.4], [0.5, 0.5]]), y, r"p row 0: every probability"),
            (np.array([[0.2, 0.8], [0.6, 0.4], [1.0, 1.0]]), y, r"p row 2 sums to 2"),
            (p, np.array([1, 0, 2]), r"y\[2\] = 2: expected a class index in 0..1"),
            (p, np.array([1, 0, -1]), r"y\[2\] = -1"),
            (p[:, 1], np.array([1, 0, 2]), r"y\[2\] = 2: expected an outcome 0 or 1"),
        ]
        for probs, labels, message in bad:
            with self.assertRaisesRegex(ValueError, message):
                reliability_diagram(probs, labels)
            if probs.ndim == 2:
                with self.assertRaisesRegex(ValueError, message):
                    classwise_reliability(probs, labels)


class FigureDataTest(Base):
    """The figures draw the numbers of the result files (data, not pixels)."""

    def test_bias_curves_and_split(self):
        r = self.results["estimator_bias"]
        s = r.summary
        drawn = _containers(calbench.bias_curves(r))
        for label in dict.fromkeys(s["estimator"]):
            rows = s[s["estimator"] == label]
            x, y = drawn[label]
            # one panel per temperature, sizes ascending in each
            want = rows.sort_values(["generator.miscalibration.temperature", "sample_size"])
            self.assertEqual(x, list(want["sample_size"]), label)
            np.testing.assert_array_equal(y, want["bias"], label)
        # bias_split: per estimator a solid (finite-sample) and a dashed (binning) line whose
        # sum is the bias.
        fig = calbench.bias_split(r)
        binned = s[s["binning_bias"].notna()]
        labels = list(dict.fromkeys(binned["estimator"]))
        for ax, (_, rows) in zip(fig.axes, binned.groupby("generator.miscalibration.temperature",
                                                          sort=False)):
            for i, label in enumerate(labels):
                want = rows[rows["estimator"] == label].sort_values("sample_size")
                finite, binning = ax.lines[2 * i], ax.lines[2 * i + 1]
                self.assertEqual(binning.get_linestyle(), "--")
                np.testing.assert_allclose(
                    np.asarray(finite.get_ydata()) + np.asarray(binning.get_ydata()),
                    want["bias"], rtol=0, atol=1e-12)

    def test_estimate_distribution(self):
        r = self.results["estimator_bias"]
        fig = calbench.estimate_distribution(r, 0, "ece_ew15")
        ax = fig.axes[0]
        reps = r.replicates
        n = len(reps[(reps["cell"] == 0) & (reps["estimator"] == "ece_ew15")])
        self.assertEqual(sum(p.get_height() for p in ax.patches), n)
        row = r.summary[(r.summary["cell"] == 0) & (r.summary["estimator"] == "ece_ew15")].iloc[0]
        vertical = {ln.get_label(): ln.get_xdata()[0] for ln in ax.lines}
        self.assertEqual(vertical["truth (ece_top_l1)"], row["truth"])
        self.assertEqual(vertical["mean estimate"], row["mean"])

    def test_recalibration_figures(self):
        r = self.results["recalibration"]
        s = r.summary
        truth = s[(s["kind"] == "truth") & (s["quantity"] == "ece_top_l1")]
        drawn = _containers(calbench.recalibration_error(r))
        for method, rows in truth.groupby("method", sort=False):
            rows = rows.sort_values("fit_size")
            self.assertEqual(drawn[method][0], list(rows["fit_size"]), method)
            np.testing.assert_array_equal(drawn[method][1], rows["mean"], method)
        # method_comparison: one bar per (cell, method), its length the mean true ECE.
        bars = _containers(calbench.method_comparison(r))
        for method, rows in truth.groupby("method", sort=False):
            np.testing.assert_array_equal(bars[method][0], rows.sort_values("cell")["mean"])
        # measured_vs_true: each point is (truth of the target, mean estimate).
        fig = calbench.measured_vs_true(r)
        est = s[(s["kind"] == "estimate") & s["target"].notna()]
        for ax, (label, rows) in zip(fig.axes, est.groupby("quantity", sort=False)):
            for c in ax.containers:
                m = rows[rows["method"] == c.get_label()]
                x, y = c.lines[0].get_xdata(), c.lines[0].get_ydata()
                want_x = [s[(s["kind"] == "truth") & (s["cell"] == cell) &
                            (s["method"] == c.get_label()) & (s["quantity"] == t)]["mean"].iloc[0]
                          for cell, t in zip(m["cell"], m["target"])]
                np.testing.assert_array_equal(x, want_x)
                np.testing.assert_array_equal(y, m["mean"])
        # ranking_disagreement: the solid line of each estimator is its disagreement.
        fig = calbench.ranking_disagreement(r)
        rk = r.rankings
        solid = [ln for ln in fig.axes[0].lines if ln.get_linestyle() == "-"]
        for ln, (label, rows) in zip(solid, rk.groupby("estimator", sort=False)):
            np.testing.assert_array_equal(ln.get_ydata(),
                                          rows.sort_values("fit_size")["disagreement"])

    def test_decision_figures(self):
        r = self.results["decision"]
        s = r.summary
        drawn = _containers(calbench.cost_vs_ece(r))
        costs = sorted(v for _, (x, y) in drawn.items() for v in y)
        # A calibrated cell (overconfidence 0) ends both the overconfident and the
        # underconfident line, so it is drawn twice.
        twice = s[s["overconfidence"] == 0]["miscalibration_cost"]
        self.assertEqual(costs, sorted(list(s["miscalibration_cost"]) + list(twice)))
        # utility_map: the frontier (black line) passes through each reached requirement's
        # minimal accuracy.
        fig = calbench.utility_map(r)
        frontier = [ln for ln in fig.axes[0].lines if ln.get_label().startswith("frontier")]
        reached = r.requirements[r.requirements["status"] != "unreachable"]
        self.assertEqual(len(frontier), 1)
        np.testing.assert_array_equal(sorted(frontier[0].get_xdata()),
                                      sorted(reached["minimal_accuracy"]))

    def test_swept_generator(self):
        # A swept object is kept as the compact JSON text cells.csv holds, drawn against its
        # position in the sweep; the report draws every figure.
        r = self.results["swept_generator"]
        self.assertEqual(r.sweep_keys, ["generator"])
        texts = list(dict.fromkeys(r.summary["generator"]))
        self.assertEqual(texts, list(dict.fromkeys(r.cells["generator"])))
        self.assertEqual(json.loads(texts[1]), self.json["swept_generator"]["cells"][1]
                         ["parameters"]["generator"])
        x, _ = _containers(calbench.bias_curves(r))["ece_ew15"]
        self.assertEqual(x, [1, 2])
        from calbench import report
        page = report.render(r)
        self.assertNotIn("not drawn", page)
        self.assertIn("generator of cell 1", page)


class RecalibratedCurvesTest(Base):
    def test_curves_after_recalibration(self):
        r, js = self.results["recalibration_curves"], self.json["recalibration_curves"]
        t = r.reliability
        self.assertEqual(set(t["curve"]), {"true"})
        for c in js["cells"]:
            rows = t[t["cell"] == c["index"]]
            # The uncalibrated model and every method that fitted in replicate 0, in config
            # order; matrix scaling (12 parameters) cannot be fitted on 10 rows: no curve.
            fitted = [m for m, v in c["methods"].items() if v["fits"] == c["replicates"]]
            self.assertEqual(list(dict.fromkeys(rows["method"])), fitted)
            for method, g in rows.groupby("method", sort=False):
                self.assertAlmostEqual(g["weight"].sum(), 1.0, delta=1e-12)
                self.assertTrue((np.diff(g["score"]) > 0).all())
            # The uncalibrated model's curve gives its true ECE: sum w |f - s| differs from the
            # composed truth's ece_top_l1 by at most the points' errors (4 x sum w err) and the
            # truth's own error.
            u = rows[rows["method"] == "uncalibrated"]
            ece = float(np.sum(u["weight"] * np.abs(u["frequency"] - u["score"])))
            truth = c["methods"]["uncalibrated"]["truth"]["ece_top_l1"]
            bound = 4 * float(np.sum(u["weight"] * u["error"])) + 4 * truth["error"]
            self.assertLess(abs(ece - truth["mean"]), bound)
            # Fitted on 300 rows, temperature scaling repairs a temperature map: its curve's
            # ECE is a fraction of the uncalibrated one.
            if c["fit_size"] < 300:
                continue
            ts = rows[rows["method"] == "temperature"]
            self.assertLess(float(np.sum(ts["weight"] * np.abs(ts["frequency"] - ts["score"]))),
                            ece / 3)
        self.assertEqual(js["reliability"], {"points": 30, "samples": 100000})
        # Same bytes on one thread.
        one = os.path.join(self.tmp, "curves_threads1")
        run("run", CONFIGS["recalibration_curves"], "--out", one, "--threads", "2", "--quiet")
        with open(os.path.join(one, "reliability.csv"), "rb") as a, \
                open(os.path.join(self.dirs["recalibration_curves"], "reliability.csv"),
                     "rb") as b:
            self.assertEqual(a.read(), b.read())
        page = __import__("calbench.report", fromlist=["render"]).render(r)
        self.assertIn("true curves after recalibration", page)
        self.assertNotIn("not drawn", page)


class ReportTest(Base):
    def test_reliability_frame(self):
        t = self.results["reliability"].reliability
        self.assertIsNone(self.results["estimator_bias"].reliability)
        self.assertEqual(list(t.columns)[:3], ["cell", "generator.miscalibration.temperature",
                                               "sample_size"])
        self.assertEqual(set(t["curve"]), {"true", "estimated"})
        # K = 3, symmetric alpha, temperature: classes pooled; top label and pooled, per cell.
        self.assertEqual(set(t["scope"]), {"top_label", "classes_pooled"})
        for cell, rows in t.groupby("cell"):
            for (curve, binning, scope), g in rows.groupby(["curve", "binning", "scope"]):
                self.assertAlmostEqual(g["weight"].sum(), 1.0, delta=1e-12,
                                       msg=(cell, curve, binning, scope))
        # Replicate 0's equal-width top-label curve gives replicate 0's ece_ew15.
        reps = self.results["reliability"].replicates
        for cell in range(4):
            est = t[(t.cell == cell) & (t.curve == "estimated") & (t.binning == "equal_width")
                    & (t.scope == "top_label")]
            ece = float(np.sum(est.weight * np.abs(est.frequency - est.score)))
            value = reps[(reps.cell == cell) & (reps.replicate == 0)
                         & (reps.estimator == "ece_ew15")]["value"].iloc[0]
            self.assertAlmostEqual(ece, value, delta=1e-12)

    def test_report_of_every_scenario(self):
        from calbench import report
        pages = {}
        for scenario in self.dirs:
            page = report.render(self.results[scenario])
            pages[scenario] = page
            self.assertTrue(page.startswith("<!DOCTYPE html>"))
            self.assertNotIn("not drawn", page, scenario)
            self.assertGreaterEqual(page.count("<svg"), 2, scenario)
            self.assertNotIn("<script", page)
            # Ids unique in the page (every inline SVG's are prefixed), and every reference
            # url(#...) / href="#..." resolves.
            ids = re.findall(r' id="([^"]+)"', page)
            self.assertEqual(len(ids), len(set(ids)), f"{scenario}: duplicate ids")
            refs = set(re.findall(r'url\(#([^)]+)\)', page) +
                       re.findall(r'href="#([^"]+)"', page))
            self.assertEqual(refs - set(ids), set(), scenario)
        page = pages["reliability"]
        self.assertEqual(page.count("<svg"), 7)  # bias, error, split, 2 reliability, class, dist
        self.assertIn("true curve", page)
        # Deterministic bytes (no dates, fixed SVG ids): written from a fresh load, the same page.
        out = report.write_report(self.dirs["reliability"])
        self.assertEqual(out, os.path.join(self.dirs["reliability"], "report", "index.html"))
        with open(out, encoding="utf-8") as f:
            self.assertEqual(f.read(), page)

    def test_eval_plot(self):
        data = os.path.join(REPO, "tests", "reference", "datasets", "dir_k3_n2000.csv")
        out_dir = os.path.join(self.tmp, "eval_plot")
        env = dict(os.environ)
        env.pop("CALBENCH_NO_REPORT", None)
        estimators = [{"name": "ece", "bins": 15}, {"name": "ece", "bins": 15,
                                                    "binning": "equal_mass"}]
        out = subprocess.run([calbench_binary(), "eval", data, "--resamples", "1", "--json",
                              "--estimators", json.dumps(estimators), "--plot", out_dir],
                             capture_output=True, text=True, env=env)
        self.assertEqual(out.returncode, 0, out.stderr)
        values = json.loads(out.stdout)["estimators"]
        for name in ("index.html", "reliability.csv", "reliability_equal_width.svg",
                     "reliability_equal_mass.svg", "reliability_isotonic.svg",
                     "reliability_classes.svg"):
            self.assertTrue(os.path.exists(os.path.join(out_dir, name)), name)
        rows, meta = calbench.read_csv(os.path.join(out_dir, "reliability.csv"))
        self.assertEqual(meta, {})  # the meta block is in summary.json beside it
        with open(os.path.join(out_dir, "summary.json")) as f:
            self.assertEqual(json.load(f)["meta"]["scenario"], "eval")
        self.assertEqual(set(rows["class"].dropna().astype(int)), {0, 1, 2})
        for binning, label in (("equal_width", "ece_ew15"), ("equal_mass", "ece_em15")):
            top = rows[(rows.scope == "top_label") & (rows.binning == binning)]
            ece = float(np.sum(top.weight * np.abs(top.frequency - top.score)))
            self.assertAlmostEqual(ece, values[label]["value"], delta=1e-12)
            with open(os.path.join(out_dir, f"reliability_{binning}.svg")) as f:
                self.assertIn(f"ECE {values[label]['value']:.4f}", f.read())
        # CORP's isotonic curve: non-decreasing steps over increasing score ranges covering
        # every row, its levels the mean correctness of their rows (PAV).
        iso = rows[(rows.scope == "top_label") & (rows.binning == "isotonic")].sort_values("lower")
        self.assertEqual(int(iso["count"].sum()), 2000)
        self.assertTrue(np.all(np.diff(iso.frequency) > 0))
        self.assertTrue(np.all(iso.lower.to_numpy()[1:] > iso.upper.to_numpy()[:-1]))
        data_rows = np.loadtxt(data, delimiter=",")
        conf = data_rows[:, 1:].max(axis=1)
        correct = data_rows[:, 1:].argmax(axis=1) == data_rows[:, 0]
        first = iso.iloc[0]
        in_first = (conf >= first.lower) & (conf <= first.upper)
        self.assertAlmostEqual(correct[in_first].mean(), first.frequency, delta=1e-12)
        from sklearn.isotonic import IsotonicRegression
        fitted = IsotonicRegression().fit_transform(conf, correct.astype(float))
        self.assertAlmostEqual(float(fitted.min()), float(first.frequency), delta=1e-12)


def sample(n, seed, K=4):
    """Miscalibrated probabilities (a temperature-0.5 map of Dirichlet(0.5) truths) with labels
    drawn from the truth, plus rows on the bin edges i/15 and tied rows."""
    rng = np.random.default_rng(seed)
    c = rng.dirichlet([0.5] * K, size=n)
    y = (rng.random(n)[:, None] > np.cumsum(c, axis=1)).sum(axis=1)
    p = c ** 2
    p /= p.sum(axis=1, keepdims=True)
    edge = np.array([[i / 15] + [(1 - i / 15) / (K - 1)] * (K - 1) for i in range(4, 16)])
    tied = np.repeat(p[:1], 40, axis=0)
    return (np.vstack([p, edge, edge, tied]),
            np.concatenate([y, rng.integers(0, K, 2 * len(edge)), np.full(40, y[0])]))


class ReliabilityTest(unittest.TestCase):
    def test_bins_by_hand(self):
        # Equal width: right-closed (a, b], 0 in the first bin, 1 in the last.
        s = np.array([0.0, 1 / 15, np.nextafter(1 / 15, 1), 0.5, 1.0])
        np.testing.assert_array_equal(assign_bins(s, bin_edges(s, 15)), [0, 0, 1, 7, 14])
        # Equal mass: array_split into [3, 2] rows; edge (0.2 + 0.2) / 2 = 0.2, so the tied run
        # straddling the split goes to the lower bin.
        s = np.array([0.9, 0.2, 0.1, 0.2, 0.2])
        edges = bin_edges(s, 2, "equal_mass")
        np.testing.assert_array_equal(edges, [0.2])
        np.testing.assert_array_equal(assign_bins(s, edges), [1, 0, 0, 0, 0])
        # More bins than rows: one bin a row.
        self.assertEqual(bin_edges(np.array([0.3, 0.6]), 15, "equal_mass").size, 1)
        with self.assertRaisesRegex(ValueError, "binning"):
            bin_edges(s, 15, "quantile")

    def test_ece_matches_calbench_eval(self):
        p, y = sample(3000, seed=11)
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "data.csv")
            with open(data, "w") as f:
                for label, row in zip(y, p):
                    f.write(",".join([str(int(label))] + [repr(float(v)) for v in row]) + "\n")
            estimators = [
                {"name": "ece", "bins": 15, "label": "ew15"},
                {"name": "ece", "bins": 15, "binning": "equal_mass", "label": "em15"},
                {"name": "ece", "bins": 7, "label": "ew7"},
                {"name": "ece", "bins": 40, "binning": "equal_mass", "label": "em40"},
                {"name": "classwise_ece", "bins": 15, "label": "cw15"},
            ]
            out = json.loads(run("eval", data, "--estimators", json.dumps(estimators),
                                 "--resamples", "1", "--json"))["estimators"]
        # The CSV holds the exact doubles (repr round-trips), so the rows are the same.
        for label, bins, binning in (("ew15", 15, "equal_width"), ("em15", 15, "equal_mass"),
                                     ("ew7", 7, "equal_width"), ("em40", 40, "equal_mass")):
            ours = ece_from_table(calbench.reliability_table(p, y, bins, binning))
            self.assertAlmostEqual(ours, out[label]["value"], delta=1e-12, msg=label)
        classwise = np.mean([ece_from_table(calbench.reliability_table(p[:, k], y == k, 15))
                             for k in range(p.shape[1])])
        self.assertAlmostEqual(classwise, out["cw15"]["value"], delta=1e-12)

    def test_smooth_curve_covers_a_calibrated_truth(self):
        # Calibrated scores: P(outcome | s) = s. A 95 % pointwise band should cover the diagonal
        # at most interior points (kernel bias is nil for a linear curve under a flat density).
        rng = np.random.default_rng(5)
        s = rng.random(20000)
        o = (rng.random(s.size) < s).astype(float)
        grid = np.linspace(0.1, 0.9, 41)
        g, curve, lo, hi = smooth_curve(s, o, grid=grid, n_boot=200, seed=1)
        self.assertLess(np.max(np.abs(curve - grid)), 0.03)
        self.assertGreaterEqual(np.mean((lo <= grid) & (grid <= hi)), 0.8)
        # and excludes a miscalibrated one: the diagonal is outside the band of s^2.
        o2 = (rng.random(s.size) < s ** 2).astype(float)
        _, _, lo2, hi2 = smooth_curve(s, o2, grid=grid, n_boot=200, seed=1)
        interior = (grid > 0.2) & (grid < 0.8)
        self.assertTrue(np.all((hi2 < grid)[interior]))


if __name__ == "__main__":
    unittest.main()
