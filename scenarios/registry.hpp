#pragma once
// The scenarios the runner can execute, by config name.
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/estimator_bias.hpp"

namespace calbench {

using ScenarioFunction = ResultSet (*)(const ExperimentConfig&, const RunControl&);

struct ScenarioRunner {
  std::string_view name;
  ScenarioFunction run;
};

const std::vector<ScenarioRunner>& scenario_table();
// Throws ConfigError listing the valid names when `name` is unknown.
ScenarioFunction find_scenario(std::string_view name);

}  // namespace calbench
