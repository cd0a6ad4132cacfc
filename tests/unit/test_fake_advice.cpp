// The fake-calibrated interval and eval's advice (lib/fit/fake_advice.hpp,
// estimators/interval_methods.hpp's `fake`; docs/intervals.md, "Fake-calibrated intervals"):
// the interval's formula by hand, its coverage over seeds when the fake is the model's own
// generator (known truth), the advice's bias and sd against a direct simulation from the same
// fake, the recommendation as the argmin, and the same bits on 1 and 2 threads.
#include <tbb/global_control.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/interval_methods.hpp"
#include "estimators/proper_scores.hpp"
#include "fit/fake_advice.hpp"
#include "fit/fake_classifier_fit.hpp"
#include "generator_draws.hpp"
#include "generators/generator.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

// K = 3, overconfident by a temperature: ece_top_l1 is exact (sign-constant gap).
const GeneratorSpec overconfident = DirichletSpec{3, {0.6, 0.6, 0.6}, TemperatureMap{0.5}};

BinnedEceSpec equal_mass_15() {
  BinnedEceSpec spec{15};
  spec.binning = Binning::equal_mass;
  return spec;
}

}  // namespace

TEST_CASE("fake interval: t - q(1 - alpha) to t - q(alpha) of the deviations", "[unit][fit]") {
  // Deviations 0..10 (type-7 quantiles): level 0.8 takes q(0.1) = 1 and q(0.9) = 9.
  std::vector<double> d;
  for (int i = 10; i >= 0; --i) d.push_back(i);  // unsorted on purpose
  const Interval i = fake_interval(0.5, d, 0.8);
  CHECK(i.lo == Approx(0.5 - 9.0));
  CHECK(i.hi == Approx(0.5 - 1.0));
  IntervalInputs in;
  in.estimate = 0.5;
  CHECK_FALSE(interval_of(IntervalMethod::fake, in, 0.8));  // no deviations: does not apply
  in.fake_deviations = d;
  REQUIRE(interval_of(IntervalMethod::fake, in, 0.8));
  CHECK(interval_of(IntervalMethod::fake, in, 0.8)->lo == i.lo);
  CHECK_THROWS_AS(fake_interval(0.5, d, 1.0), DomainError);
  // A calibration error is joined with 0 when the calibration test does not reject at size
  // 1 - level (p > 0.2 here), as `consistency` is; kept as it is when it rejects.
  std::vector<double> small;
  for (int j = 0; j <= 10; ++j) small.push_back(0.01 * j);
  in.fake_deviations = small;  // the interval [0.5 - 0.09, 0.5 - 0.01]
  in.vanishes_when_calibrated = true;
  in.p_calibrated = 0.5;
  CHECK(interval_of(IntervalMethod::fake, in, 0.8)->lo == 0.0);
  CHECK(interval_of(IntervalMethod::fake, in, 0.8)->hi == Approx(0.49));
  in.p_calibrated = 0.01;
  CHECK(interval_of(IntervalMethod::fake, in, 0.8)->lo == Approx(0.41));
}

TEST_CASE("recommend: the least rmse among the estimators of each shared target", "[unit][fit]") {
  const std::vector<std::optional<Quantity>> targets = {Quantity::ece_top_l1, std::nullopt,
                                                        Quantity::ece_top_l1, Quantity::brier,
                                                        Quantity::ece_top_l1, std::nullopt};
  const std::vector<double> rmse = {0.03, 0.001, 0.02, 0.01, 0.02, 0.0005};
  const auto r = recommend(targets, rmse);
  REQUIRE(r.size() == 1);  // brier alone and the targetless ones are compared with none
  CHECK(r[0].target == Quantity::ece_top_l1);
  CHECK(r[0].estimator == 2);  // the first of the equal least ones
  CHECK(r[0].compared == 3);
}

