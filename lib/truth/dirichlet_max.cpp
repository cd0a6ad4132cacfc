#include "truth/dirichlet_max.hpp"

#include <algorithm>
#include <array>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "core/stop_request.hpp"
#include "truth/vector_quadrature.hpp"

namespace calbench {
namespace {

// ---- The method -------------------------------------------------------------------------------
// With G_j ~ Gamma(beta_j) independent and T = sum G_j, p = G/T is independent of T, so
// P(max p <= u) = P(all G_j <= u | T = 1). Writing G_j = u V_j on the surface T = 1 and
// multiplying the integrand by e^(-x sum V_j) = e^(-x/u), constant there,
//   P(max p <= u) = Gamma(beta_0)/prod_j Gamma(beta_j) u^(beta_0 - 1) e^(x/u) prod_j E_j(x)
//                   f_W(1/u),
// with E_j(x) = int_0^1 v^(beta_j - 1) e^(-x v) dv and f_W the density of W = sum_j V_j for
// independent V_j on [0, 1] with densities v^(beta_j - 1) e^(-x v)/E_j(x). The tilt x is free;
// it is chosen so that E[W] = 1/u (the saddle point), where f_W is near its peak and is computed
// with full relative precision by Fourier inversion,
//   f_W(w) = (1/2 pi) int phi(nu) e^(-i nu w) dnu,   phi(nu) = prod_j E_j(x - i nu)/E_j(x).
// W lives on [0, n], so the trapezoidal rule with step h, 2 pi/h > max(w, n - w), is exact but
// for truncation (Poisson summation: its aliases f_W(w + 2 pi k/h), k != 0, lie outside [0, n]
// where f_W = 0), and |phi| decays like a Gaussian of variance Var W for many components.
// This is the saddle-point approximation made exact; nothing else in Boost computes the law
// of a sum of truncated gammas, hence the hand-written inversion.

using cplx = std::complex<double>;
constexpr double cancellation_limit = 15.0;  // accept a representation losing < e^15 ~ 3e6
constexpr int max_series_terms = 80000;
constexpr int max_fraction_terms = 20000;

// std::log and std::abs of a complex go through hypot, and complex division through the
// overflow-safe __divdc3: both dominated the profile, and the moduli here stay far from
// overflow (the series rescale at 1e150), so the plain formulas are used.
cplx log_of(cplx v) {
  return {0.5 * std::log(std::norm(v)), std::atan2(v.imag(), v.real())};
}
cplx inverse(cplx v) {
  return std::conj(v) / std::norm(v);
}

// log E(beta, z) = log int_0^1 v^(beta - 1) e^(-z v) dv for complex z, from one of three
// representations, each used where it has no large cancellation (none is, alone, accurate
// for every z): the Taylor series sum_k (-z)^k/(k! (beta + k)) near the negative real axis,
// Kummer's e^(-z) sum_k z^k/(beta (beta + 1) ... (beta + k)) near the positive one, and far
// from both z^(-beta) (Gamma(beta) - Gamma(beta, z)) with Legendre's continued fraction for
// Gamma(beta, z) (Numerical Recipes' gcf, modified Lentz). NaN when none applies.
cplx log_moment(double beta, cplx z) {
  const double r = std::sqrt(std::norm(z));
  const bool near_negative = r + z.real() < cancellation_limit;
  const bool near_positive = r - z.real() < cancellation_limit;
  // Kummer's series needs about r - beta terms and the continued fraction converges fast for
  // |z| > beta + 1 (and cancels for |z| < beta on the positive axis, where P(beta, z) << 1).
  if ((near_negative && r < max_series_terms / 4) || (near_positive && r < beta + 40.0)) {
    // Terms rescaled by 1e-150 whenever they pass 1e150, so large |z| cannot overflow (and the
    // squared moduli compared below stay finite).
    constexpr double rescale = 1e150, log_rescale = 345.38776394910684;  // ln 1e150
    double log_scale = 0.0;
    cplx term = 1.0, sum = 0.0;
    for (int k = 0; k < max_series_terms; ++k) {
      cplx add;
      if (near_negative) {
        if (k > 0) term *= -z / static_cast<double>(k);
        add = term / (beta + k);
      } else {
        term = (k == 0) ? cplx(1.0 / beta) : term * z / (beta + k);
        add = term;
      }
      sum += add;
      if (std::max(std::abs(term.real()), std::abs(term.imag())) > rescale) {
        term /= rescale;
        sum /= rescale;
        log_scale += log_rescale;
      }
      if (k > r && k > r - beta && std::norm(add) <= 1e-34 * std::norm(sum))
        return log_of(sum) + log_scale - (near_negative ? cplx(0.0) : z);
    }
    return {std::nan(""), 0.0};
  }
  // Gamma(beta, z) = e^(-z) z^beta h; E = Gamma(beta) z^(-beta) - e^(-z) h.
  const double tiny = 1e-150;
  cplx b = z + 1.0 - beta, c = 1.0 / tiny, d = inverse(b), h = d;
  bool converged = false;
  for (int i = 1; i < max_fraction_terms; ++i) {
    const double an = -i * (i - beta);
    b += 2.0;
    d = an * d + b;
    if (std::norm(d) < tiny * tiny) d = tiny;
    c = b + an * inverse(c);
    if (std::norm(c) < tiny * tiny) c = tiny;
    d = inverse(d);
    const cplx del = d * c;
    h *= del;
    if (std::norm(del - 1.0) < 1e-32) {
      converged = true;
      break;
    }
  }
  if (!converged) return {std::nan(""), 0.0};
  const cplx first = std::lgamma(beta) - beta * log_of(z);
  const cplx second = -z + log_of(h);
  // log(e^first - e^second), refusing a cancellation of more than e^15.
  const bool first_larger = first.real() >= second.real();
  const cplx big = first_larger ? first : second, small = first_larger ? second : first;
  const cplx ratio = 1.0 - std::exp(small - big);
  if (0.5 * std::log(std::norm(ratio)) < -cancellation_limit) return {std::nan(""), 0.0};
  return big + log_of(first_larger ? ratio : -ratio);
}

double log_moment_real(double beta, double x) {
  return log_moment(beta, cplx(x, 0.0)).real();
}

bool finite(cplx v) {
  return std::isfinite(v.real()) && std::isfinite(v.imag());
}

std::size_t total_count(std::span<const ConcentrationGroup> groups) {
  std::size_t n = 0;
  for (const auto& g : groups) n += g.count;
  return n;
}

// The sums over components of log E_j(x) and of the means and variances of V_j under the tilt
// x (E[V] = E_(beta+1)(x)/E_beta(x), E[V^2] = E_(beta+2)(x)/E_beta(x)).
struct Tilt {
  double log_moments = 0.0, mean = 0.0, variance = 0.0;
  bool ok = true;
};
Tilt tilt_at(std::span<const ConcentrationGroup> groups, double x) {
  Tilt t;
  for (const auto& g : groups) {
    const double l0 = log_moment_real(g.alpha, x), l1 = log_moment_real(g.alpha + 1.0, x),
                 l2 = log_moment_real(g.alpha + 2.0, x);
    const double m = std::exp(l1 - l0), s = std::exp(l2 - l0) - m * m;
    const double n = static_cast<double>(g.count);
    t.log_moments += n * l0;
    t.mean += n * m;
    t.variance += n * std::max(s, 0.0);
    t.ok = t.ok && std::isfinite(l0) && std::isfinite(l1) && std::isfinite(l2);
  }
  return t;
}

}  // namespace

std::optional<double> dirichlet_max_cdf_fourier(std::span<const ConcentrationGroup> groups,
                                                double u) {
  const std::size_t n = total_count(groups);
  const double nd = static_cast<double>(n);
  if (u >= 1.0) return 1.0;
  if (u * nd <= 1.0) return 0.0;
  const double w = 1.0 / u;
  // The saddle point: E[W] = w, E[W] decreasing in x from n (x -> -inf) to 0 (x -> inf). The
  // identity holds for any x, so a loose root is enough.
  const auto excess = [&](double x) { return tilt_at(groups, x).mean - w; };
  double lo = 0.0, hi = 0.0, f_lo = excess(0.0), f_hi = f_lo;
  constexpr double x_limit = 1e5;
  if (f_lo > 0.0) {
    for (hi = 1.0; (f_hi = excess(hi)) > 0.0; hi *= 2.0)
      if (hi > x_limit) return std::nullopt;
  } else {
    for (lo = -1.0; (f_lo = excess(lo)) < 0.0; lo *= 2.0)
      if (lo < -x_limit) return std::nullopt;
  }
  double x = lo;
  if (f_lo != 0.0 && f_hi != 0.0) {
    boost::math::tools::eps_tolerance<double> tol(20);
    std::uintmax_t iterations = 60;
    const auto [a, b] =
        boost::math::tools::toms748_solve(excess, lo, hi, f_lo, f_hi, tol, iterations);
    x = 0.5 * (a + b);
  } else if (f_hi == 0.0) {
    x = hi;
  }
  const Tilt at = tilt_at(groups, x);
  if (!at.ok || !(at.variance > 0.0)) return std::nullopt;

  // Trapezoid on [0, inf) of Re(phi(nu) e^(-i nu w)), phi(0) = 1, until |phi| is negligible
  // for three steps in a row (and past 8 standard deviations of phi's Gaussian core).
  const double h = 2.0 * std::numbers::pi / (std::max(w, nd - w) + 1.0);
  const double core = 8.0 / std::sqrt(at.variance);
  std::vector<cplx> log_e0(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) log_e0[g] = log_moment_real(groups[g].alpha, x);
  double sum = 0.5;
  int small_run = 0;
  constexpr int max_steps = 20000, check_every = 64;
  double window_peak = 0.0, last_peak = 0.0;
  for (int k = 1;; ++k) {
    if (k >= max_steps) return std::nullopt;
    const double nu = k * h;
    cplx log_phi = cplx(0.0, -nu * w);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const cplx l = log_moment(groups[g].alpha, cplx(x, -nu));
      if (!finite(l)) return std::nullopt;
      log_phi += static_cast<double>(groups[g].count) * (l - log_e0[g]);
    }
    const double magnitude = std::exp(log_phi.real());
    sum += magnitude * std::cos(log_phi.imag());
    small_run = magnitude < 1e-16 * sum ? small_run + 1 : 0;
    if (small_run >= 3 && nu > core) break;
    // Past the Gaussian core |phi| decays like a power of nu (oscillating: alpha = 1 has a factor
    // |1 - e^(i nu)|): extrapolate the peaks of consecutive windows of `check_every` steps and
    // give up at once if it would not reach 1e-16 well within max_steps.
    window_peak = std::max(window_peak, magnitude);
    if (k % check_every == 0) {
      if (nu > core && last_peak > 0.0 && window_peak > 1e-16 * sum) {
        const double slope = std::log(last_peak / window_peak) /
                             std::log(static_cast<double>(k) / (k - check_every));
        const double needed =
            k * std::pow(window_peak / (1e-16 * sum), 1.0 / std::max(slope, 1e-3));
        if (needed > 4.0 * max_steps) return std::nullopt;
      }
      last_peak = window_peak;
      window_peak = 0.0;
    }
  }
  const double density = h / std::numbers::pi * sum;  // (h/2 pi)(1 + 2 sum_k Re ...)
  if (!(density > 0.0)) return std::nullopt;
  double a0 = 0.0, log_norm = 0.0;
  for (const auto& g : groups) {
    a0 += static_cast<double>(g.count) * g.alpha;
    log_norm -= static_cast<double>(g.count) * std::lgamma(g.alpha);
  }
  log_norm += std::lgamma(a0);
  const double log_h =
      log_norm + (a0 - 1.0) * std::log(u) + x * w + at.log_moments + std::log(density);
  return std::min(1.0, std::exp(log_h));
}

