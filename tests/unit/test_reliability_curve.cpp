// The true reliability curves (truth/reliability_curve.hpp): exact on calibrated generators, the
// closed form at K = 2 under temperature scaling, and against independent labelled Monte Carlo
// binning for K = 4.
#include <tbb/global_control.h>

#include <boost/math/distributions/normal.hpp>
#include <catch2/catch.hpp>
#include <cmath>

#include "recalibrators/temperature_scaling.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/reliability_curve.hpp"

using namespace calbench;

namespace {

// Two-sided normal quantile for a family-wise false-alarm rate of 1 % over `tests` checks
// (Bonferroni).
double bonferroni_z(std::size_t tests) {
  const boost::math::normal n;
  return boost::math::quantile(
      boost::math::complement(n, 0.01 / (2.0 * static_cast<double>(tests))));
}

void check_partition(const std::vector<CurvePoint>& curve, std::uint64_t draws) {
  double weight = 0.0;
  std::uint64_t count = 0;
  for (std::size_t j = 0; j < curve.size(); ++j) {
    const CurvePoint& p = curve[j];
    weight += p.weight;
    count += p.count;
    CHECK(p.count >= ReliabilitySettings::min_count);
    CHECK(p.lower <= p.score);
    CHECK(p.score <= p.upper);
    if (j > 0) CHECK(curve[j - 1].upper <= p.lower);  // disjoint, in increasing order
  }
  CHECK(count == draws);
  CHECK(weight == Approx(1.0).epsilon(1e-12));
}

// r(z) = z^T / (z^T + (1 - z)^T): for K = 2 and p = softmax(log c / T), c_1 = p_1^T / (p_1^T +
// p_2^T) (invert p_1 = c_1^(1/T) / (c_1^(1/T) + c_2^(1/T))); the top label keeps the argmax, so
// the same function gives P(correct | Z = z).
double binary_temperature_curve(double z, double T) {
  const double a = std::pow(z, T), b = std::pow(1.0 - z, T);
  return a / (a + b);
}

}  // namespace

