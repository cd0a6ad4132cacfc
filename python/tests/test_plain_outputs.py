"""Plain outputs (ctest: python.plain_outputs). Every CSV calbench writes is plain and tidy: its header on line 1,
no comment lines, readable by pandas.read_csv(path) with no options and by Python's csv module
with the same columns and rows. Checked over every CSV of the golden files (the small runs of
every shipped config: all three scenarios and every optional table), over `calbench eval
--plot`'s reliability.csv, and over `calbench recalibrate apply`'s output; the meta block these
files used to start with is in summary.json. The HTML report of an estimator_bias run leads
with one compact table per estimator (truth, mean, bias ± SE, sd, RMSE), and every table sits in
a box that scrolls sideways, so the page keeps its width.
"""

import csv
import glob
import json
import os
import subprocess
import tempfile
import unittest

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def check_tidy(test, path):
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    test.assertFalse(any(line.startswith("#") for line in text.splitlines()), path)
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    frame = pd.read_csv(path)  # no options: what a user types
    test.assertEqual(list(frame.columns), rows[0], path)
    test.assertEqual(len(frame), len(rows) - 1, path)
    test.assertTrue(all(len(r) == len(rows[0]) for r in rows), path)


class TidyCsv(unittest.TestCase):
    def test_every_golden_csv(self):
        files = sorted(glob.glob(os.path.join(REPO, "tests", "golden", "*", "*.csv")))
        self.assertGreater(len(files), 10)
        scenarios, names = set(), set()
        for path in files:
            with self.subTest(path=os.path.relpath(path, REPO)):
                check_tidy(self, path)
                names.add(os.path.basename(path))
                with open(os.path.join(os.path.dirname(path), "summary.json"),
                          encoding="utf-8") as f:
                    scenarios.add(json.load(f)["meta"]["scenario"])
        self.assertEqual(scenarios, {"estimator_bias", "recalibration", "decision"})
        self.assertTrue({"cells.csv", "requirements.csv", "reliability.csv"} <= names, names)

    def test_optional_tables_of_a_run(self):
        """intervals.csv and replicates.csv, which no golden run writes."""
        binary = os.environ.get("CALBENCH_BIN")
        if not binary:
            self.skipTest("CALBENCH_BIN is not set")
        with tempfile.TemporaryDirectory() as d:
            for config, tables in (("tiny.json", {"cells.csv", "replicates.csv"}),
                                   ("tiny_intervals.json", {"cells.csv", "intervals.csv"})):
                out = os.path.join(d, config)
                subprocess.run([binary, "run", os.path.join(REPO, "tests", "data", config),
                                "--out", out, "--quiet", "--threads", "2", "--no-report"],
                               check=True, capture_output=True)
                written = {f for f in os.listdir(out) if f.endswith(".csv")}
                self.assertTrue(tables <= written, written)
                for name in written:
                    check_tidy(self, os.path.join(out, name))

    def test_eval_plot_and_recalibrate_apply(self):
        binary = os.environ.get("CALBENCH_BIN")
        if not binary:
            self.skipTest("CALBENCH_BIN is not set")
        data = os.path.join(REPO, "tests", "reference", "datasets", "dir_k3_n2000.csv")
        with tempfile.TemporaryDirectory() as d:
            plot = os.path.join(d, "plot")
            subprocess.run([binary, "eval", data, "--resamples", "5", "--estimators",
                            '[{"name": "ece"}]', "--plot", plot], check=True,
                           capture_output=True, env={**os.environ, "CALBENCH_NO_REPORT": "1"})
            check_tidy(self, os.path.join(plot, "reliability.csv"))
            with open(os.path.join(plot, "summary.json"), encoding="utf-8") as f:
                meta = json.load(f)["meta"]
            self.assertEqual((meta["scenario"], meta["name"]), ("eval", "dir_k3_n2000.csv"))
            model, out = os.path.join(d, "model.json"), os.path.join(d, "q.csv")
            subprocess.run([binary, "recalibrate", "fit", data, "--method", "isotonic",
                            "--out", model], check=True, capture_output=True)
            subprocess.run([binary, "recalibrate", "apply", model, data, "--out", out],
                           check=True, capture_output=True)
            check_tidy(self, out)


class ReportTables(unittest.TestCase):
    def test_headline_tables_and_scrolling(self):
        binary = os.environ.get("CALBENCH_BIN")
        if not binary:
            self.skipTest("CALBENCH_BIN is not set")
        import calbench
        from calbench import report

        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "run")
            subprocess.run([binary, "run", os.path.join(REPO, "tests", "data", "tiny.json"),
                            "--out", out, "--quiet", "--threads", "1", "--no-report"],
                           check=True, capture_output=True)
            r = calbench.load(out)
            page = report.render(r)
        estimators = list(dict.fromkeys(r.cells["estimator"]))
        self.assertEqual(page.count('<div class="headline">'), len(estimators))
        for label in estimators:
            self.assertIn(f"<caption>{label} (target ", page)
        self.assertIn('scope="col">bias ± SE</th>', page)
        # Every table but the run's (narrow) meta block scrolls inside its own box.
        self.assertEqual(page.count('<div class="scroll"><table>'), page.count("<table>"))
        self.assertGreater(page.count("<table>"), len(estimators))
        self.assertIn(".scroll { overflow-x: auto;", page)


if __name__ == "__main__":
    unittest.main()
