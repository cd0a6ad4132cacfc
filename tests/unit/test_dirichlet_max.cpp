// The law of a Dirichlet vector's largest component (truth/dirichlet_max.hpp) and the exact
// top-label ECEs of class_conditional generators built on it: known answers (uniform spacings,
// Beta tails, calibrated and label-independent rows, the one-signed gap), Monte Carlo
// agreement where no closed form exists, and the truth engine's fallback to Monte Carlo.
#include <boost/math/special_functions/binomial.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "generators/class_conditional.hpp"
#include "generators/gamma_sampler.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/dirichlet_max.hpp"
#include "truth/family_truth.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

// Uniform spacings (alpha = 1): P(max <= u) = sum_j (-1)^j C(n, j) (1 - j u)_+^(n - 1)
// (Whitworth 1897; Feller, An Introduction to Probability Theory, vol. II, §I.9, eq. 9.9).
// Exact in rational arithmetic; its cancellation is harmless for the small n used here.
double uniform_spacings_cdf(unsigned n, double u) {
  double total = 0.0;
  for (unsigned j = 0; j <= n && 1.0 - j * u > 0.0; ++j)
    total += (j % 2 ? -1.0 : 1.0) * boost::math::binomial_coefficient<double>(n, j) *
             std::pow(1.0 - j * u, n - 1.0);
  return total;
}

std::vector<OneOffRow> same_rows(std::size_t K, double a, double b) {
  return std::vector<OneOffRow>(K, OneOffRow{1.0 / static_cast<double>(K), a, b});
}

}  // namespace

TEST_CASE("dirichlet_max_cdf: uniform spacings, a known answer", "[dirichlet_max]") {
  for (unsigned n : {5u, 8u, 12u})
    for (double u : {0.15, 0.22, 0.3, 0.45, 0.6, 0.85}) {
      if (u * n <= 1.0) continue;
      const ConcentrationGroup g{1.0, n};
      const auto H = dirichlet_max_cdf_fourier({&g, 1}, u);
      INFO("n = " << n << ", u = " << u);
      REQUIRE(H);
      CHECK(std::abs(*H - uniform_spacings_cdf(n, u)) < 1e-12);
    }
}

TEST_CASE("dirichlet_max_cdf: the inversion equals the Beta tails above 1/2", "[dirichlet_max]") {
  // Above u = 1/2 at most one component exceeds u: 1 - sum_j P(p_j > u) exactly.
  for (double a : {0.5, 2.0, 10.0})
    for (std::size_t n : {10u, 99u})
      for (double u : {0.5, 0.6, 0.75}) {
        const ConcentrationGroup g[2] = {{4.0, 1}, {a, n - 1}};
        const auto beta_tails = dirichlet_max_cdf(g, u);
        const auto inversion = dirichlet_max_cdf_fourier(g, u);
        INFO("a = " << a << ", n = " << n << ", u = " << u);
        REQUIRE(beta_tails);
        REQUIRE(inversion);
        CHECK(std::abs(*inversion - *beta_tails) < 1e-11);
      }
}

TEST_CASE("dirichlet_max_cdf: Monte Carlo below 1/2, small and unit concentrations",
          "[dirichlet_max]") {
  constexpr std::size_t n = 99, draws = 20000;
  for (double a : {0.1, 1.0}) {
    const ConcentrationGroup g[2] = {{4.0, 1}, {a, n - 1}};
    const std::vector<double> us =
        a < 1.0 ? std::vector<double>{0.1, 0.2, 0.35} : std::vector<double>{0.04, 0.06, 0.1};
    std::vector<std::size_t> hits(us.size());
    Engine engine = make_engine({20261123, 0, static_cast<std::uint32_t>(a * 10), Purpose::test});
    const GammaSampler own(4.0), other(a);
    for (std::size_t i = 0; i < draws; ++i) {
      double total = own.draw(engine).value, largest = total;
      for (std::size_t j = 1; j < n; ++j) {
        const double x = other.draw(engine).value;
        total += x;
        largest = std::max(largest, x);
      }
      for (std::size_t k = 0; k < us.size(); ++k) hits[k] += largest <= us[k] * total;
    }
    for (std::size_t k = 0; k < us.size(); ++k) {
      const auto H = dirichlet_max_cdf(g, us[k]);
      REQUIRE(H);
      const double share = static_cast<double>(hits[k]) / draws;
      const double se = std::sqrt(*H * (1.0 - *H) / draws);
      INFO("a = " << a << ", u = " << us[k] << ": exact " << *H << ", Monte Carlo " << share);
      CHECK(std::abs(share - *H) <= 4.0 * se + 1e-12);
    }
  }
}

