#include "scenarios/results.hpp"

#include <tbb/version.h>
#include <unistd.h>

#include <boost/version.hpp>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "recalibrators/xgboost_booster.hpp"

namespace calbench {

RunInfo start_run_info(std::size_t threads) {
  RunInfo info;
  const std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  info.started_utc = stamp;
  char host[256] = {};
  info.host = ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  info.threads = threads;
  info.compiler = std::string("g++ ") + __VERSION__;
  info.libraries = "boost " + std::to_string(BOOST_VERSION / 100000) + "." +
                   std::to_string(BOOST_VERSION / 100 % 1000) + ", oneTBB " +
                   std::to_string(TBB_VERSION_MAJOR) + "." + std::to_string(TBB_VERSION_MINOR) +
                   ", nlohmann_json " + std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                   std::to_string(NLOHMANN_JSON_VERSION_MINOR) + ", xgboost " + xgboost_version();
  return info;
}

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
