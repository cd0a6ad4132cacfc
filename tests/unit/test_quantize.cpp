// The `quantize` miscalibration map (verbalised confidence on a grid) and its exact truth:
// the rounding rule by hand, the map's invariants, closed forms at K = 2 and for the uniform
// Dirichlet, an independent numpy Monte Carlo (tests/reference/quantize.json), and the binned
// ECE with the grid's bins converging to the truth.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/rng.hpp"
#include "estimators/binned_ece.hpp"
#include "generators/dirichlet.hpp"
#include "reference_data.hpp"
#include "truth/population.hpp"
#include "truth/quantize_truth.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

double binomial(std::size_t n, std::size_t k) {
  double out = 1.0;
  for (std::size_t i = 1; i <= k; ++i)
    out = out * static_cast<double>(n - k + i) / static_cast<double>(i);
  return out;
}

// The uniform Dirichlet (alpha = 1): m = max c is the largest of K spacings of K - 1 uniform
// points, P(m <= u) = sum_j (-1)^j C(K, j) (1 - j u)_+^(K-1) (Feller, An Introduction to
// Probability Theory II, 1971, I.9; David & Nagaraja, Order Statistics, 2003, 6.4), and
// int_0^b (1 - j u)_+^(K-1) du = (1 - (1 - j min(b, 1/j))^K)/(j K). E[m 1{m <= b}] = b F(b) -
// int_0^b F by parts.
struct UniformMax {
  std::size_t K;
  double cdf(double u) const {
    double s = 0.0;
    for (std::size_t j = 0; j <= K; ++j)
      s += (j % 2 ? -1.0 : 1.0) * binomial(K, j) *
           std::pow(std::max(0.0, 1.0 - static_cast<double>(j) * u), static_cast<double>(K - 1));
    return s;
  }
  double below(double b) const {  // E[m 1{m <= b}]
    double integral = b;
    for (std::size_t j = 1; j <= K; ++j) {
      const double jd = static_cast<double>(j);
      integral += (j % 2 ? -1.0 : 1.0) * binomial(K, j) *
                  (1.0 - std::pow(1.0 - jd * std::min(b, 1.0 / jd), static_cast<double>(K))) /
                  (jd * static_cast<double>(K));
    }
    return b * cdf(b) - integral;
  }
};

}  // namespace

TEST_CASE("quantize rounds to the nearest admissible level", "[unit][quantize]") {
  // L = 10: the levels 0.05, 0.15, ..., 0.95; at or above 1/2 the nearest level, below it the
  // smallest level >= m.
  const std::vector<std::pair<double, double>> cases = {
      {0.97, 0.95}, {0.87, 0.85}, {0.83, 0.85}, {0.62, 0.65}, {0.52, 0.55}, {0.5, 0.55},
      {0.48, 0.55}, {0.44, 0.45}, {0.36, 0.45}, {0.34, 0.35}, {0.12, 0.15}, {1.0, 0.95}};
  for (const auto& [m, level] : cases) {
    INFO("m = " << m);
    CHECK(quantize_level(m, 10) == Approx(level).margin(1e-15));
  }
  // L = 3 (levels 1/6, 1/2, 5/6): 1/2 is not > 1/2, so every m in (1/2, 1] reports 5/6.
  CHECK(quantize_level(0.6, 3) == Approx(5.0 / 6.0));
  CHECK(quantize_level(0.4, 3) == Approx(0.5));

  const std::vector<double> ends = {0, 0.05, 0.15, 0.25, 0.35, 0.45, 0.6, 0.7, 0.8, 0.9, 1};
  const auto cells = quantize_cells(10);
  REQUIRE(cells.size() == ends.size() - 1);
  for (std::size_t j = 0; j < cells.size(); ++j) {
    CHECK(cells[j].lo == Approx(ends[j]).margin(1e-15));
    CHECK(cells[j].hi == Approx(ends[j + 1]).margin(1e-15));
    CHECK(cells[j].level == Approx((static_cast<double>(j) + 0.5) / 10).margin(1e-15));
  }
}

