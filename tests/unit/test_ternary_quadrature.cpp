// Truth at K = 3 by two-dimensional quadrature (ternary_quadrature.hpp) and the posterior over a
// map's preimages (map_preimage.hpp): known answers, invariants, and Rao-Blackwellised Monte
// Carlo; and the affine_logit injectivity bug (is_injective took every affine_logit map as
// injective, so Monte Carlo used r(p) = c and overstated the canonical errors).
#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "truth/binary_quadrature.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/map_preimage.hpp"
#include "truth/ternary_quadrature.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

GroundTruth ternary(const DirichletSpec& spec) {
  GroundTruth t;
  REQUIRE(ternary_quadrature_truth(DirichletGenerator(spec), t));
  for (Quantity q : all_quantities) {
    INFO(to_string(q));
    CHECK(t[q].method == TruthMethod::quadrature);
    CHECK(std::isfinite(t[q].value));
    CHECK(t[q].error < 1e-6);  // the L2 roots' delta method inflates the 1e-9 of a square
  }
  return t;
}

// A K = 3 affine_logit whose fibre direction v (ker D) has mixed signs: two preimages on one
// side of a fold. D's rows W_1 - W_3 = (1, 1, 0) and W_2 - W_3 = (0, 1, 1) have kernel
// span(1, -1, 1)/sqrt 3.
// An injective one: W = I + 0.3 (1 e_1^T) + noise-free bias, S = span(W^-1 1), one-signed.
const AffineLogitMap injective_affine{{1.3, 0.0, 0.0, 0.3, 1.0, 0.0, 0.3, 0.0, 1.0},
                                      {0.2, -0.1, 0.0}};
const AffineLogitMap two_preimage_map{{1.5, 1.0, 0.2, 0.5, 1.0, 1.2, 0.5, 0.0, 0.2},
                                      {0.5, 0.0, 0.0}};
// Three more two-preimage maps, W = (W_3 + d_1; W_3 + d_2; W_3) with d_1, d_2 orthogonal to a
// mixed-sign v (so ker D = span v), and no ties within a column of W (a tie makes the fold
// run out along a segment of constant t, which two_preimage_map has and which is slower):
// v = (2, -1, 0.5), d_1 = (1, 1.5, -1), d_2 = (0.25, 1.25, 1.5);
const AffineLogitMap fold_b{{1.3, 1.7, -0.4, 0.55, 1.45, 2.1, 0.3, 0.2, 0.6}, {0.1, -0.2, 0.0}};
// v = (1, 1, -1.5), d_1 = (1.5, 0.3, 1.2), d_2 = (0.5, 1, 1); here z_3 - z_1 and z_3 - z_2 are
// positive combinations of -log c_k minus at most 0.3, more than 1 on the simplex, so class 3
// is always the argmax of p;
const AffineLogitMap fold_c{{1.7, 0.8, 1.3, 0.7, 1.5, 1.1, 0.2, 0.5, 0.1}, {0.0, 0.2, -0.1}};
// v = (1, -2, 1), d_1 = (1, 1, 1), d_2 = (2, 1.7, 1.4).
const AffineLogitMap fold_d{{1.4, 1.1, 1.5, 2.4, 1.8, 1.9, 0.4, 0.1, 0.5}, {-0.3, 0.4, 0.1}};