TEST_CASE("fake interval: coverage near nominal when the fake is the model's generator",
          "[stat][fit]") {
  // With the model's own generator as the fake, theta_F is the model's truth and the law of the
  // deviations is that of T - theta: the interval covers with probability `level` up to the
  // Monte Carlo error of its R = 400 quantiles. S = 300 samples of n = 400 rows: binomial SE
  // sqrt(0.9 0.1 / 300) = 0.017; the quantiles' own error adds about as much again (the
  // coverage of an end at an estimated quantile of R values has sd sqrt(a (1 - a) / R) = 0.011
  // per end), so the tolerance is 3 sqrt(0.017^2 + 2 0.011^2) = 0.073.
  const Generator model(overconfident);
  const GroundTruth truth = compute_truth(model, TruthSettings{});
  const BinnedEce ece(BinnedEceSpec{15});
  const BinnedEce ece_em(equal_mass_15());
  const std::vector<LabelledEstimator> estimators = {{"ece", &ece}, {"ece_em", &ece_em}};
  const std::size_t n = 400, S = 300;
  const double level = 0.9;
  const Sample shape = testing::draw(overconfident, n, 99);
  const FakeAdvice advice =
      advise_on_fake(model, truth, shape, estimators, {.replicates = 400, .seed = 5});
  const double theta = truth[Quantity::ece_top_l1].value;
  EstimatorWorkspace workspace;
  for (std::size_t e = 0; e < estimators.size(); ++e) {
    std::size_t covered = 0;
    for (std::size_t s = 0; s < S; ++s) {
      const Sample sample = testing::draw(overconfident, n, 1000 + s);
      const Interval i = fake_interval(estimators[e].estimator->estimate(sample, workspace),
                                       advice.estimators[e].deviations, level);
      covered += i.lo <= theta && theta <= i.hi;
    }
    const double coverage = static_cast<double>(covered) / static_cast<double>(S);
    INFO(estimators[e].label << ": coverage " << coverage);
    CHECK(std::abs(coverage - level) < 0.073);
  }
}

TEST_CASE("advice: bias and sd as a direct simulation from the same fake, rmse, argmin",
          "[stat][fit]") {
  // A direct simulation of R2 = 400 samples on other streams: the advice's bias (R = 200) and
  // the direct one differ by Monte Carlo error, SE sqrt(sd^2 / R + sd^2 / R2) (plus the truth's
  // own error); the sds' log ratio has SE sqrt(1 / (2 (R - 1)) + 1 / (2 (R2 - 1))). Checked
  // within 4 SE each.
  const Generator fake(overconfident);
  const GroundTruth truth = compute_truth(fake, TruthSettings{});
  const BinnedEce ece(BinnedEceSpec{15});
  const BinnedEce ece_em(equal_mass_15());
  const BinnedEce ece_5(BinnedEceSpec{5});
  const AccuracyEstimator accuracy;
  const std::vector<LabelledEstimator> estimators = {
      {"ece", &ece}, {"ece_em", &ece_em}, {"ece_5", &ece_5}, {"accuracy", &accuracy}};
  const std::size_t n = 300, R = 200, R2 = 400;
  const Sample data = testing::draw(overconfident, n, 3);
  const FakeAdvice advice =
      advise_on_fake(fake, truth, data, estimators, {.replicates = R, .seed = 11});
  REQUIRE(advice.estimators.size() == estimators.size());
  CHECK(advice.n == n);
  EstimatorWorkspace workspace;
  GeneratorScratch scratch;
  Sample sample;
  for (std::size_t e = 0; e < estimators.size(); ++e) {
    const EstimatorAdvice& a = advice.estimators[e];
    const auto target = estimators[e].estimator->target();
    REQUIRE(target);
    CHECK(a.reference.value == truth[*target].value);
    CHECK(a.deviations.size() == R);
    CHECK(std::is_sorted(a.deviations.begin(), a.deviations.end()));
    double sum = 0.0, ss = 0.0;
    for (double d : a.deviations) sum += d;
    CHECK(sum / static_cast<double>(R) == Approx(a.bias).margin(1e-12));
    CHECK(a.rmse == Approx(std::hypot(a.bias, a.sd)));
    std::vector<double> direct;
    for (std::size_t r = 0; r < R2; ++r) {
      Engine engine = make_engine({77, 0, r, Purpose::sample});
      fake.sample(engine, n, sample, scratch);
      direct.push_back(estimators[e].estimator->estimate(sample, workspace));
    }
    double mean = 0.0;
    for (double v : direct) mean += v;
    mean /= static_cast<double>(R2);
    for (double v : direct) ss += (v - mean) * (v - mean);
    const double sd = std::sqrt(ss / static_cast<double>(R2 - 1));
    const double bias = mean - a.reference.value;
    const double bias_se =
        std::sqrt(sd * sd / R + sd * sd / R2 + 2.0 * a.reference.error * a.reference.error);
    const double log_sd_se = std::sqrt(1.0 / (2.0 * (R - 1.0)) + 1.0 / (2.0 * (R2 - 1.0)));
    INFO(estimators[e].label << ": bias " << a.bias << " against " << bias << ", sd " << a.sd
                             << " against " << sd);
    CHECK(std::abs(a.bias - bias) < 4.0 * bias_se);
    CHECK(std::abs(std::log(a.sd / sd)) < 4.0 * log_sd_se);
  }
  // The three ECEs share ece_top_l1; accuracy is alone in its target.
  REQUIRE(advice.recommendations.size() == 1);
  const Recommendation& r = advice.recommendations[0];
  CHECK(r.target == Quantity::ece_top_l1);
  CHECK(r.compared == 3);
  for (std::size_t e = 0; e < 3; ++e)
    CHECK(advice.estimators[r.estimator].rmse <= advice.estimators[e].rmse);
}