TEST_CASE("quantize keeps the argmax, the level and the others' proportions", "[unit][quantize]") {
  const MiscalibrationMap map = QuantizeMap{10};
  for (double a : {0.3, 3.0}) {
    const DirichletGenerator gen({5, {a}, map});
    Engine engine = make_engine({7, 0, 0, Purpose::truth});
    std::vector<double> c(5), log_c(5), p(5), log_p(5), tmp(15);
    for (int i = 0; i < 20'000; ++i) {
      gen.draw_truth(engine, c, log_c);
      apply(map, c, log_c, p, log_p, tmp);
      const auto top = std::max_element(c.begin(), c.end()) - c.begin();
      REQUIRE(std::max_element(p.begin(), p.end()) - p.begin() == top);
      REQUIRE(p[top] == quantize_level(c[top], 10));
      double sum = 0.0;
      for (std::size_t k = 0; k < 5; ++k) {
        sum += p[k];
        REQUIRE(std::abs(std::log(p[k]) - log_p[k]) < 1e-12);
        if (k != static_cast<std::size_t>(top))
          REQUIRE(p[k] / c[k] == Approx((1.0 - p[top]) / (1.0 - c[top])).epsilon(1e-10));
      }
      REQUIRE(sum == Approx(1.0).margin(1e-14));
    }
  }
  // Others that underflow: p stays finite and on the simplex, from log c.
  const std::vector<double> c = {1.0, 0.0, 0.0}, log_c = {0.0, -800.0, -900.0};
  std::vector<double> p(3), log_p(3), tmp(9);
  apply(map, c, log_c, p, log_p, tmp);
  CHECK(p[0] == 0.95);
  CHECK(p[1] == Approx(0.05).margin(1e-15));
  CHECK(log_p[2] == Approx(-100.0 + std::log(0.05)));
}

TEST_CASE("quantize truth at K = 2: closed forms", "[unit][truth][quantize]") {
  SECTION("uniform c_1, L = 3: every m in (1/2, 1] says 5/6") {
    // m ~ U(1/2, 1): accuracy 3/4, E[Z] = 5/6, gap 1/12 everywhere.
    const auto t = compute_truth(DirichletGenerator({2, {1.0}, QuantizeMap{3}}), TruthSettings{});
    CHECK(t[Quantity::accuracy].value == Approx(0.75).margin(1e-14));
    CHECK(t[Quantity::overconfidence].value == Approx(1.0 / 12).margin(1e-14));
    CHECK(t[Quantity::ece_top_l1].value == Approx(1.0 / 12).margin(1e-14));
    CHECK(t[Quantity::ece_top_l2].value == Approx(1.0 / 12).margin(1e-14));
    CHECK(t[Quantity::classwise_ece_l1].value == Approx(1.0 / 12).margin(1e-14));
    CHECK(t[Quantity::canonical_l1].value == Approx(1.0 / 6).margin(1e-14));
    CHECK(t[Quantity::canonical_l2].value == Approx(std::sqrt(2.0) / 12).margin(1e-14));
    // 2 E[(5/6 - 1{y = top})^2] = 2 (25/36 - 2 (5/6)(3/4) + 3/4) = 7/18.
    CHECK(t[Quantity::brier].value == Approx(7.0 / 18).margin(1e-14));
    CHECK(t[Quantity::nll].value ==
          Approx(-0.75 * std::log(5.0 / 6) - 0.25 * std::log(1.0 / 6)).margin(1e-14));
    for (Quantity q : all_quantities) CHECK(t[q].method == TruthMethod::closed_form);
  }
  SECTION("c_1 ~ Beta(2, 1), L = 10: polynomial moments") {
    // Density 2x: class 1 on top with c_1 in (a, b]: P = b^2 - a^2, E = (2/3)(b^3 - a^3);
    // class 0 (density 2(1 - y)): P = [2y - y^2], E = [y^2 - (2/3) y^3].
    double accuracy = 0.0, mean_z = 0.0, l1 = 0.0, l2 = 0.0, classwise = 0.0, brier = 0.0;
    for (int i = 5; i < 10; ++i) {
      const double a = i / 10.0, b = (i + 1) / 10.0, q = (i + 0.5) / 10.0;
      const double P1 = b * b - a * a, E1 = 2.0 / 3 * (b * b * b - a * a * a);
      const auto F0 = [](double y) { return 2 * y - y * y; };
      const auto M0 = [](double y) { return y * y - 2.0 / 3 * y * y * y; };
      const double P0 = F0(b) - F0(a), E0 = M0(b) - M0(a);
      accuracy += E1 + E0;
      mean_z += q * (P1 + P0);
      l1 += std::abs(E1 + E0 - q * (P1 + P0));
      l2 += std::pow(E1 + E0 - q * (P1 + P0), 2) / (P1 + P0);
      classwise += std::abs(E1 - q * P1) + std::abs(E0 - q * P0);
      brier += 2 * (q * q * (P1 + P0) - 2 * q * (E1 + E0) + E1 + E0);
    }
    const auto t =
        compute_truth(DirichletGenerator({2, {2.0, 1.0}, QuantizeMap{10}}), TruthSettings{});
    CHECK(t[Quantity::accuracy].value == Approx(accuracy).margin(1e-13));
    CHECK(t[Quantity::overconfidence].value == Approx(mean_z - accuracy).margin(1e-13));
    CHECK(t[Quantity::ece_top_l1].value == Approx(l1).margin(1e-13));
    CHECK(t[Quantity::ece_top_l2].value == Approx(std::sqrt(l2)).margin(1e-13));
    CHECK(t[Quantity::classwise_ece_l1].value == Approx(classwise).margin(1e-13));
    CHECK(t[Quantity::brier].value == Approx(brier).margin(1e-13));
    // Asymmetric alpha: the two classes' gaps differ, so the classwise error exceeds the top's.
    CHECK(classwise > l1 + 1e-3);
  }
}

