#include "decisions/requirement.hpp"

#include <algorithm>

namespace calbench {

std::string_view to_string(Bound bound) {
  return bound == Bound::at_least ? "at_least" : "at_most";
}

std::string_view to_string(DecisionMetric metric) {
  switch (metric) {
    case DecisionMetric::expected_utility:
      return "expected_utility";
    case DecisionMetric::oracle_expected_utility:
      return "oracle_expected_utility";
    case DecisionMetric::miscalibration_cost:
      return "miscalibration_cost";
    case DecisionMetric::figure:
      break;
  }
  return "figure";
}

std::string metric_name(const Requirement& requirement) {
  return requirement.metric == DecisionMetric::figure ? requirement.figure
                                                      : std::string(to_string(requirement.metric));
}

std::string_view to_string(FrontierStatus status) {
  switch (status) {
    case FrontierStatus::reached:
      return "reached";
    case FrontierStatus::met_everywhere:
      return "met_everywhere";
    case FrontierStatus::unreachable:
      break;
  }
  return "unreachable";
}

double margin(const Requirement& requirement, double metric) {
  return requirement.bound == Bound::at_least ? metric - requirement.value
                                              : requirement.value - metric;
}

Frontier minimal_accuracy(std::vector<FrontierPoint> points, const Requirement& requirement) {
  Frontier out;
  if (points.empty()) return out;
  std::sort(points.begin(), points.end(), [](const FrontierPoint& a, const FrontierPoint& b) {
    return a.accuracy != b.accuracy ? a.accuracy < b.accuracy : a.cell < b.cell;
  });
  std::optional<std::size_t> last_fail;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!(margin(requirement, points[i].value) >= 0.0)) last_fail = i;
  if (!last_fail) {
    out.status = FrontierStatus::met_everywhere;
    out.minimal_accuracy = points.front().accuracy;
    return out;
  }
  const std::size_t i = *last_fail;
  for (std::size_t j = 0; j < i; ++j)
    if (margin(requirement, points[j].value) >= 0.0) out.monotone = false;
  if (i + 1 == points.size()) {
    out.status = FrontierStatus::unreachable;
    out.closest = *std::max_element(
        points.begin(), points.end(), [&](const FrontierPoint& a, const FrontierPoint& b) {
          return margin(requirement, a.value) < margin(requirement, b.value);
        });
    return out;
  }
  const FrontierPoint& lo = points[i];
  const FrontierPoint& hi = points[i + 1];
  const double m_lo = margin(requirement, lo.value);
  const double m_hi = margin(requirement, hi.value);
  out.status = FrontierStatus::reached;
  out.below = lo;
  out.above = hi;
  out.minimal_accuracy = lo.accuracy + (hi.accuracy - lo.accuracy) * (-m_lo) / (m_hi - m_lo);
  return out;
}

}  // namespace calbench
