#include "truth/binary_quadrature.hpp"

#include <algorithm>
#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "truth/logistic.hpp"
#include "truth/quadrature_check.hpp"

namespace calbench {
namespace {

using boost::math::quadrature::exp_sinh;
using boost::math::quadrature::tanh_sinh;
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double quad_tolerance = 1e-11;
// Refinement levels: tanh_sinh's 10 (about 2^11 nodes per piece) are far more than the smooth
// pieces need; the cap bounds the cost where an integrand is rounding noise (the gap of a map
// that is the identity), on which tanh_sinh would refine to its default 15 without converging.
constexpr std::size_t tanh_sinh_levels = 10;

// x = c_1 at s = logit x, with log x and log(1 - x) exact in both tails.
struct Point {
  double s, log_x, log_xc, x, xc;
};
Point point_at(double s) {
  const double lx = -softplus(-s), lxc = -softplus(s);
  return {s, lx, lxc, std::exp(lx), std::exp(lxc)};
}

// log tanh(a/2) for a > 0: log(1 - e^-a) - log(1 + e^-a), 1 - e^-a by expm1 for small a and
// its log by log1p for large a (each exact where the other cancels).
double log_tanh_half(double a) {
  const double e = std::exp(-a);
  return (a < 1.0 ? std::log(-std::expm1(-a)) : std::log1p(-e)) - std::log1p(e);
}

// 2 atanh(tanh(a/2)^gamma) = log(1 + e^L) - log(1 - e^L) for a >= 0, L = gamma log tanh(a/2), so
// that neither tanh(a/2) nor 1 - tanh(a/2)^gamma cancels; beyond a = 40, 1 - tanh(a/2)^gamma = 2
// gamma e^-a to relative order e^-40, and the value is a - log gamma.
double top_label_logit(double a, double gamma) {
  if (a > 40.0) return a - std::log(gamma);
  if (a == 0.0) return 0.0;
  const double L = gamma * log_tanh_half(a);
  // log(1 - e^L): by log1p where e^L is small (at small a), by expm1 where L is near 0.
  return softplus(L) - (L < -M_LN2 ? std::log1p(-std::exp(L)) : std::log(-std::expm1(L)));
}

// A monotone piece of s -> lambda: s in (s_lo, s_hi), lambda from lam_lo to lam_hi (the limits
// at the ends, possibly infinite or equal to d).
struct Branch {
  double s_lo, s_hi, lam_lo, lam_hi;
};

// What the integrands need at one lambda.
struct AtLambda {
  double q = 0.0;     // density of lambda
  double phi = 0.0;   // E[c_1 | lambda]
  double phic = 0.0;  // E[c_2 | lambda] = 1 - phi, kept exact where phi is near 1
};

class BinaryProblem {
 public:
  explicit BinaryProblem(const DirichletGenerator& gen)
      : a1_(gen.spec().alpha[0]), a2_(gen.spec().alpha[1]) {
    log_beta_ = std::lgamma(a1_) + std::lgamma(a2_) - std::lgamma(a1_ + a2_);
    std::visit(
        [&](const auto& m) {
          using M = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<M, IdentityMap>) {
            set_linear(1.0, -1.0, 0.0);
          } else if constexpr (std::is_same_v<M, TemperatureMap>) {
            set_linear(1.0 / m.temperature, -1.0 / m.temperature, 0.0);
          } else if constexpr (std::is_same_v<M, PowerMap>) {
            set_linear(m.exponents[0], -m.exponents[1], 0.0);
          } else if constexpr (std::is_same_v<M, AffineLogitMap>) {
            set_linear(m.weights[0] - m.weights[2], m.weights[1] - m.weights[3],
                       m.bias[0] - m.bias[1]);
          } else if constexpr (std::is_same_v<M, QuantizeMap>) {
            // Piecewise constant: no density of lambda (quantize_truth.hpp instead).
          } else {
            gamma_ = m.gamma;  // top_label: increasing, odd, onto the whole line
            branches_ = {{-inf, inf, -inf, inf}};
          }
        },
        gen.spec().map);
  }

