// The calibration tests as estimators: ks_calibration, kuiper_calibration (cumulative.hpp) and
// spiegelhalter (spiegelhalter.hpp). Reference values from MCGrad and Tygert's ecevecce code
// (tests/reference/cumulative.json, cumulative_ref.py), hand-computed cases, the null
// distributions' known means, the population value against exact quadrature, and the size of
// each test at a calibrated generator.
#include <boost/math/distributions/beta.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <numbers>

#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "estimators/calibration_test.hpp"
#include "estimators/corp.hpp"
#include "estimators/cumulative.hpp"
#include "estimators/spiegelhalter.hpp"
#include "generators/dirichlet.hpp"
#include "reference_data.hpp"
#include "truth/population.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

const nlohmann::json& cumulative_references() {
  static const nlohmann::json values = [] {
    std::ifstream in(testing::reference_dir() + "/cumulative.json");
    return nlohmann::json::parse(in);
  }();
  return values;
}

double evaluate(const Estimator& e, const Sample& s) {
  EstimatorWorkspace ws;
  return e.estimate(s, ws);
}

CumulativeCalibration cumulative(CumulativeStatistic statistic, Scope scope, TestOutput output) {
  return CumulativeCalibration(
      {.statistic = statistic, .scope = scope, .test = {.output = output}});
}

}  // namespace

TEST_CASE("cumulative statistics and Spiegelhalter's Z reproduce MCGrad and ecevecce",
          "[reference][estimators]") {
  std::size_t compared = 0;
  for (const auto& [dataset, scopes] : cumulative_references().items()) {
    const Sample s = testing::load_reference_dataset(dataset);
    for (const auto& [scope_name, metrics] : scopes.items()) {
      const Scope scope = scope_name == "binary" ? Scope::binary : Scope::top;
      const bool tied = metrics.at("tied_scores").get<bool>();
      for (const auto& [metric, implementations] : metrics.items()) {
        if (metric == "tied_scores" || metric == "sigma") continue;
        const bool spiegel = metric.starts_with("spiegelhalter");
        const bool ks = metric.starts_with("ks");
        const TestOutput output = metric.ends_with("_p")            ? TestOutput::p_value
                                  : metric.ends_with("_normalized") ? TestOutput::normalized
                                                                    : TestOutput::statistic;
        const TestSettings test{.output = output};
        double ours = 0.0;
        if (spiegel)
          ours = evaluate(Spiegelhalter({.scope = scope, .test = test}), s);
        else
          ours = evaluate(
              cumulative(ks ? CumulativeStatistic::ks : CumulativeStatistic::kuiper, scope, output),
              s);
        for (const auto& [implementation, value] : implementations.items()) {
          // MCGrad orders tied scores by quicksort; calbench groups them (cumulative.hpp).
          if (tied && !spiegel) continue;
          INFO(dataset << " " << scope_name << " " << metric << " " << implementation << ": "
                       << value.get<double>() << " vs calbench " << ours);
          CHECK(ours == Approx(value.get<double>()).margin(1e-12).epsilon(0));
          ++compared;
        }
      }
    }
  }
  CHECK(compared >= 100);
}

