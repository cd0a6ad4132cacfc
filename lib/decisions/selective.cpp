#include "decisions/selective.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

SelectiveTask::SelectiveTask(SelectiveSpec spec) : spec_(spec) {
  if (spec_.classes < 2)
    throw DomainError("classes = " + std::to_string(spec_.classes) + ": must be >= 2");
  if (!(spec_.threshold >= 0.0 && spec_.threshold <= 1.0))
    throw DomainError("threshold = " + format_double(spec_.threshold) + ": must be in [0, 1]");
  if (!(std::isfinite(spec_.cost) && spec_.cost >= 0.0))
    throw DomainError("cost = " + format_double(spec_.cost) + ": must be a finite number >= 0");
}

std::vector<std::string> SelectiveTask::action_names() const {
  std::vector<std::string> out;
  for (std::size_t a = 0; a < spec_.classes; ++a) out.push_back("predict_" + std::to_string(a));
  out.emplace_back("defer");
  return out;
}

Decision SelectiveTask::decide(std::span<const double> q, std::span<const double>) const {
  const std::size_t top = argmax_lowest(q);
  return Decision{q[top] >= spec_.threshold ? top : spec_.classes};
}

// Tallies: [predict, predict and correct, cost].
void SelectiveTask::tally(const Decision& d, std::span<const double> w,
                          std::span<double> out) const {
  double mass = 0.0;
  for (double v : w) mass += v;
  if (d.action == spec_.classes) {
    out[0] = 0.0;
    out[1] = 0.0;
    out[2] = spec_.cost * mass;
  } else {
    out[0] = mass;
    out[1] = w[d.action];
    out[2] = mass - w[d.action];
  }
}

void SelectiveTask::figures(std::span<const double> m, std::span<double> out) const {
  out[0] = m[0];
  out[1] = m[0] > 0.0 ? m[1] / m[0] : 0.0;
  out[2] = m[2];
}

}  // namespace calbench