  bool valid() const { return !branches_.empty(); }
  // Two monotone branches (affine_logit with A and B of one sign): lambda has an extremum.
  bool folded() const { return branches_.size() == 2; }
  const std::vector<Branch>& branches() const { return branches_; }

  // lambda = logit p_1 at s. top_label on K = 2: with u = 1 - 2 min(x, 1 - x) = tanh(|s|/2),
  // the top component is g = (1 + u^gamma)/2, so |lambda| = log((1 + u^gamma)/(1 - u^gamma))
  // = top_label_logit(|s|, gamma), whose inverse is top_label_logit(|lambda|, 1/gamma).
  double lambda(const Point& c) const {
    if (linear_) return A_ * c.log_x + B_ * c.log_xc + d_;
    return std::copysign(top_label_logit(std::abs(c.s), gamma_), c.s);
  }

  // d lambda / d s. top_label: gamma u^(gamma - 1) (1 - u^2) / (1 - u^(2 gamma)), with
  // 1 - u^2 = 4 x (1 - x); its limit beyond |s| = 40 is 1.
  double slope(const Point& c) const {
    if (linear_) return A_ * c.xc - B_ * c.x;
    const double a = std::abs(c.s);
    if (a > 40.0) return 1.0;
    if (a == 0.0) return gamma_ == 1.0 ? 1.0 : (gamma_ > 1.0 ? 0.0 : inf);
    const double log_u = log_tanh_half(a);
    return gamma_ * std::exp((gamma_ - 1.0) * log_u + std::log(4.0) + c.log_x + c.log_xc) /
           (-std::expm1(2.0 * gamma_ * log_u));
  }

  double log_density_s(const Point& c) const { return a1_ * c.log_x + a2_ * c.log_xc - log_beta_; }
  double mean_x() const { return a1_ / (a1_ + a2_); }

  // The preimage of lam on branch b, if lam is strictly inside the branch's image.
  bool preimage(const Branch& b, double lam, double& s_out) const {
    if (!linear_) {  // top_label: the closed-form inverse
      s_out = std::copysign(top_label_logit(std::abs(lam), 1.0 / gamma_), lam);
      return std::isfinite(s_out);
    }
    if (A_ == -B_) {  // lambda = A s + d (identity, temperature, equal exponents)
      s_out = (lam - d_) / A_;
      return true;
    }
    const bool increasing = b.lam_hi > b.lam_lo;
    const double lo_lim = increasing ? b.lam_lo : b.lam_hi,
                 hi_lim = increasing ? b.lam_hi : b.lam_lo;
    if (!(lam > lo_lim && lam < hi_lim)) return false;
    // F(s) = (lambda(s) - lam), oriented to increase with s.
    const auto F = [&](double s) {
      const double v = lambda(point_at(s)) - lam;
      return increasing ? v : -v;
    };
    double a, fa, b2, fb;
    // Start inside the branch and walk outwards by doubling steps until the sign brackets.
    const double start = std::isfinite(b.s_lo)
                             ? (std::isfinite(b.s_hi) ? 0.5 * (b.s_lo + b.s_hi) : b.s_lo + 1.0)
                             : (std::isfinite(b.s_hi) ? b.s_hi - 1.0 : 0.0);
    const double f0 = F(start);
    if (f0 == 0.0) {
      s_out = start;
      return true;
    }
    // First step: Newton's, at least 1, so that far tails take few doublings.
    const double newton = std::abs(f0) / std::max(std::abs(slope(point_at(start))), 1e-3);
    const double first_step = std::max(1.0, std::min(newton, 1e6));
    if (f0 < 0.0) {
      a = start;
      fa = f0;
      double step = first_step;
      for (;;) {
        b2 = a + step;
        if (b2 >= b.s_hi) {
          b2 = b.s_hi;
          fb = increasing ? b.lam_hi - lam : lam - b.lam_hi;
          if (!std::isfinite(b2)) return false;
          break;
        }
        fb = F(b2);
        if (fb >= 0.0) break;
        a = b2;
        fa = fb;
        step *= 2.0;
        if (step > 1e9) return false;
      }
    } else {
      b2 = start;
      fb = f0;
      double step = first_step;
      for (;;) {
        a = b2 - step;
        if (a <= b.s_lo) {
          a = b.s_lo;
          fa = increasing ? b.lam_lo - lam : lam - b.lam_lo;
          if (!std::isfinite(a)) return false;
          break;
        }
        fa = F(a);
        if (fa <= 0.0) break;
        b2 = a;
        fb = fa;
        step *= 2.0;
        if (step > 1e9) return false;
      }
    }
    if (fa == 0.0) {
      s_out = a;
      return true;
    }
    if (fb == 0.0) {
      s_out = b2;
      return true;
    }
    boost::math::tools::eps_tolerance<double> tol(52);
    std::uintmax_t iterations = 200;
    const auto [lo, hi] = boost::math::tools::toms748_solve(F, a, b2, fa, fb, tol, iterations);
    s_out = 0.5 * (lo + hi);
    return true;
  }

