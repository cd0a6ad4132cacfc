// Issue #14, "no crash, hang or silent NaN": the pre-flight estimate, the quadrature mass check
// and the guard against non-finite truths. The command-line corpus is tests/cli/bad_inputs.sh.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "config/finite_json.hpp"
#include "core/error.hpp"
#include "core/finite_guard.hpp"
#include "experiment/preflight.hpp"
#include "scenarios/common.hpp"
#include "scenarios/registry.hpp"
#include "truth/quadrature_check.hpp"

namespace calbench {
namespace {

// A config parsed into its scenario's typed cells, as the command line reads it.
std::unique_ptr<ExperimentBase> experiment(const std::string& text) {
  nlohmann::ordered_json document = nlohmann::ordered_json::parse(text);
  document["scenario"] = "estimator_bias";
  return parse_experiment(document, "x.json");
}

PreflightEstimate estimate(const std::unique_ptr<ExperimentBase>& e) {
  return estimate_run(*e, cell_demands(*e));
}

std::string preflight_message(const std::unique_ptr<ExperimentBase>& e, std::size_t threads,
                              double memory) {
  try {
    preflight(*e, cell_demands(*e), threads, memory);
  } catch (const ConfigError& error) {
    REQUIRE(error.problems().size() == 1);
    return error.problems().front();
  }
  return "";
}

}  // namespace

TEST_CASE("the pre-flight estimate is the documented formula", "[unit][preflight]") {
  // n = 1000, K = 10, bins 15 (the largest of two estimators), 2 x 3 cells, 200 replicates:
  // per worker 1000 (10 x 4 + 1) doubles + 15 x 10 x 3 doubles = 328,000 + 3,600 bytes. The
  // classes are exchangeable (symmetric alpha, identity map), so the truth engine keeps one
  // channel of 11 x 2,562 fine bins x 3 doubles = 676,368 bytes.
  const auto e = experiment(R"({
    "replicates": 200, "sample_size": 1000,
    "generator": {"family": "dirichlet", "classes": 10, "alpha": 0.5},
    "estimators": [{"name": "ece", "bins": 15}, {"name": "ece", "bins": 5}],
    "sweep": {"truth.tolerance": [1e-4, 1e-5], "estimators.1.bins": [2, 3, 4]}})");
  const PreflightEstimate est = estimate(e);
  CHECK(est.cells == 6);
  CHECK(est.tasks == 1200);
  CHECK(est.bytes_per_thread == 331'600.0);
  CHECK(est.component_draws == 1200.0 * 1000.0 * 10.0);
  CHECK(est.truth_bytes == 676'368.0);
  CHECK(preflight_message(e, 2, 1e9).empty());
  // 4 workers need 1,326,400 bytes.
  CHECK(preflight_message(e, 4, 1'326'399.0) ==
        "x.json: /sample_size: the run needs about 0.00133 GB of memory (sample size 1000 x "
        "classes 10 x 4 doubles per worker, 4 workers) but the machine has 0.00133 GB available; "
        "lower "
        "it or run with fewer --threads");
  CHECK(preflight_message(e, 4, 1'326'400.0).empty());
  // The truth engine alone: 676,368 bytes, whatever the workers.
  CHECK(preflight_message(e, 1, 676'367.0) ==
        "x.json: /generator/classes: the ground truth needs about 0.000676 GB of memory "
        "(classes 10: 1 x 0.000676 GB of the truth engine's fine bins, one per class unless the "
        "classes are exchangeable) but the machine has 0.000676 GB available; lower the number of "
        "classes");
}

TEST_CASE("the pre-flight names the swept value that sets the figure", "[unit][preflight]") {
  const auto bins = experiment(R"({
    "replicates": 2, "sample_size": 10, "generator": {"family": "dirichlet", "classes": 1000},
    "estimators": [{"name": "ece", "bins": 15}],
    "sweep": {"estimators.0.bins": [10, 1000000]}})");
  // bins x K x 3 doubles = 2.4e10 bytes dominate 10 x (1000 x 4 + 1) doubles.
  CHECK_THAT(preflight_message(bins, 1, 1e10),
             Catch::StartsWith("x.json: /sweep/estimators.0.bins/1: the run needs about 24 GB") &&
                 Catch::Contains("bins 1e+06 x classes 1000 x 3 doubles per worker"));
  const auto tasks = experiment(R"({
    "replicates": 1e6, "sample_size": 10, "generator": {"family": "dirichlet", "classes": 2},
    "estimators": [{"name": "ece"}],
    "sweep": {"replicates": [10, 2e6], "generator.alpha": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}})");
  // The upper bound: 2 x 10 cells, each counted with the largest replicate count, 4e7 tasks.
  CHECK(estimate(tasks).tasks == 40'000'000);
  CHECK(preflight_message(tasks, 1, 1e12).empty());
  const auto many = experiment(R"({
    "replicates": 1e9, "sample_size": 1, "generator": {"family": "dirichlet", "classes": 2},
    "estimators": [{"name": "ece"}],
    "sweep": {"generator.alpha": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]}})");
  CHECK_THAT(preflight_message(many, 1, 1e12),
             Catch::StartsWith("x.json: /replicates: the run has 11 cells x 1e+09 replicates"));
}