// Four rows, K = 2, scope binary: scores p_1 = 0.2, 0.6, 0.6, 0.9 with y = 0, 1, 0, 1.
// C after each run of ties: -0.2/4 = -0.05; -0.05 + (0.4 - 0.6)/4 = -0.1; -0.1 + 0.1/4 = -0.075,
// so KS = 0.1 and Kuiper = 0 - (-0.1) = 0.1 whatever the order of the two 0.6 rows (row by row,
// y = 1 first, C would reach +0.05 and Kuiper 0.15). sigma = sqrt(.16 + .24 + .24 + .09)/4.
// Spiegelhalter: N = (-0.2)(0.6) + (0.4)(-0.2) + (-0.6)(-0.2) + (0.1)(-0.8) = -0.16,
// V = 0.36(0.16) + 2(0.04)(0.24) + 0.64(0.09) = 0.1344.
TEST_CASE("cumulative statistics group tied scores; hand-computed values", "[unit][estimators]") {
  for (const auto& labels : {std::vector<std::uint32_t>{0, 1, 0, 1}, {0, 0, 1, 1}}) {
    const Sample s = make_sample(2, {0.8, 0.2, 0.4, 0.6, 0.4, 0.6, 0.1, 0.9}, labels);
    const double sigma = std::sqrt(0.73) / 4.0;
    CHECK(evaluate(cumulative(CumulativeStatistic::ks, Scope::binary, TestOutput::statistic), s) ==
          Approx(0.1).margin(1e-15));
    CHECK(evaluate(cumulative(CumulativeStatistic::kuiper, Scope::binary, TestOutput::statistic),
                   s) == Approx(0.1).margin(1e-15));
    CHECK(evaluate(cumulative(CumulativeStatistic::ks, Scope::binary, TestOutput::normalized), s) ==
          Approx(0.1 / sigma).epsilon(1e-14));
    CHECK(evaluate(cumulative(CumulativeStatistic::ks, Scope::binary, TestOutput::p_value), s) ==
          Approx(1.0 - brownian_max_abs_cdf(0.1 / sigma)).epsilon(1e-14));
    const Spiegelhalter z({.scope = Scope::binary, .test = {.output = TestOutput::normalized}});
    CHECK(evaluate(z, s) == Approx(-0.16 / std::sqrt(0.1344)).epsilon(1e-14));
    const Spiegelhalter stat({.scope = Scope::binary});
    CHECK(evaluate(stat, s) == Approx(-0.04).margin(1e-15));
    const Spiegelhalter p({.scope = Scope::binary, .test = {.output = TestOutput::p_value}});
    CHECK(evaluate(p, s) == Approx(std::erfc(0.16 / std::sqrt(0.1344) / std::sqrt(2.0))));
  }
}

TEST_CASE("test outputs at the edges: sigma 0, one row, reject", "[unit][estimators]") {
  // Every score 1 and correct: the statistic and sigma are 0, p = 1.
  const Sample hot = make_sample(2, {1.0, 0.0, 0.0, 1.0}, {0, 1});
  CHECK(evaluate(cumulative(CumulativeStatistic::kuiper, Scope::top, TestOutput::p_value), hot) ==
        1.0);
  // Every score 1 and one row wrong: sigma 0 < statistic, p = 0.
  const Sample wrong = make_sample(2, {1.0, 0.0, 0.0, 1.0}, {0, 0});
  CHECK(evaluate(cumulative(CumulativeStatistic::ks, Scope::top, TestOutput::p_value), wrong) ==
        0.0);
  CHECK(evaluate(Spiegelhalter({.test = {.output = TestOutput::p_value}}), wrong) == 0.0);
  const CumulativeCalibration reject({.statistic = CumulativeStatistic::ks,
                                      .test = {.output = TestOutput::reject, .level = 0.01}});
  CHECK(evaluate(reject, wrong) == 1.0);
  CHECK(evaluate(reject, hot) == 0.0);
  CHECK(cumulative(CumulativeStatistic::ks, Scope::binary, TestOutput::statistic)
            .classes_problem(3)
            .has_value());
  CHECK_FALSE(
      cumulative(CumulativeStatistic::ks, Scope::top, TestOutput::p_value).has_population_value());
}

// Known means (Feller 1951; Tygert's dists.testmeans): E max_{[0,1]} |W| = sqrt(pi/2) and
// E (max W - min W) = 2 sqrt(2/pi); a mean is the integral of 1 - cdf over (0, inf).
TEST_CASE("Brownian null distributions have their known means", "[unit][estimators]") {
  using boost::math::quadrature::gauss_kronrod;
  const double ks_mean = gauss_kronrod<double, 61>::integrate(
      [](double x) { return 1.0 - brownian_max_abs_cdf(x); }, 0.0, 40.0, 15, 1e-13);
  const double range_mean = gauss_kronrod<double, 61>::integrate(
      [](double x) { return 1.0 - brownian_range_cdf(x); }, 0.0, 40.0, 15, 1e-13);
  CHECK(ks_mean == Approx(std::sqrt(std::numbers::pi / 2.0)).epsilon(1e-10));
  CHECK(range_mean == Approx(2.0 * std::sqrt(2.0 / std::numbers::pi)).epsilon(1e-10));
  CHECK(brownian_max_abs_cdf(0.0) == 0.0);
  CHECK(brownian_range_cdf(1e3) == 1.0);
}

