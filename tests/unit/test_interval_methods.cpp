// The interval methods of estimators/interval_methods.hpp: the formulas on hand-worked
// examples, the basic and BCa bootstrap against textbook intervals for a mean, the analytic
// variance of the debiased squared error against a Monte Carlo standard deviation, and every
// method's coverage on a cheap setting with binomial tolerances.
#include <atomic>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <tuple>
#include <vector>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "estimators/bin_gap_bias.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/corp.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/interval_methods.hpp"
#include "estimators/proper_scores.hpp"
#include "estimators/uncertainty.hpp"
#include "experiment/experiment.hpp"
#include "generators/generator.hpp"
#include "reference_data.hpp"
#include "scenarios/estimator_bias/run.hpp"
#include "scenarios/registry.hpp"

namespace {

using namespace calbench;
using OJ = nlohmann::ordered_json;

// R bootstrap means of `x` (rows drawn with replacement) from one stream.
std::vector<double> bootstrap_means(const std::vector<double>& x, std::size_t R,
                                    std::uint64_t seed) {
  Engine engine = make_engine({seed, 0, 0, Purpose::bootstrap});
  const std::size_t n = x.size();
  std::vector<double> out(R);
  for (auto& v : out) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i)
      sum += x[std::min(n - 1,
                        static_cast<std::size_t>(uniform_open01(engine) * static_cast<double>(n)))];
    v = sum / static_cast<double>(n);
  }
  return out;
}

// The leave-one-out means of x.
std::vector<double> jackknife_means(const std::vector<double>& x) {
  double sum = 0.0;
  for (double v : x) sum += v;
  std::vector<double> out;
  for (double v : x) out.push_back((sum - v) / static_cast<double>(x.size() - 1));
  return out;
}

