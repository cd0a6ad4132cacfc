// calbench fit's verdict and predictions (lib/fit/fit_verdict.hpp, fit_predictions.hpp,
// held_out_split.hpp; docs/fit.md).
#include <tbb/global_control.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/proper_scores.hpp"
#include "fit/fit_predictions.hpp"
#include "fit/fit_verdict.hpp"
#include "fit/held_out_split.hpp"
#include "generator_draws.hpp"
#include "generators/generator.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

// The verdict's tests draw on cell 7 of each seed.
Sample draw(const GeneratorSpec& spec, std::size_t n, std::uint64_t seed) {
  return testing::draw(spec, n, seed, false, 7);
}

const GeneratorSpec calibrated = DirichletSpec{3, {0.6, 0.6, 0.6}, IdentityMap{}};
const GeneratorSpec overconfident = DirichletSpec{3, {0.6, 0.6, 0.6}, TemperatureMap{0.5}};

const VerdictCheck& check_named(const FitVerdict& v, const std::string& name) {
  for (const auto& c : v.checks)
    if (c.name == name) return c;
  FAIL("no check " << name);
  return v.checks.front();
}

}  // namespace

TEST_CASE("split_rows: a seeded partition of the rows", "[unit][fit]") {
  Sample data = draw(calibrated, 101, 1);
  // Tag each row by its label-independent identity: p itself (continuous, so distinct).
  const HeldOutSplit a = split_rows(data, 0.2, 5);
  CHECK(a.held_out.size == 21);  // ceil(0.2 * 101)
  CHECK(a.fit.size == 80);
  std::set<double> seen;
  for (const Sample* s : {&a.fit, &a.held_out})
    for (std::size_t i = 0; i < s->size; ++i) seen.insert(s->p[i * 3]);
  std::set<double> all;
  for (std::size_t i = 0; i < data.size; ++i) all.insert(data.p[i * 3]);
  CHECK(seen == all);  // every row once: disjoint and complete
  const HeldOutSplit again = split_rows(data, 0.2, 5);
  CHECK(again.held_out.p == a.held_out.p);
  CHECK(again.held_out.label == a.held_out.label);
  CHECK(split_rows(data, 0.2, 6).held_out.p != a.held_out.p);
  CHECK_THROWS_AS(split_rows(data, 0.0, 5), DomainError);
  CHECK_THROWS_AS(split_rows(data, 1.0, 5), DomainError);
  CHECK_THROWS_AS(split_rows(draw(calibrated, 3, 1), 0.2, 5), DomainError);
}

TEST_CASE("fold_rows: k folds hold out every row exactly once", "[unit][fit]") {
  const Sample data = draw(calibrated, 103, 1);
  const std::vector<HeldOutSplit> folds = fold_rows(data, 5, 5);
  REQUIRE(folds.size() == 5);
  std::multiset<double> held;
  std::set<double> all;
  for (std::size_t i = 0; i < data.size; ++i) all.insert(data.p[i * 3]);
  for (const HeldOutSplit& f : folds) {
    CHECK(f.held_out.size + f.fit.size == data.size);
    CHECK(
        (f.held_out.size == 20 || f.held_out.size == 21));  // floor((f + 1) n / k) - floor(f n / k)
    std::set<double> parts;
    for (const Sample* s : {&f.fit, &f.held_out})
      for (std::size_t i = 0; i < s->size; ++i) parts.insert(s->p[i * 3]);
    CHECK(parts == all);  // each fold: a partition of the rows
    for (std::size_t i = 0; i < f.held_out.size; ++i) held.insert(f.held_out.p[i * 3]);
  }
  CHECK(std::set<double>(held.begin(), held.end()) == all);
  CHECK(held.size() == data.size);  // held out once each
  // The same seed gives the same folds, another seed others.
  CHECK(fold_rows(data, 5, 5).front().held_out.p == folds.front().held_out.p);
  CHECK(fold_rows(data, 5, 6).front().held_out.p != folds.front().held_out.p);
  CHECK_THROWS_AS(fold_rows(data, 1, 5), DomainError);
  CHECK_THROWS_AS(fold_rows(draw(calibrated, 9, 1), 5, 5), DomainError);  // 9 < 2 x 5
}