// The population value at K = 2, scope binary, c_1 ~ Beta(a, a), p_1 = h(c_1) with the
// temperature map h(c) = c^(1/T) / (c^(1/T) + (1-c)^(1/T)), T < 1: c - h(c) is > 0 below 1/2
// and < 0 above, and E[c - h(c)] = 0 by symmetry, so the population cumulative difference
// t -> E[(c - h(c)) 1{h(c) <= t}] rises to its maximum at t = 1/2 and returns to 0:
// KS = Kuiper = integral_0^{1/2} (c - h(c)) f_a(c) dc, evaluated here by quadrature.
TEST_CASE("population value of the cumulative statistics matches exact quadrature",
          "[stat][estimators]") {
  const double a = 2.0, T = 0.6;
  const boost::math::beta_distribution<double> beta(a, a);
  const double exact = boost::math::quadrature::gauss_kronrod<double, 61>::integrate(
      [&](double c) {
        const double u = std::pow(c, 1.0 / T), v = std::pow(1.0 - c, 1.0 / T);
        return (c - u / (u + v)) * boost::math::pdf(beta, c);
      },
      0.0, 0.5, 15, 1e-13);
  DirichletGenerator gen({2, {a, a}, TemperatureMap{T}});
  const CumulativeCalibration ks =
      cumulative(CumulativeStatistic::ks, Scope::binary, TestOutput::statistic);
  const CumulativeCalibration kuiper =
      cumulative(CumulativeStatistic::kuiper, Scope::binary, TestOutput::statistic);
  const Estimator* estimators[] = {&ks, &kuiper};
  const auto values = population_values(gen, estimators, 1'000'000);
  for (const auto& v : values) {
    INFO("exact " << exact << ", population " << v.value << " +- " << v.error);
    CHECK(std::abs(v.value - exact) < 4.0 * v.error + 2e-4);
  }
}

// Size: at a calibrated generator each test rejects at level 0.05 with probability within
// 3 binomial standard errors of 0.05 (600 replicates: se 0.0089), K = 2 binary and top label
// at K = 10, n = 300. (The full size table, n = 100 to 10,000: docs/estimators/tests.md.)
TEST_CASE("calibration tests hold their size at a calibrated generator", "[stat][estimators]") {
  struct Case {
    DirichletSpec generator;
    Scope scope;
  };
  const Case cases[] = {{{2, {1.0, 1.0}, IdentityMap{}}, Scope::binary},
                        {{10, std::vector<double>(10, 0.5), IdentityMap{}}, Scope::top}};
  for (const Case& c : cases) {
    const DirichletGenerator gen(c.generator);
    const TestSettings reject{.output = TestOutput::reject, .level = 0.05};
    const CumulativeCalibration ks(
        {.statistic = CumulativeStatistic::ks, .scope = c.scope, .test = reject});
    const CumulativeCalibration ku(
        {.statistic = CumulativeStatistic::kuiper, .scope = c.scope, .test = reject});
    const Spiegelhalter sz({.scope = c.scope, .test = reject});
    const Estimator* tests[] = {&ks, &ku, &sz};
    constexpr std::size_t R = 600;
    std::array<double, 3> rejected{};
    Sample s;
    DirichletScratch scratch;
    EstimatorWorkspace ws;
    for (std::size_t r = 0; r < R; ++r) {
      Engine engine = make_engine({20261126, 0, r, Purpose::sample});
      gen.sample(engine, 300, s, scratch);
      for (std::size_t t = 0; t < 3; ++t) rejected[t] += tests[t]->estimate(s, ws);
    }
    const double se = std::sqrt(0.05 * 0.95 / R);
    for (std::size_t t = 0; t < 3; ++t) {
      INFO("K = " << c.generator.classes << ", test " << t << ": rejection rate "
                  << rejected[t] / R);
      CHECK(std::abs(rejected[t] / R - 0.05) < 3.0 * se);
    }
  }
}

// ---- CORP (estimators/corp.hpp) ------------------------------------------------------------

namespace {

const nlohmann::json& corp_references() {
  static const nlohmann::json values = [] {
    std::ifstream in(testing::reference_dir() + "/corp.json");
    return nlohmann::json::parse(in);
  }();
  return values;
}

}  // namespace

