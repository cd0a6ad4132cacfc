#pragma once
// The two result files that are not records: config.resolved.json (the config with every
// default filled, plus the calbench version) and run.json (the volatile facts of one run: the
// only file that may differ between runs of one config).
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/value.hpp"
#include "report/reporter.hpp"

namespace calbench {

struct RunInfo {
  std::string started_utc;
  double seconds = 0.0;
  std::string host;
  std::size_t threads = 0;
  std::string compiler, libraries;
};

void write_resolved_config(const nlohmann::ordered_json& resolved,
                           const std::filesystem::path& directory);

// `volatile_blocks`: a scenario's own volatile facts (recalibration's fit times), after the
// common ones.
void write_run_info(const ResultMeta& meta, const RunInfo& run,
                    const Value::Object& volatile_blocks, const std::filesystem::path& directory);

}  // namespace calbench