std::optional<double> dirichlet_max_cdf(std::span<const ConcentrationGroup> groups, double u) {
  if (u >= 1.0) return 1.0;
  // S_1 = sum_j P(p_j > u), p_j ~ Beta(beta_j, beta_0 - beta_j). At most one component exceeds
  // u >= 1/2, so then P(max p <= u) = 1 - S_1. Below, Bonferroni gives 1 - S_1 <= P(max p <= u)
  // <= 1 - S_1 + S_2, and S_2 = sum_{j<l} P(p_j > u, p_l > u) <= S_1^2/2 (Dirichlet components
  // are negatively associated): 1 - S_1 is exact to rounding once S_1 < 1e-8, where the
  // inversion's tilt would be extreme.
  double a0 = 0.0;
  for (const auto& g : groups) a0 += static_cast<double>(g.count) * g.alpha;
  double tail = 0.0;
  for (const auto& g : groups) {
    if (g.count == 0) continue;
    if (a0 - g.alpha <= 0.0) return 0.0;  // one component: p = 1 > u
    tail += static_cast<double>(g.count) * boost::math::ibetac(g.alpha, a0 - g.alpha, u);
  }
  if (u >= 0.5 || tail < 1e-8) return std::max(0.0, 1.0 - tail);
  return dirichlet_max_cdf_fourier(groups, u);
}

