// The xgboost recalibrator (recalibrators/xgboost_calibration.hpp): its trees against XGBoost's
// own predictions, its fit against a booster trained directly, its folds, its restored state.
// Its repair of a miscalibrated model's true error and its determinism across thread counts
// are in test_recalibration.cpp (the scenario's helpers live there).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "generator_draws.hpp"
#include "generators/generator.hpp"
#include "recalibrators/restore_model.hpp"
#include "recalibrators/xgboost_booster.hpp"
#include "recalibrators/xgboost_calibration.hpp"

using namespace calbench;

namespace {

Sample draw(std::size_t classes, std::size_t n, std::uint64_t replicate) {
  DirichletSpec spec;
  spec.classes = classes;
  spec.alpha = std::vector<double>(classes, 0.6);
  spec.map = TemperatureMap{0.6};
  return testing::draw(spec, n, 20261203, false, 0, replicate);
}

std::vector<float> labels_of(const Sample& s) {
  return {s.label.begin(), s.label.end()};
}

BoosterSettings settings_for(std::size_t classes, double base_score) {
  return {
      .objective = classes == 2 ? BoostObjective::binary_logistic : BoostObjective::multi_softprob,
      .classes = classes,
      .base_score = base_score};
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("xgboost: the kept trees give XGBoost's own margins bit for bit",
          "[unit][recalibrators]") {
  for (const std::size_t K : {2, 4}) {
    INFO("K = " << K);
    const Sample fit = draw(K, 1500, 1), other = draw(K, 700, 2);
    const std::size_t columns = K == 2 ? 1 : K;
    const std::vector<float> x = xgboost_features(fit.p, K);
    const XgboostBooster booster(x, columns, labels_of(fit), settings_for(K, 0.3));
    const BoostedTrees trees = booster.trees();
    CHECK(trees.groups == (K == 2 ? 1 : K));
    CHECK(trees.trees.size() == 10 * trees.groups);  // 10 rounds, a tree per class per round
    for (const auto& t : trees.trees) {
      // max_depth 3: at most 15 nodes; children after their parent.
      CHECK(t.value.size() <= 15);
      for (std::size_t j = 0; j < t.left.size(); ++j)
        if (t.left[j] >= 0) CHECK(static_cast<std::size_t>(t.left[j]) > j);
    }
    for (const Sample* s : {&fit, &other}) {
      const std::vector<float> features = xgboost_features(s->p, K);
      std::vector<float> ours(s->size * trees.groups);
      for (std::size_t i = 0; i < s->size; ++i)
        trees.margins({features.data() + i * columns, columns},
                      {ours.data() + i * trees.groups, trees.groups});
      CHECK(same_bits(ours, booster.library_margins(features)));
    }
  }
}

TEST_CASE("xgboost: features are probmetrics' logits, floored at log(FLT_MIN)",
          "[unit][recalibrators]") {
  const double floor = std::log(static_cast<double>(std::numeric_limits<float>::min()));
  // K = 2: log p_1 - log(1 - p_1), each log floored (log1p(-1) = -inf becomes the floor).
  const std::vector<double> binary = {0.8, 0.2, 0.0, 1.0, 1.0, 0.0, 0.5, 0.5};
  const auto b = xgboost_features(binary, 2);
  REQUIRE(b.size() == 4);
  CHECK(b[0] == static_cast<float>(std::log(0.2) - std::log1p(-0.2)));
  CHECK(b[1] == static_cast<float>(-floor));
  CHECK(b[2] == static_cast<float>(floor));
  CHECK(b[3] == 0.0f);
  // K = 3: the three log-probabilities.
  const std::vector<double> three = {0.5, 0.5, 0.0, 1e-300, 0.25, 0.75};
  const auto t = xgboost_features(three, 3);
  REQUIRE(t.size() == 6);
  CHECK(t[0] == static_cast<float>(std::log(0.5)));
  CHECK(t[2] == static_cast<float>(floor));
  CHECK(t[3] == static_cast<float>(floor));
  CHECK(t[5] == static_cast<float>(std::log(0.75)));
}

TEST_CASE("xgboost: one fold is one booster on every row, from XGBoost 2's intercept",
          "[unit][recalibrators]") {
  // folds = 1 (probmetrics' use_cv = False): the model's q_1 is sigma of the library's margin of
  // a booster trained here on every row with base_score sigma(4 (mean y - 1/2)), the intercept
  // XGBoost 2 estimates (one Newton step from margin 0).
  const Sample fit = draw(2, 800, 3), other = draw(2, 300, 4);
  const auto model = XgboostCalibration({.folds = 1}).fit(fit);
  double mean = 0.0;
  for (auto y : fit.label) mean += y;
  mean /= static_cast<double>(fit.size);
  const double w = 4.0 * (mean - 0.5);
  const XgboostBooster direct(xgboost_features(fit.p, 2), 1, labels_of(fit),
                              settings_for(2, 1.0 / (1.0 + std::exp(-w))));
  const std::vector<float> margin = direct.library_margins(xgboost_features(other.p, 2));
  std::vector<double> q(other.p.size());
  apply(*model, other.p, 2, q);
  for (std::size_t i = 0; i < other.size; ++i) {
    const double m = margin[i];
    const double s = m >= 0.0 ? 1.0 / (1.0 + std::exp(-m)) : std::exp(m) / (1.0 + std::exp(m));
    CHECK(q[2 * i + 1] == s);
    CHECK(q[2 * i] == 1.0 - s);
  }
  // The intercept is the one Newton step: w = -sum g / sum h at margin 0, g = 1/2 - y, h = 1/4.
  double g = 0.0, h = 0.0;
  for (auto y : fit.label) {
    g += 0.5 - y;
    h += 0.25;
  }
  CHECK(-g / h == Approx(w).epsilon(1e-14));
}

TEST_CASE("xgboost: the folds' mean, each fold trained without its rows", "[unit][recalibrators]") {
  // Five folds give five boosters of 10 rounds; the output is their mean probability: on the
  // simplex, and different from a single booster on every row.
  for (const std::size_t K : {2, 3}) {
    INFO("K = " << K);
    const Sample fit = draw(K, 600, 5), other = draw(K, 200, 6);
    const auto five = XgboostCalibration({}).fit(fit);
    const auto one = XgboostCalibration({.folds = 1}).fit(fit);
    const FittedState state = five->state();
    CHECK(state.kind == "xgboost");
    REQUIRE(state.parts.size() == 5);
    for (const auto& booster : state.parts) CHECK(booster.parts.size() == 10 * (K == 2 ? 1 : K));
    CHECK(XgboostCalibration({}).gives(state, K));
    CHECK_FALSE(XgboostCalibration({}).gives(state, K + 1));
    std::vector<double> q5(other.p.size()), q1(other.p.size());
    apply(*five, other.p, K, q5);
    apply(*one, other.p, K, q1);
    double largest = 0.0;
    for (std::size_t i = 0; i < other.size; ++i) {
      double sum = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        CHECK(q5[i * K + k] > 0.0);
        sum += q5[i * K + k];
        largest = std::max(largest, std::abs(q5[i * K + k] - q1[i * K + k]));
      }
      CHECK(sum == Approx(1.0).epsilon(1e-14));
    }
    CHECK(largest > 1e-3);
  }
}

TEST_CASE("xgboost: bad settings, too few rows and malformed saved trees are refused",
          "[unit][recalibrators]") {
  CHECK_THROWS_WITH(XgboostCalibration({.learning_rate = 0.0}),
                    Catch::Contains("learning_rate = 0: must be in (0, 1]"));
  CHECK_THROWS_WITH(XgboostCalibration({.rounds = 0}), Catch::Contains("rounds must be >= 1"));
  CHECK_THROWS_WITH(XgboostCalibration({}).fit(draw(2, 4, 7)),
                    Catch::Contains("xgboost: the fit sample has 4 rows, fewer than its 5"));

  const FittedState good = XgboostCalibration({}).fit(draw(3, 300, 8))->state();
  REQUIRE_NOTHROW(restore_model(good, "/model"));
  // A child before its parent would loop; a feature beyond K; a leaf with one child.
  FittedState bad = good;
  auto& tree = bad.parts[1].parts[4];
  auto array = [&](const char* key) -> std::vector<double>& {
    for (auto& [name, values] : tree.arrays)
      if (name == key) return values;
    FAIL(key);
    return tree.arrays.front().second;
  };
  REQUIRE(array("left")[0] > 0.0);
  array("left")[0] = 0.0;
  CHECK_THROWS_WITH(
      restore_model(bad, "/model"),
      Catch::Contains("/model/parts/1/parts/4: left = 0: must be a whole number in [1,"));
  bad = good;
  bad.parts[1].parts[4].arrays[2].second[0] = 3.0;  // feature: K = 3 columns, 0 .. 2
  CHECK_THROWS_WITH(restore_model(bad, "/model"),
                    Catch::Contains("feature = 3: must be a whole number in [0, 2]"));
  bad = good;
  bad.scalars[0].second = 4.0;  // classes 4: the boosters have 3 groups
  CHECK_THROWS_WITH(restore_model(bad, "/model"),
                    Catch::Contains("/model/parts/0: groups must be 4 for K = 4"));
}
