// calbench fit: the Dirichlet maximum-likelihood fit, the inverse maps, and parameter and
// truth recovery on outputs sampled from a known generator (docs/fit.md).
#include <tbb/task_arena.h>

#include <Eigen/Dense>
#include <array>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "fit/beta_binary_fit.hpp"
#include "fit/calibration_map_fit.hpp"
#include "fit/dirichlet_mixture_fit.hpp"
#include "fit/dirichlet_mle.hpp"
#include "fit/fake_classifier_fit.hpp"
#include "generator_draws.hpp"
#include "generators/generator.hpp"
#include "reference_data.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

// The parametric families' choice (the default fit is the empirical family, test_empirical.cpp).
FakeFitOptions parametric_options() {
  FakeFitOptions options;
  options.empirical = false;
  return options;
}

using testing::draw;

// The done-when of `calbench fit`: the fitted fake's true accuracy and top-label ECE within 3
// standard errors of the data's (plus 3 of each truth's error) of the original generator's, and
// a close confidence histogram.
void check_recovers_truth(const FakeClassifierFit& fit, const GroundTruth& original) {
  for (const auto& [q, se] : {std::pair{Quantity::accuracy, fit.fit.model_accuracy_se},
                              std::pair{Quantity::ece_top_l1, fit.fit.model_gap_se}}) {
    const double tolerance = 3.0 * se + 3.0 * (original[q].error + fit.truth[q].error);
    INFO(to_string(q) << ": fitted " << fit.truth[q].value << ", original " << original[q].value
                      << ", tolerance " << tolerance << ", map " << to_string(fit.chosen.map));
    CHECK(std::abs(fit.truth[q].value - original[q].value) <= tolerance);
  }
  CHECK(fit.fit.total_variation < 0.05);
}

}  // namespace

TEST_CASE("inverse_digamma inverts digamma", "[unit][fit]") {
  for (double x : {-20.0, -3.0, -1.0, 0.0, 0.5, 2.0, 8.0})
    CHECK(boost::math::digamma(inverse_digamma(x)) == Approx(x).margin(1e-12));
}

TEST_CASE("fit_dirichlet recovers alpha within its asymptotic standard errors", "[stat][fit]") {
  // c ~ Dir(alpha) directly (the identity map reports p = c). The MLE's covariance is the
  // inverse Fisher information / n, with I = diag(psi'(alpha_k)) - psi'(alpha_0) 11'
  // (Minka 2000); 4 standard errors per component keeps the family-wise error of the four
  // checks below 3e-4.
  const std::vector<double> alpha = {0.3, 0.8, 1.5, 3.0};
  const std::size_t n = 20'000;
  const Sample s = draw(DirichletSpec{4, alpha, IdentityMap{}}, n, 41);
  const DirichletFit fit = fit_dirichlet(dirichlet_statistics(s.p, 4));
  const double a0 = std::accumulate(alpha.begin(), alpha.end(), 0.0);
  // I = D - z 11' with D = diag(psi'(alpha_k)), z = psi'(alpha_0); by Sherman-Morrison its
  // inverse has diagonal 1/d_k + z / (d_k^2 (1 - z sum_j 1/d_j)).
  const double z = boost::math::trigamma(a0);
  double sum_inv = 0.0;
  for (double a : alpha) sum_inv += 1.0 / boost::math::trigamma(a);
  for (std::size_t k = 0; k < 4; ++k) {
    const double d = boost::math::trigamma(alpha[k]);
    const double se =
        std::sqrt((1.0 / d + z / (d * d * (1.0 - z * sum_inv))) / static_cast<double>(n));
    INFO("alpha[" << k << "] = " << fit.alpha[k] << ", true " << alpha[k] << ", se " << se);
    CHECK(std::abs(fit.alpha[k] - alpha[k]) < 4.0 * se);
  }
  // At the maximum the score psi(alpha_0) - psi(alpha_k) + s_k vanishes.
  const DirichletStatistics stats = dirichlet_statistics(s.p, 4);
  const double fitted0 = std::accumulate(fit.alpha.begin(), fit.alpha.end(), 0.0);
  for (std::size_t k = 0; k < 4; ++k)
    CHECK(boost::math::digamma(fitted0) - boost::math::digamma(fit.alpha[k]) + stats.mean_log[k] ==
          Approx(0.0).margin(1e-10));
}