// ---- class_conditional's top label -----------------------------------------------------------
namespace {

constexpr std::size_t integrands = 5;  // F, F_own, z F, |F_own - z F|, (F_own - z F)^2 / F
using Values = std::array<double, integrands>;

// The Beta(a, b) density at z = 1 - zc: Boost's where z is not near 1, in logs from the exact
// zc near 1 (where 1 - z would round).
double beta_density(double a, double b, double z, double zc) {
  if (zc >= 0.25) return boost::math::ibeta_derivative(a, b, z);
  return std::exp((a - 1.0) * std::log(z) + (b - 1.0) * std::log(zc) - std::lgamma(a) -
                  std::lgamma(b) + std::lgamma(a + b));
}

// The densities of Z = max p under the mixture, split by whether the argmax is the label.
// Given y = k, p_k ~ Beta(b, (K - 1) a) and the other components are (1 - p_k) q with q ~
// Dirichlet(a 1_(K-1)) independent of p_k, so p_k = z is the maximum iff max q <= z/(1 - z):
//   f_own(z) = Beta(z; b, (K - 1) a) P(max q <= z/(1 - z)).
// Likewise a component j != k, p_j ~ Beta(a, b + (K - 2) a), is the maximum iff the rest,
// Dirichlet(b, a 1_(K-2)) scaled by 1 - p_j, stays below it; K - 1 such components.
class TopLabelDensity {
 public:
  TopLabelDensity(std::size_t classes, std::span<const OneOffRow> rows) : K_(classes) {
    for (const auto& r : rows) {
      auto same = std::find_if(rows_.begin(), rows_.end(),
                               [&](const OneOffRow& s) { return s.a == r.a && s.b == r.b; });
      if (same == rows_.end())
        rows_.push_back(r);
      else
        same->weight += r.weight;
    }
  }

