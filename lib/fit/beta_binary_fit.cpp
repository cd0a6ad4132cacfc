#include "fit/beta_binary_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/error.hpp"
#include "core/format.hpp"
#include "fit/dirichlet_mle.hpp"
#include "truth/logistic.hpp"

namespace calbench {

std::string_view to_string(CurveKind kind) {
  return curve_names[static_cast<std::size_t>(kind)];  // the kinds are in the variant's order
}

namespace {

// A fit whose parameter leaves these bounds is reported as run away (near-separable labels):
// |a|, |b| <= 1e3 for the two-parameter curves, d in [1e-3, 1e3] (the map fits' bound).
constexpr double coefficient_bound = 1e3;
constexpr double exponent_min = 1e-3, exponent_max = 1e3;

// The rows with 0 < f < 1, as the curve fits use them.
struct InteriorRows {
  std::vector<double> f, log_f, log_1mf;
  std::vector<std::uint8_t> y;  // 1{y = 1}
};

InteriorRows interior_rows(const Sample& data) {
  InteriorRows out;
  for (std::size_t i = 0; i < data.size; ++i) {
    const double f = data.p[2 * i + 1];
    if (!(f > 0.0 && f < 1.0)) continue;
    out.f.push_back(f);
    out.log_f.push_back(std::log(f));
    out.log_1mf.push_back(std::log1p(-f));
    out.y.push_back(data.label[i] == 1 ? 1 : 0);
  }
  return out;
}

void require_binary(const Sample& data) {
  if (data.classes != 2)
    throw DomainError("the beta_binary family needs K = 2 classes, found K = " +
                      std::to_string(data.classes));
}

// -log P(y | f) under `curve`, each branch in a form exact where phi or 1 - phi underflows.
double row_nll(const CalibrationCurve& curve, double f, double log_f, double log_1mf, bool y) {
  return std::visit(
      [&](const auto& c) -> double {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, IdentityCurve>) {
          return y ? -log_f : -log_1mf;
        } else if constexpr (std::is_same_v<C, PolynomialCurve>) {
          const double u = c.d * log_f;  // log phi
          return y ? -u : -std::log(-std::expm1(u));
        } else {
          const double eta =
              std::is_same_v<C, LogisticCurve> ? c.a + c.b * f : c.a + c.b * (log_f - log_1mf);
          return y ? softplus(-eta) : softplus(eta);  // -log sigmoid(eta), -log(1 - sigmoid)
        }
      },
      curve);
}

double total_nll(const InteriorRows& rows, const CalibrationCurve& curve) {
  double out = 0.0;
  for (std::size_t i = 0; i < rows.f.size(); ++i)
    out += row_nll(curve, rows.f[i], rows.log_f[i], rows.log_1mf[i], rows.y[i] != 0);
  return out;
}

std::string ran_away(CurveKind kind, const std::string& what) {
  return std::string(to_string(kind)) + " fit ran away (" + what +
         "): the labels are nearly separable by f";
}

// Logistic regression of y on (1, x) by Newton's method with step halving (the NLL is
// strictly convex unless x is constant): returns (a, b). With one regressor the maximum exists
// exactly when the labels are not separated by a threshold on x (Albert & Anderson 1984:
// no complete or quasi-complete separation), which is checked first.
std::pair<double, double> logit_regression(const std::vector<double>& x,
                                           const std::vector<std::uint8_t>& y, double a, double b,
                                           CurveKind kind) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  double lo[2] = {inf, inf}, hi[2] = {-inf, -inf};  // range of x per label
  for (std::size_t i = 0; i < x.size(); ++i) {
    lo[y[i]] = std::min(lo[y[i]], x[i]);
    hi[y[i]] = std::max(hi[y[i]], x[i]);
  }
  if (hi[0] <= lo[1] || hi[1] <= lo[0])
    throw DomainError(std::string(to_string(kind)) +
                      " has no maximum-likelihood fit: the labels are separated by a threshold "
                      "on f (or all equal)");
  const auto nll = [&](double a_, double b_) {
    double out = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double eta = a_ + b_ * x[i];
      out += y[i] ? softplus(-eta) : softplus(eta);
    }
    return out;
  };
  double value = nll(a, b);
  bool converged = false;
  for (int it = 0; it < 200 && !converged; ++it) {
    // Gradient sum (s - y)(1, x), Hessian sum s(1 - s)(1, x)(1, x)'.
    double g0 = 0.0, g1 = 0.0, h00 = 0.0, h01 = 0.0, h11 = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double s = sigmoid(a + b * x[i]), w = s * (1.0 - s), r = s - y[i];
      g0 += r;
      g1 += r * x[i];
      h00 += w;
      h01 += w * x[i];
      h11 += w * x[i] * x[i];
    }
    const double det = h00 * h11 - h01 * h01;
    if (!(det > 1e-300 * std::max(1.0, h00 * h11)))
      throw DomainError(std::string(to_string(kind)) +
                        " fit is degenerate: the scores take a single value or the labels are "
                        "separable");
    const double step_a = (h11 * g0 - h01 * g1) / det, step_b = (h00 * g1 - h01 * g0) / det;
    double t = 1.0, trial = value;
    for (; t > 1e-10; t *= 0.5) {
      trial = nll(a - t * step_a, b - t * step_b);
      if (trial <= value) break;
    }
    if (t <= 1e-10) {  // no decrease left: at the optimum to rounding
      converged = true;
      break;
    }
    a -= t * step_a;
    b -= t * step_b;
    value = trial;
    if (std::abs(a) > coefficient_bound || std::abs(b) > coefficient_bound)
      throw DomainError(ran_away(kind, "|a| or |b| beyond 1e3"));
    converged = std::abs(t * step_a) < 1e-12 * (1.0 + std::abs(a)) &&
                std::abs(t * step_b) < 1e-12 * (1.0 + std::abs(b));
  }
  if (!converged)
    throw DomainError(std::string(to_string(kind)) + " fit did not converge in 200 Newton steps");
  return {a, b};
}

