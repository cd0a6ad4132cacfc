#include "generators/beta_binary.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"
#include "generators/categorical.hpp"

namespace calbench {
namespace {

void require_finite(double v, const std::string& name) {
  if (!std::isfinite(v)) throw DomainError(name + " = " + format_double(v) + ": must be finite");
}

double positive(double v, const std::string& name) {
  if (!(std::isfinite(v) && v > 0.0))
    throw DomainError(name + " = " + format_double(v) + ": must be a finite number > 0");
  return v;
}

double logistic(double z) {
  return z >= 0.0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z));
}

}  // namespace

std::string curve_name(const CalibrationCurve& curve) {
  return std::string(curve_names[curve.index()]);
}

double curve_value(const CalibrationCurve& curve, double f, double log_f, double log_1mf) {
  return std::visit(
      [&](const auto& c) -> double {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, IdentityCurve>) {
          return f;
        } else if constexpr (std::is_same_v<C, PolynomialCurve>) {
          return std::exp(c.d * log_f);
        } else if constexpr (std::is_same_v<C, LogisticCurve>) {
          return logistic(c.a + c.b * f);
        } else {
          return logistic(c.a + c.b * (log_f - log_1mf));
        }
      },
      curve);
}

double curve_at_one(const CalibrationCurve& curve) {
  if (const auto* l = std::get_if<LogisticCurve>(&curve)) return logistic(l->a + l->b);
  if (const auto* l = std::get_if<LogitLogitCurve>(&curve))
    return l->b > 0.0 ? 1.0 : (l->b < 0.0 ? 0.0 : logistic(l->a));
  return 1.0;
}

BetaBinaryGenerator::BetaBinaryGenerator(BetaBinarySpec spec)
    : spec_(std::move(spec)),
      scores_(DirichletSpec{2, {positive(spec_.b, "b"), positive(spec_.a, "a")}, IdentityMap{}}) {
  if (!(std::isfinite(spec_.point_mass) && spec_.point_mass >= 0.0 && spec_.point_mass < 1.0))
    throw DomainError("point_mass = " + format_double(spec_.point_mass) + ": must be >= 0 and < 1");
  std::visit(
      [&](const auto& c) {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, PolynomialCurve>) {
          if (!(std::isfinite(c.d) && c.d > 0.0))
            throw DomainError("d = " + format_double(c.d) + ": must be a finite number > 0");
        } else if constexpr (!std::is_same_v<C, IdentityCurve>) {
          require_finite(c.a, "a");
          require_finite(c.b, "b");
        }
      },
      spec_.curve);
  if (spec_.point_mass > 0.0 && curve_at_one(spec_.curve) != 1.0)
    throw DomainError(
        "point_mass = " + format_double(spec_.point_mass) + " with the " + curve_name(spec_.curve) +
        " curve, whose P(y = 1 | f = 1) = " + format_double(curve_at_one(spec_.curve)) +
        " < 1: a confidence of exactly 1 would be wrong with positive probability "
        "and the NLL infinite; use a curve with phi(1) = 1 (identity, polynomial, "
        "logit_logit with b > 0) or point_mass 0");
}

std::string BetaBinaryGenerator::canonical_text() const {
  std::string out = "beta_binary:a=" + format_double(spec_.a) + ":b=" + format_double(spec_.b) +
                    ":mass1=" + format_double(spec_.point_mass) + ":" + curve_name(spec_.curve);
  std::visit(
      [&](const auto& c) {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, PolynomialCurve>) out += ":d=" + format_double(c.d);
        if constexpr (std::is_same_v<C, LogisticCurve> || std::is_same_v<C, LogitLogitCurve>)
          out += ":a=" + format_double(c.a) + ":b=" + format_double(c.b);
      },
      spec_.curve);
  return out;
}

std::uint32_t BetaBinaryGenerator::draw(Engine& engine, std::span<double> c, std::span<double> p,
                                        std::span<double> log_p) const {
  // The mass at 1 is decided by its own uniform only when there is one, so a Beta-only
  // generator spends no draw on it.
  if (spec_.point_mass > 0.0 && uniform_open01(engine) < spec_.point_mass) {
    p[0] = 0.0;
    p[1] = 1.0;
    log_p[0] = -INFINITY;
    log_p[1] = 0.0;
    c[0] = 0.0;
    c[1] = 1.0;
    return 1;
  }
  scores_.draw_truth(engine, p, log_p);
  const double phi = curve_value(spec_.curve, p[1], log_p[1], log_p[0]);
  c[0] = 1.0 - phi;
  c[1] = phi;
  return draw_categorical(engine, c);
}

}  // namespace calbench
