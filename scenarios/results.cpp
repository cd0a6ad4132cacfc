#include "scenarios/results.hpp"

#include <optional>
#include <vector>

namespace calbench {

void write_results(const ScenarioModule& scenario, const ScenarioResults& results,
                   const nlohmann::ordered_json& resolved, const RunInfo& run,
                   const std::filesystem::path& directory, std::ostream* terminal) {
  write_resolved_config(resolved, directory);
  JsonReporter json(directory);
  CsvReporter csv(directory);
  std::vector<Reporter*> reporters = {&json, &csv};
  std::optional<TerminalReporter> table;
  if (terminal != nullptr) reporters.push_back(&table.emplace(*terminal));
  FanOut all(reporters);
  scenario.report(results, all);
  write_run_info(results.meta, run, results.volatile_blocks, directory);
}

}  // namespace calbench