double mean_of(const std::vector<double>& x) {
  double s = 0.0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

TEST_CASE("basic interval, acceleration and analytic interval by hand", "[unit]") {
  // R = 5 values at level 0.5: q(0.25) = 2, q(0.75) = 4; basic = [2t - 4, 2t - 2].
  const std::vector<double> five = {5.0, 1.0, 4.0, 2.0, 3.0};
  const Interval b = basic_interval(4.0, five, 0.5);
  CHECK(b.lo == 4.0);
  CHECK(b.hi == 6.0);
  // Jackknife of a mean: T_(i) - mean = (xbar - x_i)/(n - 1), so a = sum d^3 / (6 (sum d^2)^1.5)
  // with d_i = x_i - xbar. x = (1, 1, 1, 0): d = (.25, .25, .25, -.75), sum d^3 = -0.375,
  // sum d^2 = 0.75, a = -0.375 / (6 * 0.75^1.5) = -0.0962250...
  const std::vector<double> x = {1.0, 1.0, 1.0, 0.0};
  CHECK(jackknife_acceleration(jackknife_means(x)) ==
        Approx(-0.375 / (6.0 * std::pow(0.75, 1.5))).epsilon(1e-12));
  // The same from jackknife_values of the accuracy on rows whose outcomes are x (G = n).
  const Sample s = make_sample(2, {0.9, 0.1, 0.8, 0.2, 0.3, 0.7, 0.6, 0.4}, {0, 0, 1, 1});
  const AccuracyEstimator accuracy;
  const std::vector<const Estimator*> estimators = {&accuracy};
  ResampleWorkspace ws;
  const auto jack = jackknife_values(s, estimators, 100, Execution::serial, ws);
  REQUIRE(jack.size() == 4);
  CHECK(jack[3] == 1.0);  // without the wrong row 3
  CHECK(jackknife_acceleration(jack) == Approx(-0.375 / (6.0 * std::pow(0.75, 1.5))));
  // Two interleaved groups: rows {0, 2} and {1, 3} left out: accuracy of {1, 3} = 1/2 and of
  // {0, 2} = 1: equal and opposite deviations, a = 0.
  const auto grouped = jackknife_values(s, estimators, 2, Execution::serial, ws);
  CHECK(grouped == std::vector<double>{0.5, 1.0});
  CHECK(jackknife_acceleration(grouped) == 0.0);
  // Analytic: S = 0.01, V = 1e-4, level 0.9: 0.01 -/+ 1.6448536 * 0.01; root maps it.
  const Interval a = analytic_interval({0.01, 1e-4, false}, 0.9);
  CHECK(a.lo == Approx(0.01 - 0.016448536).epsilon(1e-7));
  CHECK(a.hi == Approx(0.01 + 0.016448536).epsilon(1e-7));
  const Interval r = analytic_interval({0.01, 1e-4, true}, 0.9);
  CHECK(r.lo == 0.0);
  CHECK(r.hi == Approx(std::sqrt(0.026448536)).epsilon(1e-7));
  // Consistency: not rejected (p > 1 - level) takes in 0; rejected keeps the basic interval.
  IntervalInputs in;
  in.estimate = 4.0;
  in.bootstrap = five;
  in.vanishes_when_calibrated = true;
  in.p_calibrated = 0.6;
  CHECK(interval_of(IntervalMethod::consistency, in, 0.5)->lo == 0.0);
  in.p_calibrated = 0.4;
  CHECK(interval_of(IntervalMethod::consistency, in, 0.5)->lo == 4.0);
  in.vanishes_when_calibrated = false;
  CHECK(!interval_of(IntervalMethod::consistency, in, 0.5));
  CHECK(!interval_of(IntervalMethod::analytic, in, 0.5));
}

// Basic bootstrap of a normal mean against the textbook interval xbar -/+ z sigma_hat / sqrt(n)
// with the plug-in sigma_hat (divisor n; the bootstrap distribution of a mean has exactly that
// variance, Efron & Tibshirani 1993 sec. 5.2). The type-7 quantile of R = 20000 means at 0.05
// has standard error sqrt(0.05 * 0.95 / R) / phi(z_0.95) * sd = 0.0150 sd; tolerance 4 SE.
TEST_CASE("basic bootstrap of a normal mean is the textbook interval", "[stat]") {
  Engine engine = make_engine({11, 0, 0, Purpose::sample});
  boost::random::normal_distribution<double> normal(3.0, 2.0);
  std::vector<double> x(100);
  for (auto& v : x) v = normal(engine);
  const double xbar = mean_of(x);
  double ss = 0.0;
  for (double v : x) ss += (v - xbar) * (v - xbar);
  const double sd = std::sqrt(ss / 100.0) / 10.0;
  const double z = boost::math::quantile(boost::math::normal_distribution<double>(), 0.95);
  const auto boot = bootstrap_means(x, 20000, 12);
  const Interval b = basic_interval(xbar, boot, 0.9);
  const double tolerance = 4.0 * 0.0150 * sd;
  CHECK(std::fabs(b.lo - (xbar - z * sd)) < tolerance);
  CHECK(std::fabs(b.hi - (xbar + z * sd)) < tolerance);
}

// BCa for the mean of an exponential sample against the exact interval
// [2 n xbar / chi2_{2n}(0.95), 2 n xbar / chi2_{2n}(0.05)] (2 n xbar / mu ~ chi2_{2n}), the
// example of Efron 1987 (sec. 2) and Efron & Tibshirani 1993 (sec. 14.3, 22.4): with the
// parametric bootstrap (xbar* = mean of n draws from Exp(mean xbar)) and the exact
// acceleration of this family, a = skewness of the score / 6 = 1 / (3 sqrt(n)), BCa reproduces
// the exact interval to O(n^-3/2) while the percentile interval is off by O(n^-1). Everything
// scales with xbar, so xbar = 1. n = 20, R = 40000: a 5 % quantile has Monte Carlo SE
// sqrt(.05 .95 / R) / phi(1.645) sd = 0.0106 sd, sd = 1/sqrt(20); tolerance 4 SE (0.0095).
TEST_CASE("BCa of an exponential mean reproduces the exact interval", "[stat]") {
  const std::size_t n = 20, R = 40000;
  const double nd = static_cast<double>(n);
  const boost::math::chi_squared_distribution<double> chi2(2.0 * nd);
  const double exact_lo = 2.0 * nd / boost::math::quantile(chi2, 0.95);
  const double exact_hi = 2.0 * nd / boost::math::quantile(chi2, 0.05);
  Engine engine = make_engine({21, 0, 0, Purpose::bootstrap});
  boost::random::exponential_distribution<double> exponential(1.0);
  std::vector<double> boot(R);
  for (auto& v : boot) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += exponential(engine);
    v = sum / nd;
  }
  const Interval bca = bca_interval(1.0, boot, 1.0 / (3.0 * std::sqrt(nd)), 0.9);
  IntervalInputs in;
  in.estimate = 1.0;
  in.bootstrap = boot;
  const Interval pct = *interval_of(IntervalMethod::percentile, in, 0.9);
  const double tolerance = 4.0 * 0.0106 / std::sqrt(nd);
  INFO("exact [" << exact_lo << ", " << exact_hi << "], BCa [" << bca.lo << ", " << bca.hi
                 << "], percentile [" << pct.lo << ", " << pct.hi << "]");
  CHECK(std::fabs(bca.lo - exact_lo) < tolerance);
  CHECK(std::fabs(bca.hi - exact_hi) < tolerance);
  // The percentile interval misses by far more: the test can tell the two apart.
  CHECK(std::fabs(pct.hi - exact_hi) > 3.0 * tolerance);
}