TEST_CASE("power_inverse inverts the power and temperature maps", "[unit][fit]") {
  // p_k ∝ c_k^(t_k), so c_k = (lambda p_k)^(1/t_k) with one lambda per row.
  const std::vector<double> c = {0.6, 0.3, 0.1};
  for (const std::vector<double>& t :
       std::vector<std::vector<double>>{{0.5, 1.0, 2.0}, {1 / 0.7}}) {
    std::vector<double> p(3), log_c(3), c_back(3), log_p(3), scratch(3);
    for (std::size_t k = 0; k < 3; ++k) log_c[k] = std::log(c[k]);
    const MiscalibrationMap map = t.size() == 1 ? MiscalibrationMap(TemperatureMap{1 / t[0]})
                                                : MiscalibrationMap(PowerMap{t});
    apply(map, c, log_c, p, log_p, scratch);
    for (std::size_t k = 0; k < 3; ++k) log_p[k] = map_log(p[k]);
    power_inverse(log_p, t, c_back);
    for (std::size_t k = 0; k < 3; ++k) CHECK(c_back[k] == Approx(c[k]).epsilon(1e-12));
  }
}

TEST_CASE("fit_map recovers a temperature within its standard error", "[stat][fit]") {
  // Labels from a temperature-miscalibrated generator; the MLE of T has standard error
  // 1/sqrt(NLL''(T)), the curvature taken by central differences.
  const double T = 0.7;
  const Sample s =
      draw(DirichletSpec{10, std::vector<double>(10, 0.5), TemperatureMap{T}}, 20'000, 7);
  const MapFit fit = fit_map(s, FittedMap::temperature);
  REQUIRE(fit.parameters.size() == 1);
  const double t = fit.parameters[0], h = 1e-3;
  const double curvature = (map_negative_log_likelihood(s, FittedMap::temperature, {{t + h}}) -
                            2 * map_negative_log_likelihood(s, FittedMap::temperature, {{t}}) +
                            map_negative_log_likelihood(s, FittedMap::temperature, {{t - h}})) /
                           (h * h);
  const double se = 1.0 / std::sqrt(curvature);
  INFO("T = " << t << " ± " << se);
  CHECK(std::abs(t - T) < 3.5 * se);
  CHECK(fit.negative_log_likelihood ==
        Approx(map_negative_log_likelihood(s, FittedMap::temperature, {{t}})).epsilon(1e-9));
  // The optimum is a stationary point: the objective is no lower a step either side.
  CHECK(fit.negative_log_likelihood <=
        map_negative_log_likelihood(s, FittedMap::temperature, {{t + h}}));
  CHECK(fit.negative_log_likelihood <=
        map_negative_log_likelihood(s, FittedMap::temperature, {{t - h}}));
}

TEST_CASE("fit_fake_classifier recovers a generator whose truth is within the sampling error",
          "[stat][fit]") {
  // The bar: fitted on outputs of a known generator, the fake classifier's true
  // accuracy and top-label ECE lie within the sampling error of the data (3 standard errors of
  // the data's accuracy and of its mean gap max p - correct, plus the truth engine's errors).
  struct Case {
    DirichletSpec spec;
    std::size_t n;
  };
  const std::vector<Case> cases = {
      {DirichletSpec{10, std::vector<double>(10, 0.5), TemperatureMap{0.7}}, 10'000},
      {DirichletSpec{3, {0.4, 0.7, 1.2}, PowerMap{{0.6, 1.0, 1.4}}}, 10'000},
      {DirichletSpec{4, std::vector<double>(4, 0.3), IdentityMap{}}, 5'000}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const GroundTruth original = compute_truth(Generator(c.spec), TruthSettings{});
    const Sample data = draw(c.spec, c.n, 100 + i);
    const FakeClassifierFit fit = fit_fake_classifier(data, parametric_options());
    INFO("case " << i);
    check_recovers_truth(fit, original);
    CHECK(fit.candidates.size() == 3);
  }
}

TEST_CASE("fit recovers the generators of independent reference datasets", "[stat][fit]") {
  // tests/reference/datasets/manifest.json: numpy drew q ~ Dir(alpha), y ~ Cat(q),
  // p = softmax(beta log q), i.e. calbench's temperature map with T = 1/beta. Tolerances: 4
  // asymptotic standard errors for each alpha_k (Fisher information, Minka 2000; symmetric
  // alpha, n rows) and 3.5 for T (the likelihood's curvature), at most 11 checks per dataset.
  struct Case {
    const char* name;
    double alpha, beta;
  };
  for (const Case& c : {Case{"dir_k10_n5000", 0.5, 1.8}, Case{"dir_k3_n5000_under", 1.0, 0.6}}) {
    const Sample data = calbench::testing::load_reference_dataset(c.name);
    FakeFitOptions options;
    options.empirical = false;  // the parametric families
    options.map = FittedMap::temperature;
    const FakeClassifierFit fit = fit_fake_classifier(data, options);
    const double n = static_cast<double>(data.size), K = static_cast<double>(data.classes);
    const double d = boost::math::trigamma(c.alpha), z = boost::math::trigamma(K * c.alpha);
    const double se_alpha = std::sqrt((1.0 / d + z / (d * d * (1.0 - z * K / d))) / n);
    for (std::size_t k = 0; k < data.classes; ++k) {
      INFO(c.name << " alpha[" << k << "] = " << fit.dirichlet.alpha[k] << " ± " << se_alpha);
      CHECK(std::abs(fit.dirichlet.alpha[k] - c.alpha) < 4.0 * se_alpha);
    }
    const double T = fit.chosen.parameters.at(0), h = 1e-3;
    const auto nll = [&](double t) {
      return map_negative_log_likelihood(data, FittedMap::temperature, {{t}});
    };
    const double se_T = 1.0 / std::sqrt((nll(T + h) - 2 * nll(T) + nll(T - h)) / (h * h));
    INFO(c.name << " T = " << T << " ± " << se_T << ", generated with " << 1 / c.beta);
    CHECK(std::abs(T - 1.0 / c.beta) < 3.5 * se_T);
  }
}

TEST_CASE("fit_fake_classifier rejects data it cannot fit", "[unit][fit]") {
  Sample one = make_sample(2, {0.7, 0.3}, {0});
  CHECK_THROWS_AS(fit_fake_classifier(one, parametric_options()), DomainError);
}

// ---- the beta_binary family (K = 2) ------------------------------------------------------------

namespace {

// The asymptotic covariance of a two-parameter MLE from the objective's curvature: H by central
// differences of `nll` at x, returned as H^-1 (its diagonal the squared standard errors).
template <class F>
std::array<double, 3> inverse_curvature(F nll, double x0, double x1, double h) {
  const double f = nll(x0, x1);
  const double h00 = (nll(x0 + h, x1) - 2 * f + nll(x0 - h, x1)) / (h * h);
  const double h11 = (nll(x0, x1 + h) - 2 * f + nll(x0, x1 - h)) / (h * h);
  const double h01 =
      (nll(x0 + h, x1 + h) - nll(x0 + h, x1 - h) - nll(x0 - h, x1 + h) + nll(x0 - h, x1 - h)) /
      (4 * h * h);
  const double det = h00 * h11 - h01 * h01;
  return {h11 / det, -h01 / det, h00 / det};
}

}  // namespace

TEST_CASE("fit_beta_binary recovers the scores' Beta, the point mass and the curve",
          "[stat][fit]") {
  // Tolerances: 4 asymptotic standard errors each (6 checks, family-wise error below 4e-4).
  // Beta(a, b) from the n' rows with f < 1: covariance I^-1 / n' with the Fisher information
  // I = [[psi'(a) - psi'(a+b), -psi'(a+b)], [-psi'(a+b), psi'(b) - psi'(a+b)]]; the point mass
  // a binomial fraction; the curve's (a, b) from the curvature of its NLL.
  const BetaBinarySpec truth{2.0, 1.0, 0.1, LogitLogitCurve{0.3, 0.7}};
  const std::size_t n = 20'000;
  const Sample data = draw(truth, n, 51);
  const BetaBinaryFit fit = fit_beta_binary(data);
  const double interior = static_cast<double>(n - fit.scores.ones);
  const double ta = boost::math::trigamma(truth.a), tb = boost::math::trigamma(truth.b),
               tab = boost::math::trigamma(truth.a + truth.b);
  const double det = (ta - tab) * (tb - tab) - tab * tab;
  const double se_a = std::sqrt((tb - tab) / det / interior);
  const double se_b = std::sqrt((ta - tab) / det / interior);
  INFO("Beta(" << fit.scores.a << " ± " << se_a << ", " << fit.scores.b << " ± " << se_b << ")");
  CHECK(std::abs(fit.scores.a - truth.a) < 4 * se_a);
  CHECK(std::abs(fit.scores.b - truth.b) < 4 * se_b);
  const double se_mass = std::sqrt(0.1 * 0.9 / static_cast<double>(n));
  CHECK(std::abs(fit.scores.point_mass - 0.1) < 4 * se_mass);
  CHECK(fit.scores.free_parameters == 3);

  REQUIRE(std::holds_alternative<LogitLogitCurve>(fit.chosen.curve));
  const auto curve = std::get<LogitLogitCurve>(fit.chosen.curve);
  const auto cov = inverse_curvature(
      [&](double a, double b) {
        return curve_negative_log_likelihood(data, LogitLogitCurve{a, b});
      },
      curve.a, curve.b, 1e-3);
  INFO("logit_logit a = " << curve.a << " ± " << std::sqrt(cov[0]) << ", b = " << curve.b << " ± "
                          << std::sqrt(cov[2]));
  CHECK(std::abs(curve.a - 0.3) < 4 * std::sqrt(cov[0]));
  CHECK(std::abs(curve.b - 0.7) < 4 * std::sqrt(cov[2]));
  // The optimum is stationary: no lower a step either way in each parameter.
  for (const auto& [da, db] : {std::pair{1e-4, 0.0}, {-1e-4, 0.0}, {0.0, 1e-4}, {0.0, -1e-4}})
    CHECK(fit.chosen.negative_log_likelihood <=
          curve_negative_log_likelihood(data, LogitLogitCurve{curve.a + da, curve.b + db}));
  // The logistic curve has phi(1) < 1 and cannot go with the point mass.
  REQUIRE(fit.rejected.size() == 1);
  CHECK(fit.rejected[0].rfind("logistic", 0) == 0);
  CHECK(fit.candidates.size() == 3);
  // AIC bookkeeping: 2 k - 2 log L with k = 3 (scores) + 2 (curve).
  CHECK(fit.free_parameters == 5);
  CHECK(fit.aic == Approx(10.0 - 2.0 * fit.log_likelihood).epsilon(1e-12));
}

TEST_CASE("fit_curve recovers a polynomial and a logistic curve", "[stat][fit]") {
  // 4 standard errors from the NLL's curvature (d: one parameter; logistic: a and b).
  const Sample poly = draw(BetaBinarySpec{1.5, 1.2, 0.0, PolynomialCurve{2.0}}, 20'000, 52);
  const CurveFit d = fit_curve(poly, CurveKind::polynomial);
  const double dd = std::get<PolynomialCurve>(d.curve).d, h = 1e-3;
  const auto nll_d = [&](double x) {
    return curve_negative_log_likelihood(poly, PolynomialCurve{x});
  };
  const double se_d = 1.0 / std::sqrt((nll_d(dd + h) - 2 * nll_d(dd) + nll_d(dd - h)) / (h * h));
  INFO("d = " << dd << " ± " << se_d);
  CHECK(std::abs(dd - 2.0) < 4 * se_d);
  CHECK(d.negative_log_likelihood == Approx(nll_d(dd)).epsilon(1e-12));

  const Sample logi = draw(BetaBinarySpec{1.5, 1.2, 0.0, LogisticCurve{-1.0, 2.5}}, 20'000, 53);
  const CurveFit l = fit_curve(logi, CurveKind::logistic);
  const auto c = std::get<LogisticCurve>(l.curve);
  const auto cov = inverse_curvature(
      [&](double a, double b) {
        return curve_negative_log_likelihood(logi, LogisticCurve{a, b});
      },
      c.a, c.b, 1e-3);
  INFO("logistic a = " << c.a << " ± " << std::sqrt(cov[0]) << ", b = " << c.b << " ± "
                       << std::sqrt(cov[2]));
  CHECK(std::abs(c.a + 1.0) < 4 * std::sqrt(cov[0]));
  CHECK(std::abs(c.b - 2.5) < 4 * std::sqrt(cov[2]));
  // Chosen by AIC among the four curves: the generating one.
  CHECK(std::holds_alternative<LogisticCurve>(fit_beta_binary(logi).chosen.curve));
  CHECK(std::holds_alternative<PolynomialCurve>(fit_beta_binary(poly).chosen.curve));
}

TEST_CASE("the K = 2 dirichlet density of p_1 integrates to 1 for each fitted map", "[unit][fit]") {
  // dirichlet_score_log_density's Jacobian dc_1/df = 1/(f (1 - f)(t_1/c_1 + t_0/c_0)): if it
  // were wrong the density would not integrate to 1 (tanh-sinh to 1e-9).
  const std::vector<double> alpha = {1.3, 2.2};
  boost::math::quadrature::tanh_sinh<double> integrator;
  const std::vector<MixtureComponent> single = {{1.0, alpha}},
                                      mixture = {{0.3, alpha}, {0.7, {4.0, 0.8}}};
  for (const MapFit& map : {MapFit{FittedMap::identity, {}}, MapFit{FittedMap::temperature, {0.6}},
                            MapFit{FittedMap::power, {0.7, 1.6}}})
    for (const auto* components : {&single, &mixture}) {
      const double mass = integrator.integrate(
          [&](double f) { return std::exp(dirichlet_score_log_density(f, map, *components)); }, 0.0,
          1.0);
      INFO(to_string(map.map) << ", " << components->size() << " components");
      CHECK(mass == Approx(1.0).margin(1e-9));
    }
  // Identity: the density is Beta(f; alpha_1, alpha_0) itself.
  const double f = 0.3;
  const double beta = std::pow(f, 1.2) * std::pow(1 - f, 0.3) /
                      std::exp(std::lgamma(1.3) + std::lgamma(2.2) - std::lgamma(3.5));
  CHECK(std::exp(dirichlet_score_log_density(f, MapFit{FittedMap::identity, {}}, single)) ==
        Approx(beta).epsilon(1e-12));
}

TEST_CASE("at K = 2 both families are fitted on one joint likelihood", "[stat][fit]") {
  // With the identity map and the identity curve both families are Beta(f) x Bernoulli(f):
  // the same model, fitted by the same MLE, so the same joint log-likelihood.
  const Sample data = draw(BetaBinarySpec{1.5, 2.5, 0.0, IdentityCurve{}}, 5'000, 54);
  FakeFitOptions options;
  options.empirical = false;  // the parametric families
  options.map = FittedMap::identity;
  options.max_components = 1;
  const FakeClassifierFit both = fit_fake_classifier(data, options);
  REQUIRE(both.families.size() == 2);
  const BetaBinaryFit beta = fit_beta_binary(data, CurveKind::identity);
  CHECK(both.families[0].log_likelihood == Approx(beta.log_likelihood).epsilon(1e-9));
  CHECK(both.families[0].free_parameters == 2);
}

TEST_CASE("fit recovers binary generators whose truth is within the sampling error",
          "[stat][fit]") {
  // The bar at K = 2, as for the dirichlet cases above (3 standard errors of the data's
  // accuracy and mean gap, plus the truth errors), and the family the joint AIC picks: a point
  // mass at 1 only beta_binary has; a temperature-scaled Dirichlet is not a Beta in p_1.
  struct Case {
    GeneratorSpec spec;
    FittedFamily family;
  };
  const std::vector<Case> cases = {
      {BetaBinarySpec{2.0, 1.0, 0.1, LogitLogitCurve{0.3, 0.7}}, FittedFamily::beta_binary},
      {BetaBinarySpec{1.5, 3.0, 0.0, PolynomialCurve{2.0}}, FittedFamily::beta_binary},
      {DirichletSpec{2, {0.8, 1.2}, TemperatureMap{0.5}}, FittedFamily::dirichlet}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const GroundTruth original = compute_truth(Generator(cases[i].spec), TruthSettings{});
    const Sample data = draw(cases[i].spec, 10'000, 200 + i);
    const FakeClassifierFit fit = fit_fake_classifier(data, parametric_options());
    INFO("case " << i << ": family " << to_string(fit.family) << ", AIC dirichlet "
                 << fit.families.at(0).aic << ", beta_binary " << fit.families.back().aic);
    CHECK(fit.family == cases[i].family);
    CHECK(fit.families.size() == 2);
    CHECK(Generator(fit.generator).family() == to_string(fit.family));
    check_recovers_truth(fit, original);
  }
}

TEST_CASE("the beta_binary fit refuses data the family cannot describe", "[unit][fit]") {
  // A label 0 at p_1 = 1: the point mass needs P(y = 1 | p_1 = 1) = 1.
  const Sample wrong_at_one =
      make_sample(2, {0.0, 1.0, 0.3, 0.7, 0.6, 0.4, 0.2, 0.8}, {0, 1, 0, 1});
  CHECK_THROWS_WITH(fit_beta_binary(wrong_at_one), Catch::Contains("have label 0"));
  // p_1 = 0 exactly: no mass there. Automatic choice falls back to the dirichlet family.
  Sample zero = draw(BetaBinarySpec{1.5, 2.5, 0.0, IdentityCurve{}}, 500, 55);
  zero.p[0] = 1.0;
  zero.p[1] = 0.0;
  zero.summarise();
  CHECK_THROWS_WITH(fit_beta_scores(zero), Catch::Contains("p_1 = 0 exactly"));
  const FakeClassifierFit fallback = fit_fake_classifier(zero, parametric_options());
  CHECK(fallback.family == FittedFamily::dirichlet);
  REQUIRE(fallback.rejected_families.size() == 1);
  CHECK(fallback.rejected_families[0].rfind("beta_binary: ", 0) == 0);
  // Forced, the family's error propagates; K = 3 has no beta_binary.
  FakeFitOptions forced;
  forced.empirical = false;  // the parametric families
  forced.family = FittedFamily::beta_binary;
  CHECK_THROWS_AS(fit_fake_classifier(zero, forced), DomainError);
  const Sample three = make_sample(3, {0.2, 0.3, 0.5, 0.6, 0.3, 0.1, 0.1, 0.1, 0.8}, {2, 0, 1});
  CHECK_THROWS_WITH(fit_fake_classifier(three, forced), Catch::Contains("K = 2"));
  // Labels separable by f: every curve with a free slope runs away or is degenerate.
  std::vector<double> p;
  std::vector<std::uint32_t> y;
  for (int i = 1; i < 40; ++i) {
    const double f = i / 40.0;
    p.insert(p.end(), {1 - f, f});
    y.push_back(f > 0.5 ? 1 : 0);
  }
  const Sample separable = make_sample(2, p, y);
  CHECK_THROWS_AS(fit_curve(separable, CurveKind::logit_logit), DomainError);
  CHECK_THROWS_AS(fit_curve(separable, CurveKind::logistic), DomainError);
}

// ---- mixtures of Dirichlets (the dirichlet_mixture family) --------------------------------------

TEST_CASE("EM recovers a two-component Dirichlet mixture within its standard errors",
          "[stat][fit][mixture]") {
  // c drawn directly (identity map, p = c). Standard errors from the observed information: the
  // Hessian of the log-likelihood in (w_1, alpha_1, alpha_2) by central differences, inverted;
  // 4 of them per parameter (7 checks, family-wise error below 5e-4).
  const DirichletMixtureSpec truth{3, {{0.6, {0.3, 0.3, 0.3}}, {0.4, {4.0, 2.0, 1.0}}}};
  const std::size_t n = 20'000, K = 3;
  const Sample s = draw(truth, n, 61);
  const MixtureFit fit = fit_dirichlet_mixture(s.p, K, 2);
  REQUIRE(fit.components.size() == 2);
  // The components come out in either order: the confident one has the smaller alpha_0.
  const auto a0 = [](const MixtureComponent& m) {
    return std::accumulate(m.alpha.begin(), m.alpha.end(), 0.0);
  };
  const bool swapped = a0(fit.components[0]) > a0(fit.components[1]);
  const MixtureComponent& first = fit.components[swapped ? 1 : 0];
  const MixtureComponent& second = fit.components[swapped ? 0 : 1];
  std::vector<double> theta = {first.weight};
  theta.insert(theta.end(), first.alpha.begin(), first.alpha.end());
  theta.insert(theta.end(), second.alpha.begin(), second.alpha.end());
  std::vector<double> log_c(s.p.size());
  for (std::size_t i = 0; i < s.p.size(); ++i) log_c[i] = std::log(s.p[i]);
  const auto ll = [&](const std::vector<double>& t) {
    const std::vector<MixtureComponent> m = {{t[0], {t[1], t[2], t[3]}},
                                             {1.0 - t[0], {t[4], t[5], t[6]}}};
    double out = 0.0;
    for (std::size_t i = 0; i < n; ++i)
      out += mixture_log_density(std::span<const double>(log_c.data() + i * K, K), m);
    return out;
  };
  const std::size_t P = theta.size();
  Eigen::MatrixXd H(P, P);
  for (std::size_t a = 0; a < P; ++a)
    for (std::size_t b = a; b < P; ++b) {
      const double ha = 1e-4 * std::max(1.0, theta[a]), hb = 1e-4 * std::max(1.0, theta[b]);
      auto at = [&](double da, double db) {
        std::vector<double> t = theta;
        t[a] += da;
        t[b] += db;
        return ll(t);
      };
      const double v = (at(ha, hb) - at(ha, -hb) - at(-ha, hb) + at(-ha, -hb)) / (4 * ha * hb);
      H(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = -v;
      H(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(a)) = -v;
    }
  const Eigen::MatrixXd cov = H.inverse();
  const std::vector<double> expected = {0.6, 0.3, 0.3, 0.3, 4.0, 2.0, 1.0};
  for (std::size_t j = 0; j < P; ++j) {
    const double se = std::sqrt(cov(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(j)));
    INFO("parameter " << j << ": " << theta[j] << " ± " << se << ", true " << expected[j]);
    CHECK(std::abs(theta[j] - expected[j]) < 4 * se);
  }
  // BIC prefers two components to one and to three on these data.
  FakeFitOptions options;
  options.empirical = false;  // the parametric families
  options.map = FittedMap::identity;
  options.max_components = 3;
  const FakeClassifierFit whole = fit_fake_classifier(s, options);
  CHECK(whole.family == FittedFamily::dirichlet_mixture);
  CHECK(whole.components.size() == 2);
}

TEST_CASE("fit recovers a Dirichlet mixture whose truth is within the sampling error",
          "[stat][fit][mixture]") {
  // As the single-Dirichlet case: the fitted fake's true accuracy and top-label ECE within 3
  // standard errors of the data (plus the truth errors) of the original's; the same fit on 1
  // and 2 threads.
  const DirichletMixtureSpec spec{
      3, {{0.55, {0.25, 0.25, 0.25}}, {0.45, {3.0, 1.5, 1.0}}}, TemperatureMap{0.7}};
  const GroundTruth original = compute_truth(Generator(spec), TruthSettings{});
  const Sample data = draw(spec, 10'000, 62);
  FakeClassifierFit fit, again;
  tbb::task_arena(1).execute([&] { fit = fit_fake_classifier(data, parametric_options()); });
  tbb::task_arena(2).execute([&] { again = fit_fake_classifier(data, parametric_options()); });
  INFO("family " << to_string(fit.family) << ", " << fit.components.size() << " components, map "
                 << to_string(fit.chosen.map));
  CHECK(fit.family == FittedFamily::dirichlet_mixture);
  CHECK(Generator(fit.generator).family() == "dirichlet_mixture");
  check_recovers_truth(fit, original);
  CHECK(Generator(fit.generator).canonical_text() == Generator(again.generator).canonical_text());
  for (Quantity q : all_quantities) CHECK(fit.truth[q].value == again.truth[q].value);
}