  AtLambda at(double lam) const {
    AtLambda out;
    double sx = 0.0, sxc = 0.0;
    for (const Branch& b : branches_) {
      double s;
      if (!preimage(b, lam, s)) continue;
      const Point c = point_at(s);
      const double w = std::exp(log_density_s(c)) / std::abs(slope(c));
      if (!std::isfinite(w)) continue;  // at an extremum of lambda: measure zero
      out.q += w;
      sx += w * c.x;
      sxc += w * c.xc;
    }
    if (out.q > 0.0) {
      out.phi = sx / out.q;
      out.phic = sxc / out.q;
    }
    return out;
  }

  // The variable the integrals run over: lambda itself, except for top_label, whose density
  // of lambda is singular at 0 for gamma > 1 (q ~ lambda^(1/gamma - 1)); there the integrals
  // run over s, where int h(lambda) d lambda = int h(lambda(s)) lambda'(s) ds is smooth.
  double to_variable(double lam) const {
    return linear_ ? lam : std::copysign(top_label_logit(std::abs(lam), 1.0 / gamma_), lam);
  }
  // lambda at the variable v, and d lambda / d v.
  double from_variable(double v, double& jacobian) const {
    if (linear_) {
      jacobian = 1.0;
      return v;
    }
    const Point c = point_at(v);
    jacobian = slope(c);
    return lambda(c);
  }