OJ debiased_experiment(double temperature) {
  OJ doc = OJ::parse(R"({
    "name": "analytic", "scenario": "estimator_bias", "seed": 5, "replicates": 1,
    "sample_size": 1000,
    "generator": {"family": "dirichlet", "classes": 10, "alpha": 0.5,
                  "miscalibration": {"map": "temperature", "temperature": 1.0}},
    "estimators": [{"name": "ece_debiased", "squared": true}]
  })");
  doc["generator"]["miscalibration"]["temperature"] = temperature;
  return doc;
}

// The delta-method variance of the debiased squared error (binned_ece.hpp) against the
// standard deviation of S over 400 independent samples: sqrt(mean V) within 4 SE of the Monte
// Carlo sd, SE = sd / sqrt(2 (R - 1)) (normal theory) plus the spread of sqrt(mean V) itself.
// Calibrated (only the second-order term) and overconfident (the first-order term dominates).
TEST_CASE("analytic variance of the debiased squared error matches Monte Carlo", "[stat]") {
  for (double temperature : {1.0, 0.6}) {
    const auto config =
        parse_experiment_as<EstimatorBiasConfig>(debiased_experiment(temperature), "analytic.json");
    const auto& cell = config.cells.front();
    const Generator generator(cell.generator);
    const Estimator& estimator = *cell.estimators.front().estimator;
    Sample sample;
    GeneratorScratch scratch;
    EstimatorWorkspace ws;
    RunningStats values, variances;
    const std::size_t R = 400;
    for (std::size_t r = 0; r < R; ++r) {
      Engine engine = make_engine({config.seed, 0, r, Purpose::sample});
      generator.sample(engine, cell.sample_size, sample, scratch);
      const auto* variance = estimator.capabilities().squared_error;
      REQUIRE(variance);
      const auto s = variance->squared_error(sample, ws);
      CHECK(s.square == Approx(estimator.estimate(sample, ws)).epsilon(1e-12));
      values.add(s.square);
      variances.add(s.variance);
    }
    const double mc_sd = values.sd();
    const double analytic_sd = std::sqrt(variances.mean());
    const double se = mc_sd / std::sqrt(2.0 * static_cast<double>(R - 1)) +
                      variances.standard_error() / (2.0 * analytic_sd);
    INFO("temperature " << temperature << ": MC sd " << mc_sd << ", analytic " << analytic_sd
                        << ", SE " << se);
    CHECK(std::fabs(analytic_sd - mc_sd) < 4.0 * se);
  }
}

