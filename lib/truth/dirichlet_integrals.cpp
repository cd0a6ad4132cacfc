#include "truth/dirichlet_integrals.hpp"

#include <algorithm>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <map>

namespace calbench {
namespace {

using boost::math::quadrature::tanh_sinh;
constexpr double quad_tolerance = 1e-11;
// The K = 3 integrands have kinks where the argmax changes and where |c_k - p_k| crosses 0,
// on which tanh-sinh refines without converging; capping its levels bounds the cost. The
// error estimate is then the outer integrator's, and the tests compare against Monte Carlo.
constexpr std::size_t ternary_levels = 7;
constexpr double ternary_tolerance = 1e-9;

// int_0^1 f(x, 1 - x) dx, with both complements exact: each half is integrated from an end at
// 0, where tanh-sinh approaches the (possibly singular) end without losing precision.
template <class F>
TruthValue integrate_unit(const F& f, std::size_t max_refinements = 15,
                          double tolerance = quad_tolerance) {
  tanh_sinh<double> integrator(max_refinements);
  double err_a = 0.0, err_b = 0.0;
  const double a =
      integrator.integrate([&](double t) { return f(t, 1.0 - t); }, 0.0, 0.5, tolerance, &err_a);
  const double b =
      integrator.integrate([&](double s) { return f(1.0 - s, s); }, 0.0, 0.5, tolerance, &err_b);
  return {a + b, TruthMethod::quadrature, err_a + err_b};
}

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
  v.error = r > 0.0 ? v.error / (2.0 * r) : std::sqrt(v.error);
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
  auto root = [](TruthValue v) {
    const double r = std::sqrt(std::max(v.value, 0.0));
    // d sqrt(v) = dv / (2 sqrt v); at v = 0 the bound is sqrt(error).
    v.error = r > 0.0 ? v.error / (2.0 * r) : std::sqrt(v.error);
    v.value = r;
    return v;
  };
  out[Quantity::accuracy] = acc;
  out[Quantity::ece_top_l1] = l1;
  out[Quantity::ece_top_l2] = root(l2sq);
  out[Quantity::overconfidence] = over;
  // On K = 2, p_k determines x, so E[c_k | p_k] = c_k and the classwise error is E|x - p_1|.
  out[Quantity::classwise_ece_l1] = l1;
  out[Quantity::canonical_l1] = {2.0 * l1.value, TruthMethod::quadrature, 2.0 * l1.error};
  out[Quantity::canonical_l2] = root({2.0 * l2sq.value, TruthMethod::quadrature, 2.0 * l2sq.error});
  out[Quantity::brier] = brier;
  out[Quantity::nll] = nll;
  return true;
}

int ternary_truth_by_quadrature(const DirichletGenerator& generator, GroundTruth& out,
                                std::array<bool, all_quantities.size()>& filled) {
  const auto& spec = generator.spec();
  filled.fill(false);
  if (spec.classes != 3 || !is_injective(spec.map, 3)) return 0;
  const double a1 = spec.alpha[0], a2 = spec.alpha[1], a3 = spec.alpha[2];
  const double log_norm =
      std::lgamma(a1) + std::lgamma(a2) + std::lgamma(a3) - std::lgamma(a1 + a2 + a3);
  // c = (x, (1-x) v, (1-x)(1-v)); the Dirichlet density times the Jacobian (1 - x) factorises:
  // x^(a1-1) (1-x)^(a2+a3-1) v^(a2-1) (1-v)^(a3-1) / B(alpha).
  enum Slot { acc, over, brier, nll, l1, l2sq, slots };
  auto integrand = [&](int slot) {
    return [&, slot](double x, double xc) {
      return integrate_unit(
                 [&](double v, double vc) {
                   const double log_c[3] = {std::log(x), std::log(xc) + std::log(v),
                                            std::log(xc) + std::log(vc)};
                   const double c[3] = {x, xc * v, xc * vc};
                   double p[3], log_p[3], scratch[3];
                   apply(spec.map, c, log_c, p, log_p, scratch);
                   const double density =
                       std::exp((a1 - 1.0) * log_c[0] + (a2 + a3 - 1.0) * std::log(xc) +
                                (a2 - 1.0) * std::log(v) + (a3 - 1.0) * std::log(vc) - log_norm);
                   if (density == 0.0) return 0.0;
                   const std::size_t top = static_cast<std::size_t>(std::max_element(p, p + 3) - p);
                   double g = 0.0;
                   switch (slot) {
                     case acc:
                       g = c[top];
                       break;
                     case over:
                       g = p[top] - c[top];
                       break;
                     case brier:
                       for (int k = 0; k < 3; ++k) g += p[k] * p[k] - 2.0 * p[k] * c[k];
                       g += 1.0;
                       break;
                     case nll:
                       for (int k = 0; k < 3; ++k) g -= c[k] * log_p[k];
                       break;
                     case l1:
                       for (int k = 0; k < 3; ++k) g += std::abs(c[k] - p[k]);
                       break;
                     case l2sq:
                       for (int k = 0; k < 3; ++k) g += (c[k] - p[k]) * (c[k] - p[k]);
                       break;
                   }
                   return density * g;
                 },
                 ternary_levels, ternary_tolerance)
          .value;
    };
  };
  TruthValue v[slots];
  for (int s = 0; s < slots; ++s)
    v[s] = integrate_unit(integrand(s), ternary_levels, ternary_tolerance);
  auto set = [&](Quantity q, TruthValue value) {
    out[q] = value;
    filled[static_cast<std::size_t>(q)] = true;
  };
  set(Quantity::accuracy, v[acc]);
  set(Quantity::overconfidence, v[over]);
  set(Quantity::brier, v[brier]);
  set(Quantity::nll, v[nll]);
  set(Quantity::canonical_l1, v[l1]);
  const double r = std::sqrt(std::max(v[l2sq].value, 0.0));
  set(Quantity::canonical_l2,
      {r, TruthMethod::quadrature, r > 0.0 ? v[l2sq].error / (2.0 * r) : 0.0});
  if (has_sign_constant_top_gap(spec.map, spec.classes))
    set(Quantity::ece_top_l1, {std::abs(v[over].value), TruthMethod::quadrature, v[over].error});
  int count = 0;
  for (bool f : filled) count += f ? 1 : 0;
  return count;
}

}  // namespace calbench
