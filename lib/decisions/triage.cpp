#include "decisions/triage.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

TriageTask::TriageTask(TriageSpec spec) : spec_(spec) {
  if (spec_.classes < 2)
    throw DomainError("classes = " + std::to_string(spec_.classes) + ": must be >= 2");
  if (spec_.disease >= spec_.classes)
    throw DomainError("disease = " + std::to_string(spec_.disease) + ": must be a class index < " +
                      std::to_string(spec_.classes));
  for (const auto& [name, v] : {std::pair{"benefit", spec_.benefit}, std::pair{"harm", spec_.harm}})
    if (!(std::isfinite(v) && v > 0.0))
      throw DomainError(std::string(name) + " = " + format_double(v) +
                        ": must be a finite number > 0");
  threshold_ = spec_.harm / (spec_.benefit + spec_.harm);
}

Decision TriageTask::decide(std::span<const double> q, std::span<const double>) const {
  return Decision{q[spec_.disease] > threshold_ ? std::size_t{1} : std::size_t{0}};
}

// Tallies: [treated, helped, harmed, missed].
void TriageTask::tally(const Decision& d, std::span<const double> w, std::span<double> out) const {
  double healthy = 0.0;
  for (std::size_t k = 0; k < w.size(); ++k)
    if (k != spec_.disease) healthy += w[k];
  const double diseased = w[spec_.disease];
  const bool treat = d.action == 1;
  out[0] = treat ? diseased + healthy : 0.0;
  out[1] = treat ? diseased : 0.0;
  out[2] = treat ? healthy : 0.0;
  out[3] = treat ? 0.0 : diseased;
}

void TriageTask::figures(std::span<const double> m, std::span<double> out) const {
  for (std::size_t i = 0; i < 4; ++i) out[i] = m[i];
}

}  // namespace calbench