  // P(Z <= z) under the mixture.
  std::optional<double> cdf(double z) const {
    double total = 0.0;
    for (const auto& r : rows_) {
      const ConcentrationGroup full[2] = {{r.b, 1}, {r.a, K_ - 1}};
      const auto H = dirichlet_max_cdf(full, z);
      if (!H) return std::nullopt;
      total += r.weight * *H;
    }
    return total;
  }

  // At confidence z, with zc = 1 - z given exactly (the Beta densities may be singular at 1).
  std::optional<Values> at(double z, double zc) const {
    const double u = z / zc, Kd = static_cast<double>(K_);
    double own = 0.0, other = 0.0;
    for (const auto& r : rows_) {
      const ConcentrationGroup rest_of_own[1] = {{r.a, K_ - 1}};
      const ConcentrationGroup rest_of_other[2] = {{r.b, 1}, {r.a, K_ - 2}};
      const auto H1 = dirichlet_max_cdf(rest_of_own, u);
      const auto H2 = dirichlet_max_cdf(std::span(rest_of_other).first(K_ > 2 ? 2 : 1), u);
      if (!H1 || !H2) return std::nullopt;
      own += r.weight * beta_density(r.b, (Kd - 1.0) * r.a, z, zc) * *H1;
      other += r.weight * (Kd - 1.0) * beta_density(r.a, r.b + (Kd - 2.0) * r.a, z, zc) * *H2;
    }
    const double F = own + other, gap = own - z * F;
    return Values{F, own, z * F, std::abs(gap), F > 0.0 ? gap * gap / F : 0.0};
  }
  std::optional<Values> at(double z) const { return at(z, 1.0 - z); }

 private:
  std::size_t K_;
  std::vector<OneOffRow> rows_;
};

// A node where a CDF did not converge: the quadrature gives up (the caller uses Monte Carlo).
struct NodeFailed {};

}  // namespace