// phi = f^d: the NLL -sum [y d L + (1 - y) log(1 - e^(d L))], L = log f < 0, is convex in d.
// With w = 1/expm1(-d L): gradient sum [-y L + (1 - y) L w], curvature sum (1 - y) L^2 (w + w^2).
double polynomial_exponent(const InteriorRows& rows) {
  const auto nll = [&](double d) { return total_nll(rows, PolynomialCurve{d}); };
  double d = 1.0, value = nll(d);
  bool converged = false;
  for (int it = 0; it < 200 && !converged; ++it) {
    double g = 0.0, h = 0.0;
    for (std::size_t i = 0; i < rows.f.size(); ++i) {
      const double L = rows.log_f[i];
      if (rows.y[i]) {
        g -= L;
      } else {
        const double w = 1.0 / std::expm1(-d * L);
        g += L * w;
        h += L * L * (w + w * w);
      }
    }
    if (!(h > 0.0)) throw DomainError(ran_away(CurveKind::polynomial, "every label is 1"));
    const double step = g / h;
    double t = 1.0, trial = value;
    for (; t > 1e-10; t *= 0.5) {
      if (d - t * step <= 0.0) continue;
      trial = nll(d - t * step);
      if (trial <= value) break;
    }
    if (t <= 1e-10) {
      converged = true;
      break;
    }
    d -= t * step;
    value = trial;
    if (d < exponent_min || d > exponent_max)
      throw DomainError(ran_away(CurveKind::polynomial, "d outside [1e-3, 1e3]"));
    converged = std::abs(t * step) < 1e-12 * d;
  }
  if (!converged) throw DomainError("polynomial fit did not converge in 200 Newton steps");
  return d;
}

}  // namespace

BetaScoreFit fit_beta_scores(const Sample& data) {
  require_binary(data);
  BetaScoreFit out;
  std::size_t zeros = 0;
  std::vector<double> rows;  // (1 - f, f): Beta(a, b) of f is Dirichlet(b, a) of the pair
  for (std::size_t i = 0; i < data.size; ++i) {
    const double f = data.p[2 * i + 1];
    if (f >= 1.0) {
      ++out.ones;
    } else if (f <= 0.0) {
      ++zeros;
    } else {
      rows.push_back(1.0 - f);
      rows.push_back(f);
    }
  }
  if (zeros > 0)
    throw DomainError(std::to_string(zeros) +
                      " rows have p_1 = 0 exactly, where the beta_binary family has no mass (its "
                      "point mass is at p_1 = 1)");
  const std::size_t interior = rows.size() / 2;
  if (interior < 2)
    throw DomainError("the Beta fit needs at least 2 rows with 0 < p_1 < 1, found " +
                      std::to_string(interior));
  const DirichletFit dirichlet = fit_dirichlet(dirichlet_statistics(rows, 2));
  out.b = dirichlet.alpha[0];
  out.a = dirichlet.alpha[1];
  for (const auto& [name, v] : {std::pair{"a", out.a}, std::pair{"b", out.b}})
    if (!(v >= beta_shape_min && v <= beta_shape_max))
      throw DomainError("the fitted Beta shape " + std::string(name) + " = " + format_double(v) +
                        " is outside the family's [1e-2, 1e3]");
  const double n = static_cast<double>(data.size), ones = static_cast<double>(out.ones);
  out.log_likelihood = static_cast<double>(interior) * dirichlet.mean_log_likelihood;
  if (out.ones > 0) {
    out.point_mass = ones / n;
    out.log_likelihood += ones * std::log(out.point_mass) +
                          static_cast<double>(interior) * std::log1p(-out.point_mass);
    out.free_parameters = 3;
  }
  return out;
}

