#include "report/run_files.hpp"

#include "core/atomic_file.hpp"
#include "core/version.hpp"
#include "report/value_format.hpp"

namespace calbench {

void write_resolved_config(const nlohmann::ordered_json& resolved,
                           const std::filesystem::path& directory) {
  nlohmann::ordered_json config = resolved;
  config["calbench"] = {{"version", version}, {"git_revision", git_revision}};
  write_file_atomically(directory / "config.resolved.json", config.dump(2) + "\n");
}

void write_run_info(const ResultMeta& meta, const RunInfo& run,
                    const Value::Object& volatile_blocks, const std::filesystem::path& directory) {
  nlohmann::ordered_json info = {{"meta", to_json(meta_value(meta))},
                                 {"started_utc", run.started_utc},
                                 {"seconds", run.seconds},
                                 {"host", run.host},
                                 {"threads", run.threads},
                                 {"compiler", run.compiler},
                                 {"libraries", run.libraries}};
  for (const auto& [key, value] : volatile_blocks) info[key] = to_json(value);
  write_file_atomically(directory / "run.json", info.dump(2) + "\n");
}

}  // namespace calbench