TEST_CASE("judge_fit: GOOD for held-out rows of the fake itself, POOR for another model",
          "[stat][fit]") {
  // Held-out rows drawn from the fake itself: every check's z is N(0, <= 1) (the SE counts a
  // fit error that is absent here), so a POOR verdict would be a family-wise false alarm of
  // probability <= 0.0027 at this fixed seed.
  const Generator fake(calibrated);
  const BinnedEce ece(BinnedEceSpec{15});
  const std::vector<LabelledEstimator> estimators = {{"ece_15", &ece}};
  VerdictSettings settings;
  settings.replicates = 200;
  settings.seed = 3;
  const FitVerdict same = judge_fit(fake, draw(calibrated, 1000, 11), 4000, estimators, settings);
  CHECK(same.good);
  CHECK(same.reasons.empty());
  CHECK(same.checks.size() == 5);  // accuracy, mean confidence, ece_15, two distances
  for (const auto& c : same.checks) {
    INFO(c.name << ": z = " << c.z);
    CHECK(std::abs(c.z) < 4.0);
  }

  // An overconfident model (T = 0.5) against the calibrated fake: same accuracy (the argmax is
  // kept), higher confidence, larger ECE and a reliability curve below the fake's.
  const FitVerdict other =
      judge_fit(fake, draw(overconfident, 1000, 11), 4000, estimators, settings);
  CHECK_FALSE(other.good);
  CHECK_FALSE(check_named(other, "accuracy").fails);
  CHECK(check_named(other, "mean confidence").fails);
  CHECK(check_named(other, "ece_15").fails);
  CHECK(check_named(other, "reliability curve").fails);
  CHECK(!other.reasons.empty());
}

TEST_CASE("judge_fit cross-fitted: GOOD for the model itself, and more power than one split",
          "[stat][fit]") {
  // The model: a Dirichlet K = 3 at temperature 0.8 (overconfident), 5,000 rows in 5 folds. A
  // fake that is the model itself in every fold: every check's z is N(0, <= 1) (the fakes are
  // not fitted, so SE^2 = (1 + 1/R) sum w^2 s^2 is exact), GOOD unless a family-wise false
  // alarm of probability <= 0.0027 happened at this fixed seed. A fake at temperature 0.9 misses
  // the model's top-label ECE by about 0.03 (truths below): the cross-fitted verdict, using
  // every row, fails the ECE check; one split holding out 20 % has sqrt(5 x 1.25) = 2.5 times
  // its standard error and does not (both measured at this seed, z printed on failure).
  const GeneratorSpec model = DirichletSpec{3, {0.6, 0.6, 0.6}, TemperatureMap{0.8}};
  const GeneratorSpec near = DirichletSpec{3, {0.6, 0.6, 0.6}, TemperatureMap{0.9}};
  const double ece_model =
      compute_truth(Generator(model), TruthSettings{})[Quantity::ece_top_l1].value;
  const double ece_near =
      compute_truth(Generator(near), TruthSettings{})[Quantity::ece_top_l1].value;
  INFO("true top-label ECE: model " << ece_model << ", fake " << ece_near);
  CHECK(std::abs(ece_model - ece_near) > 0.02);
  const Sample data = draw(model, 5000, 31);
  const std::vector<HeldOutSplit> splits = fold_rows(data, 5, 8);
  const BinnedEce ece(BinnedEceSpec{15});
  const std::vector<LabelledEstimator> estimators = {{"ece_15", &ece}};
  VerdictSettings settings;
  settings.replicates = 100;
  settings.seed = 5;
  const auto cross_fitted = [&](const Generator& fake) {
    std::vector<VerdictFold> folds;
    for (const HeldOutSplit& s : splits)
      folds.push_back({.fake = &fake, .held_out = &s.held_out, .fit_rows = s.fit.size});
    return judge_fit(folds, estimators, settings);
  };
  const Generator itself(model), other(near);
  const FitVerdict same = cross_fitted(itself);
  CHECK(same.folds == 5);
  CHECK(same.held_out_rows == 5000);
  CHECK(same.fit_rows == 4000);
  CHECK(same.good);
  for (const auto& c : same.checks) {
    INFO(c.name << ": z = " << c.z);
    CHECK(std::abs(c.z) < 4.0);
  }
  const FitVerdict pooled = cross_fitted(other);
  INFO("cross-fitted ece_15: z = " << check_named(pooled, "ece_15").z);
  CHECK_FALSE(pooled.good);
  CHECK(check_named(pooled, "ece_15").fails);
  const FitVerdict one =
      judge_fit(other, splits.front().held_out, splits.front().fit.size, estimators, settings);
  INFO("one split ece_15: z = " << check_named(one, "ece_15").z);
  CHECK_FALSE(check_named(one, "ece_15").fails);
  // The pooled standard error: (1 + 1/R) sum w^2 s^2 against one split's s^2 (1 + 1/R + 1/4).
  CHECK(check_named(pooled, "ece_15").se < 0.6 * check_named(one, "ece_15").se);
}