std::optional<TopLabelIntegrals> one_off_top_label(std::size_t classes,
                                                   std::span<const OneOffRow> rows) {
  const TopLabelDensity density(classes, rows);
  const double Kd = static_cast<double>(classes);
  // Below z_lo the mass of Z is under 1e-15 (every integrand is at most F): found by
  // bisection, as are quantiles of Z, which become the first pieces' ends so that a narrow peak
  // of the density cannot fall between nodes.
  // A CDF that does not converge (near 1/K, or everywhere for few classes) leaves its quantile
  // where the bisection last succeeded; after a few such failures none is tried again (each can
  // cost milliseconds), and the pieces start at 1/K.
  int failures = 0;
  const auto quantile = [&](double q, double lo, double hi, int steps) -> std::optional<double> {
    for (int i = 0; i < steps; ++i) {
      const double mid = 0.5 * (lo + hi);
      const auto c = failures < 4 ? density.cdf(mid) : std::nullopt;
      if (!c) ++failures;
      if (c && *c <= q)
        lo = mid;
      else
        hi = mid;
    }
    return lo;
  };
  const double top = 0.5;  // above it no component but the largest exceeds 1/2: H = 1
  std::vector<double> ends;
  const auto z_lo = quantile(1e-15, 1.0 / Kd, top, 30);
  if (!z_lo || !density.cdf(*z_lo)) return std::nullopt;
  ends.push_back(*z_lo);
  for (double q : {1e-9, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.9999}) {
    const auto z = quantile(q, ends.back(), top, 24);
    if (z && *z > ends.back() && *z < top) ends.push_back(*z);
  }
  for (double z : {1.0 / 3.0, top})  // u = 1/2 and 1, where the CDFs have kinks
    if (z > ends.back()) ends.push_back(z);
  std::sort(ends.begin(), ends.end());

  // The five integrands at once (the densities are the costly part, so they are evaluated once
  // per node for all five), by the 15-point Gauss-Kronrod rule whose nodes run in parallel.
  const auto integrands_at = [&](double z) {
    // One node at K = 300 distinct alphas costs about a second on a busy core: each looks for
    // a stop request (SIGINT held a run for minutes here before issue #28).
    throw_if_stop_requested();
    const auto values = density.at(z);
    if (!values) throw NodeFailed{};
    Vec<integrands> out;
    out.v = *values;
    return out;
  };
  VectorIntegral<integrands> lower;
  try {
    lower = integrate_adaptive<15, integrands>(
        integrands_at, ends,
        {.tolerance = 1e-11, .max_intervals = 3000, .nodes = NodeEvaluation::parallel});
  } catch (const NodeFailed&) {
    return std::nullopt;
  }
  Values sum = lower.value.v, err = lower.errors.v;
  // [1/2, 1]: every CDF is 1, the densities are Beta densities, singular at 1 for small a.
  boost::math::quadrature::tanh_sinh<double> upper;
  for (std::size_t q = 0; q < integrands; ++q) {
    double e = 0.0;
    // Boost passes the distance to the nearer end: 1 - z exactly near 1.
    const auto f = [&](double z, double distance) {
      return (*density.at(z, distance > 0.0 ? distance : 1.0 - z))[q];
    };
    // With concentrations of a few hundredths the densities (and the squared gap) overflow
    // next to 1, Boost throws "evaluated your function at a singular point", and the caller
    // uses Monte Carlo instead (class_conditional K = 3, concentration 0.02).
    try {
      sum[q] += upper.integrate(f, top, 1.0, 1e-12, &e);
    } catch (const boost::math::evaluation_error&) {
      return std::nullopt;
    }
    err[q] += e;
  }
  TopLabelIntegrals out;
  out.mass = sum[0];
  out.accuracy = sum[1];
  out.mean_confidence = sum[2];
  out.ece_top_l1 = {sum[3], TruthMethod::quadrature, err[3]};
  out.mean_square_gap = {sum[4], TruthMethod::quadrature, err[4]};
  return out;
}

std::optional<double> one_off_top_calibration(std::size_t classes, std::span<const OneOffRow> rows,
                                              double z) {
  const auto f = TopLabelDensity(classes, rows).at(z);
  if (!f || !((*f)[0] > 0.0)) return std::nullopt;
  return (*f)[1] / (*f)[0];
}

}  // namespace calbench
