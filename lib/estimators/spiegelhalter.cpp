#include "estimators/spiegelhalter.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "estimators/cumulative.hpp"

namespace calbench {

Spiegelhalter::Spiegelhalter(SpiegelhalterSpec spec) : spec_(spec) {
  if (spec_.scope == Scope::classwise)
    throw DomainError("spiegelhalter: scope must be top or binary");
  if (!(spec_.test.level > 0.0 && spec_.test.level < 1.0))
    throw DomainError("spiegelhalter: level must be in (0, 1)");
}

bool Spiegelhalter::has_population_value() const {
  return spec_.test.output == TestOutput::statistic;
}

std::optional<std::string> Spiegelhalter::classes_problem(std::size_t classes) const {
  if (spec_.scope == Scope::binary && classes != 2)
    return "scope binary needs K = 2 classes, found K = " + std::to_string(classes);
  return std::nullopt;
}

double Spiegelhalter::p_value(const Sample& s, EstimatorWorkspace& ws) const {
  SpiegelhalterSpec spec = spec_;
  spec.test.output = TestOutput::p_value;
  return Spiegelhalter(spec).estimate(s, ws);
}

double Spiegelhalter::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  if (const auto problem = classes_problem(s.classes)) throw DomainError(*problem);
  fill_scope(s, spec_.scope, ws);
  double numerator = 0.0, variance = 0.0;
  for (std::size_t i = 0; i < s.size; ++i) {
    const double p = ws.scores[i], lever = 1.0 - 2.0 * p;
    numerator += (ws.outcomes[i] - p) * lever;
    variance += lever * lever * p * (1.0 - p);
  }
  const double statistic = s.size == 0 ? 0.0 : numerator / static_cast<double>(s.size);
  if (spec_.test.output == TestOutput::statistic) return statistic;
  double z = 0.0;
  if (variance > 0.0)
    z = numerator / std::sqrt(variance);
  else if (numerator != 0.0)
    z = std::copysign(std::numeric_limits<double>::infinity(), numerator);
  const double p_value = std::erfc(std::abs(z) / std::sqrt(2.0));
  return test_output(spec_.test, statistic, z, p_value);
}

}  // namespace calbench
