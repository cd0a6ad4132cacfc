#pragma once
// Writing a run's result files: config.resolved.json, then the scenario's records streamed to
// the JSON and CSV reporters (and the terminal's, when given), then run.json.
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>

#include "report/run_files.hpp"
#include "scenarios/scenario.hpp"

namespace calbench {

// run.json's facts known when a run starts: time (UTC), host, threads, compiler and library
// versions (the caller adds the duration). The command line and the Python binding share it.
RunInfo start_run_info(std::size_t threads);

void write_results(const ScenarioModule& scenario, const ScenarioResults& results,
                   const nlohmann::ordered_json& resolved, const RunInfo& run,
                   const std::filesystem::path& directory, std::ostream* terminal = nullptr);

}  // namespace calbench
