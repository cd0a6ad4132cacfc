"""calbench.fit, calbench.evaluate, calbench.plan and calbench.gate, which run the command
line (ctest: python.commands).

Each returns the command's own JSON: the fit's report equals `calbench fit --json`'s, and the
plan's answer that of `calbench plan --out` on the same file. Bad input raises ValueError with
the command's message; a missing program raises FileNotFoundError saying how to get one.
"""

import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import calbench

BIN = os.environ.get("CALBENCH_BIN", "")


@unittest.skipUnless(os.access(BIN, os.X_OK), "CALBENCH_BIN names no calbench binary")
class Commands(unittest.TestCase):
    def setUp(self):
        self.previous = os.getcwd()
        self.directory = tempfile.TemporaryDirectory()
        os.chdir(self.directory.name)
        rng = np.random.default_rng(3)
        p = rng.dirichlet(np.full(3, 0.7), size=800)
        y = np.array([rng.choice(3, p=r) for r in p])  # calibrated
        np.savetxt("outputs.csv", np.column_stack([y, p]), delimiter=",", fmt="%.4f",
                   header="label,p0,p1,p2")

    def tearDown(self):
        os.chdir(self.previous)
        self.directory.cleanup()

    def test_evaluate_returns_evals_json_with_the_advice(self):
        estimators = [{"name": "ece", "bins": 15},
                      {"name": "ece", "bins": 15, "binning": "equal_mass"}, {"name": "brier"}]
        report = calbench.evaluate("outputs.csv", renormalize=True, estimators=estimators,
                                   interval="fake", resamples=20, fake_samples=30, threads=2)
        cli = subprocess.run([BIN, "eval", "outputs.csv", "--json", "--renormalize",
                              "--estimators", json.dumps(estimators), "--interval", "fake",
                              "--resamples", "20", "--fake-samples", "30", "--threads", "2"],
                             capture_output=True, text=True)
        self.assertEqual(report, json.loads(cli.stdout))
        self.assertEqual({e["interval"] for e in report["estimators"].values()}, {"fake"})
        advice = report["advice"]
        shared = {label: a["rmse"] for label, a in advice["estimators"].items()
                  if a["target"] == "ece_top_l1"}
        self.assertEqual(advice["recommended"],
                         [{"target": "ece_top_l1", "estimator": min(shared, key=shared.get),
                           "compared": 2}])
        with self.assertRaisesRegex(ValueError, "unknown interval method"):
            calbench.evaluate("outputs.csv", renormalize=True, interval="nope")

    def test_evaluate_defaults_to_the_fake_interval_for_classwise_ece(self):
        # eval's default for classwise_ece is the fake interval (docs/intervals.md, "Defaults"),
        # the same interval as interval="fake" gives it, with no advice block; ece keeps its own.
        estimators = [{"name": "classwise_ece"}, {"name": "ece"}]
        common = dict(renormalize=True, estimators=estimators, resamples=20, fake_samples=30)
        report = calbench.evaluate("outputs.csv", **common)
        fake = calbench.evaluate("outputs.csv", interval="fake", **common)
        self.assertNotIn("advice", report)
        row = report["estimators"]["cwece_ew15"]
        self.assertEqual(row["interval"], "fake")
        self.assertEqual(row["ci"], fake["estimators"]["cwece_ew15"]["ci"])
        self.assertEqual(report["estimators"]["ece_ew15"]["interval"], "bias_corrected")

    def test_fit_and_plan_return_the_commands_json(self):
        report = calbench.fit("outputs.csv", "fake.json", renormalize=True, family="dirichlet",
                              force=True, threads=2, options=["--verdict-samples", "20",
                                                              "--replicates", "20"])
        cli = subprocess.run([BIN, "fit", "outputs.csv", "--json", "--renormalize", "--family",
                              "dirichlet", "--threads", "2", "--verdict-samples", "20",
                              "--replicates", "20"], capture_output=True, text=True)
        self.assertEqual(report, json.loads(cli.stdout))
        self.assertTrue(os.path.exists("fake.json"))
        plan = {"name": "audit", "generator": "fake.json", "estimator": {"name": "ece"},
                "question": {"width": 0.1, "level": 0.9, "interval": "normal"},
                "replicates": 20, "search": {"n_max": 3200}}
        answer = calbench.plan(plan, out="answer.json", threads=2)
        with open("plan.json", "w") as f:
            json.dump(plan, f)
        subprocess.run([BIN, "plan", "plan.json", "--quiet", "--threads", "2", "--out",
                        "cli.json"], check=True, capture_output=True)
        with open("cli.json") as f:
            cli_answer = json.load(f)
        self.assertEqual(answer["answer"], cli_answer["answer"])
        with open("answer.json") as f:
            self.assertEqual(json.load(f), answer)
        self.assertEqual([f for f in os.listdir(".") if f.startswith(".calbench-plan-")], [])

    def test_gate_returns_the_commands_json_and_its_curve(self):
        gate = {"name": "g", "seed": 3,
                "generator": {"family": "beta_binary", "a": 6, "b": 0.5,
                              "calibration": {"curve": "logit_logit", "a": -0.2, "b": 0.6}},
                "rule": {"n": 100, "clauses": [{"estimator": {"name": "ece"}, "at_most": 0.08}]},
                "family": {"values": [0.03, 0.12]}, "risks": {"bad": 0.12}, "replicates": 200}
        result = calbench.gate(gate, out="gate_result.json", threads=2)
        with open("gate.json", "w") as f:
            json.dump(gate, f)
        subprocess.run([BIN, "gate", "gate.json", "--quiet", "--threads", "1", "--out",
                        "cli.json"], check=True, capture_output=True)
        with open("cli.json") as f:
            self.assertEqual(json.load(f), result)
        with open("gate_result.json") as f:
            self.assertEqual(json.load(f), result)
        curve = calbench.gate_curve(result)
        self.assertEqual(list(curve["value"]), [0.03, 0.12])
        self.assertEqual(list(curve["p_pass"]), [p["p_pass"] for p in result["points"]])
        self.assertEqual(list(curve["pass_ece_ew15"]), list(curve["p_pass"]))
        self.assertEqual(result["risks"]["bad"]["false_accept"], curve["p_pass"].iloc[1])
        self.assertEqual([f for f in os.listdir(".") if f.startswith(".calbench-gate-")], [])
        # The figure draws the curve it was given: P(pass) against the members' true errors.
        figure = calbench.oc_curve(result)
        line = figure.axes[0].lines[0]
        self.assertEqual(list(line.get_xdata()), list(curve["true_error"]))
        self.assertEqual(list(line.get_ydata()), list(curve["p_pass"]))
        with self.assertRaisesRegex(ValueError, r"calbench.gate\(gate\): /rule/n"):
            calbench.gate({**gate, "rule": {"n": 1, "clauses": gate["rule"]["clauses"]}},
                          out="bad.json")
        self.assertFalse(os.path.exists("bad.json"))

    def test_run_and_load_read_the_decision_board(self):
        # Scenario recalibration with a decision task (docs/recalibration.md §4b): the true
        # regret and the realised utility as rows of the summary and keys of the boards, the
        # same through calbench.run and through the command line and calbench.load.
        config = {
            "name": "tiny_recalibration_decision", "scenario": "recalibration", "seed": 4,
            "replicates": 3, "fit_size": 300, "test_size": 300, "truth_samples": 4000,
            "generator": {"family": "dirichlet", "classes": 2, "alpha": 0.5,
                          "miscalibration": {"map": "temperature", "temperature": 0.6}},
            "methods": [{"name": "temperature"}, {"name": "isotonic"}],
            "estimators": [{"name": "ece"}, {"name": "brier"}],
            "decision": {"task": "triage", "benefit": 1.0, "harm": 3.0}}
        r = calbench.run(config, threads=1, quiet=True)
        with open("decision.json", "w") as f:
            json.dump(config, f)
        subprocess.run([BIN, "run", "decision.json", "--out", "cli", "--quiet", "--no-report"],
                       check=True)
        cli = calbench.load("cli")
        self.assertTrue(r.summary.equals(cli.summary))
        self.assertTrue(r.leaderboard.equals(cli.leaderboard))
        regret = r.summary[r.summary["quantity"] == "decision_regret"].set_index("method")
        self.assertEqual(list(regret.index), ["uncalibrated", "temperature", "isotonic"])
        self.assertEqual(set(regret["kind"]), {"truth"})
        self.assertTrue((regret["truth_error"] > 0).all())
        # T = 0.6 is overconfident: the triage threshold 3/4 is crossed in the wrong place, and
        # temperature scaling repairs most of it.
        self.assertGreater(regret.loc["uncalibrated", "mean"],
                           10 * regret.loc["uncalibrated", "truth_error"])
        self.assertLess(regret.loc["temperature", "mean"], regret.loc["uncalibrated", "mean"])
        utility = r.summary[r.summary["quantity"] == "realised_utility"]
        self.assertEqual(set(utility["kind"]), {"estimate"})
        self.assertEqual(len(utility), 3)
        keys = r.leaderboard.drop_duplicates("key").set_index("key")
        self.assertEqual(keys.loc["decision_regret", "kind"], "truth")
        self.assertEqual(keys.loc["decision_regret", "better"], "lower")
        self.assertEqual(keys.loc["realised_utility", "better"], "higher")
        agreement = r.leaderboard_agreement
        self.assertIn("ece_top_l1",
                      set(agreement.loc[agreement["estimator"] == "decision_regret", "truth"]))
        self.assertIn("realised_utility",
                      set(agreement.loc[agreement["truth"] == "decision_regret", "estimator"]))
        calbench.rank_agreement_figure(r, scope=0)

    def test_bad_input_is_a_value_error_and_writes_nothing(self):
        with self.assertRaisesRegex(ValueError, r"outputs.csv: line 2: probabilities sum to"):
            calbench.fit("outputs.csv", "fake.json")  # rounded rows without renormalize
        self.assertFalse(os.path.exists("fake.json"))
        with self.assertRaisesRegex(ValueError, r"calbench.plan\(plan\): /question/width"):
            calbench.plan({"name": "audit",
                           "generator": {"family": "dirichlet", "classes": 3, "alpha": 0.5},
                           "estimator": {"name": "ece"},
                           "question": {"width": -1, "level": 0.9}}, out="answer.json")
        self.assertFalse(os.path.exists("answer.json"))

    def test_the_program_is_found_or_named(self):
        self.assertEqual(calbench.commands.executable(), BIN)
        saved = os.environ["CALBENCH_BIN"]
        try:
            os.environ["CALBENCH_BIN"] = "/nonexistent/calbench"
            with self.assertRaisesRegex(FileNotFoundError, "CALBENCH_BIN=/nonexistent"):
                calbench.fit("outputs.csv")
        finally:
            os.environ["CALBENCH_BIN"] = saved


if __name__ == "__main__":
    unittest.main()