TEST_CASE("advice: the same bits on 1 and 2 threads", "[unit][fit]") {
  const Generator fake(overconfident);
  const GroundTruth truth = compute_truth(fake, TruthSettings{});
  const Sample data = testing::draw(overconfident, 300, 8);
  const BinnedEce ece(BinnedEceSpec{15});
  const std::vector<LabelledEstimator> estimators = {{"ece", &ece}};
  const auto run = [&](std::size_t threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const FakeAdvice a = advise_on_fake(fake, truth, data, estimators, {.replicates = 50});
    std::vector<double> out = a.estimators[0].deviations;
    out.insert(out.end(), {a.estimators[0].bias, a.estimators[0].sd});
    return out;
  };
  CHECK(run(1) == run(2));
}

TEST_CASE("fake interval: coverage over seeds with the fake fitted to each sample", "[slow][fit]") {
  // The whole method on a model whose truth is known: each of S = 100 samples of n = 500 rows
  // (K = 3 Dirichlet, temperature 0.5) gets the fake calbench fit fits to it (default options:
  // the empirical family) and R = 200 of that fake's samples; coverage of ece_top_l1 by the
  // 15-bin ECE's fake interval at 0.90. Binomial SE sqrt(0.9 0.1 / 100) = 0.03; the fake's
  // fitting noise, which the interval does not add, would show as coverage below it.
  // Tolerance 3 SE plus the quantiles' error as above: 0.10.
  const Generator model(overconfident);
  const GroundTruth truth = compute_truth(model, TruthSettings{});
  const double theta = truth[Quantity::ece_top_l1].value;
  const BinnedEce ece(BinnedEceSpec{15});
  const std::vector<LabelledEstimator> estimators = {{"ece", &ece}};
  const std::size_t n = 500, S = 100;
  EstimatorWorkspace workspace;
  std::size_t covered = 0;
  for (std::size_t s = 0; s < S; ++s) {
    const Sample sample = testing::draw(overconfident, n, 5000 + s);
    FakeFitOptions options;
    options.seed = s;
    const FakeClassifierFit fit = fit_fake_classifier(sample, options);
    const FakeAdvice advice = advise_on_fake(Generator(fit.generator), fit.truth, sample,
                                             estimators, {.replicates = 200, .seed = s});
    const Interval i =
        fake_interval(ece.estimate(sample, workspace), advice.estimators[0].deviations, 0.9);
    covered += i.lo <= theta && theta <= i.hi;
  }
  const double coverage = static_cast<double>(covered) / static_cast<double>(S);
  INFO("coverage " << coverage);
  CHECK(std::abs(coverage - 0.9) < 0.10);
}
