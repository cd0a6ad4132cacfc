// Scenario recalibration with a decision task (docs/recalibration.md §4b): every model's true
// regret on the task as a ranking key. Exact against a hand-computed K = 2 case; the same draws
// as the decision scenario's Monte Carlo; byte-identical on 1 and 2 threads; config errors.
#include <tbb/global_control.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "config_problems.hpp"
#include "core/error.hpp"
#include "core/read_file.hpp"
#include "decisions/decision_spec.hpp"
#include "decisions/decision_value.hpp"
#include "experiment/experiment.hpp"
#include "scenarios/common.hpp"
#include "scenarios/recalibration/run.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/results.hpp"

using namespace calbench;
using OJ = nlohmann::ordered_json;
using calbench::testing::has_problem;
using calbench::testing::problems_of;
namespace fs = std::filesystem;

namespace {

RecalibrationConfig parse(const OJ& doc) {
  return parse_experiment_as<RecalibrationConfig>(doc, "recal.json");
}

RecalibrationResults run(const RecalibrationConfig& config, std::size_t threads = 2) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  return run_recalibration(config, {});
}

const MethodRecord& method(const RecalibrationCellRecord& cell, const std::string& label) {
  for (const auto& m : cell.methods)
    if (m.label == label) return m;
  FAIL("no method " << label);
  return cell.methods.front();
}

double parameter(const MethodRecord& m, const std::string& name) {
  for (const auto& p : m.parameters)
    if (p.key == name) return p.mean;
  FAIL("no parameter " << name << " for " << m.label);
  return 0.0;
}

// The hand-computed case. beta_binary with f = p_1 ~ Beta(1, 1) (uniform) and the calibration
// curve phi(f) = f^2 (`polynomial`, d = 2): P(y = 1 | f) = f^2, so r(p) = (1 - f^2, f^2).
// Cost matrix utility [[0, -c_FN], [-c_FP, 0]] with c_FP = 1, c_FN = 3: acting "1" is the
// Bayes act under belief q exactly when q_1 > t = c_FP / (c_FP + c_FN) = 1/4 (a tie goes to
// action 0). The oracle acts "1" when f^2 > 1/4, i.e. f > 1/2; a model whose belief q_1(f) is
// increasing acts "1" when f > f*, its threshold on the score. Where the two differ the regret
// per case is |U(1 | f) - U(0 | f)| = |c_FP (1 - phi) - c_FN phi| = |1 - 4 f^2|, so
//   regret(f*) = |F(1/2) - F(f*)|,  F(f) = integral of (1 - 4 f^2) = f - 4 f^3 / 3,
// F(1/2) = 1/3 (1 - 4f^2 has one sign on either side of 1/2, so the integral is its absolute
// value). The uncalibrated model acts on q_1 = f: f* = 1/4, F(1/4) = 11/48, regret 5/48.
// Temperature scaling with fitted T (K = 2: q_1 = sigma(logit(f) / T)) acts "1" when
// logit f > T logit(1/4): f* = sigma(T logit(1/4)).
double hand_regret(double threshold) {
  const auto F = [](double f) { return f - 4.0 * f * f * f / 3.0; };
  return std::abs(F(0.5) - F(threshold));
}

OJ hand_case() {
  return {{"name", "recal_decision"},
          {"scenario", "recalibration"},
          {"seed", 5},
          {"replicates", 1},
          {"fit_size", 200},
          {"test_size", 500},
          {"truth_samples", 400000},
          {"generator",
           {{"family", "beta_binary"},
            {"a", 1.0},
            {"b", 1.0},
            {"calibration", {{"curve", "polynomial"}, {"d", 2.0}}}}},
          {"methods", OJ::array({{{"name", "temperature"}}})},
          {"estimators", OJ::array({{{"name", "ece"}}})},
          {"decision", {{"task", "cost_matrix"}, {"utility", {{0.0, -3.0}, {-1.0, 0.0}}}}},
          {"truth", {{"samples", 20000}}},
          {"sweep", {{"fit_size", {200, 5000}}}}};
}

}  // namespace