// Every method on a cheap setting (K = 3, n = 200, 400 replicates of 200 resamples):
// coverage within 3 binomial SE (0.045) of 0.90 where theory promises it: the three bootstrap
// intervals for the accuracy (a mean); consistency for the ECE and the debiased squared error
// of a calibrated model (at least 0.90 by construction); analytic for the debiased squared
// error of a miscalibrated model (T = 0.5), where S is asymptotically normal. For a calibrated
// model the analytic interval undercovers (S's estimated variance falls with S itself;
// docs/intervals.md), which the last check records so that a change shows.
TEST_CASE("coverage of each method on a cheap setting", "[stat]") {
  const OJ doc = OJ::parse(R"({
    "name": "methods", "scenario": "estimator_bias", "seed": 77, "replicates": 400,
    "sample_size": 200,
    "generator": {"family": "dirichlet", "classes": 3, "alpha": 1.0,
                  "miscalibration": {"map": "temperature", "temperature": 1.0}},
    "estimators": [{"name": "accuracy"}, {"name": "ece", "bins": 10},
                   {"name": "ece_debiased", "bins": 5, "squared": true}],
    "truth": {"samples": 20000, "population_samples": 200000},
    "intervals": {"resamples": 200, "level": 0.9, "jackknife_groups": 20,
                  "methods": ["percentile", "basic", "bca", "consistency", "analytic",
                              "bias_corrected"]},
    "sweep": {"generator.miscalibration.temperature": [1.0, 0.5]}
  })");
  const auto config = parse_experiment_as<EstimatorBiasConfig>(doc, "methods.json");
  const EstimatorBiasResults r = run_estimator_bias(config, {});
  const double tolerance = 3.0 * std::sqrt(0.9 * 0.1 / 400.0);
  const auto coverage = [&](std::size_t cell, std::size_t e, IntervalMethod m) {
    for (const auto& ir : r.records[cell].estimators[e].intervals)
      if (ir.method == m) {
        REQUIRE(ir.coverage);
        return *ir.coverage;
      }
    FAIL("no record");
    return 0.0;
  };
  for (std::size_t cell : {0, 1})
    for (auto m : {IntervalMethod::percentile, IntervalMethod::basic, IntervalMethod::bca}) {
      INFO("cell " << cell << " accuracy " << to_string(m));
      CHECK(std::fabs(coverage(cell, 0, m) - 0.9) < tolerance);
    }
  CHECK(coverage(0, 1, IntervalMethod::consistency) > 0.9 - tolerance);
  CHECK(coverage(0, 2, IntervalMethod::consistency) > 0.9 - tolerance);
  CHECK(coverage(0, 1, IntervalMethod::percentile) == 0.0);  // the failure it repairs
  CHECK(std::fabs(coverage(1, 2, IntervalMethod::analytic) - 0.9) < tolerance);
  CHECK(coverage(0, 2, IntervalMethod::analytic) < 0.9 - tolerance);
  // bias_corrected: at least `level` for a calibrated model (its join with 0), and for the
  // miscalibrated one the issue's bar, 0.05 from nominal, which basic misses here (0.82 over
  // these seeds: the bias of the 10-bin ece is of the order of its sd at n = 200).
  CHECK(coverage(0, 1, IntervalMethod::bias_corrected) > 0.9 - tolerance);
  CHECK(std::fabs(coverage(1, 1, IntervalMethod::bias_corrected) - 0.9) <= 0.05);
  CHECK(std::fabs(coverage(1, 1, IntervalMethod::basic) - 0.9) > 0.05);
  // Methods that do not apply give no interval.
  for (const auto& ir : r.records[0].estimators[0].intervals)
    if (ir.method == IntervalMethod::consistency || ir.method == IntervalMethod::analytic ||
        ir.method == IntervalMethod::bias_corrected)
      CHECK(!ir.applies);
}