double curve_negative_log_likelihood(const Sample& data, const CalibrationCurve& curve) {
  require_binary(data);
  return total_nll(interior_rows(data), curve);
}

CurveFit fit_curve(const Sample& data, CurveKind kind) {
  require_binary(data);
  const InteriorRows rows = interior_rows(data);
  CurveFit out;
  switch (kind) {
    case CurveKind::identity:
      out.curve = IdentityCurve{};
      break;
    case CurveKind::polynomial:
      out.curve = PolynomialCurve{polynomial_exponent(rows)};
      out.free_parameters = 1;
      break;
    case CurveKind::logistic: {
      const auto [a, b] = logit_regression(rows.f, rows.y, 0.0, 0.0, kind);
      out.curve = LogisticCurve{a, b};
      out.free_parameters = 2;
      break;
    }
    case CurveKind::logit_logit: {
      std::vector<double> logit(rows.f.size());
      for (std::size_t i = 0; i < logit.size(); ++i) logit[i] = rows.log_f[i] - rows.log_1mf[i];
      const auto [a, b] = logit_regression(logit, rows.y, 0.0, 1.0, kind);  // from the identity
      out.curve = LogitLogitCurve{a, b};
      out.free_parameters = 2;
      break;
    }
  }
  out.negative_log_likelihood = total_nll(rows, out.curve);
  out.aic = 2.0 * static_cast<double>(out.free_parameters) + 2.0 * out.negative_log_likelihood;
  return out;
}

BetaBinaryFit fit_beta_binary(const Sample& data, std::optional<CurveKind> curve) {
  BetaBinaryFit out;
  out.scores = fit_beta_scores(data);
  std::size_t wrong_at_one = 0;
  for (std::size_t i = 0; i < data.size; ++i)
    if (data.p[2 * i + 1] >= 1.0 && data.label[i] != 1) ++wrong_at_one;
  if (wrong_at_one > 0)
    throw DomainError(std::to_string(wrong_at_one) + " of the " + std::to_string(out.scores.ones) +
                      " rows with p_1 = 1 have label 0: the beta_binary point mass needs "
                      "P(y = 1 | p_1 = 1) = 1");
  std::vector<CurveKind> kinds(std::begin(all_curve_kinds), std::end(all_curve_kinds));
  if (curve) kinds = {*curve};
  for (CurveKind kind : kinds) {
    if (out.scores.point_mass > 0.0 && kind == CurveKind::logistic) {
      out.rejected.push_back("logistic: its phi(1) < 1 cannot go with the point mass at p_1 = 1 (" +
                             std::to_string(out.scores.ones) + " rows)");
      continue;
    }
    try {
      CurveFit fit = fit_curve(data, kind);
      if (out.scores.point_mass > 0.0 && curve_at_one(fit.curve) != 1.0) {
        out.rejected.push_back(std::string(to_string(kind)) +
                               ": fitted with phi(1) < 1, which cannot go with the point mass at "
                               "p_1 = 1");
        continue;
      }
      out.candidates.push_back(std::move(fit));
    } catch (const DomainError& error) {
      out.rejected.push_back(error.what());
    }
  }
  if (out.candidates.empty())
    throw DomainError("no beta_binary calibration curve could be fitted: " + out.rejected.front());
  out.chosen =
      *std::min_element(out.candidates.begin(), out.candidates.end(),
                        [](const CurveFit& x, const CurveFit& y) { return x.aic < y.aic; });
  out.spec = BetaBinarySpec{out.scores.a, out.scores.b, out.scores.point_mass, out.chosen.curve};
  BetaBinaryGenerator{out.spec};  // validates: throws DomainError naming the parameter
  out.log_likelihood = out.scores.log_likelihood - out.chosen.negative_log_likelihood;
  out.free_parameters = out.scores.free_parameters + out.chosen.free_parameters;
  out.aic = 2.0 * static_cast<double>(out.free_parameters) - 2.0 * out.log_likelihood;
  return out;
}

}  // namespace calbench
