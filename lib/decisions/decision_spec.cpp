#include "decisions/decision_spec.hpp"

namespace calbench {

std::unique_ptr<DecisionTask> make_task(const DecisionSpec& spec) {
  return std::visit(
      [](const auto& s) -> std::unique_ptr<DecisionTask> {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, CostMatrixSpec>) return std::make_unique<CostMatrixTask>(s);
        if constexpr (std::is_same_v<S, SelectiveSpec>) return std::make_unique<SelectiveTask>(s);
        if constexpr (std::is_same_v<S, TriageSpec>) return std::make_unique<TriageTask>(s);
        if constexpr (std::is_same_v<S, BettingSpec>) return std::make_unique<BettingTask>(s);
      },
      spec);
}

const std::vector<std::string>& common_decision_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const DecisionMetric m : common_decision_metrics) out.emplace_back(to_string(m));
    return out;
  }();
  return names;
}

}  // namespace calbench
