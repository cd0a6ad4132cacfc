#pragma once
// The `beta_binary` family (the one-dimensional setting of Roelofs et al. 2022): K = 2, the
// score f = p_1 ~ Beta(a, b), with probability `point_mass` instead f = 1 exactly, and
// P(y = 1 | f) = phi(f) for a calibration curve phi. The reported vector is p = (1 - f, f)
// and c = (1 - phi(f), phi(f)) = r(p).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "core/rng.hpp"
#include "generators/dirichlet.hpp"

namespace calbench {

// phi(f) = f (calibrated).
struct IdentityCurve {};
// phi(f) = f^d: d > 1 overconfident towards 1 (the model says f, the truth is lower).
struct PolynomialCurve {
  double d = 1.0;
};
// phi(f) = 1 / (1 + exp(-(a + b f))): a logistic curve in the score (intercept a, slope b).
struct LogisticCurve {
  double a = 0.0, b = 1.0;
};
// logit phi(f) = a + b logit f: linear in the log-odds (a = 0, b = 1 is the identity; b > 1
// underconfident, b < 1 overconfident).
struct LogitLogitCurve {
  double a = 0.0, b = 1.0;
};

using CalibrationCurve =
    std::variant<IdentityCurve, PolynomialCurve, LogisticCurve, LogitLogitCurve>;

// The curves' config names, in the order of CalibrationCurve's alternatives.
inline constexpr std::array<std::string_view, 4> curve_names = {"identity", "polynomial",
                                                                "logistic", "logit_logit"};
static_assert(std::variant_size_v<CalibrationCurve> == curve_names.size());

std::string curve_name(const CalibrationCurve& curve);
// phi(f) from f, log f and log(1 - f) (the logs exact where f or 1 - f underflows).
double curve_value(const CalibrationCurve& curve, double f, double log_f, double log_1mf);
// phi(1): the curve's limit at f = 1 (what the point mass's labels follow).
double curve_at_one(const CalibrationCurve& curve);

// The shapes a and b the family accepts (docs/config.md, "Parameter bounds"; the reason is at
// beta_shape_bounds in generators_json.cpp). `calbench fit` refuses a fit outside them.
inline constexpr double beta_shape_min = 1e-2, beta_shape_max = 1e3;

struct BetaBinarySpec {
  double a = 1.0, b = 1.0;  // f ~ Beta(a, b)
  double point_mass = 0.0;  // P(f = 1)
  CalibrationCurve curve = IdentityCurve{};
};

class BetaBinaryGenerator {
 public:
  // Validates every parameter; throws DomainError naming it. A point mass needs phi(1) = 1:
  // otherwise a confidence of exactly 1 is wrong with positive probability and the NLL is
  // infinite.
  explicit BetaBinaryGenerator(BetaBinarySpec spec);

  const BetaBinarySpec& spec() const { return spec_; }
  std::size_t classes() const { return 2; }
  std::string canonical_text() const;

  // One draw: p = (1 - f, f), log p, c = (1 - phi(f), phi(f)); returns y ~ c.
  std::uint32_t draw(Engine& engine, std::span<double> c, std::span<double> p,
                     std::span<double> log_p) const;

 private:
  BetaBinarySpec spec_;
  DirichletGenerator scores_;  // (1 - f, f) ~ Dir(b, a)
};

}  // namespace calbench
