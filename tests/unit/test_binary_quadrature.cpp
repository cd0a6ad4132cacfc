// Truth at K = 2 by one-dimensional quadrature over lambda = logit p_1 (binary_quadrature.hpp):
// known answers, the older symmetric quadrature, and Rao-Blackwellised Monte Carlo.
#include <boost/math/distributions/normal.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "truth/binary_quadrature.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

GroundTruth quadrature(const DirichletSpec& spec) {
  GroundTruth t;
  REQUIRE(binary_quadrature_truth(DirichletGenerator(spec), t));
  for (Quantity q : all_quantities) {
    INFO(to_string(q));
    CHECK(t[q].method == TruthMethod::quadrature);
    CHECK(std::isfinite(t[q].value));
    CHECK(t[q].error < 1e-8);  // sums of the pieces' estimates: 1e-9 to 3e-9 with a fold
  }
  return t;
}

// Generators for which calbench used Monte Carlo before (asymmetric alpha, unequal exponents,
// affine_logit) or whose preimage structure is special: affine_logit with A = W11 - W21 and
// B = W12 - W22 of one sign has d lambda/d s = A (1 - x) - B x = 0 at x = A/(A + B), so lambda
// has two preimages below its maximum and r(p) != c; top_label gamma = 2.
struct Case {
  const char* name;
  DirichletSpec spec;
};
std::vector<Case> cases() {
  return {
      {"temperature 0.6, alpha (0.4, 1.5)", {2, {0.4, 1.5}, TemperatureMap{0.6}}},
      {"power (0.5, 2), alpha 1", {2, {1.0}, PowerMap{{0.5, 2.0}}}},
      {"power (1.7, 2.3), alpha 0.3", {2, {0.3}, PowerMap{{1.7, 2.3}}}},
      {"top_label 2, alpha (0.5, 1.5)", {2, {0.5, 1.5}, TopLabelMap{2.0}}},
      {"affine_logit monotone", {2, {0.7, 1.3}, AffineLogitMap{{1.0, 0.5, 0.2, 1.5}, {0.3, -0.1}}}},
      {"affine_logit two preimages",
       {2, {0.8, 1.2}, AffineLogitMap{{1.0, 0.5, 0.2, -0.5}, {1.0, 0.0}}}},
      // lambda = log x + log(1 - x) <= -log 4: class 2 is always the top label. Integrated over
      // lambda, int q came out 1.013 at alpha 1 and these fell back to Monte Carlo.
      {"affine_logit fold at x = 1/2, alpha 1", {2, {1.0}, AffineLogitMap{{1, 1, 0, 0}, {0, 0}}}},
      {"affine_logit fold, alpha (0.1, 0.3)",
       {2, {0.1, 0.3}, AffineLogitMap{{1, 1, 0, 0}, {0, 0}}}},
  };
}

}  // namespace

TEST_CASE("binary quadrature: identity closed forms", "[unit][truth]") {
  for (const auto& alpha :
       {std::vector<double>{0.5}, std::vector<double>{0.3, 2.0}, std::vector<double>{0.05, 0.2}}) {
    const DirichletSpec spec{2, alpha, IdentityMap{}};
    const DirichletGenerator gen(spec);
    const GroundTruth t = quadrature(spec);
    const auto& a = gen.spec().alpha;
    INFO("alpha " << a[0] << ", " << a[1]);
    CHECK(binary_quadrature_mass(gen) == Approx(1.0).margin(1e-12));
    // DESIGN.md §1: Brier = 1 - sum a_k (a_k + 1)/(a_0 (a_0 + 1)), NLL = -sum (a_k/a_0)(psi(a_k
    // + 1) - psi(a_0 + 1)); accuracy = E[max c] (dirichlet_integrals.hpp); every error 0.
    CHECK(t[Quantity::brier].value == Approx(1.0 - expected_sum_squares(a)).margin(1e-12));
    CHECK(t[Quantity::nll].value == Approx(-expected_neg_entropy(a)).margin(1e-12));
    CHECK(t[Quantity::accuracy].value == Approx(expected_max(a).value).margin(1e-12));
    for (Quantity q : {Quantity::ece_top_l1, Quantity::ece_top_l2, Quantity::classwise_ece_l1,
                       Quantity::canonical_l1, Quantity::canonical_l2, Quantity::overconfidence}) {
      INFO(to_string(q));
      CHECK(std::abs(t[q].value) < 1e-12);
    }
  }
}