TEST_CASE("quantize truth for the uniform Dirichlet matches the spacings' closed form",
          "[unit][truth][quantize]") {
  // K = 3 is exact by the density of m on [1/3, 1/2]. K >= 4 also needs the Fourier CDF of
  // dirichlet_max.hpp below 1/3, which does not converge next to 1/K (measured: K = 6 and 10,
  // alpha 1): the truth then falls back to Monte Carlo, as the numpy comparison below exercises.
  for (const auto& [K, L] : std::vector<std::pair<std::size_t, std::size_t>>{{3, 7}, {3, 10}}) {
    {
      INFO("K = " << K << ", L = " << L);
      const UniformMax law{K};
      const auto moments = quantize_moments(std::vector<double>(K, 1.0), L);
      REQUIRE(moments);
      CHECK(moments->error < 1e-9);
      const auto cells = quantize_cells(L);
      REQUIRE(moments->cells.size() == cells.size());
      double l1 = 0.0;
      for (std::size_t j = 0; j < cells.size(); ++j) {
        const double P = law.cdf(cells[j].hi) - law.cdf(cells[j].lo);
        const double E = law.below(cells[j].hi) - law.below(cells[j].lo);
        CHECK(moments->cells[j].probability == Approx(P).margin(1e-10));
        CHECK(moments->cells[j].first_moment == Approx(E).margin(1e-10));
        l1 += std::abs(E - cells[j].level * P);
      }
      const auto t = compute_truth(DirichletGenerator({K, {1.0}, QuantizeMap{L}}), TruthSettings{});
      CHECK(t[Quantity::ece_top_l1].value == Approx(l1).margin(1e-10));
      CHECK(t[Quantity::ece_top_l1].method == TruthMethod::quadrature);
    }
  }
}

TEST_CASE("where the K >= 4 moments fall back to Monte Carlo", "[unit][truth][quantize]") {
  // docs/truth.md's list: the Fourier CDF below 1/3 does not converge for these (if it ever
  // does, the docs' list must change with this test).
  for (const std::vector<double>& alpha :
       {std::vector<double>(4, 1.0), std::vector<double>(4, 0.5), std::vector<double>{0.5, 1, 2, 3},
        std::vector<double>(6, 1.0), std::vector<double>(10, 1.0), std::vector<double>(10, 0.3)}) {
    INFO("K = " << alpha.size() << ", alpha_1 = " << alpha.front());
    CHECK_FALSE(quantize_moments(alpha, 10));
  }
  CHECK(quantize_moments(std::vector<double>(10, 3.0), 10));
}