// bin_gap_bias.hpp by hand. E|s - K/m|, K ~ Binomial(m, a):
//   m = 2, a = 0.5, s = 0.5: 0.25 * 0.5 + 0.5 * 0 + 0.25 * 0.5 = 0.25;
//   m = 3, a = 0.2, s = 0.3: P(K = 0..3) = 0.512, 0.384, 0.096, 0.008 against |0.3 - k/3| =
//   0.3, 1/30, 11/30, 0.7: 0.1536 + 0.0128 + 0.0352 + 0.0056 = 0.2072.
// abs_gap_bias(2, 1, 1): s = 0.5, abar = 0.5, d = 0, d^2 - abar (1 - abar)/(m - 1) = -0.25 < 0,
// so a~ = s = 0.5 and beta = 0.25 - 0. A bin far from calibration (m = 400, s = 0.9, 200 hits:
// d = 0.4, about 16 sd of abar) has beta ~ 0; a singleton bin has none.
TEST_CASE("bin gap bias by hand and against the binomial distribution", "[unit]") {
  CHECK(expected_abs_gap(2, 0.5, 0.5) == Approx(0.25).epsilon(1e-14));
  CHECK(expected_abs_gap(3, 0.2, 0.3) == Approx(0.2072).epsilon(1e-13));
  CHECK(expected_abs_gap(5, 0.0, 0.3) == Approx(0.3));
  CHECK(expected_abs_gap(5, 1.0, 0.3) == Approx(0.7));
  CHECK(abs_gap_bias(2.0, 1.0, 1.0) == Approx(0.25).epsilon(1e-14));
  CHECK(std::fabs(abs_gap_bias(400.0, 360.0, 200.0)) < 1e-12);
  CHECK(abs_gap_bias(1.0, 0.7, 0.0) == 0.0);
  // Against Boost's binomial mass, summed over every k, at sizes where the mode-outward
  // recursion runs far in both directions.
  for (const auto& [m, a, s] : std::vector<std::tuple<std::size_t, double, double>>{
           {50, 0.3, 0.35}, {1000, 0.01, 0.02}, {5000, 0.7, 0.69}, {7, 0.95, 0.9}}) {
    boost::math::binomial_distribution<double> d(static_cast<double>(m), a);
    double expected = 0.0;
    for (std::size_t k = 0; k <= m; ++k)
      expected += boost::math::pdf(d, static_cast<double>(k)) *
                  std::fabs(s - static_cast<double>(k) / static_cast<double>(m));
    INFO("m " << m << " a " << a);
    CHECK(expected_abs_gap(m, a, s) == Approx(expected).epsilon(1e-12));
  }
}

// The normal interval of bias_corrected by hand: bootstrap values {0.1, 0.3, 0.2} have sd 0.1
// (divisor R - 1), so at level 0.9 the interval is 0.25 -/+ 1.6448536 * 0.1.
TEST_CASE("normal interval of bias_corrected by hand", "[unit]") {
  const std::vector<double> boot = {0.1, 0.3, 0.2};
  const Interval ci = normal_interval(0.25, boot, 0.9);
  CHECK(ci.lo == Approx(0.25 - 0.16448536269514722).epsilon(1e-12));
  CHECK(ci.hi == Approx(0.25 + 0.16448536269514722).epsilon(1e-12));
  const std::vector<double> one = {0.1};
  CHECK_THROWS_AS(normal_interval(0.25, one, 0.9), DomainError);
}

// BinnedEce::finite_sample_bias is the bin sum of abs_gap_bias with the estimate's weights: on a
// hand-made top-label sample, and no bias model where it does not apply.
TEST_CASE("finite_sample_bias of the binned L1 errors", "[unit]") {
  // K = 2, four rows; top label: confidences 0.6, 0.6, 0.9, 0.9, correct 1, 1, 0, 1. With 2
  // equal-width bins all four are in [0.5, 1]: m = 4, score sum 3.0, 3 hits.
  const Sample s = make_sample(2, {0.6, 0.4, 0.4, 0.6, 0.9, 0.1, 0.1, 0.9}, {0, 1, 1, 1});
  EstimatorWorkspace ws;
  BinnedEceSpec spec;
  spec.bins = 2;
  const BinnedEce ece(spec);
  REQUIRE(ece.capabilities().bias_model == &ece);
  CHECK(ece.finite_sample_bias(s, ws) == Approx(abs_gap_bias(4.0, 3.0, 3.0)).epsilon(1e-14));
  CHECK(abs_gap_bias(4.0, 3.0, 3.0) > 0.0);
  spec.norm = Norm::l2;
  CHECK(!BinnedEce(spec).capabilities().bias_model);
  spec.norm = Norm::l1;
  spec.debiased = true;
  CHECK(!BinnedEce(spec).capabilities().bias_model);
}

TEST_CASE("intervals.methods: bad names and repeats are config errors at their pointer", "[unit]") {
  OJ doc = debiased_experiment(1.0);
  doc["intervals"] =
      OJ::parse(R"({"methods": ["bca", "nope", "bca", "fake"], "jackknife_groups": 1})");
  try {
    (void)parse_experiment(doc, "bad.json");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& error) {
    std::string all;
    for (const auto& line : error.problems()) all += line + "\n";
    INFO(all);
    CHECK(all.find("/intervals/methods/1: unknown interval method \"nope\"") != std::string::npos);
    CHECK(all.find("/intervals/methods/2: method listed twice") != std::string::npos);
    CHECK(all.find("/intervals/methods/3: fake is calbench eval's interval") != std::string::npos);
    CHECK(all.find("/intervals/jackknife_groups") != std::string::npos);
  }
}

