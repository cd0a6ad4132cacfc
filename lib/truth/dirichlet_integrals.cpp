#include "truth/dirichlet_integrals.hpp"

#include <algorithm>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <map>

#include "core/stop_request.hpp"
#include "truth/quadrature_check.hpp"

namespace calbench {
namespace {

using boost::math::quadrature::tanh_sinh;
constexpr double quad_tolerance = 1e-11;
}  // namespace

std::string_view to_string(TruthMethod method) {
  switch (method) {
    case TruthMethod::closed_form:
      return "closed_form";
    case TruthMethod::quadrature:
      return "quadrature";
    default:
      return "monte_carlo";
  }
}

void set_binary_canonical(GroundTruth& out, const TruthValue& classwise,
                          const TruthValue& mean_square_gap) {
  out[Quantity::classwise_ece_l1] = classwise;
  out[Quantity::canonical_l1] = {2.0 * classwise.value, TruthMethod::quadrature,
                                 2.0 * classwise.error};
  out[Quantity::canonical_l2] =
      root_of({2.0 * mean_square_gap.value, TruthMethod::quadrature, 2.0 * mean_square_gap.error});
}

TruthValue root_of(TruthValue v) {
  const double r = std::sqrt(std::max(v.value, 0.0));
  // sqrt(x + e) - sqrt(x) <= min(e / (2 sqrt x), sqrt e): the delta method, capped where x is
  // near 0 and its slope blows up.
  v.error = r > 0.0 ? std::min(v.error / (2.0 * r), std::sqrt(v.error)) : std::sqrt(v.error);
  v.value = r;
  return v;
}

double expected_sum_squares(std::span<const double> alpha) {
  double a0 = 0.0, s = 0.0;
  for (double a : alpha) a0 += a;
  for (double a : alpha) s += a * (a + 1.0);
  return s / (a0 * (a0 + 1.0));
}

double expected_neg_entropy(std::span<const double> alpha) {
  using boost::math::digamma;
  double a0 = 0.0;
  for (double a : alpha) a0 += a;
  double s = 0.0;
  for (double a : alpha) s += a / a0 * (digamma(a + 1.0) - digamma(a0 + 1.0));
  return s;
}

TruthValue expected_max(std::span<const double> alpha) {
  // Group equal alphas: value -> multiplicity.
  std::map<double, int> groups;
  double a0 = 0.0, a_max = 0.0;
  for (double a : alpha) {
    ++groups[a];
    a0 += a;
    a_max = std::max(a_max, a);
  }
  // Beyond the (1 - 1e-20) quantile of Gamma(a_max + 1) the integrand is below 1e-20.
  const double upper = boost::math::gamma_q_inv(a_max + 1.0, 1e-20);
  tanh_sinh<double> integrator;
  TruthValue out{0.0, TruthMethod::quadrature, 0.0};
  for (const auto& [a, count] : groups) {
    auto integrand = [&, a = a, count = count](double x) {
      // K distinct alphas cost K integrals of K incomplete gammas per node: minutes at
      // K = 300, so every node looks for a stop request (core/stop_request.hpp).
      throw_if_stop_requested();
      // f_{a+1}(x) = x^a e^-x / Gamma(a + 1), in logs.
      double log_f = a * std::log(x) - x - std::lgamma(a + 1.0);
      for (const auto& [b, m] : groups) {
        const int power = (b == a) ? m - 1 : m;
        if (power == 0) continue;
        const double P = boost::math::gamma_p(b, x);
        if (P == 0.0) return 0.0;
        log_f += power * std::log(P);
      }
      return std::exp(log_f);
    };
    double err = 0.0;
    const double I = integrator.integrate(integrand, 0.0, upper, quad_tolerance, &err);
    out.value += count * (a / a0) * I;
    out.error += count * (a / a0) * err;
  }
  return out;
}

GroundTruth identity_truth(std::span<const double> alpha) {
  GroundTruth t;
  for (Quantity q : all_quantities) t[q] = {0.0, TruthMethod::closed_form, 0.0};
  t[Quantity::accuracy] = expected_max(alpha);
  t[Quantity::brier] = {1.0 - expected_sum_squares(alpha), TruthMethod::closed_form, 0.0};
  t[Quantity::nll] = {-expected_neg_entropy(alpha), TruthMethod::closed_form, 0.0};
  return t;
}

bool binary_truth_by_quadrature(const DirichletGenerator& generator, GroundTruth& out) {
  const auto& spec = generator.spec();
  if (spec.classes != 2 || !generator.symmetric() ||
      !has_sign_constant_top_gap(spec.map, spec.classes) || !is_injective(spec.map, 2))
    return false;
  // On K = 2 every map accepted above is symmetric between the classes and keeps the argmax,
  // so with symmetric alpha the half x = c_1 >= 1/2 (t = 1 - x = c_2 <= 1/2) mirrors the other:
  // Z = p_1 there, E[c_top | Z] = x, and every quantity is twice an integral over t in (0, 1/2].
  const double a = spec.alpha[0];
  const double log_beta = std::lgamma(a) * 2.0 - std::lgamma(2.0 * a);
  struct Point {
    double x, t, p1, p2, log_p1, log_p2, density;
  };
  auto at = [&](double t) {
    const double x = 1.0 - t;
    const double c[2] = {x, t};
    const double log_c[2] = {std::log1p(-t), std::log(t)};
    double p[2], log_p[2], scratch[2];
    apply(spec.map, c, log_c, p, log_p, scratch);
    const double density = std::exp((a - 1.0) * (log_c[0] + log_c[1]) - log_beta);
    return Point{x, t, p[0], p[1], log_p[0], log_p[1], density};
  };
  tanh_sinh<double> integrator;
  auto twice_integral = [&](auto&& g) {
    double err = 0.0;
    const double v = integrator.integrate(
        [&](double t) {
          const Point pt = at(t);
          return pt.density == 0.0 ? 0.0 : 2.0 * pt.density * g(pt);
        },
        0.0, 0.5, quad_tolerance, &err);
    return TruthValue{v, TruthMethod::quadrature, 2.0 * err};
  };
  if (!quadrature_mass_ok(twice_integral([](const Point&) { return 1.0; }).value)) return false;
  const TruthValue acc = twice_integral([](const Point& q) { return q.x; });
  const TruthValue l1 = twice_integral([](const Point& q) { return std::abs(q.x - q.p1); });
  const TruthValue l2sq =
      twice_integral([](const Point& q) { return (q.x - q.p1) * (q.x - q.p1); });
  const TruthValue over = twice_integral([](const Point& q) { return q.p1 - q.x; });
  const TruthValue brier = twice_integral([](const Point& q) {
    return q.p1 * q.p1 + q.p2 * q.p2 - 2.0 * (q.p1 * q.x + q.p2 * q.t) + 1.0;
  });
  const TruthValue nll =
      twice_integral([](const Point& q) { return -(q.x * q.log_p1 + q.t * q.log_p2); });
  out[Quantity::accuracy] = acc;
  out[Quantity::ece_top_l1] = l1;
  out[Quantity::ece_top_l2] = root_of(l2sq);
  out[Quantity::overconfidence] = over;
  // On K = 2, p_k determines x, so E[c_k | p_k] = c_k and the classwise error is E|x - p_1|.
  out[Quantity::classwise_ece_l1] = l1;
  out[Quantity::canonical_l1] = {2.0 * l1.value, TruthMethod::quadrature, 2.0 * l1.error};
  out[Quantity::canonical_l2] =
      root_of({2.0 * l2sq.value, TruthMethod::quadrature, 2.0 * l2sq.error});
  out[Quantity::brier] = brier;
  out[Quantity::nll] = nll;
  return true;
}

}  // namespace calbench