TEST_CASE("quantize truth agrees with an independent numpy Monte Carlo of 10^7 draws",
          "[stat][truth][quantize]") {
  std::ifstream in(testing::reference_dir() + "/quantize.json");
  REQUIRE(in);
  const auto cases = nlohmann::json::parse(in);
  // 4 cases x 6 quantities: z = 4.5 keeps the family-wise false-alarm rate below 0.02 %.
  constexpr double z = 4.5;
  for (const auto& [name, c] : cases.items()) {
    const DirichletGenerator gen({c["classes"].get<std::size_t>(),
                                  c["alpha"].get<std::vector<double>>(),
                                  QuantizeMap{c["levels"].get<std::size_t>()}});
    // Only what the reference holds: the canonical and classwise errors' Monte Carlo is not paid.
    const std::vector<Quantity> needed = {Quantity::accuracy,   Quantity::overconfidence,
                                          Quantity::ece_top_l1, Quantity::ece_top_l2,
                                          Quantity::brier,      Quantity::nll};
    const auto t = compute_truth(gen, TruthSettings{}, needed);
    const auto& v = c["values"];
    const auto check = [&](const char* key, double truth, double truth_error) {
      const double mc = v[key]["value"].get<double>(), se = v[key]["se"].get<double>();
      INFO(name << " " << key << ": truth " << truth << " (" << truth_error << "), numpy " << mc
                << " (" << se << ")");
      CHECK(std::abs(truth - mc) < z * std::hypot(se, truth_error) + 1e-12);
    };
    check("accuracy", t[Quantity::accuracy].value, t[Quantity::accuracy].error);
    check("mean_confidence", t[Quantity::accuracy].value + t[Quantity::overconfidence].value,
          t[Quantity::overconfidence].error);
    check("ece_top_l1", t[Quantity::ece_top_l1].value, t[Quantity::ece_top_l1].error);
    check("ece_top_l2", t[Quantity::ece_top_l2].value, t[Quantity::ece_top_l2].error);
    check("brier", t[Quantity::brier].value, t[Quantity::brier].error);
    check("nll", t[Quantity::nll].value, t[Quantity::nll].error);
  }
}

TEST_CASE("the binned ECE with the grid's bins converges to the quantize truth",
          "[stat][truth][quantize]") {
  // Equal-width bins (a, b] of width 1/L hold one level each, in their middle: the plug-in's
  // population value (Rao-Blackwellised, c in place of labels) is sum_j |E_j - l_j P_j| up to
  // Monte Carlo error, for any K.
  for (const DirichletSpec& spec :
       {DirichletSpec{10, {3.0}, QuantizeMap{10}}, DirichletSpec{4, {0.5, 1, 2, 3}, QuantizeMap{5}},
        DirichletSpec{2, {0.7}, QuantizeMap{10}}}) {
    const std::size_t L = std::get<QuantizeMap>(spec.map).levels;
    const BinnedEce ece({L, Binning::equal_width, Norm::l1});
    const DirichletGenerator gen(spec);
    const std::vector<Quantity> needed = {Quantity::ece_top_l1};
    const auto t = compute_truth(gen, TruthSettings{}, needed);
    // K = 10, alpha 3 takes the exact K >= 4 path (the Fourier CDF below 1/3 converges there).
    if (spec.classes == 10) CHECK(t[Quantity::ece_top_l1].method == TruthMethod::quadrature);
    const std::vector<const Estimator*> estimators = {&ece};
    const PopulationValue v = population_values(gen, estimators, 400'000)[0];
    INFO(gen.canonical_text() << ": binned " << v.value << " +- " << v.error << ", truth "
                              << t[Quantity::ece_top_l1].value);
    CHECK(std::abs(v.value - t[Quantity::ece_top_l1].value) <
          4.5 * v.error + t[Quantity::ece_top_l1].error);
  }
}

TEST_CASE("quantize's posterior r(p) gives the closed-form canonical errors at K = 2",
          "[stat][truth][quantize]") {
  // The Monte Carlo with r(p) from the truncated Beta posterior of m (map_preimage.hpp) against
  // the closed forms, which need no posterior (p_1 tells the class and the cell): checks the
  // posterior that the K >= 3 canonical errors rely on.
  const DirichletGenerator gen({2, {0.5, 2.0}, QuantizeMap{7}});
  const auto exact = compute_truth(gen, TruthSettings{});
  const auto mc = monte_carlo_truth(gen, TruthSettings{});
  for (Quantity q : {Quantity::canonical_l1, Quantity::canonical_l2}) {
    INFO(to_string(q) << ": closed form " << exact[q].value << ", Monte Carlo " << mc[q].value
                      << " +- " << mc[q].error);
    CHECK(std::abs(exact[q].value - mc[q].value) < 4.5 * mc[q].error + 1e-12);
  }
  // K = 3: offered, by Monte Carlo.
  const auto k3 = compute_truth(DirichletGenerator({3, {1.0}, QuantizeMap{10}}), TruthSettings{});
  CHECK(k3[Quantity::canonical_l1].method == TruthMethod::monte_carlo);
  CHECK(k3[Quantity::canonical_l1].value > 0.0);
  CHECK(k3[Quantity::canonical_l1].error < 2e-4);
}
