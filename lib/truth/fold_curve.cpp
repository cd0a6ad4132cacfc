#include "truth/fold_curve.hpp"

#include <algorithm>
#include <array>
#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>

#include "truth/logistic.hpp"

namespace calbench {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// log(e^a + e^b) with -inf allowed.
double log_add(double a, double b) {
  if (a == -inf) return b;
  if (b == -inf) return a;
  const double hi = std::max(a, b);
  return hi + std::log1p(std::exp(std::min(a, b) - hi));
}

// The root of f on [a, b] (f(a), f(b) of opposite signs) by TOMS 748.
template <class F>
double root(const F& f, double a, double b, double fa, double fb) {
  boost::math::tools::eps_tolerance<double> tol(52);
  std::uintmax_t iterations = 200;
  const auto [lo, hi] = boost::math::tools::toms748_solve(f, a, b, fa, fb, tol, iterations);
  return 0.5 * (lo + hi);
}

}  // namespace

FoldCurve::FoldCurve(const DirichletSpec& spec, std::span<const double> det, double span,
                     int grid_points)
    : map_(spec.map) {
  if (spec.classes != 3 || det.size() != 3) return;
  // det = b0 + b1 c_1 + b2 c_2 = gamma . c on the simplex.
  const std::array<double, 3> gamma = {det[0] + det[1], det[0] + det[2], det[0]};
  std::vector<std::array<double, 3>> ends;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::size_t j = (i + 1) % 3, l = (i + 2) % 3;
    std::array<double, 3> e = {0.0, 0.0, 0.0};
    if (gamma[j] == 0.0 && gamma[l] != 0.0) {
      e[j] = 1.0;  // the vertex e_j lies on the line
    } else if (gamma[j] * gamma[l] < 0.0) {
      // On the edge c_i = 0: gamma_j c_j + gamma_l c_l = 0, c_j + c_l = 1.
      e[j] = gamma[l] / (gamma[l] - gamma[j]);
      e[l] = -gamma[j] / (gamma[l] - gamma[j]);
    } else {
      continue;
    }
    if (std::find(ends.begin(), ends.end(), e) == ends.end()) ends.push_back(e);
  }
  if (ends.size() != 2) return;
  for (std::size_t m = 0; m < 3; ++m) {
    log_e0_.push_back(ends[0][m] > 0.0 ? std::log(ends[0][m]) : -inf);
    log_e1_.push_back(ends[1][m] > 0.0 ? std::log(ends[1][m]) : -inf);
  }
  valid_ = true;

  // The grid, sinh-spaced so that it is fine where the line crosses the simplex's middle.
  const double reach = std::min(span, 700.0);
  std::vector<double> theta;
  const int n = std::max(grid_points, 8);
  for (int i = 0; i <= n; ++i) theta.push_back(std::sinh(std::asinh(reach) * (2.0 * i / n - 1.0)));
  std::vector<std::array<double, 3>> log_p(theta.size());
  for (std::size_t i = 0; i < theta.size(); ++i) log_p_at(theta[i], log_p[i]);

  for (std::size_t k = 0; k < 3; ++k) {
    std::vector<double> t(theta.size());
    for (std::size_t i = 0; i < theta.size(); ++i) {
      double u;
      segment_coordinates(log_p[i], k, t[i], u);
    }
    // Extrema: where the grid's differences change sign, refined by Brent's minimiser on the
    // three points around them (the extremal value is exact to second order in theta's error).
    std::vector<double> cuts = {theta.front()};
    for (std::size_t i = 1; i + 1 < theta.size(); ++i) {
      const double left = t[i] - t[i - 1], right = t[i + 1] - t[i];
      if (!(left * right < 0.0)) continue;
      const double sign = left > 0.0 ? -1.0 : 1.0;  // minimise sign * t
      const auto [x, fx] = boost::math::tools::brent_find_minima(
          [&](double th) { return sign * t_at(k, th); }, theta[i - 1], theta[i + 1],
          std::numeric_limits<double>::digits / 2);
      cuts.push_back(x);
      tangencies_[k].push_back(sign * fx);
    }
    cuts.push_back(theta.back());
    // The ends: where the fold runs out towards the simplex's boundary, t_k tends to a limit
    // (finite when the segment of class k is an asymptote of the fold), and the number of
    // crossings changes there as at a tangency.
    tangencies_[k].push_back(t.front());
    tangencies_[k].push_back(t.back());
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
      pieces_[k].push_back({cuts[i], cuts[i + 1], t_at(k, cuts[i]), t_at(k, cuts[i + 1])});
  }

  // Ties p_a = p_b along the fold, for every pair.
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t b = a + 1; b < 3; ++b) {
      const auto diff = [&](double th) {
        std::array<double, 3> lp;
        log_p_at(th, lp);
        return lp[a] - lp[b];
      };
      for (std::size_t i = 1; i < theta.size(); ++i) {
        const double fa = log_p[i - 1][a] - log_p[i - 1][b], fb = log_p[i][a] - log_p[i][b];
        if (!(fa * fb < 0.0)) continue;
        const double x = root(diff, theta[i - 1], theta[i], fa, fb);
        ties_.push_back(t_at(a, x));
      }
    }
}

void FoldCurve::log_p_at(double theta, std::span<double> log_p) const {
  std::array<double, 3> log_c, c, p, scratch;
  for (std::size_t m = 0; m < 3; ++m) {
    log_c[m] = log_add(log_e0_[m] - softplus(theta), log_e1_[m] - softplus(-theta));
    c[m] = std::exp(log_c[m]);
  }
  apply(map_, c, log_c, p, log_p, scratch);
}

void FoldCurve::segment_coordinates(std::span<const double> log_p, std::size_t k, double& t,
                                    double& u) {
  const std::size_t j = k == 0 ? 1 : 0, l = k == 2 ? 1 : 2;
  t = log_p[k] - log_add(log_p[j], log_p[l]);
  u = log_p[j] - log_p[l];
}

double FoldCurve::t_at(std::size_t k, double theta) const {
  std::array<double, 3> lp;
  log_p_at(theta, lp);
  double t, u;
  segment_coordinates(lp, k, t, u);
  return t;
}

std::vector<double> FoldCurve::crossings(std::size_t k, double t, double lo, double hi) const {
  std::vector<double> out;
  for (const Piece& piece : pieces_[k]) {
    const double fa = piece.t_a - t, fb = piece.t_b - t;
    if (!(fa * fb < 0.0)) continue;
    const double x = root([&](double th) { return t_at(k, th) - t; }, piece.a, piece.b, fa, fb);
    std::array<double, 3> lp;
    log_p_at(x, lp);
    double tx, u;
    segment_coordinates(lp, k, tx, u);
    if (u > lo && u < hi) out.push_back(u);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace calbench
