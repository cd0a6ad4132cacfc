#include "truth/ternary_quadrature.hpp"

#include <algorithm>
#include <array>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "truth/fold_curve.hpp"
#include "truth/logistic.hpp"
#include "truth/map_preimage.hpp"
#include "truth/quadrature_check.hpp"
#include "truth/vector_quadrature.hpp"

namespace calbench {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
// Absolute tolerances of the inner and outer integrals (the integrands are densities of a
// probability measure times quantities of order 1), and the most intervals of one integral.
constexpr double inner_tolerance = 1e-11, outer_tolerance = 1e-9;
constexpr std::size_t max_intervals = 200;
// Points of the fold curve's grid per point of the break-search grids (fold_curve.hpp).
constexpr int fold_grid_factor = 8;
// The most evaluations of Phi (the tested generators take 0.5-5 M for all nine quantities at
// 48 points; an injective affine_logit at alpha 0.05, 29 M). The work inside them (steps of F)
// is bounded too, by TernaryQuadratureOptions::work_budget: one evaluation with a fold costs 5
// to several hundred steps. Without the bound an injective affine_logit at alpha 0.02, whose
// density spans log-ratios of thousands, ran for minutes (its mass came out 0.83).
constexpr std::size_t evaluation_budget = 30'000'000;
// Values within this of their scale count as zero when signs are compared (rounding noise).
constexpr double noise = 1e-12;

// int_a^b f (a vector) by the adaptive 21-point Gauss-Kronrod rule with a global absolute
// tolerance (truth/vector_quadrature.hpp). An infinite end is mapped to a finite one by
// u = a + x/(1 - x), du = dx/(1 - x)^2. Returns the value; `error` is the sum of the errors.
template <std::size_t N, class F>
Vec<N> integrate_vector(const F& f, double a, double b, double tolerance, double& error) {
  error = 0.0;
  if (!(b > a)) return Vec<N>(0.0);
  if (!std::isfinite(a) && !std::isfinite(b)) {
    double e1 = 0.0, e2 = 0.0;
    const Vec<N> lo = integrate_vector<N>(f, a, 0.0, 0.5 * tolerance, e1);
    const Vec<N> hi = integrate_vector<N>(f, 0.0, b, 0.5 * tolerance, e2);
    error = e1 + e2;
    return lo + hi;
  }
  const auto g = [&](double x) -> Vec<N> {
    if (std::isfinite(a) && std::isfinite(b)) return f(x);
    const double xc = 1.0 - x, u = x / xc, w = 1.0 / (xc * xc);
    return f(std::isfinite(a) ? a + u : b - u) * w;
  };
  const double lo = std::isfinite(a) && std::isfinite(b) ? a : 0.0;
  const double hi = std::isfinite(a) && std::isfinite(b) ? b : 1.0;
  const std::array<double, 2> ends{lo, hi};
  const VectorIntegral<N> integral =
      integrate_adaptive<21, N>(g, ends, {.tolerance = tolerance, .max_intervals = max_intervals});
  error = integral.error;
  return integral.value;
}

// int_a^b f where f may have an inverse square-root singularity at a (`at_a`) or b (`at_b`),
// as at a fold: u = a + s^2 (or b - s^2), du = 2 s ds, makes f(u) 2s smooth in s (each of the
// two preimages near a fold is analytic in s). Both ends: split at the middle. The
// substitution is used over at most one unit from the singular end (the rest is smooth, and a
// long substituted range would squeeze the density's bulk into a few of the rule's nodes). Within
// s^2 = 1e-12 (1 + |a|) of the end, where the two preimages are found from a quadratic
// that has cancelled to rounding noise, the integrand is held at its value there (a change of
// order 1e-12 in the integral of a bounded function).
template <std::size_t N, class F>
Vec<N> integrate_ends(const F& f, double a, double b, bool at_a, bool at_b, double tolerance,
                      double& error) {
  error = 0.0;
  if (!(b > a)) return Vec<N>(0.0);
  if (at_a && at_b) {
    const double m = 0.5 * (a + b);
    double e1 = 0.0, e2 = 0.0;
    const Vec<N> lo = integrate_ends<N>(f, a, m, true, false, 0.5 * tolerance, e1);
    const Vec<N> hi = integrate_ends<N>(f, m, b, false, true, 0.5 * tolerance, e2);
    error = e1 + e2;
    return lo + hi;
  }
  if (const double m = at_a ? a + 1.0 : b - 1.0; (at_a || at_b) && b - a > 2.0 && m > a && m < b) {
    double e1 = 0.0, e2 = 0.0;
    const Vec<N> lo = integrate_ends<N>(f, a, m, at_a, false, 0.5 * tolerance, e1);
    const Vec<N> hi = integrate_ends<N>(f, m, b, false, at_b, 0.5 * tolerance, e2);
    error = e1 + e2;
    return lo + hi;
  }
  const double floor = std::sqrt(1e-12 * (1.0 + std::abs(at_a ? a : b)));
  if (at_a)
    return integrate_vector<N>(
        [&](double s) {
          s = std::max(s, floor);
          return f(a + s * s) * (2.0 * s);
        },
        0.0, std::sqrt(b - a), tolerance, error);
  if (at_b)
    return integrate_vector<N>(
        [&](double s) {
          s = std::max(s, floor);
          return f(b - s * s) * (2.0 * s);
        },
        0.0, std::sqrt(b - a), tolerance, error);
  return integrate_vector<N>(f, a, b, tolerance, error);
}

bool contains(const std::vector<double>& xs, double x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

// Points between a and b (finite or not) spaced evenly in asinh, so fine near 0 and coarse in
// the tails; `span` bounds the infinite ends.
std::vector<double> sinh_grid(double a, double b, double span, int points) {
  const double lo = std::asinh(std::max(a, -span)), hi = std::asinh(std::min(b, span));
  std::vector<double> out;
  for (int i = 0; i <= points; ++i) {
    const double x = std::sinh(lo + (hi - lo) * i / points);
    if (x > a && x < b) out.push_back(x);
  }
  return out;
}

// A sampled value of a function whose sign changes are sought: at x, value and its scale.
struct SignSample {
  double x, value, scale;
};

// Where the samples (sorted by x) change sign, refined by TOMS 748 on h(x) (the value alone);
// values within `noise` of their scale count as zero.
template <class H>
void sign_breaks(const H& h, const std::vector<SignSample>& samples, std::vector<double>& breaks) {
  double prev_x = 0.0, prev_v = 0.0;
  int prev_sign = 0;
  for (const SignSample& sample : samples) {
    const double v = sample.value;
    const int sign = std::abs(v) <= noise * sample.scale ? 0 : (v > 0.0 ? 1 : -1);
    if (sign == 0) continue;
    if (prev_sign != 0 && sign != prev_sign) {
      boost::math::tools::eps_tolerance<double> tol(50);
      std::uintmax_t iterations = 100;
      const auto [a, b] =
          boost::math::tools::toms748_solve(h, prev_x, sample.x, prev_v, v, tol, iterations);
      breaks.push_back(0.5 * (a + b));
    }
    prev_x = sample.x;
    prev_v = v;
    prev_sign = sign;
  }
}

// Sorted, unique breaks with the ends a and b added.
std::vector<double> pieces(std::vector<double> breaks, double a, double b) {
  std::vector<double> out = {a, b};
  for (double x : breaks)
    if (x > a && x < b) out.push_back(x);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The point of the segment of class k at (t, u): p_k = sigmoid(t), the two others j < l
// sharing the rest as sigmoid(u) : sigmoid(-u).
struct Point {
  std::array<double, 3> p, log_p;
};
Point segment_point(std::size_t k, double t, double u) {
  const std::size_t j = k == 0 ? 1 : 0, l = k == 2 ? 1 : 2;
  Point out;
  out.log_p[k] = -softplus(-t);
  out.log_p[j] = -softplus(t) - softplus(-u);
  out.log_p[l] = -softplus(t) - softplus(u);
  for (std::size_t i = 0; i < 3; ++i) out.p[i] = std::exp(out.log_p[i]);
  return out;
}

// a_i - b_i written where it does not cancel: for a_i > 1/2 as (1 - b_i) - (1 - a_i), each
// complement summed from the other components (both vectors sum to 1).
double difference(const std::array<double, 3>& a, const std::array<double, 3>& b, std::size_t i) {
  if (a[i] <= 0.5) return a[i] - b[i];
  double rest_a = 0.0, rest_b = 0.0;
  for (std::size_t j = 0; j < 3; ++j)
    if (j != i) {
      rest_a += a[j];
      rest_b += b[j];
    }
  return rest_b - rest_a;
}

class TernaryProblem {
 public:
  TernaryProblem(const DirichletGenerator& gen, int grid_points, std::size_t work_budget)
      : preimages_(gen.spec()),
        exchangeable_(gen.symmetric() && is_class_symmetric(gen.spec().map)),
        grid_points_(grid_points),
        work_budget_(work_budget) {
    if (const auto* top = std::get_if<TopLabelMap>(&gen.spec().map)) gamma_ = top->gamma;
    // Grid span: the Dirichlet's 1e-16 lower tail of log c_k, about
    // (log 1e-16 + log alpha_k + log B(alpha_k, alpha_0 - alpha_k)) / alpha_k, scaled by how
    // much the map stretches log-ratios (the largest row sum of |D|; 1 for top_label).
    const auto& alpha = gen.spec().alpha;
    double a0 = 0.0;
    for (double a : alpha) a0 += a;
    double tail = 40.0;
    for (double a : alpha) {
      const double lb = std::lgamma(a) + std::lgamma(a0 - a) - std::lgamma(a0);
      tail = std::max(tail, -(std::log(1e-16) + std::log(a) + lb) / a);
    }
    double stretch = 1.0;
    const LogAffineForm form = log_affine_form(gen.spec().map, 3);
    for (std::size_t k = 0; k + 1 < 3 && !form.D.empty(); ++k) {
      double row = 0.0;
      for (std::size_t j = 0; j < 3; ++j) row += std::abs(form.D[k * 3 + j]);
      stretch = std::max(stretch, row);
    }
    span_ = tail * stretch;
    if (valid() && !preimages_.injective() && !form.D.empty())
      fold_.emplace(gen.spec(), preimages_.fold_coefficients(), span_,
                    fold_grid_factor * grid_points_);
  }

  // Finite fibres, and a fold where the map has two preimages.
  bool valid() const {
    return preimages_.fibres() == MapPreimages::Fibres::finite && (!fold_ || fold_->valid());
  }
  // The fold of a two-preimage log-affine map, null otherwise.
  const FoldCurve* fold() const { return fold_ ? &*fold_ : nullptr; }
  int grid_points() const { return grid_points_; }
  // True once evaluation_budget evaluations of Phi or the work budget (steps of F inside them)
  // are spent: Phi is then 0 (at no cost), so every integral converges at once, the mass check
  // fails and the truth engine uses Monte Carlo instead.
  bool exhausted() const { return evaluations_ > evaluation_budget || work_ > work_budget_; }
  // top_label's exponent gamma, 0 for a log-affine map.
  double top_label_gamma() const { return gamma_; }
  bool exchangeable() const { return exchangeable_; }
  double span() const { return span_; }

  // Phi and r at a point, and the posterior's structure code.
  double at(const Point& pt, std::array<double, 3>& r, unsigned* structure = nullptr) const {
    ++evaluations_;
    if (exhausted()) {  // every integral then converges at once, and the mass check fails
      if (structure != nullptr) *structure = 0;
      r = {std::exp(pt.log_p[0]), std::exp(pt.log_p[1]), std::exp(pt.log_p[2])};
      return 0.0;
    }
    std::array<double, 9> scratch;
    return preimages_.posterior(pt.log_p, r, scratch, structure, &work_);
  }

 private:
  MapPreimages preimages_;
  bool exchangeable_;
  int grid_points_;
  std::size_t work_budget_;
  double gamma_ = 0.0;
  double span_ = 40.0;
  std::optional<FoldCurve> fold_;

 public:
  // Evaluations of Phi (a measure of cost; not synchronised: the quadrature is sequential).
  mutable std::size_t evaluations_ = 0;
  // Their work (steps of F, MapPreimages::posterior), the same measure of cost in finer units.
  mutable std::size_t work_ = 0;
};

// With a fold, the breaks and 0: the density's bulk lies within a few units of u = 0 (and
// t = 0), and a piece from a far crossing to beyond it would put the bulk between the rule's
// first nodes (at alpha = 0.5 that lost 1.8e-6 of mass). Without a fold no piece starts far
// out, and the breaks are left as they were (the shipped results keep their bits).
std::vector<double> with_zero(const TernaryProblem& problem, std::vector<double> breaks) {
  if (problem.fold() != nullptr) breaks.push_back(0.0);
  return breaks;
}

// ---- the top label and the unconditional quantities --------------------------------------

// Per unit of t, summed over the top segments: M, N, accuracy, brier, nll, canonical L1 and
// L2^2 integrands integrated over u, and the inner integrators' error.
enum TopSlot { s_mass, s_gap, s_acc, s_brier, s_nll, s_l1, s_l2, s_err, top_slots };
constexpr std::size_t point_slots = s_err;

// The integrand on the top segment of class k at (t, u), z = p_k.
Vec<point_slots> top_integrand(const TernaryProblem& problem, std::size_t k, double t, double u) {
  const Point pt = segment_point(k, t, u);
  std::array<double, 3> r;
  const double phi = problem.at(pt, r);
  Vec<point_slots> out(0.0);
  if (!(phi > 0.0)) return out;
  double rest_r = 0.0;
  for (std::size_t j = 0; j < 3; ++j)
    if (j != k) rest_r += r[j];
  // r_k - z: (1 - z) - (1 - r_k) where z > 1/2.
  const double z_gap = t > 0.0 ? sigmoid(-t) - rest_r : r[k] - pt.p[k];
  double brier = 0.0, nll = 0.0, l1 = 0.0, l2 = 0.0;
  for (std::size_t j = 0; j < 3; ++j) {
    const double d = difference(r, pt.p, j);
    double rest = 0.0;
    for (std::size_t i = 0; i < 3; ++i)
      if (i != j) rest += r[i];
    brier += d * d + r[j] * rest;
    nll -= r[j] * pt.log_p[j];
    l1 += std::abs(d);
    l2 += d * d;
  }
  out[s_mass] = phi;
  out[s_gap] = phi * z_gap;
  out[s_acc] = phi * r[k];
  out[s_brier] = phi * brier;
  out[s_nll] = phi * nll;
  out[s_l1] = phi * l1;
  out[s_l2] = phi * l2;
  return out;
}

// top_label at K = 3: where a candidate preimage becomes valid or invalid on the segment of
// class k at t, in closed form or as roots of smooth functions of one variable (the grid search
// of inner_breaks can miss a candidate's interval narrower than its cells). On the segment
// p_k = v = sigmoid(t), the others are p_j = y and p_l = w - y, w = 1 - v, y = w sigmoid(u).
// Candidate j (c_j = m(p_j) = g^-1(p_j), the others scaled by (1 - m)/(1 - p_j)) is valid iff
// p_j > 1/3 and every other p_i <= B(p_j) = m (1 - p_j)/(1 - m) (m is c's largest component).
// So candidate k holds for y in [w - B(v), B(v)], candidate j where B(y) >= v and
// B(y) >= w - y, candidate l likewise in w - y.
std::vector<double> top_label_breaks(double gamma, double t, double lo, double hi) {
  const double v = sigmoid(t), w = sigmoid(-t), third = 1.0 / 3.0;
  const auto B = [&](double y) {
    // u^gamma = (y - 1/3)/(2/3); m = 1/3 + (2/3) u, 1 - m = (2/3)(1 - u).
    const double u = std::pow(std::max(0.0, 1.5 * (y - third)), 1.0 / gamma);
    const double m = third + 2.0 * third * u;
    return m * (1.0 - y) / (2.0 * third * (1.0 - u));
  };
  std::vector<double> ys;
  if (v > third) {
    ys.push_back(w - B(v));
    ys.push_back(B(v));
  }
  // Roots of B(y) - v and B(y) - (w - y) for y in (1/3, w), and their mirror images w - y.
  if (w > third) {
    const int points = 64;
    for (int which = 0; which < 2; ++which) {
      const auto f = [&](double y) { return B(y) - (which == 0 ? v : w - y); };
      double prev_y = third, prev = f(third);
      for (int i = 1; i <= points; ++i) {
        const double y = third + (w - third) * i / points, fy = f(y);
        if ((prev < 0.0) != (fy < 0.0) && prev != 0.0 && fy != 0.0) {
          boost::math::tools::eps_tolerance<double> tol(50);
          std::uintmax_t iterations = 100;
          const auto [a, b] =
              boost::math::tools::toms748_solve(f, prev_y, y, prev, fy, tol, iterations);
          ys.push_back(0.5 * (a + b));
          ys.push_back(w - 0.5 * (a + b));
        }
        prev_y = y;
        prev = fy;
      }
    }
    ys.push_back(third);
    ys.push_back(w - third);
  }
  std::vector<double> out;
  for (double y : ys) {
    if (!(y > 0.0 && y < w)) continue;
    const double u = std::log(y) - std::log(w - y);
    if (u > lo && u < hi) out.push_back(u);
  }
  return out;
}

// The breaks of the inner integrand on the segment of class k at t, within (lo, hi): where the
// posterior's structure changes and, with `signs`, where r_j - p_j changes sign (TOMS 748).
// Where there is a fold its crossings are computed (FoldCurve) and also written to `folds`
// (Phi is singular there); a structure change the grid sees in a cell without a computed
// crossing is found by bisection and counted as a fold too.
std::vector<double> inner_breaks(const TernaryProblem& problem, std::size_t k, double t, double lo,
                                 double hi, bool signs, std::vector<double>& folds) {
  struct Probe {
    unsigned code;
    std::array<double, 3> d;
  };
  const auto probe = [&](double u) {
    const Point pt = segment_point(k, t, u);
    std::array<double, 3> r;
    Probe out{0, {}};
    problem.at(pt, r, &out.code);
    for (std::size_t j = 0; j < 3; ++j) out.d[j] = difference(r, pt.p, j);
    return out;
  };
  const std::vector<double> grid = sinh_grid(lo, hi, 2.0 * problem.span(), problem.grid_points());
  folds.clear();
  if (const FoldCurve* fold = problem.fold()) {
    // The crossings, moved to where the posterior's own structure changes (within 1e-15): where
    // the fold is nearly parallel to the segment a crossing computed from the fold's
    // parametrisation can be off by 1e-8, and Phi ~ 1/sqrt(distance) is not smooth there.
    for (double u : fold->crossings(k, t, lo, hi)) {
      const double w = 1e-6 * (1.0 + std::abs(u));
      double a = std::max(u - w, lo), b = std::min(u + w, hi);
      const unsigned code_a = probe(a).code;
      if (std::isfinite(a) && std::isfinite(b) && code_a != probe(b).code) {
        for (int it = 0; it < 60 && b - a > 1e-15 * (1.0 + std::abs(a)); ++it) {
          const double m = 0.5 * (a + b);
          (probe(m).code == code_a ? a : b) = m;
        }
        u = 0.5 * (a + b);
      }
      folds.push_back(u);
    }
  }
  std::vector<double> breaks = folds;
  if (problem.top_label_gamma() > 0.0)
    breaks = top_label_breaks(problem.top_label_gamma(), t, lo, hi);
  if (grid.empty()) return breaks;
  const std::vector<double> computed = folds;
  Probe prev = probe(grid.front());
  for (std::size_t i = 1; i < grid.size(); ++i) {
    const Probe next = probe(grid[i]);
    if (next.code != prev.code && problem.top_label_gamma() == 0.0) {
      const bool known = std::any_of(computed.begin(), computed.end(),
                                     [&](double u) { return u >= grid[i - 1] && u <= grid[i]; });
      if (!known) {
        double a = grid[i - 1], b = grid[i];
        for (int it = 0; it < 80 && b - a > 1e-13 * (1.0 + std::abs(a)); ++it) {
          const double m = 0.5 * (a + b);
          (probe(m).code == prev.code ? a : b) = m;
        }
        breaks.push_back(0.5 * (a + b));
        if (problem.fold() != nullptr) folds.push_back(0.5 * (a + b));
      }
    } else if (signs) {
      for (std::size_t j = 0; j < 3; ++j) {
        const double da = prev.d[j], db = next.d[j];
        if (std::abs(da) <= noise || std::abs(db) <= noise || (da > 0.0) == (db > 0.0)) continue;
        boost::math::tools::eps_tolerance<double> tol(50);
        std::uintmax_t iterations = 100;
        const auto [a, b] = boost::math::tools::toms748_solve(
            [&](double u) { return probe(u).d[j]; }, grid[i - 1], grid[i], da, db, tol, iterations);
        breaks.push_back(0.5 * (a + b));
      }
    }
    prev = next;
  }
  return breaks;
}

// The inner integrals at t, summed over the top segments.
Vec<top_slots> top_inner(const TernaryProblem& problem, double t) {
  // z >= 1/2: the whole line; below, |u| <= U with p_j, p_l <= z.
  const double U = t >= 0.0 ? inf : t - std::log(-std::expm1(t));
  Vec<top_slots> out(0.0);
  const std::size_t segments = problem.exchangeable() ? 1 : 3;
  for (std::size_t k = 0; k < segments; ++k) {
    std::vector<double> folds;
    const std::vector<double> ends =
        pieces(with_zero(problem, inner_breaks(problem, k, t, -U, U, true, folds)), -U, U);
    for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
      double error = 0.0;
      const Vec<point_slots> v = integrate_ends<point_slots>(
          [&](double u) { return top_integrand(problem, k, t, u); }, ends[i], ends[i + 1],
          contains(folds, ends[i]), contains(folds, ends[i + 1]), inner_tolerance, error);
      for (std::size_t s = 0; s < point_slots; ++s) out[s] += v[s];
      out[s_err] += error;
    }
  }
  if (segments == 1) out = out * 3.0;
  return out;
}

// ---- classwise ------------------------------------------------------------------------------

// C_k(t) = int Phi (r_k - p_k) du on the segment of class k, its mass, and the inner error.
Vec<3> class_inner(const TernaryProblem& problem, std::size_t k, double t) {
  std::vector<double> folds;
  const std::vector<double> ends =
      pieces(with_zero(problem, inner_breaks(problem, k, t, -inf, inf, false, folds)), -inf, inf);
  Vec<3> out(0.0);
  for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
    double error = 0.0;
    const Vec<2> v = integrate_ends<2>(
        [&](double u) {
          const Point pt = segment_point(k, t, u);
          std::array<double, 3> r;
          const double phi = problem.at(pt, r);
          Vec<2> w(0.0);
          if (phi > 0.0) {
            w[0] = phi * difference(r, pt.p, k);
            w[1] = phi;
          }
          return w;
        },
        ends[i], ends[i + 1], contains(folds, ends[i]), contains(folds, ends[i + 1]),
        inner_tolerance, error);
    out[0] += v[0];
    out[1] += v[1];
    out[2] += error;
  }
  return out;
}

// Integrates the outer function f over (a, b), split at `breaks` and at the sign changes of its
// component `signed_slot` (values within `noise` of `scale_slot` count as 0); returns the
// integrals, the integrator's error, and the sum over pieces of |int signed_slot|. Sign changes
// are looked for on a grid and then among every point the integrator evaluated in a piece: a
// piece where the sign changes is split there and integrated again, so a pair of crossings
// closer than the grid's cells is still found wherever the integrator looked. `singular` are
// breaks where f has a jump and a square-root term (a fold's tangencies and ties, FoldCurve):
// pieces ending there are integrated with a square-root substitution (integrate_ends), and a
// sign change found within 1e-9 of one is that jump itself, not a new break.
template <std::size_t N, class F>
Vec<N> outer_integrals(const F& f, double a, double b, std::vector<double> breaks,
                       const std::vector<double>& singular, double span, int grid_points,
                       std::size_t signed_slot, std::size_t scale_slot, double& error,
                       double& absolute) {
  const auto h = [&](double t) { return f(t)[signed_slot]; };
  std::vector<SignSample> samples;
  for (double t : sinh_grid(a, b, span, grid_points)) {
    const Vec<N> v = f(t);
    samples.push_back({t, v[signed_slot], v[scale_slot]});
  }
  const auto near_singular = [&](double t) {
    return std::any_of(singular.begin(), singular.end(),
                       [&](double x) { return std::abs(t - x) <= 1e-9 * (1.0 + std::abs(x)); });
  };
  std::vector<double> signs;
  sign_breaks(h, samples, signs);
  for (double t : signs)
    if (!near_singular(t)) breaks.push_back(t);
  breaks.insert(breaks.end(), singular.begin(), singular.end());
  Vec<N> value(0.0);
  error = 0.0;
  absolute = 0.0;
  const auto piece = [&](const auto& self, double lo, double hi, int depth) -> void {
    std::vector<SignSample> seen;
    const auto recorded = [&](double t) {
      const Vec<N> v = f(t);
      seen.push_back({t, v[signed_slot], v[scale_slot]});
      return v;
    };
    double e = 0.0;
    const Vec<N> v = integrate_ends<N>(recorded, lo, hi, contains(singular, lo),
                                       contains(singular, hi), outer_tolerance, e);
    std::sort(seen.begin(), seen.end(),
              [](const SignSample& x, const SignSample& y) { return x.x < y.x; });
    std::vector<double> found, more;
    if (depth < 4) sign_breaks(h, seen, found);
    for (double t : found)
      if (!near_singular(t)) more.push_back(t);
    const std::vector<double> ends = pieces(more, lo, hi);
    if (ends.size() > 2) {
      for (std::size_t i = 0; i + 1 < ends.size(); ++i) self(self, ends[i], ends[i + 1], depth + 1);
      return;
    }
    value += v;
    error += e;
    absolute += std::abs(v[signed_slot]);
  };
  const std::vector<double> ends = pieces(breaks, a, b);
  for (std::size_t i = 0; i + 1 < ends.size(); ++i) piece(piece, ends[i], ends[i + 1], 0);
  return value;
}

// K = 3 and not identity (closed forms); top_label or a log-affine map with finite fibres
// (injective, or two preimages on either side of a fold).
bool dispatched(const DirichletGenerator& gen) {
  const auto& map = gen.spec().map;
  return gen.classes() == 3 && !is_identity(map);
}

// The fold's breaks of the top-label outer integral over t in (-log 2, inf): every class's
// tangencies and the ties (where a crossing meets the end of the range |u| <= U(t)).
std::vector<double> top_fold_breaks(const TernaryProblem& problem) {
  std::vector<double> out;
  if (const FoldCurve* fold = problem.fold()) {
    for (std::size_t k = 0; k < 3; ++k)
      out.insert(out.end(), fold->tangencies(k).begin(), fold->tangencies(k).end());
    out.insert(out.end(), fold->ties().begin(), fold->ties().end());
  }
  std::vector<double> inside;
  for (double t : out)
    if (t > -std::log(2.0) && t != 0.0) inside.push_back(t);
  std::sort(inside.begin(), inside.end());
  inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
  return inside;
}

}  // namespace