// E[f(c, p)] for c ~ Dirichlet(alpha), p = h(c), by nested tanh-sinh over the simplex of c
// (c_1 = x, (c_2, c_3) = (1 - x)(y, 1 - y)), where the density is smooth: an independent check
// of the quadrature over p for quantities that are smooth functions of c (Brier, NLL; and
// accuracy and E[Z] when the argmax of p never changes).
template <class F>
double c_space_mean(const DirichletSpec& spec, const F& f) {
  const DirichletGenerator gen(spec);
  const auto& a = gen.spec().alpha;
  const double log_beta =
      std::lgamma(a[0]) + std::lgamma(a[1]) + std::lgamma(a[2]) - std::lgamma(a[0] + a[1] + a[2]);
  // Two integrators: one may extend its node tables while the other's loop runs.
  boost::math::quadrature::tanh_sinh<double> outer, inner;
  return outer.integrate(
      [&](double x, double xc) {
        const double log_x = std::log(x), log_xc = xc > 0.0 ? std::log(xc) : std::log1p(-x);
        return inner.integrate(
            [&](double y, double yc) {
              const double log_y = std::log(y), log_yc = yc > 0.0 ? std::log(yc) : std::log1p(-y);
              std::vector<double> log_c = {log_x, log_xc + log_y, log_xc + log_yc}, c(3), p(3),
                                  log_p(3), tmp(9);
              for (int k = 0; k < 3; ++k) c[k] = std::exp(log_c[k]);
              apply(spec.map, c, log_c, p, log_p, tmp);
              // Dir(c) (1 - x): the Jacobian of (x, y) -> c.
              double log_density = -log_beta + log_xc;
              for (int k = 0; k < 3; ++k) log_density += (a[k] - 1.0) * log_c[k];
              return std::exp(log_density) * f(c, p, log_p);
            },
            0.0, 1.0, 1e-11);
      },
      0.0, 1.0, 1e-10);
}

// Every quantity of the quadrature against 1M Rao-Blackwellised Monte Carlo draws, within z Monte
// Carlo errors plus the quadrature's own error; a floor of 1e-7 for the controlled accuracy.
void check_against_monte_carlo(const DirichletSpec& spec, double z) {
  const DirichletGenerator gen(spec);
  const GroundTruth exact = ternary(spec);
  const GroundTruth mc = monte_carlo_truth(gen, TruthSettings{1'000'000, 0.0});
  for (Quantity q : all_quantities) {
    INFO(gen.canonical_text() << " " << to_string(q) << ": quadrature " << exact[q].value << ", MC "
                              << mc[q].value << " +- " << mc[q].error);
    CHECK(std::abs(exact[q].value - mc[q].value) <= z * mc[q].error + exact[q].error + 1e-7);
  }
}

}  // namespace

TEST_CASE("is_injective: affine_logit by the sign pattern of its fibre direction",
          "[unit][truth]") {
  // K = 2: S = {delta : A delta_1 + B delta_2 = 0}, spanned by (B, -A): one sign iff A B <= 0
  // (A = W11 - W21, B = W12 - W22), the case binary_quadrature.hpp treats with one branch.
  CHECK(is_injective(AffineLogitMap{{1.0, 0.5, 0.2, 1.5}, {0.3, -0.1}}, 2));   // A 0.8, B -1
  CHECK(!is_injective(AffineLogitMap{{1.0, 0.5, 0.2, -0.5}, {1.0, 0.0}}, 2));  // A 0.8, B 1
  // K = 3: W = I + 0.3 (1 e_1^T) keeps S = span(W^-1 1), one-signed; the map above does not.
  CHECK(is_injective(injective_affine, 3));
  CHECK(!is_injective(two_preimage_map, 3));
  const LogAffineFibres f = log_affine_fibres(log_affine_form(two_preimage_map, 3), 3);
  REQUIRE(f.dimension == 1);
  CHECK(std::abs(std::abs(f.direction[0]) - 1.0 / std::sqrt(3.0)) < 1e-12);
  CHECK(f.direction[0] * f.direction[1] < 0.0);
  // A singular W with 1 in its range: S has dimension 2 (p is a function of one statistic).
  const AffineLogitMap rank_one{{1, 1, 0, 1, 1, 0, 0, 0, 0}, {0, 0, 0}};
  CHECK(!is_injective(rank_one, 3));
  CHECK(MapPreimages(DirichletSpec{3, {1.0}, rank_one}).fibres() ==
        MapPreimages::Fibres::continuum);
  CHECK(
      MapPreimages(DirichletSpec{3, {1.0}, AffineLogitMap{std::vector<double>(9, 0.0), {0, 1, 2}}})
          .fibres() == MapPreimages::Fibres::constant);
  // The others: every power and temperature map is injective (S = span(1/t)).
  CHECK(is_injective(PowerMap{{0.5, 1.0, 3.0}}, 3));
}