TEST_CASE("CORP decomposition reproduces scikit-learn's isotonic fit and the paper's terms",
          "[reference][estimators]") {
  std::size_t compared = 0;
  for (const auto& [dataset, scopes] : corp_references().items()) {
    const Sample s = testing::load_reference_dataset(dataset);
    for (const auto& [scope_name, metrics] : scopes.items()) {
      const Scope scope = scope_name == "binary" ? Scope::binary : Scope::top;
      for (const auto& [key, value] : metrics.items()) {
        const auto underscore = key.find('_');
        const std::string component = key.substr(0, underscore), score = key.substr(underscore + 1);
        const CorpComponent c = component == "mcb"   ? CorpComponent::mcb
                                : component == "dsc" ? CorpComponent::dsc
                                : component == "unc" ? CorpComponent::unc
                                                     : CorpComponent::score;
        const Corp corp({.score = score == "log" ? CorpScore::log : CorpScore::brier,
                         .component = c,
                         .scope = scope});
        INFO(dataset << " " << scope_name << " " << key);
        CHECK(evaluate(corp, s) == Approx(value.get<double>()).margin(1e-12).epsilon(0));
        ++compared;
      }
    }
  }
  CHECK(compared >= 50);
}

// Scores 0.2, 0.4, 0.6, 0.8 with outcomes 0, 1, 0, 1: PAV pools the middle pair to 0.5, so the
// fit is 0, 0.5, 0.5, 1. Brier: S(f) = (0.04 + 0.36 + 0.36 + 0.04)/4 = 0.2,
// S(c) = (0 + 0.25 + 0.25 + 0)/4 = 0.125, S(r) = 0.25: MCB 0.075, DSC 0.125, UNC 0.25.
// Log: S(c) = 2 log 2 / 4, S(r) = log 2; S(f) = -(2 log 0.8 + 2 log 0.4)/4.
TEST_CASE("CORP decomposition: hand-computed case", "[unit][estimators]") {
  const Sample s = make_sample(2, {0.8, 0.2, 0.6, 0.4, 0.4, 0.6, 0.2, 0.8}, {0, 1, 0, 1});
  auto value = [&](CorpScore score, CorpComponent component) {
    return evaluate(Corp({.score = score, .component = component, .scope = Scope::binary}), s);
  };
  CHECK(value(CorpScore::brier, CorpComponent::mcb) == Approx(0.075).margin(1e-15));
  CHECK(value(CorpScore::brier, CorpComponent::dsc) == Approx(0.125).margin(1e-15));
  CHECK(value(CorpScore::brier, CorpComponent::unc) == Approx(0.25).margin(1e-15));
  CHECK(value(CorpScore::brier, CorpComponent::score) == Approx(0.2).margin(1e-15));
  const double log2 = std::log(2.0), f = -(2.0 * std::log(0.8) + 2.0 * std::log(0.4)) / 4.0;
  CHECK(value(CorpScore::log, CorpComponent::mcb) == Approx(f - log2 / 2.0).margin(1e-15));
  CHECK(value(CorpScore::log, CorpComponent::dsc) == Approx(log2 / 2.0).margin(1e-15));
  CHECK(value(CorpScore::log, CorpComponent::unc) == Approx(log2).margin(1e-15));
}

// For K = 2 and a temperature map c is a monotone function of the score, so the isotonic fit
// of the truth engine's c-outcomes is r itself and MCB (Brier, top) -> E(Z - r(Z))^2 =
// ece_top_l2^2, which the truth engine computes by quadrature.
TEST_CASE("CORP miscalibration's population value is ece_top_l2 squared", "[stat][estimators]") {
  const DirichletGenerator gen({2, {1.5, 1.5}, TemperatureMap{0.7}});
  const GroundTruth truth = compute_truth(gen, TruthSettings{});
  const double l2 = truth[Quantity::ece_top_l2].value;
  const Corp mcb({});
  const Estimator* estimators[] = {&mcb};
  const PopulationValue v = population_values(gen, estimators, 1'000'000)[0];
  INFO("ece_top_l2^2 " << l2 * l2 << ", population MCB " << v.value << " +- " << v.error);
  CHECK(std::abs(v.value - l2 * l2) < 4.0 * v.error + 1e-6);
  CHECK(l2 * l2 > 1e-3);
}