TEST_CASE("binary quadrature: sign-constant gaps and the symmetric quadrature", "[unit][truth]") {
  // temperature, and top_label on K = 2 for any gamma: P(y = argmax p | Z) - Z has one sign,
  // so ece_top_l1 = |E[Z] - accuracy| = |overconfidence| (miscalibration.hpp).
  for (const DirichletSpec& spec :
       {DirichletSpec{2, {0.4, 1.5}, TemperatureMap{0.6}},
        DirichletSpec{2, {2.0, 0.7}, TemperatureMap{1.7}},
        DirichletSpec{2, {0.5, 1.5}, TopLabelMap{2.0}}, DirichletSpec{2, {0.1}, TopLabelMap{0.5}},
        DirichletSpec{2, {0.1, 0.3}, TopLabelMap{5.0}}}) {
    const GroundTruth t = quadrature(spec);
    INFO(DirichletGenerator(spec).canonical_text());
    CHECK(t[Quantity::ece_top_l1].value ==
          Approx(std::abs(t[Quantity::overconfidence].value)).margin(1e-12));
    // Both maps keep the argmax: accuracy = E[max c] (dirichlet_integrals.hpp).
    CHECK(t[Quantity::accuracy].value ==
          Approx(expected_max(DirichletGenerator(spec).spec().alpha).value).margin(1e-11));
  }
  // Where the older quadrature over c_1 (symmetric alpha, dirichlet_integrals.hpp) applies,
  // both agree: two different changes of variables, one set of numbers.
  for (const DirichletSpec& spec :
       {DirichletSpec{2, {0.1}, TemperatureMap{0.4}}, DirichletSpec{2, {1.2}, TemperatureMap{2.5}},
        DirichletSpec{2, {0.5}, TopLabelMap{2.0}}, DirichletSpec{2, {0.5}, TopLabelMap{0.5}},
        DirichletSpec{2, {3.0}, PowerMap{{0.7, 0.7}}}}) {
    const DirichletGenerator gen(spec);
    GroundTruth old;
    REQUIRE(binary_truth_by_quadrature(gen, old));
    const GroundTruth t = quadrature(spec);
    for (Quantity q : all_quantities) {
      INFO(gen.canonical_text() << " " << to_string(q));
      CHECK(t[q].value == Approx(old[q].value).margin(1e-10));
    }
  }
}

TEST_CASE("binary quadrature: top_label on K = 2 and the mass of lambda", "[unit][truth]") {
  // gamma = 2, u = tanh(s/2) = 0.6 at s = 2 atanh(0.6) = log 4: g = (1 + 0.36)/2 = 0.68, so
  // lambda = log(0.68/0.32) = log(2.125); the generator's map must give the same p.
  const DirichletSpec spec{2, {1.0}, TopLabelMap{2.0}};
  const double x = 0.8;  // logit 0.8 = log 4
  const double c[2] = {x, 1.0 - x}, log_c[2] = {std::log(x), std::log(1.0 - x)};
  double p[2], log_p[2], scratch[2];
  apply(spec.map, c, log_c, p, log_p, scratch);
  CHECK(p[0] == Approx(0.68).margin(1e-15));
  // The density of lambda integrates to 1 (change of variables and its Jacobian).
  for (const auto& item : cases()) {
    INFO(item.name);
    CHECK(binary_quadrature_mass(DirichletGenerator(item.spec)) == Approx(1.0).margin(1e-10));
  }
}

