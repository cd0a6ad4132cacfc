#pragma once
// The scenario table: every scenario module, by config name. The only place that maps a
// scenario's name to its code.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.hpp"

namespace calbench {

const std::vector<ScenarioModule>& scenario_table();
// The table's ScenarioSyntax rows, for the config parser.
const std::vector<ScenarioSyntax>& scenario_syntax();
// The module of a parsed config (its `scenario`, which the parser checked).
const ScenarioModule& module_of(const ExperimentBase& config);
// What each of its cells asks of the machine (its module's `demand`), for the pre-flight.
std::vector<CellDemand> cell_demands(const ExperimentBase& config);

// A config file or document, parsed into its scenario's config (experiment/experiment.hpp).
std::unique_ptr<ExperimentBase> load_experiment(const std::filesystem::path& file);
std::unique_ptr<ExperimentBase> parse_experiment(const nlohmann::ordered_json& document,
                                                 const std::string& source);

// The same, as a given scenario's config type (tests and tools that know the scenario):
// throws std::bad_cast when the config names another scenario.
template <typename Config>
Config parse_experiment_as(const nlohmann::ordered_json& document, const std::string& source) {
  auto config = parse_experiment(document, source);
  return std::move(dynamic_cast<Config&>(*config));
}

}  // namespace calbench