TEST_CASE("affine_logit with two preimages: Monte Carlo canonical errors match quadrature",
          "[stat][truth]") {
  // The bug: with r(p) = c the Monte Carlo canonical L1 of this K = 2 generator was 0.431
  // against E|r(p) - p|_1 = 0.139 from the one-dimensional quadrature, whose preimage code
  // (binary_quadrature.cpp) is independent of map_preimage.cpp.
  const DirichletSpec spec{2, {0.8, 1.2}, AffineLogitMap{{1.0, 0.5, 0.2, -0.5}, {1.0, 0.0}}};
  const DirichletGenerator gen(spec);
  GroundTruth exact;
  REQUIRE(binary_quadrature_truth(gen, exact));
  const GroundTruth mc = monte_carlo_truth(gen, TruthSettings{1'000'000, 0.0});
  for (Quantity q : {Quantity::canonical_l1, Quantity::canonical_l2}) {
    INFO(to_string(q) << ": quadrature " << exact[q].value << ", MC " << mc[q].value << " +- "
                      << mc[q].error);
    CHECK(std::abs(exact[q].value - mc[q].value) < 4.0 * mc[q].error + 1e-9);
  }
  CHECK(exact[Quantity::canonical_l1].value == Approx(0.139).margin(1e-3));
}