TEST_CASE("one_off_top_label: calibrated rows (b = a + 1) and label-free rows (b = a)",
          "[dirichlet_max]") {
  for (std::size_t K : {3u, 10u, 100u}) {
    // b - a = 1: r(p) = softmax(log p) = p, every gap 0.
    const auto calibrated = one_off_top_label(K, same_rows(K, 2.0, 3.0));
    REQUIRE(calibrated);
    CHECK(calibrated->ece_top_l1.value < 1e-10);
    CHECK(calibrated->mean_square_gap.value < 1e-18);
    CHECK(std::abs(calibrated->mass - 1.0) < 1e-10);
    CHECK(std::abs(calibrated->accuracy - calibrated->mean_confidence) < 1e-10);

    // b = a: y is independent of p, P(y = argmax | Z) = 1/K, so ECE_l1 = E[Z] - 1/K and
    // ECE_l2^2 = E[Z^2] - 2 E[Z]/K + 1/K^2, with E[Z^2] by size biasing twice.
    const double a = 0.7, Kd = static_cast<double>(K), a0 = Kd * a;
    const std::vector<double> alpha(K, a);
    const double mean_z = expected_max(alpha).value;
    const double mean_z2 =
        Kd * a * (a + 1.0) / (a0 * (a0 + 1.0)) * argmax_probability(alpha, 0, 2.0).value;
    const auto free = one_off_top_label(K, same_rows(K, a, a));
    REQUIRE(free);
    INFO("K = " << K);
    CHECK(std::abs(free->mean_confidence - mean_z) < 1e-11);
    CHECK(std::abs(free->accuracy - 1.0 / Kd) < 1e-11);
    CHECK(std::abs(free->ece_top_l1.value - (mean_z - 1.0 / Kd)) < 1e-11);
    CHECK(std::abs(free->mean_square_gap.value - (mean_z2 - 2.0 * mean_z / Kd + 1.0 / (Kd * Kd))) <
          1e-11);
  }
}

TEST_CASE("one_off_top_label: accuracy, confidence and the one-signed gap at K = 100",
          "[dirichlet_max]") {
  // Rows a 1 + (b - a) e_k: r(p) is a temperature map of p, the gap has one sign and ECE_l1 =
  // |E[Z] - accuracy|, which family_truth computes from two other integrals.
  constexpr std::size_t K = 100;
  for (double a : {0.1, 1.0, 10.0}) {
    const double b = a + 3.0;
    const auto top = one_off_top_label(K, same_rows(K, a, b));
    REQUIRE(top);
    std::vector<double> row(K, a);
    row[0] = b;
    const double accuracy = argmax_probability(row, 0).value;
    const double mean_z = expected_max(row).value;
    INFO("a = " << a);
    CHECK(std::abs(top->mass - 1.0) < 1e-10);
    CHECK(std::abs(top->accuracy - accuracy) < 1e-10);
    CHECK(std::abs(top->mean_confidence - mean_z) < 1e-10);
    CHECK(std::abs(top->ece_top_l1.value - std::abs(mean_z - accuracy)) < 1e-10);
    CHECK(top->ece_top_l1.error < 1e-9);
    CHECK(top->mean_square_gap.error < 1e-9);
  }
}

TEST_CASE("one_off_top_calibration: the reported c agrees with P(y = argmax | Z) on bins",
          "[dirichlet_max]") {
  // The generator reports c = r(p), so E[c_top | Z] = P(y = argmax p | Z): binned means of
  // c_top - g(Z) are 0, with standard errors from the draws. Rows with different (a_k, b_k) and
  // a non-uniform prior: no closed form checks these.
  constexpr std::size_t K = 8, draws = 40000, bins = 8;
  std::vector<double> prior(K);
  for (std::size_t k = 0; k < K; ++k) prior[k] = (static_cast<double>(k) + 1.0) / 36.0;
  std::vector<double> alpha(K * K);
  std::vector<OneOffRow> rows;
  for (std::size_t k = 0; k < K; ++k) {
    const double kd = static_cast<double>(k), a = 0.8 + 0.3 * kd, b = a + 1.0 + 0.8 * kd;
    for (std::size_t j = 0; j < K; ++j) alpha[k * K + j] = j == k ? b : a;
    rows.push_back({prior[k], a, b});
  }
  const ClassConditionalGenerator gen({K, prior, alpha});
  // g on a grid, linearly interpolated (its error, (dz)^2 |g''|/8 ~ 1e-6, is far below the
  // standard errors): one evaluation per draw would cost a minute.
  constexpr std::size_t grid = 400;
  const double lowest = 1.0 / static_cast<double>(K), step = (1.0 - lowest) / grid;
  std::vector<double> g_grid(grid + 1, std::nan(""));
  for (std::size_t i = 1; i < grid; ++i)
    if (const auto g = one_off_top_calibration(K, rows, lowest + step * static_cast<double>(i)))
      g_grid[i] = *g;
  Engine engine = make_engine({20261123, 1, 0, Purpose::test});
  std::vector<double> c(K), p(K), log_p(K);
  std::vector<RunningStats> gap(bins);
  std::size_t failed = 0;
  for (std::size_t i = 0; i < draws; ++i) {
    gen.draw(engine, c, p, log_p);
    const auto top = static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
    const double t = (p[top] - lowest) / step;
    const auto cell = std::min(grid - 1, static_cast<std::size_t>(t));
    const double g =
        g_grid[cell] + (t - static_cast<double>(cell)) * (g_grid[cell + 1] - g_grid[cell]);
    if (!std::isfinite(g)) {
      ++failed;
      continue;
    }
    gap[cell * bins / grid].add(c[top] - g);
  }
  CHECK(failed == 0);
  for (std::size_t b = 0; b < bins; ++b) {
    if (gap[b].count() < 30) continue;
    INFO("bin " << b << ": " << gap[b].count() << " draws, mean gap " << gap[b].mean());
    CHECK(std::abs(gap[b].mean()) <= 4.0 * gap[b].standard_error() + 1e-12);
  }
}