// The interval method a config entry resolves to (its registry default when it names none).
IntervalMethod default_interval(const char* entry) {
  Problems problems;
  Json resolved;
  const auto config = parse_estimator(Json::parse(entry), "/estimator", problems, resolved);
  REQUIRE(config);
  return config->interval;
}

}  // namespace

// Each estimator's default method (docs/intervals.md, "Defaults"), and the fallbacks where the
// row's default does not apply to the configuration.
TEST_CASE("default interval methods and their fallbacks", "[unit]") {
  const auto method = default_interval;
  CHECK(method(R"({"name": "ece"})") == IntervalMethod::bias_corrected);
  CHECK(method(R"({"name": "ece", "norm": "l2"})") == IntervalMethod::consistency);
  CHECK(method(R"({"name": "ece_debiased"})") == IntervalMethod::analytic);
  CHECK(method(R"({"name": "ece_debiased", "scope": "classwise"})") == IntervalMethod::consistency);
  CHECK(method(R"({"name": "corp"})") == IntervalMethod::consistency);
  CHECK(method(R"({"name": "corp", "component": "dsc"})") == IntervalMethod::bca);
  CHECK(method(R"({"name": "skce"})") == IntervalMethod::percentile);
  CHECK(method(R"({"name": "calib_err"})") == IntervalMethod::basic);
  CHECK(method(R"({"name": "classwise_ece"})") == IntervalMethod::consistency);
  CHECK(method(R"({"name": "accuracy"})") == IntervalMethod::bca);
}

TEST_CASE("corp mcb at n = 10,000: its default interval is consistency, not a degenerate BCa",
          "[unit]") {
  // Issue #25: eval's default interval of corp_mcb_brier (then BCa) on 10,000 rows was
  // [0.001322, 0.001322]. Every bootstrap value of the isotonic fit's miscalibration lies above
  // the estimate there (its upward bias exceeds its spread), so BCa's z0 sits at its clamp and
  // both ends fall on the smallest bootstrap value. Its default is now consistency, as for
  // ece_sweep.
  Sample all = testing::load_reference_dataset("dir_k10_n20000");
  const std::size_t n = 10000, K = all.classes;
  Sample sample = make_sample(
      K, std::vector<double>(all.p.begin(), all.p.begin() + static_cast<long>(n * K)),
      std::vector<std::uint32_t>(all.label.begin(), all.label.begin() + static_cast<long>(n)));
  const Corp corp({.score = CorpScore::brier, .component = CorpComponent::mcb});
  EstimatorWorkspace workspace;
  ResampleWorkspace resample;
  const double observed[] = {corp.estimate(sample, workspace)};
  const Estimator* const one[] = {&corp};
  const auto computed = sample_intervals(
      sample, one, observed,
      {{IntervalMethod::bca}, {IntervalMethod::percentile}, {IntervalMethod::consistency}},
      {eval_default_resamples, 0.95, 100}, {0, 0, 0}, Execution::parallel, resample, workspace);
  REQUIRE(computed.intervals.size() == 3);
  REQUIRE(computed.intervals[1]);
  INFO("estimate " << observed[0] << ", percentile [" << computed.intervals[1]->lo << ", "
                   << computed.intervals[1]->hi << "]");
  CHECK(computed.intervals[1]->lo > observed[0]);  // the cause: all of it above the estimate
  const double spread = computed.intervals[1]->hi - computed.intervals[1]->lo;
  REQUIRE(computed.intervals[0]);  // BCa collapses to a point: under 1 % of the spread
  CHECK(computed.intervals[0]->hi - computed.intervals[0]->lo < 0.01 * spread);
  REQUIRE(computed.intervals[2]);  // consistency: the basic interval joined with 0
  CHECK(computed.intervals[2]->hi - computed.intervals[2]->lo > 0.5 * spread);
  CHECK(computed.intervals[2]->lo == 0.0);
  // With eval's defaults (1000 resamples, seed 0) these are `calbench eval`'s values, quoted in
  // docs/estimators/corp.md.
  CHECK(observed[0] == Approx(0.001225).margin(5e-7));
  CHECK(computed.intervals[1]->lo == Approx(0.001519).margin(5e-7));
  CHECK(computed.intervals[1]->hi == Approx(0.002291).margin(5e-7));
  CHECK(computed.intervals[0]->lo == Approx(0.001322).margin(5e-7));
  CHECK(computed.intervals[0]->hi == Approx(0.001322).margin(5e-7));
  CHECK(computed.intervals[2]->hi == Approx(0.000931).margin(5e-7));
  CHECK(computed.p_values[0] == Approx(0.2408).margin(5e-5));

  // The registry's default for corp: consistency for mcb, bca for the score.
  const auto default_of = default_interval;
  CHECK(default_of(R"({"name": "corp"})") == IntervalMethod::consistency);
  CHECK(default_of(R"({"name": "corp", "component": "dsc"})") == IntervalMethod::bca);
  CHECK(default_of(R"({"name": "corp", "component": "score"})") == IntervalMethod::bca);
}