TEST_CASE("the true decision regret matches a hand-computed K = 2 case",
          "[stat][recalibration][decision]") {
  const RecalibrationResults r = run(parse(hand_case()));
  REQUIRE(r.records.size() == 2);
  for (const auto& cell : r.records) {
    INFO("fit_size " << cell.fit_size);
    const MethodRecord& un = method(cell, "uncalibrated");
    REQUIRE(un.regret);
    REQUIRE(un.regret->error);
    // Every tolerance is 4.5 Monte Carlo standard errors (common random numbers make the error
    // of a regret that of the per-case difference, 0 where the two decide alike).
    CHECK(un.regret->error.value() > 0.0);
    CHECK(std::abs(un.regret->mean - 5.0 / 48.0) < 4.5 * *un.regret->error);
    const MethodRecord& ts = method(cell, "temperature");
    REQUIRE(ts.fits == 1);
    REQUIRE(ts.regret);
    const double T = parameter(ts, "temperature");
    const double threshold = 1.0 / (1.0 + std::exp(-T * std::log(1.0 / 3.0)));
    const double exact = hand_regret(threshold);
    INFO("fitted T " << T << ", threshold " << threshold << ", exact regret " << exact
                     << ", calbench " << ts.regret->mean << " +- " << *ts.regret->error);
    CHECK(std::abs(ts.regret->mean - exact) < 4.5 * *ts.regret->error + 1e-12);
    CHECK(*ts.regret->improvement == Approx(un.regret->mean - ts.regret->mean).margin(1e-15));
    // The fitted map moved the threshold far enough for the check to tell it from the
    // uncalibrated model: the exact values differ by more than the tolerance.
    CHECK(std::abs(exact - 5.0 / 48.0) > 6.0 * *ts.regret->error);
    // The boards rank the models by the regret too.
    REQUIRE(cell.leaderboard);
    const auto& keys = cell.leaderboard->table.keys;
    CHECK(std::any_of(keys.begin(), keys.end(),
                      [](const RankingKey& k) { return k.name == "decision_regret"; }));
  }
}

TEST_CASE("the uncalibrated regret is the decision scenario's Monte Carlo cost on the same draws",
          "[stat][recalibration][decision]") {
  // K = 3 (Monte Carlo in the decision scenario too): the same keyed draws, so the two agree to
  // rounding, not merely within their errors.
  OJ doc = hand_case();
  doc["generator"] = {{"family", "dirichlet"},
                      {"classes", 3},
                      {"alpha", 0.7},
                      {"miscalibration", {{"map", "temperature"}, {"temperature", 0.6}}}};
  doc["decision"] = {{"task", "triage"}, {"disease", 2}, {"benefit", 1.0}, {"harm", 0.4}};
  doc["truth_samples"] = 64000;
  doc.erase("sweep");
  const RecalibrationConfig config = parse(doc);
  const RecalibrationResults r = run(config);
  const Generators generators = make_generators(bases(config.cells));
  const auto task = make_task(config.cells[0].decision->spec);
  const DecisionValue v = monte_carlo_decision_value(*generators[0]->dirichlet(), *task, 64000);
  const MethodRecord& un = method(r.records[0], "uncalibrated");
  REQUIRE(un.regret);
  CHECK(un.regret->mean == Approx(v.cost.value).margin(1e-12));
  CHECK(*un.regret->error == Approx(v.cost.error).epsilon(1e-9));
  CHECK(v.cost.value > 10.0 * v.cost.error);  // the miscalibration costs something
}

TEST_CASE("the uncalibrated regret agrees with the decision scenario's quadrature (K = 2)",
          "[stat][recalibration][decision]") {
  // K = 2 and an injective map: the decision scenario integrates by quadrature (errors below
  // 1e-12), an independent method; the Monte Carlo regret lies within 4.5 of its standard errors.
  for (const double temperature : {0.5, 2.0}) {
    OJ doc = hand_case();
    doc["generator"] = {{"family", "dirichlet"},
                        {"classes", 2},
                        {"alpha", {0.4, 0.9}},
                        {"miscalibration", {{"map", "temperature"}, {"temperature", temperature}}}};
    doc["decision"] = {{"task", "cost_matrix"}, {"utility", {{0.0, -1.0}, {-2.5, 0.0}}}};
    doc["truth_samples"] = 200000;
    doc.erase("sweep");
    const RecalibrationConfig config = parse(doc);
    const RecalibrationResults r = run(config);
    const Generators generators = make_generators(bases(config.cells));
    const auto task = make_task(config.cells[0].decision->spec);
    const DecisionValue exact = quadrature_decision_value(*generators[0]->dirichlet(), *task);
    const MethodRecord& un = method(r.records[0], "uncalibrated");
    INFO("temperature " << temperature << ": quadrature " << exact.cost.value << " +- "
                        << exact.cost.error << ", calbench " << un.regret->mean << " +- "
                        << *un.regret->error);
    CHECK(exact.cost.error < 1e-12);
    CHECK(exact.cost.value > 20.0 * *un.regret->error);
    CHECK(std::abs(un.regret->mean - exact.cost.value) < 4.5 * *un.regret->error);
  }
}