double ternary_quadrature_mass(const DirichletGenerator& gen,
                               const TernaryQuadratureOptions& options) {
  if (!dispatched(gen)) return 0.0;
  const TernaryProblem problem(gen, options.grid_points, options.work_budget);
  if (!problem.valid()) return 0.0;
  double error = 0.0, absolute = 0.0;
  const Vec<top_slots> v =
      outer_integrals<top_slots>([&](double t) { return top_inner(problem, t); }, -std::log(2.0),
                                 inf, {0.0}, top_fold_breaks(problem), problem.span(),
                                 problem.grid_points(), s_mass, s_mass, error, absolute);
  if (options.evaluations != nullptr) *options.evaluations = problem.evaluations_;
  if (options.work != nullptr) *options.work = problem.work_;
  return v[s_mass];
}

bool ternary_quadrature_truth(const DirichletGenerator& gen, GroundTruth& out,
                              const TernaryQuadratureOptions& options) {
  if (!dispatched(gen)) return false;
  const TernaryProblem problem(gen, options.grid_points, options.work_budget);
  if (!problem.valid()) return false;
  // The cost, reported on every return from here (a fallback's too).
  const auto spent = [&](bool result) {
    if (options.evaluations != nullptr) *options.evaluations = problem.evaluations_;
    if (options.work != nullptr) *options.work = problem.work_;
    return result;
  };
  // Top label: the outer function adds N^2/M to the inner integrals.
  constexpr std::size_t n = top_slots + 1, s_sq = top_slots;
  double error = 0.0, top_l1 = 0.0;
  const Vec<n> value = outer_integrals<n>(
      [&](double t) {
        const Vec<top_slots> inner = top_inner(problem, t);
        Vec<n> v(0.0);
        for (std::size_t s = 0; s < top_slots; ++s) v[s] = inner[s];
        v[s_sq] = inner[s_mass] > 0.0 ? inner[s_gap] * inner[s_gap] / inner[s_mass] : 0.0;
        return v;
      },
      -std::log(2.0), inf, {0.0}, top_fold_breaks(problem), problem.span(), problem.grid_points(),
      s_gap, s_mass, error, top_l1);
  if (!quadrature_mass_ok(value[s_mass]) || problem.exhausted()) return spent(false);  // MC
  // The inner integrators' errors, integrated over t, add to the outer one.
  const double err = error + std::abs(value[s_err]);
  const auto quad = [&](double v) { return TruthValue{v, TruthMethod::quadrature, err}; };
  GroundTruth result = out;
  result[Quantity::accuracy] = quad(value[s_acc]);
  result[Quantity::overconfidence] = quad(-value[s_gap]);
  result[Quantity::brier] = quad(value[s_brier]);
  result[Quantity::nll] = quad(value[s_nll]);
  result[Quantity::canonical_l1] = quad(value[s_l1]);
  result[Quantity::canonical_l2] = root_of(quad(value[s_l2]));
  result[Quantity::ece_top_l1] = quad(top_l1);
  result[Quantity::ece_top_l2] = root_of(quad(value[s_sq]));
  if (!options.classwise) {
    result[Quantity::classwise_ece_l1] = {std::numeric_limits<double>::quiet_NaN(),
                                          TruthMethod::quadrature,
                                          std::numeric_limits<double>::infinity()};
    out = result;
    return spent(true);
  }

  // Classwise, one class for all when they are exchangeable.
  double cw = 0.0, cw_err = 0.0;
  const std::size_t classes = problem.exchangeable() ? 1 : 3;
  for (std::size_t k = 0; k < classes; ++k) {
    double e = 0.0, absolute = 0.0;
    // top_label: candidate k appears at p_k = 1/3 (where 1/g' is singular) and covers the
    // whole segment from p_k = g(1/2) on.
    std::vector<double> breaks;
    if (const double gamma = problem.top_label_gamma(); gamma > 0.0) {
      const double g_half = 1.0 / 3.0 + 2.0 / 3.0 * std::pow(0.25, gamma);
      breaks = {-std::log(2.0), std::log(g_half) - std::log1p(-g_half)};
    }
    std::vector<double> singular;
    if (const FoldCurve* fold = problem.fold()) singular = fold->tangencies(k);
    const Vec<3> v = outer_integrals<3>([&](double t) { return class_inner(problem, k, t); }, -inf,
                                        inf, with_zero(problem, breaks), singular, problem.span(),
                                        problem.grid_points(), 0, 1, e, absolute);
    cw += absolute;
    cw_err += e + std::abs(v[2]);
    // The budget is checked after each class's pass, and with a fold so is its mass (it covers
    // the simplex once more, in other coordinates).
    if ((problem.fold() != nullptr && !quadrature_mass_ok(v[1])) || problem.exhausted())
      return spent(false);  // Monte Carlo instead
  }
  const double scale = 1.0 / static_cast<double>(classes);
  result[Quantity::classwise_ece_l1] = {cw * scale, TruthMethod::quadrature, cw_err * scale};
  out = result;
  return spent(true);
}

}  // namespace calbench