TEST_CASE("judge_fit: an always confidently wrong model is POOR on accuracy", "[unit][fit]") {
  // Confidence in (0.9, 1), the label never the argmax: accuracy 0, ECE about 0.95. A fake
  // fitted naively to such rows is accurate; here the fake is a confident calibrated one.
  const std::size_t n = 500, K = 3;
  std::vector<double> p(n * K);
  std::vector<std::uint32_t> y(n);
  Engine engine = make_engine({9, 0, 0, Purpose::sample});
  for (std::size_t i = 0; i < n; ++i) {
    const double top = 0.9 + 0.09 * uniform_open01(engine);
    const std::size_t k = i % K;
    for (std::size_t j = 0; j < K; ++j) p[i * K + j] = j == k ? top : (1.0 - top) / 2.0;
    y[i] = static_cast<std::uint32_t>((k + 1) % K);
  }
  const Sample wrong = make_sample(K, std::move(p), std::move(y));
  const Generator fake(DirichletSpec{3, {0.05, 0.05, 0.05}, IdentityMap{}});
  VerdictSettings settings;
  settings.replicates = 50;
  const FitVerdict v = judge_fit(fake, wrong, 2000, {}, settings);
  CHECK_FALSE(v.good);
  CHECK(check_named(v, "accuracy").held_out == 0.0);
  CHECK(check_named(v, "accuracy").fails);
  CHECK(check_named(v, "reliability curve").fails);
}

TEST_CASE("predict_estimators: accuracy's known sd and zero bias, beside the bootstrap",
          "[stat][fit]") {
  // The fake is the data's own generator. Accuracy at n has sd sqrt(a (1 - a) / n) exactly
  // (binomial) and bias 0. The fake's sample sd over R draws has standard error about
  // sd / sqrt(2 (R - 1)) and its mean sd / sqrt(R): checked within 4 of each. The bootstrap of
  // 2,000 rows at n <= 2,000 estimates the same sd (the plug-in accuracy's bootstrap sd is
  // sqrt(a_hat (1 - a_hat) / n)), and its bias is 0 in expectation.
  const Generator fake(overconfident);
  const GroundTruth truth = compute_truth(fake, TruthSettings{});
  const double a = truth[Quantity::accuracy].value;
  const Sample data = draw(overconfident, 2000, 21);
  const AccuracyEstimator accuracy;
  const BinnedEce ece(BinnedEceSpec{15});
  const std::vector<LabelledEstimator> estimators = {{"accuracy", &accuracy}, {"ece", &ece}};
  PredictionSettings settings;
  settings.sizes = {200, 2000, 8000};
  settings.replicates = 400;
  settings.resamples = 400;
  settings.seed = 4;
  const FitPredictions p = predict_estimators(fake, truth, data, estimators, settings);
  REQUIRE(p.cells.size() == 6);
  CHECK(p.references[0].value == a);
  CHECK_FALSE(p.references[1].own_population);  // ece targets ece_top_l1
  for (const Prediction& c : p.cells) {
    if (c.estimator != 0) continue;
    const double sd = std::sqrt(a * (1.0 - a) / static_cast<double>(c.n));
    INFO("n = " << c.n << ": fake sd " << c.fake.sd << " against " << sd);
    CHECK(std::abs(c.fake.sd - sd) < 4.0 * sd / std::sqrt(2.0 * 399.0));
    CHECK(std::abs(c.fake.bias) < 4.0 * c.fake.bias_se);
    if (c.n <= data.size) {
      REQUIRE(c.bootstrap);
      CHECK(std::abs(c.bootstrap->sd - sd) < 4.0 * sd / std::sqrt(2.0 * 399.0) + 0.02 * sd);
      CHECK(std::abs(c.bootstrap->bias) < 4.0 * c.bootstrap->bias_se);
      CHECK_FALSE(c.sd_disagrees);
    } else {
      CHECK_FALSE(c.bootstrap);  // n > the data's rows: only the fake answers
    }
  }
  CHECK_THROWS_AS(
      predict_estimators(fake, truth, data, estimators, PredictionSettings{.sizes = {1}}),
      DomainError);
}

TEST_CASE("verdict and predictions: the same bits on 1 and 2 threads", "[unit][fit]") {
  const Generator fake(calibrated);
  const GroundTruth truth = compute_truth(fake, TruthSettings{});
  const Sample data = draw(overconfident, 600, 2);
  const BinnedEce ece(BinnedEceSpec{15});
  const std::vector<LabelledEstimator> estimators = {{"ece", &ece}};
  VerdictSettings vs;
  vs.replicates = 30;
  PredictionSettings ps;
  ps.sizes = {100, 600, 1200};
  ps.replicates = 30;
  ps.resamples = 30;
  const auto run = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<std::size_t>(threads));
    const FitVerdict v = judge_fit(fake, data, 1200, estimators, vs);
    const FitPredictions p = predict_estimators(fake, truth, data, estimators, ps);
    std::vector<double> out;
    for (const auto& c : v.checks) out.insert(out.end(), {c.held_out, c.fake, c.se, c.p_adjusted});
    for (const auto& c : p.cells) {
      out.insert(out.end(), {c.fake.mean, c.fake.sd, c.fake.bias});
      if (c.bootstrap) out.insert(out.end(), {c.bootstrap->mean, c.bootstrap->sd});
    }
    return out;
  };
  CHECK(run(1) == run(2));
}