TEST_CASE("decision-valued boards: keys, agreements and 1 vs 2 threads",
          "[e2e][recalibration][decision]") {
  OJ doc = hand_case();
  doc["replicates"] = 4;
  doc["truth_samples"] = 20000;
  doc["methods"] = OJ::array({{{"name", "temperature"}},
                              {{"name", "isotonic"}},
                              {{"name", "histogram_binning"}, {"bins", 5}}});
  doc["estimators"] = OJ::array({{{"name", "ece"}}, {{"name", "brier"}}});
  doc["sweep"] = {{"fit_size", {200, 400}}};
  const RecalibrationConfig config = parse(doc);
  const fs::path dir = fs::temp_directory_path() / "calbench_test_recalibration_decision";
  fs::remove_all(dir);
  for (std::size_t threads : {1, 2}) {
    const RecalibrationResults r = run(config, threads);
    write_results(module_of(config), r, config.resolved, RunInfo{}, dir / std::to_string(threads));
    if (threads != 1) continue;
    REQUIRE(r.pooled_leaderboard);
    const LeaderboardRecord& lb = *r.pooled_leaderboard;
    const auto key = [&](const std::string& name) {
      const auto& keys = lb.table.keys;
      const auto it = std::find_if(keys.begin(), keys.end(),
                                   [&](const RankingKey& k) { return k.name == name; });
      REQUIRE(it != keys.end());
      return static_cast<std::size_t>(it - keys.begin());
    };
    const std::size_t regret = key("decision_regret"), utility = key("realised_utility"),
                      ece = key("ece_top_l1"), ece_ew15 = key("ece_ew15");
    CHECK_FALSE(lb.estimate[regret]);
    CHECK(lb.estimate[utility]);
    CHECK(lb.table.keys[utility].better == Better::higher);
    // The agreement of the true-ECE board with the true-regret board, and of every test-set key
    // (the realised utility included) with the regret board.
    const auto agreement = [&](std::size_t k, std::size_t reference) {
      return std::count_if(
          lb.boards.agreements.begin(), lb.boards.agreements.end(),
          [&](const RankAgreement& a) { return a.key == k && a.reference == reference; });
    };
    CHECK(agreement(regret, ece) == 1);
    CHECK(agreement(utility, regret) == 1);
    CHECK(agreement(ece_ew15, regret) == 1);
    CHECK(agreement(ece, regret) == 0);
    // Every regret is >= 0 up to its error: the cost matrix's policy is Bayes for its belief.
    for (const auto& cell : r.records)
      for (const auto& m : cell.methods)
        if (m.regret) CHECK(m.regret->mean > -4.5 * m.regret->error.value_or(0.0));
  }
  const auto read = [](const fs::path& file) { return read_file(file).bytes; };
  for (const char* file :
       {"summary.json", "cells.csv", "leaderboard.csv", "leaderboard_agreement.csv"})
    CHECK(read(dir / "1" / file) == read(dir / "2" / file));
  const auto summary = nlohmann::json::parse(read(dir / "1" / "summary.json"));
  const auto& task = summary.at("cells").at(0).at("decision");
  CHECK(task.at("task") == "cost_matrix");
  CHECK(task.at("params").at("utility").at(1).at(0) == -1.0);
  const auto& decision = summary.at("cells").at(0).at("methods").at("isotonic").at("decision");
  CHECK(decision.at("decision_regret").contains("error"));
  CHECK(decision.at("realised_utility").contains("improvement"));
  const std::string cells = read(dir / "1" / "cells.csv");
  CHECK(cells.find(",truth,decision_regret,") != std::string::npos);
  CHECK(cells.find(",estimate,realised_utility,") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("recalibration config: the decision block", "[unit][config][recalibration][decision]") {
  const OJ good = hand_case();
  CHECK(problems_of(good).empty());
  {
    OJ doc = good;
    doc["decision"]["harm"] = 1.0;
    CHECK(has_problem(problems_of(doc), "/decision/harm: unknown key"));
  }
  {
    OJ doc = good;
    doc["decision"]["utility"] = {{0.0, -3.0, 1.0}, {-1.0, 0.0, 1.0}, {1.0, 1.0, 0.0}};
    CHECK(has_problem(problems_of(doc), "/decision/utility"));
  }
  {
    OJ doc = good;
    doc["decision"] = {{"task", "triag"}};
    CHECK(has_problem(problems_of(doc), "/decision/task: unknown decision task \"triag\""));
  }
  {
    OJ doc = good;
    doc["estimators"] = OJ::array({{{"name", "brier"}, {"label", "realised_utility"}},
                                   {{"name", "nll"}, {"label", "decision_regret"}}});
    const auto p = problems_of(doc);
    CHECK(has_problem(p, "/estimators/0/label: label \"realised_utility\" is reserved"));
    CHECK(has_problem(p, "/estimators/1/label: label \"decision_regret\" is reserved"));
  }
  {
    // Without `decision` nothing changes; the scenario decision's other keys stay errors.
    OJ doc = good;
    doc.erase("decision");
    CHECK(problems_of(doc).empty());
    doc["recalibrator"] = OJ::object();
    CHECK(has_problem(problems_of(doc), "/recalibrator: key \"recalibrator\" belongs to scenario"));
  }
  {
    const RecalibrationConfig config = parse(good);
    REQUIRE(config.cells.front().decision);
    CHECK(config.cells.front().decision->task == "cost_matrix");
  }
}
