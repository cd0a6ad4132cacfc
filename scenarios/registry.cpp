#include "scenarios/registry.hpp"

#include "core/error.hpp"
#include "scenarios/decision.hpp"
#include "scenarios/recalibration.hpp"

namespace calbench {

const std::vector<ScenarioRunner>& scenario_table() {
  static const std::vector<ScenarioRunner> table = {
      {"estimator_bias", &run_estimator_bias},
      {"recalibration", &run_recalibration},
      {"decision", &run_decision},
  };
  return table;
}

ScenarioFunction find_scenario(std::string_view name) {
  std::string valid;
  for (const auto& e : scenario_table()) {
    if (e.name == name) return e.run;
    if (!valid.empty()) valid.append(", ");
    valid.append(e.name);
  }
  throw ConfigError({"unknown scenario \"" + std::string(name) + "\"; valid: " + valid});
}

}  // namespace calbench