TEST_CASE("the time estimate counts resamples and each truth once", "[unit][preflight]") {
  // Issue #38 (D14): 10^6 intervals.resamples were announced as about 1 s, and a sweep whose
  // cells share one generator counted its truth once per cell at its cap (a 2.1 s sweep
  // announced as 5.9 hours). 2 cells of one generator (K = 10, temperature: Monte Carlo truth),
  // 50 replicates of n <= 1000, 100 resamples: each replicate evaluates its estimators
  // 2 x 100 times more, and the truth draws (16e6 + 1e6 population) x 10 numbers once.
  const auto e = experiment(R"({
    "replicates": 50, "sample_size": 1000,
    "generator": {"family": "dirichlet", "classes": 10, "alpha": 0.5,
                  "miscalibration": {"map": "temperature", "temperature": 0.7}},
    "estimators": [{"name": "ece"}], "intervals": {"resamples": 100},
    "sweep": {"sample_size": [100, 1000]}})");
  const PreflightEstimate est = estimate(e);
  CHECK(est.component_draws == 2.0 * 50.0 * 1000.0 * 10.0);
  CHECK(est.resampled_components == est.component_draws * 200.0);
  CHECK(est.truth_time_draws == (16e6 + 1e6) * 10.0);
  CHECK(estimated_seconds(est, 2) == (est.component_draws / replicate_components_per_second +
                                      est.resampled_components / resampled_components_per_second +
                                      est.truth_time_draws / truth_components_per_second) /
                                         2.0);
  // Two generators: two truths. With bca, the jackknife groups join the evaluations.
  const auto two = experiment(R"({
    "replicates": 50, "sample_size": 1000,
    "generator": {"family": "dirichlet", "classes": 10, "alpha": 0.5,
                  "miscalibration": {"map": "temperature", "temperature": 0.7}},
    "estimators": [{"name": "ece"}],
    "intervals": {"resamples": 100, "methods": ["bca"], "jackknife_groups": 30},
    "sweep": {"generator.miscalibration.temperature": [0.7, 1.5]}})");
  CHECK(estimate(two).truth_time_draws == 2.0 * (16e6 + 1e6) * 10.0);
  CHECK(estimate(two).resampled_components == estimate(two).component_draws * 230.0);
  // Truths without Monte Carlo (identity: closed forms; K = 3: quadrature) draw only the
  // estimators' population values.
  const std::pair<const char*, double> exact_truths[] = {
      {R"({"family": "dirichlet", "classes": 10, "alpha": 0.5})", 10.0},
      {R"({"family": "dirichlet", "classes": 3, "alpha": 0.5,
           "miscalibration": {"map": "temperature", "temperature": 0.7}})",
       3.0}};
  for (const auto& [generator, K] : exact_truths) {
    INFO(generator);
    const auto exact = experiment(std::string(R"({"replicates": 5, "sample_size": 100,
      "estimators": [{"name": "ece"}], "generator": )") +
                                  generator + "}");
    CHECK(estimate(exact).truth_time_draws == 1e6 * K);
  }
}

TEST_CASE("a run estimated above a day needs --long", "[unit][preflight]") {
  // 4e4 replicates of 1e6 x 100: 4e12 numbers, 1e5 s on one thread at 4e7 a second.
  const auto e = experiment(R"({
    "replicates": 40000, "sample_size": 1000000,
    "generator": {"family": "dirichlet", "classes": 100, "alpha": 0.5},
    "estimators": [{"name": "brier"}]})");
  const auto demands = cell_demands(*e);
  const double seconds = estimated_seconds(estimate(e), 1);
  CHECK(seconds > time_refusal_seconds);
  std::string message;
  try {
    check_run_time(*e, demands, seconds, 1, false);
  } catch (const ConfigError& error) {
    message = error.problems().at(0);
  }
  CHECK_THAT(message, Catch::StartsWith("x.json: /replicates: this run may take up to about " +
                                        duration_text(seconds) + " on 1 threads") &&
                          Catch::Contains("start it anyway with --long"));
  CHECK_NOTHROW(check_run_time(*e, demands, seconds, 1, true));
  // Below the limit nothing is asked.
  CHECK_NOTHROW(check_run_time(*e, demands, time_refusal_seconds, 1, false));
}

TEST_CASE("the quadrature mass check", "[unit][truth]") {
  CHECK(quadrature_mass_ok(1.0));
  CHECK(quadrature_mass_ok(1.0 + 0.9e-6));
  CHECK_FALSE(quadrature_mass_ok(1.0 - 1.1e-6));
  CHECK_FALSE(quadrature_mass_ok(0.0));  // temperature 1e17 at K = 3 integrated to 0
  CHECK_FALSE(quadrature_mass_ok(std::numeric_limits<double>::quiet_NaN()));
}