TEST_CASE("a calibrated generator's curves are the identity, with error 0", "[stat][truth]") {
  // Asymmetric alpha: one curve per class.
  const Generator gen(DirichletSpec{3, {0.3, 1.0, 2.5}, IdentityMap{}});
  const ReliabilitySettings settings{60, 200'000};
  const ReliabilityCurves curves = true_reliability_curves(gen, settings);
  CHECK_FALSE(curves.pooled);
  REQUIRE(curves.classes.size() == 3);
  check_partition(curves.top, curves.samples);
  REQUIRE(curves.top.size() >= 30);
  for (const auto& p : curves.top) {
    // c = p: each sum of c is the sum of the same numbers as the sum of the scores.
    CHECK(p.frequency == Approx(p.score).epsilon(1e-13));
    CHECK(p.error < 1e-7);
  }
  for (const auto& curve : curves.classes) {
    check_partition(curve, curves.samples);
    for (const auto& p : curve) {
      CHECK(p.frequency == Approx(p.score).epsilon(1e-13).margin(1e-15));
      CHECK(p.error < 1e-7);
    }
  }
  // A symmetric generator pools its classes: K times the draws in one curve.
  const Generator sym(DirichletSpec{4, {0.5, 0.5, 0.5, 0.5}, TemperatureMap{0.7}});
  const ReliabilityCurves pooled = true_reliability_curves(sym, {50, 40'000});
  CHECK(pooled.pooled);
  REQUIRE(pooled.classes.size() == 1);
  check_partition(pooled.classes[0], 4 * pooled.samples);
}

TEST_CASE("K = 2 temperature: the curves match the closed form within their errors",
          "[stat][truth]") {
  for (const double T : {0.6, 2.5}) {
    INFO("T = " << T);
    const Generator gen(DirichletSpec{2, {0.7, 0.7}, TemperatureMap{T}});
    const ReliabilityCurves curves = true_reliability_curves(gen, {100, 1'000'000});
    REQUIRE(curves.pooled);
    check_partition(curves.top, curves.samples);
    const double z = bonferroni_z(curves.top.size() + curves.classes[0].size());
    std::size_t off_diagonal = 0;
    for (const auto* curve : {&curves.top, &curves.classes[0]}) {
      for (const auto& p : *curve) {
        const double exact = binary_temperature_curve(p.score, T);
        INFO("score " << p.score << " [" << p.lower << ", " << p.upper << "]: frequency "
                      << p.frequency << ", exact " << exact << ", error " << p.error);
        CHECK(std::abs(p.frequency - exact) <= z * p.error + 1e-12);
        // Not vacuous: the curve is told apart from the diagonal.
        if (std::abs(p.frequency - p.score) > 10.0 * p.error) ++off_diagonal;
      }
    }
    CHECK(off_diagonal > (curves.top.size() + curves.classes[0].size()) * 8 / 10);
  }
}

TEST_CASE("K = 4 temperature: the curves agree with labelled Monte Carlo binning and accuracy",
          "[stat][truth]") {
  const std::vector<double> alpha = {0.4, 0.8, 1.2, 2.0};
  const Generator gen(DirichletSpec{4, alpha, TemperatureMap{0.6}});
  const ReliabilityCurves curves = true_reliability_curves(gen, {100, 1'000'000});
  REQUIRE_FALSE(curves.pooled);
  REQUIRE(curves.classes.size() == 4);
  check_partition(curves.top, curves.samples);

  // sum_b w_b frequency_b = the mean of c_top over every draw = accuracy, which temperature
  // (argmax preserved) makes E[max c], exact by quadrature. SE of the mean of c_top <= 0.5/sqrt(N).
  double acc = 0.0;
  for (const auto& p : curves.top) acc += p.weight * p.frequency;
  const TruthValue exact = expected_max(alpha);
  CHECK(std::abs(acc - exact.value) <
        4.5 * 0.5 / std::sqrt(static_cast<double>(curves.samples)) + exact.error);

  // Independent check: labelled draws from another stream, binned on groups of consecutive
  // points [lower of the first, upper of the last] (the same event the curve's draws fall in),
  // observed frequency against the curve's count-weighted mean over the group. SE: binomial of
  // the labelled rows plus sd(c) <= 1/2 over the curve's draws.
  Sample sample;
  GeneratorScratch scratch;
  Engine engine = make_engine({77, 0, 0, Purpose::sample});
  gen.sample(engine, 400'000, sample, scratch);
  const std::size_t group_size = 8;
  auto check_curve = [&](const std::vector<CurvePoint>& curve, auto statistic, auto outcome,
                         std::size_t tests) {
    const double z = bonferroni_z(tests);
    for (std::size_t first = 0; first < curve.size(); first += group_size) {
      const std::size_t last = std::min(first + group_size, curve.size()) - 1;
      const double lo = curve[first].lower, hi = curve[last].upper;
      double n_curve = 0.0, sum_curve = 0.0;
      for (std::size_t j = first; j <= last; ++j) {
        n_curve += static_cast<double>(curve[j].count);
        sum_curve += static_cast<double>(curve[j].count) * curve[j].frequency;
      }
      double n = 0.0, hits = 0.0;
      for (std::size_t i = 0; i < sample.size; ++i) {
        const double v = statistic(i);
        if (v < lo || v > hi) continue;
        n += 1.0;
        hits += outcome(i);
      }
      if (n < 50.0) continue;
      const double f = hits / n, expected = sum_curve / n_curve;
      const double se = std::sqrt(std::max(f * (1.0 - f), 1.0 / n) / n) + 0.5 / std::sqrt(n_curve);
      INFO("points " << first << ".." << last << " [" << lo << ", " << hi << "]: labelled " << f
                     << " (" << n << " rows), curve " << expected);
      CHECK(std::abs(f - expected) < z * se);
    }
  };
  const std::size_t tests = 5 * (curves.top.size() / group_size + 1);
  check_curve(
      curves.top, [&](std::size_t i) { return sample.confidence[i]; },
      [&](std::size_t i) { return sample.predicted[i] == sample.label[i] ? 1.0 : 0.0; }, tests);
  for (std::size_t k = 0; k < 4; ++k) {
    INFO("class " << k);
    check_partition(curves.classes[k], curves.samples);
    check_curve(
        curves.classes[k], [&](std::size_t i) { return sample.p[i * 4 + k]; },
        [&](std::size_t i) { return sample.label[i] == k ? 1.0 : 0.0; }, tests);
  }
}

TEST_CASE("true reliability curves are the same on 1 and 2 threads", "[unit][truth]") {
  const Generator gen(DirichletSpec{3, {0.5, 1.0, 1.5}, TopLabelMap{2.0}});
  ReliabilityCurves one, two;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = true_reliability_curves(gen, {40, 80'000});
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    two = true_reliability_curves(gen, {40, 80'000});
  }
  REQUIRE(one.top.size() == two.top.size());
  for (std::size_t j = 0; j < one.top.size(); ++j) {
    CHECK(one.top[j].frequency == two.top[j].frequency);
    CHECK(one.top[j].error == two.top[j].error);
  }
  REQUIRE(one.classes.size() == two.classes.size());
  for (std::size_t k = 0; k < one.classes.size(); ++k)
    for (std::size_t j = 0; j < one.classes[k].size(); ++j)
      CHECK(one.classes[k][j].frequency == two.classes[k][j].frequency);
}

TEST_CASE("curve points: merging rule and curvature term by hand", "[unit][truth]") {
  // Three fine bins of 100 draws each at v = 0.1, 0.2, 0.3 (+- 0.01) with c = v^2 (r'' = 2),
  // points = 3: each bin closes a point (100 draws >= 300/3). The middle point's term is
  // |r''| var / 2 = 2/2 * 1e-4 (the residual of c about its line is 0 with two values per bin);
  // an end point's is its distance from the line through the other two: r'' h^2 = 2 * 0.01.
  FineAccumulator acc;
  acc.resize(3);
  for (std::size_t b = 0; b < 3; ++b)
    for (int i = 0; i < 100; ++i) {
      const double v = 0.1 * static_cast<double>(b + 1) + (i % 2 == 0 ? 0.01 : -0.01);
      acc.add(b, v, v * v);
    }
  const auto points = curve_points(acc, 3);
  REQUIRE(points.size() == 3);
  for (std::size_t b = 0; b < 3; ++b) {
    const double v = 0.1 * static_cast<double>(b + 1);
    CHECK(points[b].score == Approx(v).epsilon(1e-12));
    CHECK(points[b].frequency == Approx(v * v + 1e-4).epsilon(1e-12));  // E v^2 = v^2 + var
    CHECK(points[b].error == Approx(b == 1 ? 1e-4 : 0.02).epsilon(1e-6));
    CHECK(points[b].count == 100);
    CHECK(points[b].lower == Approx(v - 0.01));
    CHECK(points[b].upper == Approx(v + 0.01));
  }
  // With points = 1, the draws stay in one point.
  CHECK(curve_points(acc, 1).size() == 1);
}

// The true top-label curve after recalibration (true_top_reliability_curve): no model is the
// generator's own top curve bit for bit; a temperature model on a temperature-miscalibrated
// generator composes to one temperature map, q_k ∝ c_k^(1/(T T_model)), whose curve has the K = 2
// closed form; the exact inverse T_model = 1/T gives q = c, the diagonal.
TEST_CASE("true reliability curve after recalibration: identity, composition, exact inverse",
          "[stat][truth]") {
  const double T = 0.6;
  const Generator gen(DirichletSpec{2, {0.7, 0.7}, TemperatureMap{T}});
  const ReliabilitySettings settings{100, 400'000};
  const auto own = true_reliability_curves(gen, settings).top;
  const auto none = true_top_reliability_curve(gen, nullptr, settings);
  REQUIRE(none.size() == own.size());
  for (std::size_t j = 0; j < own.size(); ++j) {
    CHECK(none[j].score == own[j].score);
    CHECK(none[j].frequency == own[j].frequency);
    CHECK(none[j].error == own[j].error);
    CHECK(none[j].count == own[j].count);
  }
  // Exact inverse: frequency = score up to rounding.
  const TemperatureModel inverse(1.0 / T);
  const auto diagonal = true_top_reliability_curve(gen, &inverse, settings);
  check_partition(diagonal, 400'000);
  for (const auto& p : diagonal) CHECK(std::abs(p.frequency - p.score) < 1e-9);
  // T_model = 2: the composed temperature is 1.2 (underconfident); its closed form.
  const TemperatureModel twice(2.0);
  const auto composed = true_top_reliability_curve(gen, &twice, settings);
  check_partition(composed, 400'000);
  const double z = bonferroni_z(composed.size());
  std::size_t off_diagonal = 0;
  for (const auto& p : composed) {
    const double exact = binary_temperature_curve(p.score, T * 2.0);
    INFO("score " << p.score << ": frequency " << p.frequency << ", exact " << exact);
    CHECK(std::abs(p.frequency - exact) <= z * p.error + 1e-12);
    if (std::abs(p.frequency - p.score) > 10.0 * p.error) ++off_diagonal;
  }
  CHECK(off_diagonal > composed.size() / 2);  // not vacuous: told apart from the diagonal
}