TEST_CASE("map posterior: the tower property E[(r(p) - c) f(p)] = 0", "[stat][truth]") {
  // For the two-preimage K = 3 map: r(p) from the preimages and their Jacobian weights must
  // average c over draws of c, against f = 1 and f = p_k; and both preimages must really occur.
  const DirichletSpec spec{3, {0.7, 1.1, 1.6}, two_preimage_map};
  const DirichletGenerator gen(spec);
  const MapPreimages preimages(gen.spec());
  Engine engine = make_engine({3, 0, 0, Purpose::truth});
  std::vector<double> c(3), log_c(3), p(3), log_p(3), tmp(9), r(3);
  std::array<RunningStats, 6> moments;
  int two = 0;
  for (int i = 0; i < 200'000; ++i) {
    gen.draw_truth(engine, c, log_c);
    apply(gen.spec().map, c, log_c, p, log_p, tmp);
    unsigned roots = 0;
    REQUIRE(preimages.posterior(log_p, r, tmp, &roots) > 0.0);
    two += roots == 2 ? 1 : 0;
    REQUIRE(r[0] + r[1] + r[2] == Approx(1.0).margin(1e-12));
    for (int k = 0; k < 3; ++k) {
      moments[k].add(r[k] - c[k]);
      moments[3 + k].add((r[k] - c[k]) * p[k]);
    }
  }
  // Six comparisons: z = 3.5 keeps the family-wise false-alarm rate near 0.3%.
  for (const auto& m : moments) CHECK(std::abs(m.mean()) < 3.5 * m.standard_error());
  CHECK(two == 200'000);  // every draw of this map has its twin preimage
}

TEST_CASE("ternary quadrature: the mass of p", "[unit][truth]") {
  for (const MiscalibrationMap& map :
       {MiscalibrationMap{TemperatureMap{0.7}}, MiscalibrationMap{PowerMap{{0.5, 1.0, 2.0}}},
        MiscalibrationMap{injective_affine}}) {
    const DirichletGenerator gen({3, {0.6, 1.0, 1.8}, map});
    INFO(gen.canonical_text());
    CHECK(ternary_quadrature_mass(gen) == Approx(1.0).margin(1e-8));
  }
}

TEST_CASE("ternary quadrature: sign-constant gaps and E[max c]", "[unit][truth]") {
  // temperature keeps the argmax (accuracy = E[max c]) and its top gap has one sign
  // (ece_top_l1 = |overconfidence|, miscalibration.hpp); so does power with equal exponents.
  for (const DirichletSpec& spec : {DirichletSpec{3, {0.5}, TemperatureMap{0.5}},
                                    DirichletSpec{3, {0.8, 1.0, 2.0}, TemperatureMap{1.6}},
                                    DirichletSpec{3, {0.2, 0.4, 0.3}, PowerMap{{1.5, 1.5, 1.5}}}}) {
    const DirichletGenerator gen(spec);
    INFO(gen.canonical_text());
    const GroundTruth t = ternary(spec);
    CHECK(t[Quantity::ece_top_l1].value ==
          Approx(std::abs(t[Quantity::overconfidence].value)).margin(1e-9));
    CHECK(t[Quantity::accuracy].value == Approx(expected_max(gen.spec().alpha).value).margin(1e-9));
  }
}

TEST_CASE("ternary quadrature agrees with Rao-Blackwellised Monte Carlo", "[stat][truth]") {
  // Nine quantities on three generators: Bonferroni over 27 comparisons at a family-wise rate
  // of 1% gives z = 3.7 (the Monte Carlo error is its standard error plus, for binned
  // conditional quantities, its bias bracket); a floor of 1e-7 for the controlled accuracy.
  const double z = boost::math::quantile(
      boost::math::complement(boost::math::normal_distribution<double>(), 0.01 / (2.0 * 27.0)));
  for (const DirichletSpec& spec : {DirichletSpec{3, {0.8, 1.0, 2.0}, TemperatureMap{0.7}},
                                    DirichletSpec{3, {1.0}, PowerMap{{0.5, 1.0, 2.0}}},
                                    DirichletSpec{3, {0.7, 1.1, 1.6}, injective_affine}}) {
    check_against_monte_carlo(spec, z);
  }
}

TEST_CASE("truth at K = 3 is quadrature for top_label and the log-affine maps with finite fibres",
          "[unit][truth]") {
  const GroundTruth t =
      compute_truth(DirichletGenerator({3, {0.5}, PowerMap{{0.8, 1.0, 1.3}}}), TruthSettings{});
  for (Quantity q : all_quantities) CHECK(t[q].method == TruthMethod::quadrature);
  const GroundTruth top =
      compute_truth(DirichletGenerator({3, {0.5}, TopLabelMap{0.8}}), TruthSettings{200'000});
  for (Quantity q : all_quantities) CHECK(top[q].method == TruthMethod::quadrature);
  // A two-preimage affine_logit too, since its fold is treated (docs/truth.md).
  const GroundTruth fold =
      compute_truth(DirichletGenerator({3, {3.0}, fold_c}), TruthSettings{80'000});
  for (Quantity q : all_quantities) CHECK(fold[q].method == TruthMethod::quadrature);
}

TEST_CASE("ternary quadrature, two-preimage affine_logit: known answers over c", "[unit][truth]") {
  // Over c the density has no fold, so Brier = E[sum p^2 - 2 sum p c + 1] and
  // NLL = E[-sum c log p] are smooth two-dimensional integrals there; for fold_c, whose argmax
  // is always class 3, also accuracy = E[c_3] = alpha_3 / alpha_0 (exact) and
  // overconfidence = E[p_3] - accuracy. The quadrature over p reaches them through the two
  // preimages' weights and the fold's square-root substitutions.
  for (const bool fixed_argmax : {true, false}) {
    const DirichletSpec spec =
        fixed_argmax ? DirichletSpec{3, {0.8, 1.2, 2.0}, fold_c} : DirichletSpec{3, {0.5}, fold_b};
    const DirichletGenerator gen(spec);
    INFO(gen.canonical_text());
    CHECK(ternary_quadrature_mass(gen) == Approx(1.0).margin(1e-9));
    const GroundTruth t = ternary(spec);
    const double brier = c_space_mean(spec, [](const auto& c, const auto& p, const auto&) {
      double v = 1.0;
      for (int k = 0; k < 3; ++k) v += p[k] * p[k] - 2.0 * p[k] * c[k];
      return v;
    });
    const double nll = c_space_mean(spec, [](const auto& c, const auto&, const auto& log_p) {
      double v = 0.0;
      for (int k = 0; k < 3; ++k) v -= c[k] * log_p[k];
      return v;
    });
    CHECK(t[Quantity::brier].value == Approx(brier).margin(1e-8));
    CHECK(t[Quantity::nll].value == Approx(nll).margin(1e-8));
    if (fixed_argmax) {
      bool third_on_top = true;
      const double top = c_space_mean(spec, [&](const auto&, const auto& p, const auto&) {
        third_on_top = third_on_top && p[2] > std::max(p[0], p[1]);
        return p[2];
      });
      CHECK(third_on_top);
      CHECK(t[Quantity::accuracy].value == Approx(2.0 / 4.0).margin(1e-8));
      CHECK(t[Quantity::overconfidence].value == Approx(top - 0.5).margin(1e-8));
    }
  }
}

TEST_CASE("ternary quadrature, two-preimage affine_logit: 48- and 96-point grids agree",
          "[unit][truth]") {
  // The break-search grids (and the fold curve's, 8 times finer) find the same breaks: the
  // values agree far inside the 2e-4 target (measured: within 2e-10 on six generators).
  const DirichletGenerator gen({3, {0.5}, fold_b});
  GroundTruth coarse, fine;
  REQUIRE(ternary_quadrature_truth(gen, coarse, {48}));
  REQUIRE(ternary_quadrature_truth(gen, fine, {96}));
  for (Quantity q : all_quantities) {
    INFO(to_string(q) << ": " << coarse[q].value << " vs " << fine[q].value);
    CHECK(std::abs(coarse[q].value - fine[q].value) <= 1e-8);
  }
}

TEST_CASE("ternary quadrature, two-preimage affine_logit, against Monte Carlo", "[stat][truth]") {
  // Nine quantities on three generators (alpha 0.5, 1 and 3), 1M Rao-Blackwellised draws each
  // (r(p) from the exact posterior, map_preimage.hpp): Bonferroni over 27 comparisons at a
  // family-wise 1% gives z = 3.7.
  const double z = boost::math::quantile(
      boost::math::complement(boost::math::normal_distribution<double>(), 0.01 / (2.0 * 27.0)));
  for (const DirichletSpec& spec :
       {DirichletSpec{3, {0.5}, fold_b}, DirichletSpec{3, {1.0}, fold_d},
        DirichletSpec{3, {3.0}, fold_c}}) {
    check_against_monte_carlo(spec, z);
  }
}

TEST_CASE("ternary quadrature, two-preimage affine_logit whose fold runs along a segment",
          "[stat][truth][slow]") {
  // two_preimage_map has ties within columns of W, so its fold tends to segments of constant
  // t (p_3 always the argmax; accuracy 1/3 exactly): the costliest case (about 5M evaluations
  // of Phi). Mass, grid agreement and Monte Carlo (1M draws, Bonferroni over 9).
  const double z = boost::math::quantile(
      boost::math::complement(boost::math::normal_distribution<double>(), 0.01 / (2.0 * 9.0)));
  const DirichletSpec spec{3, {1.0}, two_preimage_map};
  const DirichletGenerator gen(spec);
  CHECK(ternary_quadrature_mass(gen) == Approx(1.0).margin(1e-9));
  const GroundTruth exact = ternary(spec);
  CHECK(exact[Quantity::accuracy].value == Approx(1.0 / 3.0).margin(1e-8));
  // At 96 points this map takes about 780 M steps of F, beyond the default work budget.
  GroundTruth fine;
  REQUIRE(ternary_quadrature_truth(gen, fine, {96, nullptr, nullptr, 2'000'000'000}));
  const GroundTruth mc = monte_carlo_truth(gen, TruthSettings{1'000'000, 0.0});
  for (Quantity q : all_quantities) {
    INFO(to_string(q) << ": quadrature " << exact[q].value << " (96 points " << fine[q].value
                      << "), MC " << mc[q].value << " +- " << mc[q].error);
    CHECK(std::abs(exact[q].value - fine[q].value) <= 1e-8);
    CHECK(std::abs(exact[q].value - mc[q].value) <= z * mc[q].error + exact[q].error + 1e-7);
  }
}

// W(eps) = (d_1; d_2; 0) with d_1 = (1.2, 0.5, -1.2 - 0.5 eps), d_2 = (0.3, 1, -0.3 - eps),
// both orthogonal to v = (1, eps, 1): two preimages for eps < 0 (a fold that runs next to the
// vertex e_2 as eps -> 0), injective for eps >= 0 (docs/truth.md).
AffineLogitMap boundary_map(double eps) {
  return {{1.2, 0.5, -1.2 - 0.5 * eps, 0.3, 1.0, -0.3 - eps, 0.0, 0.0, 0.0}, {0.2, -0.1, 0.0}};
}

TEST_CASE("ternary quadrature, two-preimage affine_logit next to the injectivity boundary",
          "[stat][truth]") {
  // eps = -0.01 (once reported not to finish): it ends inside the work budget, every quantity
  // lies between its values at eps = -0.02 (fold code) and eps = 0 (injective code), which move
  // monotonically across the boundary (measured: accuracy 0.480904, 0.481114, 0.481321), and
  // agrees with 1M Rao-Blackwellised Monte Carlo draws (Bonferroni over 9 at a family-wise 1%).
  const double z = boost::math::quantile(
      boost::math::complement(boost::math::normal_distribution<double>(), 0.01 / (2.0 * 9.0)));
  const DirichletGenerator gen({3, {1.0}, boundary_map(-0.01)});
  std::size_t work = 0;
  GroundTruth mid, left, right;
  REQUIRE(ternary_quadrature_truth(gen, mid, {48, nullptr, &work}));
  CHECK(work < TernaryQuadratureOptions{}.work_budget);
  REQUIRE(ternary_quadrature_truth(DirichletGenerator({3, {1.0}, boundary_map(-0.02)}), left));
  REQUIRE(ternary_quadrature_truth(DirichletGenerator({3, {1.0}, boundary_map(0.0)}), right));
  const GroundTruth mc = monte_carlo_truth(gen, TruthSettings{1'000'000, 0.0});
  for (Quantity q : all_quantities) {
    INFO(to_string(q) << ": eps -0.02 " << left[q].value << ", -0.01 " << mid[q].value << ", 0 "
                      << right[q].value << "; MC " << mc[q].value << " +- " << mc[q].error);
    CHECK(mid[q].value > std::min(left[q].value, right[q].value));
    CHECK(mid[q].value < std::max(left[q].value, right[q].value));
    CHECK(std::abs(mid[q].value - mc[q].value) <= z * mc[q].error + mid[q].error + 1e-7);
  }
}

TEST_CASE("ternary quadrature with a fold: the work budget ends it deterministically",
          "[unit][truth]") {
  // A budget far below the 23-88 M steps a generic two-preimage map needs: Phi becomes 0 once
  // it is spent, no step of F is taken after that, the function returns false and leaves out
  // untouched (the truth engine then uses Monte Carlo), with the same count on every run.
  const DirichletGenerator gen({3, {1.0}, fold_d});
  const std::size_t budget = 2'000'000;
  GroundTruth out;
  out[Quantity::accuracy] = {0.25, TruthMethod::monte_carlo, 1e-3};
  std::size_t work = 0, evaluations = 0, again = 0;
  CHECK_FALSE(ternary_quadrature_truth(gen, out, {48, &evaluations, &work, budget}));
  CHECK(out[Quantity::accuracy].value == 0.25);
  CHECK(out[Quantity::accuracy].method == TruthMethod::monte_carlo);
  // One evaluation takes at most a few hundred steps (map_preimage.cpp's loops are bounded).
  CHECK(work > budget);
  CHECK(work <= budget + 1'000);
  CHECK_FALSE(ternary_quadrature_truth(gen, out, {48, nullptr, &again, budget}));
  CHECK(again == work);
  // The same map with the default budget gets its quadrature.
  CHECK(ternary_quadrature_truth(gen, out));
  CHECK(out[Quantity::accuracy].method == TruthMethod::quadrature);
}

TEST_CASE("ternary quadrature, top_label with gamma <= 1: one-dimensional known answers",
          "[unit][truth]") {
  // gamma <= 1 keeps the argmax and is injective: Z = g(m) with m = max c and c_top = m, so
  // accuracy = E[m], ece_top_l1 = E[g(m) - m] = overconfidence (g(m) >= m) and
  // ece_top_l2^2 = E[(g(m) - m)^2], one-dimensional integrals over the density of m:
  // f(m) = sum_k Beta(m; a_k, a_0 - a_k) P(1 - s <= X <= s), s = m/(1 - m), X ~ Beta(a_i, a_l)
  // (given c_k = m the other two are (1 - m)(X, 1 - X)).
  for (const DirichletSpec& spec : {DirichletSpec{3, {0.6}, TopLabelMap{0.5}},
                                    DirichletSpec{3, {0.5, 1.0, 2.0}, TopLabelMap{0.8}}}) {
    const DirichletGenerator gen(spec);
    INFO(gen.canonical_text());
    const auto& a = gen.spec().alpha;
    const double gamma = std::get<TopLabelMap>(spec.map).gamma, a0 = a[0] + a[1] + a[2];
    const auto g = [&](double m) {
      return 1.0 / 3.0 + 2.0 / 3.0 * std::pow(1.5 * (m - 1.0 / 3.0), gamma);
    };
    const auto density = [&](double m) {
      const double s = std::min(1.0, m / (1.0 - m));
      double f = 0.0;
      for (int k = 0; k < 3; ++k) {
        const int i = (k + 1) % 3, l = (k + 2) % 3;
        const double inside =
            s >= 0.5 ? boost::math::ibeta(a[i], a[l], s) - boost::math::ibeta(a[i], a[l], 1.0 - s)
                     : 0.0;
        f += boost::math::pdf(boost::math::beta_distribution<double>(a[k], a0 - a[k]), m) * inside;
      }
      return f;
    };
    boost::math::quadrature::tanh_sinh<double> integrator;
    // Split at m = 1/2, where s reaches 1 (a kink of the density).
    const auto mean = [&](auto h) {
      const auto f = [&](double m) { return density(m) * h(m); };
      return integrator.integrate(f, 1.0 / 3.0, 0.5, 1e-12) +
             integrator.integrate(f, 0.5, 1.0, 1e-12);
    };
    const double mass = mean([](double) { return 1.0; });
    const double max_c = mean([](double m) { return m; });
    const double gap = mean([&](double m) { return g(m) - m; });
    const double gap_sq = mean([&](double m) { return (g(m) - m) * (g(m) - m); });
    REQUIRE(mass == Approx(1.0).margin(1e-10));
    const GroundTruth t = ternary(spec);
    CHECK(ternary_quadrature_mass(gen) == Approx(1.0).margin(1e-8));
    CHECK(t[Quantity::accuracy].value == Approx(max_c).margin(1e-8));
    CHECK(t[Quantity::accuracy].value == Approx(expected_max(a).value).margin(1e-8));
    CHECK(t[Quantity::ece_top_l1].value == Approx(gap).margin(1e-8));
    CHECK(t[Quantity::overconfidence].value == Approx(gap).margin(1e-8));
    CHECK(t[Quantity::ece_top_l2].value == Approx(std::sqrt(gap_sq)).margin(1e-8));
  }
}

TEST_CASE("ternary quadrature, top_label with gamma > 1 (not injective) against Monte Carlo",
          "[stat][truth]") {
  // Several c map to one p here (r(p) from the candidates of map_preimage.hpp). Bonferroni over
  // 8 comparisons at a family-wise 1%. classwise is not compared: the Monte Carlo's fine bins
  // straddle the jump of E[c_k - p_k | p_k] at p_k = 1/3 and are biased there (docs/truth.md);
  // its quadrature does not depend on the break-search grid (checked by hand: 48 and 96
  // points agree to 1e-9 since the outer sign changes are searched among the integrator's
  // points).
  const double z = boost::math::quantile(
      boost::math::complement(boost::math::normal_distribution<double>(), 0.01 / (2.0 * 8.0)));
  const DirichletSpec spec{3, {0.5, 1.0, 2.0}, TopLabelMap{2.0}};
  const DirichletGenerator gen(spec);
  const GroundTruth exact = ternary(spec);
  CHECK(ternary_quadrature_mass(gen) == Approx(1.0).margin(1e-8));
  const GroundTruth mc = monte_carlo_truth(gen, TruthSettings{1'000'000, 0.0});
  for (Quantity q : all_quantities) {
    if (q == Quantity::classwise_ece_l1) continue;
    INFO(to_string(q) << ": quadrature " << exact[q].value << ", MC " << mc[q].value << " +- "
                      << mc[q].error);
    CHECK(std::abs(exact[q].value - mc[q].value) <= z * mc[q].error + exact[q].error + 1e-7);
  }
}