  // Finite ends of the branches' images, and 0.
  std::vector<double> base_breaks() const {
    // +-1 too: the pieces next to 0, where q may be singular (top_label, gamma > 1), go to
    // tanh_sinh, which resolves an endpoint singularity better than exp_sinh does.
    std::vector<double> out = {-1.0, 0.0, 1.0};
    for (const Branch& b : branches_)
      for (double v : {b.lam_lo, b.lam_hi})
        if (std::isfinite(v)) out.push_back(v);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // lambda at s on a grid covering all but about 1e-16 of the Beta's mass in each tail (where
  // the density of s is e^(a1 s)/B or e^(-a2 s)/B), sinh-spaced so that it is fine near s = 0.
  std::vector<double> lambda_grid() const {
    const double s_min = std::min(-4.0, (std::log(1e-16) + std::log(a1_) + log_beta_) / a1_);
    const double s_max = std::max(4.0, -(std::log(1e-16) + std::log(a2_) + log_beta_) / a2_);
    constexpr int points = 1200;
    std::vector<double> out;
    const double v0 = std::asinh(s_min), v1 = std::asinh(s_max);
    for (int i = 0; i <= points; ++i) {
      const double s = std::sinh(v0 + (v1 - v0) * i / points);
      const double lam = lambda(point_at(s));
      if (std::isfinite(lam)) out.push_back(lam);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  void set_linear(double A, double B, double d) {
    linear_ = true;
    A_ = A;
    B_ = B;
    d_ = d;
    if (A == 0.0 && B == 0.0) return;  // constant map: no branch, not handled
    // lambda(s -> -inf) = A log x + d, lambda(s -> inf) = B log(1 - x) + d.
    const auto end_limit = [&](double coefficient) {
      return coefficient > 0.0 ? -inf : (coefficient < 0.0 ? inf : d);
    };
    const double left = end_limit(A), right = end_limit(B);
    if ((A >= 0.0 && B <= 0.0) || (A <= 0.0 && B >= 0.0)) {
      branches_ = {{-inf, inf, left, right}};
    } else {
      // d lambda/d s = A (1 - x) - B x = 0 at x = A/(A + B): s* = log(A / B).
      const double s_star = std::log(A / B);
      const double lam_star = lambda(point_at(s_star));
      branches_ = {{-inf, s_star, left, lam_star}, {s_star, inf, lam_star, right}};
    }
  }

  double a1_, a2_, log_beta_ = 0.0;
  bool linear_ = false;
  double A_ = 0.0, B_ = 0.0, d_ = 0.0, gamma_ = 1.0;
  std::vector<Branch> branches_;
};

// int_lo^hi g over one piece: tanh_sinh when finite, exp_sinh towards an infinite end.
template <class G>
TruthValue integrate_piece(const G& g, double lo, double hi) {
  TruthValue out{0.0, TruthMethod::quadrature, 0.0};
  if (!(hi > lo)) return out;
  double err = 0.0;
  if (std::isfinite(lo) && std::isfinite(hi)) {
    tanh_sinh<double> integrator(tanh_sinh_levels);
    out.value = integrator.integrate(g, lo, hi, quad_tolerance, &err);
  } else if (std::isfinite(lo)) {
    exp_sinh<double> integrator;
    out.value = integrator.integrate(g, lo, inf, quad_tolerance, &err);
  } else {
    exp_sinh<double> integrator;
    out.value =
        integrator.integrate([&](double u) { return g(-u); }, -hi, inf, quad_tolerance, &err);
  }
  out.error = err;
  return out;
}

// Where h changes sign on the grid, refined by TOMS 748; h returns (value, scale), and values
// within 1e-12 of their scale count as zero (identity: phi - f is rounding noise).
template <class H>
std::vector<double> sign_changes(const H& h, const std::vector<double>& grid) {
  std::vector<double> out;
  double prev_x = 0.0, prev_v = 0.0;
  int prev_sign = 0;
  for (double x : grid) {
    const auto [v, scale] = h(x);
    const int sign = std::abs(v) <= 1e-12 * scale ? 0 : (v > 0.0 ? 1 : -1);
    if (sign != 0) {
      if (prev_sign != 0 && sign != prev_sign) {
        boost::math::tools::eps_tolerance<double> tol(50);
        std::uintmax_t iterations = 100;
        const auto [a, b] = boost::math::tools::toms748_solve(
            [&](double t) { return h(t).first; }, prev_x, x, prev_v, v, tol, iterations);
        out.push_back(0.5 * (a + b));
      }
      prev_x = x;
      prev_v = v;
      prev_sign = sign;
    }
  }
  return out;
}

// Sum over the pieces between consecutive breaks (plus -inf and inf, or from `from`) of
// |int g| when `absolute` (g has one sign on each piece), else of int g; each piece integrated
// over the problem's variable (BinaryProblem::to_variable).
template <class G>
TruthValue integrate_pieces(const BinaryProblem& problem, const G& g, std::vector<double> breaks,
                            double from, bool absolute) {
  breaks.push_back(from);
  breaks.push_back(inf);
  std::sort(breaks.begin(), breaks.end());
  breaks.erase(std::unique(breaks.begin(), breaks.end()), breaks.end());
  const auto in_variable = [&](double v) {
    double jacobian;
    const double lam = problem.from_variable(v, jacobian);
    return jacobian == 0.0 ? 0.0 : g(lam) * jacobian;
  };
  TruthValue out{0.0, TruthMethod::quadrature, 0.0};
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i) {
    if (breaks[i] < from) continue;
    const TruthValue piece = integrate_piece(in_variable, problem.to_variable(breaks[i]),
                                             problem.to_variable(breaks[i + 1]));
    out.value += absolute ? std::abs(piece.value) : piece.value;
    out.error += piece.error;
  }
  return out;
}

// With two branches (a fold), q ~ 1/sqrt(lambda* - lambda) at the extremum lambda*, and there
// the preimages are roots of lambda(s) - lambda, which cancels: integrating over lambda put
// rounding-sized errors in s under that singularity, and int q came out 1.013 (alpha 1,
// lambda = log x + log(1 - x)), so these maps fell back to Monte Carlo. Every quantity is
// int q(lambda) F(lambda) d lambda with F bounded (a function of phi, lambda and, for the top
// label, of N/M at |lambda|), and on each branch q d lambda is the density of s, so the
// integrals run over s instead: sum over branches of int Beta_s(s) F(lambda(s)) ds, with no
// singularity at the fold (s*), where F is an average over two nearby preimages. Pieces end at
// s* and at the preimages on each branch of the lambda breaks (argmax flip, sign changes of
// |.|'s argument).
template <class F>
TruthValue integrate_over_s(const BinaryProblem& problem, const F& f,
                            const std::vector<double>& lambda_breaks) {
  TruthValue out{0.0, TruthMethod::quadrature, 0.0};
  const auto g = [&](double s) {
    const Point c = point_at(s);
    const double v = f(problem.lambda(c));
    return v == 0.0 ? 0.0 : std::exp(problem.log_density_s(c)) * v;
  };
  for (const Branch& b : problem.branches()) {
    std::vector<double> ends = {b.s_lo, b.s_hi};
    for (double lam : lambda_breaks) {
      double s = 0.0;
      if (problem.preimage(b, lam, s) && s > b.s_lo && s < b.s_hi) ends.push_back(s);
    }
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
      const TruthValue piece = integrate_piece(g, ends[i], ends[i + 1]);
      out.value += piece.value;
      out.error += piece.error;
    }
  }
  return out;
}

}  // namespace

double binary_quadrature_mass(const DirichletGenerator& gen) {
  const BinaryProblem problem(gen);
  if (gen.classes() != 2 || !problem.valid()) return 0.0;
  if (problem.folded())  // over s: the mass where both branches' roots give a density
    return integrate_over_s(
               problem, [&](double lam) { return problem.at(lam).q > 0.0 ? 1.0 : 0.0; },
               problem.base_breaks())
        .value;
  return integrate_pieces(
             problem, [&](double lam) { return problem.at(lam).q; }, problem.base_breaks(), -inf,
             false)
      .value;
}

bool binary_quadrature_truth(const DirichletGenerator& gen, GroundTruth& out) {
  if (gen.classes() != 2) return false;
  const BinaryProblem problem(gen);
  if (!problem.valid()) return false;
  const std::vector<double> base = problem.base_breaks();
  const bool folded = problem.folded();
  // int g d lambda for g = q F: over lambda, or over s with a fold (integrate_over_s).
  // Each quantity is int q F d lambda with F(a, lambda) bounded, a = problem.at(lambda): over
  // lambda the integrand is q F; over s (a fold, integrate_over_s) it is F alone, 0 where the
  // roots give no density. `absolute`: pieces split at F's sign changes, |.| of each.
  const auto integrate = [&](const auto& F, const std::vector<double>& breaks, bool absolute) {
    if (folded)
      return integrate_over_s(
          problem,
          [&](double lam) {
            const AtLambda a = problem.at(lam);
            if (!(a.q > 0.0) || !std::isfinite(a.q)) return 0.0;
            const double v = F(a, lam);
            return absolute ? std::abs(v) : v;
          },
          breaks);
    return integrate_pieces(
        problem,
        [&](double lam) {
          const AtLambda a = problem.at(lam);
          return a.q == 0.0 ? 0.0 : a.q * F(a, lam);
        },
        breaks, -inf, absolute);
  };
  const auto whole = [&](const auto& F) { return integrate(F, base, false); };

  // phi - f, written where it does not cancel: (1 - f) - (1 - phi) when f is near 1.
  const auto gap = [](const AtLambda& a, double lam) {
    return lam > 0.0 ? sigmoid(-lam) - a.phic : a.phi - sigmoid(lam);
  };
  // The mass check. Over s the mass is 1 by construction, so with a fold the check is the
  // tower property int q phi = E[c_1] (phi from the roots on both branches).
  const double total =
      folded ? 1.0 + whole([](const AtLambda& a, double) { return a.phi; }).value - problem.mean_x()
             : whole([](const AtLambda&, double) { return 1.0; }).value;
  if (!quadrature_mass_ok(total)) return false;  // Monte Carlo instead
  const TruthValue acc =
      whole([](const AtLambda& a, double lam) { return lam > 0.0 ? a.phi : a.phic; });
  const TruthValue over = whole([](const AtLambda& a, double lam) {
    // z - c_top given lambda: (1 - c_top) - (1 - z), exact for z near 1.
    return (lam > 0.0 ? a.phic : a.phi) - sigmoid(-std::abs(lam));
  });
  const TruthValue brier = whole([&](const AtLambda& a, double lam) {
    const double g = gap(a, lam);
    return 2.0 * g * g + 2.0 * a.phi * a.phic;
  });
  const TruthValue nll = whole([](const AtLambda& a, double lam) {
    return a.phi * softplus(-lam) + a.phic * softplus(lam);  // -log f = softplus(-lam)
  });
  const TruthValue sq = whole([&](const AtLambda& a, double lam) {
    const double g = gap(a, lam);
    return g * g;
  });
  const std::vector<double> grid = problem.lambda_grid();
  std::vector<double> cw_breaks = sign_changes(
      [&](double lam) {
        const AtLambda a = problem.at(lam);
        return std::pair{a.q * gap(a, lam), a.q};
      },
      grid);
  cw_breaks.insert(cw_breaks.end(), base.begin(), base.end());
  const TruthValue cw = integrate(gap, cw_breaks, true);

  // The top label, on lambda > 0: N and the density of logit Z, M = q(l) + q(-l).
  const auto top = [&](double lam, double& mass) {
    const AtLambda hi = problem.at(lam), lo = problem.at(-lam);
    mass = hi.q + lo.q;
    const double zc = sigmoid(-lam);  // 1 - z
    // phi(l) - z = (1 - z) - phic(l); 1 - phi(-l) - z = (1 - z) - phi(-l).
    return hi.q * (zc - hi.phic) + lo.q * (zc - lo.phi);
  };
  std::vector<double> positive;
  for (double v : grid)
    if (std::abs(v) > 0.0) positive.push_back(std::abs(v));
  std::sort(positive.begin(), positive.end());
  positive.erase(std::unique(positive.begin(), positive.end()), positive.end());
  std::vector<double> top_breaks = sign_changes(
      [&](double lam) {
        double mass;
        const double n = top(lam, mass);
        return std::pair{n, mass};
      },
      positive);
  // N involves q(-lambda) too: the reflected ends of the images are breaks as well.
  std::vector<double> top_base = base;
  for (double b : base) top_base.push_back(std::abs(b));
  top_breaks.insert(top_breaks.end(), top_base.begin(), top_base.end());
  TruthValue top_l1, top_sq;
  if (folded) {
    // int_0^inf H(l) dl = int q(lambda) H(|lambda|)/M(|lambda|) d lambda (M(l) = q(l) + q(-l)),
    // over s: H = |N| and N^2/M.
    std::vector<double> both = top_breaks;
    for (double b : top_breaks) both.push_back(-b);
    const auto ratio = [&](double lam, int power) {
      double mass;
      const double n = top(std::abs(lam), mass);
      if (!(mass > 0.0)) return 0.0;
      return power == 1 ? std::abs(n) / mass : (n / mass) * (n / mass);
    };
    top_l1 = integrate_over_s(
        problem, [&](double lam) { return ratio(lam, 1); }, both);
    top_sq = integrate_over_s(
        problem, [&](double lam) { return ratio(lam, 2); }, both);
  } else {
    top_l1 = integrate_pieces(
        problem,
        [&](double lam) {
          double mass;
          return top(lam, mass);
        },
        top_breaks, 0.0, true);
    top_sq = integrate_pieces(
        problem,
        [&](double lam) {
          double mass;
          const double n = top(lam, mass);
          return mass > 0.0 ? n / mass * n : 0.0;  // n * n may overflow
        },
        top_base, 0.0, false);
  }

  out[Quantity::accuracy] = acc;
  out[Quantity::overconfidence] = over;
  out[Quantity::brier] = brier;
  out[Quantity::nll] = nll;
  set_binary_canonical(out, cw, sq);
  out[Quantity::ece_top_l1] = top_l1;
  out[Quantity::ece_top_l2] = root_of(top_sq);
  return true;
}

}  // namespace calbench