TEST_CASE("binary quadrature agrees with Rao-Blackwellised Monte Carlo", "[stat][truth]") {
  // Nine quantities on six generators: Bonferroni over the 54 comparisons at a family-wise
  // false-alarm rate of 1% gives z = 3.9 standard errors (the Monte Carlo error is its standard
  // error plus, for binned conditional quantities, its bias bracket). The 1e-7 floor covers the
  // Monte Carlo accuracy of argmax-keeping maps, whose control variate (max c) makes its
  // reported error collapse to 1e-9 while the value stays 2e-8 off E[max c].
  const auto all = cases();
  const double comparisons = 9.0 * static_cast<double>(all.size());
  const double z = boost::math::quantile(boost::math::complement(
      boost::math::normal_distribution<double>(), 0.01 / (2.0 * comparisons)));
  REQUIRE(z > 3.0);
  TruthSettings settings;
  settings.samples = 4'000'000;
  for (const auto& item : all) {
    const DirichletGenerator gen(item.spec);
    const GroundTruth exact = quadrature(item.spec);
    const GroundTruth mc = monte_carlo_truth(gen, settings);
    // affine_logit two preimages: Monte Carlo's r(p) is the posterior over both preimages
    // (map_preimage.hpp); before it took r(p) = c and failed this check by 0.29.
    for (Quantity q : all_quantities) {
      INFO(item.name << " " << to_string(q) << ": quadrature " << exact[q].value << ", MC "
                     << mc[q].value << " +- " << mc[q].error);
      CHECK(std::abs(exact[q].value - mc[q].value) <= z * mc[q].error + exact[q].error + 1e-7);
    }
  }
}

// Known answers over x = c_1 for lambda = A log x + B log(1 - x) with A, B > 0 (a fold at
// x = A/(A + B)): over x nothing is singular, p_1 = sigmoid(lambda(x)), and Brier, NLL and
// accuracy are plain expectations (tanh_sinh on [0, 1/2] and [1/2, 1]).
TEST_CASE("binary quadrature with a fold: known answers over x", "[unit][truth]") {
  struct Fold {
    double a1, a2, A, B;
  };
  for (const Fold f : {Fold{1.0, 1.0, 1.0, 1.0}, Fold{1.0, 1.0, 1.0, 0.5}, Fold{0.3, 2.0, 1.0, 1.0},
                       Fold{20.0, 20.0, 1.0, 1.0}}) {
    const DirichletSpec spec{2, {f.a1, f.a2}, AffineLogitMap{{f.A, f.B, 0, 0}, {0, 0}}};
    const GroundTruth t = quadrature(spec);
    const double lb = std::lgamma(f.a1) + std::lgamma(f.a2) - std::lgamma(f.a1 + f.a2);
    boost::math::quadrature::tanh_sinh<double> ts;
    const auto expect = [&](auto h) {
      const auto g = [&](double x, double xc) {
        const double lx = std::log(x), lxc = std::log(xc);
        const double lam = f.A * lx + f.B * lxc;
        const double log_p1 = -std::log1p(std::exp(-lam)), log_p2 = -std::log1p(std::exp(lam));
        return h(x, xc, log_p1, log_p2) * std::exp((f.a1 - 1.0) * lx + (f.a2 - 1.0) * lxc - lb);
      };
      // alpha_2 >= 1 in every case, so 1 - x may lose digits near 1 harmlessly.
      return ts.integrate([&](double x) { return g(x, 1.0 - x); }, 0.0, 0.5) +
             ts.integrate([&](double x) { return g(x, 1.0 - x); }, 0.5, 1.0);
    };
    const double brier = expect([](double x, double xc, double l1, double l2) {
      const double p1 = std::exp(l1), p2 = std::exp(l2);
      return (p1 - x) * (p1 - x) + (p2 - xc) * (p2 - xc) + 2.0 * x * xc;  // E|p - e_y|^2 given c
    });
    const double nll =
        expect([](double x, double xc, double l1, double l2) { return -(x * l1 + xc * l2); });
    INFO("alpha (" << f.a1 << ", " << f.a2 << "), A " << f.A << ", B " << f.B);
    CHECK(t[Quantity::accuracy].value == Approx(f.a2 / (f.a1 + f.a2)).margin(1e-7));
    CHECK(t[Quantity::brier].value == Approx(brier).margin(1e-7));
    CHECK(t[Quantity::nll].value == Approx(nll).margin(1e-7));
    // The argmax never changes, so ece_top_l1 = |overconfidence| = classwise (both classes).
    CHECK(t[Quantity::ece_top_l1].value ==
          Approx(std::abs(t[Quantity::overconfidence].value)).margin(1e-9));
  }
}

TEST_CASE("truth at K = 2 is quadrature for every map", "[unit][truth]") {
  for (const auto& item : cases()) {
    const GroundTruth t = compute_truth(DirichletGenerator(item.spec), TruthSettings{});
    for (Quantity q : all_quantities) {
      INFO(item.name << " " << to_string(q));
      CHECK(t[q].method == TruthMethod::quadrature);
      CHECK(t[q].error < 1e-9);
    }
  }
}