namespace {

// An estimator that counts its evaluations (the Brier score's value): which estimators the
// bootstrap evaluates.
class CountedBrier final : public Estimator {
 public:
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override {
    ++calls;
    return brier_.estimate(sample, workspace);
  }
  std::optional<Quantity> target() const override { return brier_.target(); }
  mutable std::atomic<std::size_t> calls = 0;

 private:
  BrierEstimator brier_;
};

}  // namespace

TEST_CASE("the bootstrap evaluates only the estimators whose interval reads it", "[unit]") {
  // analytic and fake intervals resample nothing: an estimator with only those is left out of
  // the bootstrap (eval with the fake intervals), and the others' intervals are the same bits
  // as without it (resample b's rows come from its own stream, whoever shares it).
  Sample all = testing::load_reference_dataset("dir_k10_n20000");
  const std::size_t n = 2000, K = all.classes;
  const Sample sample = make_sample(
      K, std::vector<double>(all.p.begin(), all.p.begin() + static_cast<long>(n * K)),
      std::vector<std::uint32_t>(all.label.begin(), all.label.begin() + static_cast<long>(n)));
  const BinnedEce ece({.bins = 15});
  const CountedBrier counted;
  EstimatorWorkspace workspace;
  ResampleWorkspace resample;
  const double observed[] = {ece.estimate(sample, workspace), counted.estimate(sample, workspace)};
  const Estimator* const both[] = {&ece, &counted};
  const std::vector<double> deviations = {-0.01, 0.0, 0.01};
  const std::vector<std::vector<double>> fake = {{}, deviations};
  IntervalRequest request{200, 0.9, 20};
  request.p_values = false;
  request.fake_deviations = fake;
  counted.calls = 0;
  const auto joint =
      sample_intervals(sample, both, observed, {{IntervalMethod::basic, IntervalMethod::fake}},
                       request, {3, 0, 0}, Execution::parallel, resample, workspace);
  CHECK(counted.calls == 0);  // not bootstrapped: its fake interval reads no resample
  const Estimator* const alone[] = {&ece};
  const auto single =
      sample_intervals(sample, alone, std::span(observed, 1), {{IntervalMethod::basic}}, request,
                       {3, 0, 0}, Execution::parallel, resample, workspace);
  REQUIRE(joint.intervals[0]);
  REQUIRE(single.intervals[0]);
  CHECK(joint.intervals[0]->lo == single.intervals[0]->lo);
  CHECK(joint.intervals[0]->hi == single.intervals[0]->hi);
  REQUIRE(joint.intervals[1]);
  const Interval expected = fake_interval(observed[1], deviations, 0.9);
  CHECK(joint.intervals[1]->lo == expected.lo);
  CHECK(joint.intervals[1]->hi == expected.hi);
  // Asked for a bootstrap method too, it is evaluated on every resample.
  sample_intervals(sample, both, observed,
                   {{IntervalMethod::basic, IntervalMethod::fake},
                    {IntervalMethod::basic, IntervalMethod::percentile}},
                   request, {3, 0, 0}, Execution::parallel, resample, workspace);
  CHECK(counted.calls == 200);
}