TEST_CASE("a non-finite truth is an error naming the cell (never a null)", "[unit][truth]") {
  Generators generators;
  generators.push_back(std::make_unique<Generator>(DirichletSpec{3, {1.0, 1.0, 1.0}}));
  CellBase cell;
  cell.index = 4;
  cell.solution = TargetSolution{};
  auto truth = std::make_shared<GroundTruth>();
  for (Quantity q : all_quantities) (*truth)[q] = {0.5, TruthMethod::closed_form, 0.0};
  // The documented unknown (NaN with an infinite error) passes.
  (*truth)[Quantity::canonical_l1] = {std::numeric_limits<double>::quiet_NaN(),
                                      TruthMethod::monte_carlo,
                                      std::numeric_limits<double>::infinity()};
  cell.solution->truth = truth;
  TruthCache cache;
  CHECK(cell_truths({&cell}, generators, cache).front() == truth.get());
  (*truth)[Quantity::nll] = {std::numeric_limits<double>::infinity(), TruthMethod::closed_form,
                             0.0};
  CHECK_THROWS_WITH(cell_truths({&cell}, generators, cache),
                    Catch::StartsWith("cell 4 (") &&
                        Catch::Contains("the ground truth nll is inf, not a finite number"));
}

}  // namespace calbench

// The non-finite guard of every scenario and of eval/fit/plan (core/finite_guard.hpp,
// config/finite_json.hpp): finite values pass unchanged, NaN and infinities are errors naming
// where they arose (a JSON document's by its pointer).
TEST_CASE("the non-finite guard names the value's place", "[unit]") {
  using calbench::NumericalError;
  const auto where = [] { return std::string("cell 2, replicate 5: estimator ece_ew15"); };
  CHECK(calbench::require_finite(0.25, where) == 0.25);
  CHECK_THROWS_WITH(calbench::require_finite(std::nan(""), where),
                    "cell 2, replicate 5: estimator ece_ew15 gave nan, not a finite number");
  CHECK_THROWS_AS(calbench::require_finite(-HUGE_VAL, where), NumericalError);
  nlohmann::ordered_json doc = {{"n", 3}, {"estimators", {{"ece", {{"ci", {0.1, 0.2}}}}}}};
  CHECK_NOTHROW(calbench::require_finite_json(doc, "data.csv"));
  doc["estimators"]["ece"]["ci"][1] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(calbench::require_finite_json(doc, "data.csv"),
                    "data.csv: /estimators/ece/ci/1 is inf, not a finite number");
}

// The truth engine's memory in the pre-flight: one channel of fine bins per class unless the
// generator's classes are exchangeable (Generator::exchangeable_classes, by which the truth
// engine pools them): 11 x 2,562 x 3 doubles per channel.
TEST_CASE("the pre-flight counts the truth engine's fine bins per class", "[unit]") {
  using calbench::estimate;
  using calbench::experiment;
  const double per_class = 11.0 * 2562.0 * 3.0 * 8.0;
  const auto config = [](const std::string& generator) {
    return experiment(R"({"sample_size": 10, "replicates": 1, "estimators": [{"name": "accuracy"}],
                          "generator": )" +
                      generator + "}");
  };
  CHECK(estimate(config(R"({"family": "dirichlet", "classes": 1000, "alpha": 0.5,
                            "miscalibration": {"map": "temperature", "temperature": 2}})"))
            .truth_bytes == per_class);
  // Symmetric label noise (a symmetric alpha, a uniform beta) is exchangeable too: the truth
  // engine pools it, where the JSON-reading pre-flight counted every label_noise per class.
  CHECK(estimate(config(R"({"family": "label_noise", "classes": 4, "weight": 0.1,
                            "beta": [0.25, 0.25, 0.25, 0.25]})"))
            .truth_bytes == per_class);
  // Noise towards one class (the default beta, class 0) is not.
  const auto towards_0 = config(R"({"family": "label_noise", "classes": 1000, "weight": 0.1})");
  CHECK(estimate(towards_0).truth_bytes == 1000.0 * per_class);
  CHECK_THROWS_AS(calbench::preflight(*towards_0, calbench::cell_demands(*towards_0), 1, 1e8),
                  calbench::ConfigError);
  // Per cell: a sweep of the map makes only its power cell per class (the JSON-reading
  // pre-flight counted every cell per class once any generator key was swept).
  const auto swept = experiment(R"({"sample_size": 10, "replicates": 1,
      "estimators": [{"name": "accuracy"}],
      "generator": {"family": "dirichlet", "classes": 3, "alpha": 0.5},
      "sweep": {"generator.miscalibration": [{"map": "identity"},
                                              {"map": "power", "exponents": [1, 2, 3]}]}})");
  CHECK(estimate(swept).truth_bytes == 3.0 * per_class);
  CHECK_THAT(calbench::preflight_message(swept, 1, 1e6),
             Catch::StartsWith("x.json: /generator/classes: the ground truth needs about "
                               "0.00203 GB of memory (classes 3: 3 x 0.000676 GB"));
}
