// calbench fit: the Dirichlet maximum-likelihood fit, the inverse maps, and parameter and
// truth recovery on outputs sampled from a known generator (docs/fit.md).
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "fit/calibration_map_fit.hpp"
#include "fit/dirichlet_mle.hpp"
#include "fit/fake_classifier_fit.hpp"
#include "generators/generator.hpp"
#include "reference_data.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

Sample draw(const DirichletSpec& spec, std::size_t n, std::uint64_t seed, bool keep_truth = false) {
  const Generator generator(spec);
  Sample out;
  GeneratorScratch scratch;
  Engine engine = make_engine({seed, 0, 0, Purpose::sample});
  generator.sample(engine, n, out, scratch, keep_truth);
  return out;
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
    const FakeClassifierFit fit = fit_fake_classifier(data, FakeFitOptions{});
    const auto within = [&](Quantity q, double data_se) {
      const double tolerance = 3.0 * data_se + 3.0 * (original[q].error + fit.truth[q].error);
      INFO("case " << i << " " << to_string(q) << ": fitted " << fit.truth[q].value << ", original "
                   << original[q].value << ", tolerance " << tolerance << ", map "
                   << to_string(fit.chosen.map));
      CHECK(std::abs(fit.truth[q].value - original[q].value) <= tolerance);
    };
    within(Quantity::accuracy, fit.fit.model_accuracy_se);
    within(Quantity::ece_top_l1, fit.fit.model_gap_se);
    CHECK(fit.fit.total_variation < 0.05);
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
    const FakeClassifierFit fit = fit_fake_classifier(data, FakeFitOptions{FittedMap::temperature});
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
  CHECK_THROWS_AS(fit_fake_classifier(one, FakeFitOptions{}), DomainError);
}
