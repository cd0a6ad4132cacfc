#pragma once
// Requirements on a decision metric and the accuracy frontier (docs/decisions.md).
//
// A requirement is "metric >= x" (at_least) or "metric <= x" (at_most); a regret bound x is
// miscalibration_cost <= x. Within a group of cells that differ only in the parameter that sets
// accuracy, sorted by their exact accuracy a_1 <= ... <= a_m with margins m_i (metric - x for
// at_least, x - metric for at_most; met when m_i >= 0), the minimal accuracy is where the
// requirement starts to hold for good: with i the last cell that fails, the zero of the linear
// interpolation between cells i and i + 1,
//   a* = a_i + (a_{i+1} - a_i) (-m_i) / (m_{i+1} - m_i).
// Every cell met: "met_everywhere" (a* <= a_1, reported as a_1). The most accurate cell fails:
// "unreachable" within the swept accuracies. A cell below a* that meets the requirement makes
// the metric non-monotone in accuracy, and is flagged.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace calbench {

enum class Bound { at_least, at_most };
std::string_view to_string(Bound bound);

// What a requirement bounds: a value every task reports (common_decision_metrics,
// decisions/decision_spec.hpp), or one of its task's own figures (Requirement::figure).
enum class DecisionMetric {
  expected_utility,
  oracle_expected_utility,
  miscalibration_cost,
  figure
};
std::string_view to_string(DecisionMetric metric);  // "figure" for a task's figure

struct Requirement {
  DecisionMetric metric = DecisionMetric::expected_utility;
  std::string figure;  // metric figure: the task's figure
  Bound bound = Bound::at_least;
  double value = 0.0;
  bool regret = false;  // given as {"regret": x}: metric miscalibration_cost, at_most x
};

// The metric as configs and results spell it: to_string(metric), or the figure's name.
std::string metric_name(const Requirement& requirement);

// m = metric - x (at_least) or x - metric (at_most).
double margin(const Requirement& requirement, double metric);

struct FrontierPoint {
  std::size_t cell = 0;
  double accuracy = 0.0;
  double value = 0.0;  // the metric
};

enum class FrontierStatus { reached, met_everywhere, unreachable };
std::string_view to_string(FrontierStatus status);

struct Frontier {
  FrontierStatus status = FrontierStatus::unreachable;
  // reached: the interpolated a*; met_everywhere: the lowest accuracy swept; unreachable: none.
  std::optional<double> minimal_accuracy;
  // reached: the bracketing cells (the last failing one, the next one).
  std::optional<FrontierPoint> below, above;
  // unreachable: the cell with the largest margin (the closest to meeting the requirement).
  std::optional<FrontierPoint> closest;
  bool monotone = true;  // false when a cell below the frontier meets the requirement
};

// `points` in any order (sorted here by accuracy, then cell). Empty points give unreachable.
Frontier minimal_accuracy(std::vector<FrontierPoint> points, const Requirement& requirement);

}  // namespace calbench