TEST_CASE("class_conditional truth: exact top-label ECE where the rows allow it",
          "[dirichlet_max][truth]") {
  TruthSettings settings;
  settings.samples = 200000;  // the canonical errors' Monte Carlo only
  const auto truth_of = [&](std::size_t K, std::vector<double> prior, std::vector<double> alpha) {
    return class_conditional_truth(
        ClassConditionalGenerator({K, std::move(prior), std::move(alpha)}), settings);
  };
  SECTION("K = 100, concentration 1, correct_class 4") {
    const GroundTruth t =
        truth_of(100, std::vector<double>(100, 0.01), class_conditional_alpha(100, 1.0, 4.0));
    CHECK(t[Quantity::ece_top_l2].method == TruthMethod::quadrature);
    CHECK(t[Quantity::ece_top_l2].error < 1e-9);
    CHECK(t[Quantity::ece_top_l2].value > t[Quantity::ece_top_l1].value);
  }
  SECTION("a non-uniform prior: the gap keeps its sign, ECE_l1 = |E[Z] - accuracy|") {
    std::vector<double> prior(20);
    for (std::size_t k = 0; k < 20; ++k) prior[k] = (static_cast<double>(k) + 1.0) / 210.0;
    const GroundTruth t = truth_of(20, prior, class_conditional_alpha(20, 0.5, 2.0));
    CHECK(t[Quantity::ece_top_l1].method == TruthMethod::quadrature);
    CHECK(std::abs(t[Quantity::ece_top_l1].value - std::abs(t[Quantity::overconfidence].value)) <
          1e-9);
    CHECK(t[Quantity::ece_top_l2].method == TruthMethod::quadrature);
  }
  SECTION("few classes (the inversion does not converge) and general rows: Monte Carlo") {
    const GroundTruth few =
        truth_of(4, {0.25, 0.25, 0.25, 0.25}, class_conditional_alpha(4, 1.0, 3.0));
    CHECK(few[Quantity::ece_top_l2].method == TruthMethod::monte_carlo);
    std::vector<double> alpha = class_conditional_alpha(10, 1.0, 3.0);
    alpha[1] = 2.0;  // row 0 has two values off its diagonal
    const GroundTruth general = truth_of(10, std::vector<double>(10, 0.1), alpha);
    CHECK(general[Quantity::ece_top_l2].method == TruthMethod::monte_carlo);
    CHECK(general[Quantity::ece_top_l1].method == TruthMethod::monte_carlo);
  }
}

TEST_CASE("class_conditional top-label quadrature agrees with a 32M-draw Monte Carlo",
          "[dirichlet_max][slow]") {
  // docs/truth.md quotes these four cases: every |difference| below 1.2e-5 (within 1.1 Monte
  // Carlo standard errors when measured).
  struct Case {
    std::size_t K;
    double a, b;
    bool ramp_prior;  // prior proportional to k + 1, else uniform
  };
  for (const Case& c : {Case{10, 1.0, 4.0, false}, Case{20, 0.5, 1.0, true},
                        Case{100, 0.1, 0.5, false}, Case{30, 2.0, 2.5, true}}) {
    std::vector<double> prior(c.K, 1.0);
    double total = 0.0;
    for (std::size_t k = 0; k < c.K; ++k)
      total += prior[k] = c.ramp_prior ? static_cast<double>(k) + 1.0 : 1.0;
    for (double& p : prior) p /= total;
    const Generator gen(ClassConditionalSpec{c.K, prior, class_conditional_alpha(c.K, c.a, c.b)});
    const GroundTruth exact = compute_truth(gen, TruthSettings{});
    TruthSettings long_run;
    long_run.samples = 32'000'000;
    long_run.tolerance = 1e-9;
    const Quantity top[2] = {Quantity::ece_top_l1, Quantity::ece_top_l2};
    const GroundTruth mc = family_monte_carlo(gen, long_run, top);
    for (Quantity q : top) {
      INFO("K = " << c.K << ", a = " << c.a << ", b = " << c.b << ", " << to_string(q) << ": "
                  << exact[q].value << " vs " << mc[q].value << " +- " << mc[q].error);
      CHECK(exact[q].method == TruthMethod::quadrature);
      CHECK(std::abs(exact[q].value - mc[q].value) <= 4.0 * mc[q].error);
      CHECK(std::abs(exact[q].value - mc[q].value) < 1.2e-5);
    }
  }
}
