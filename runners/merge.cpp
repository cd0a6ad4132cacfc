#include <tbb/global_control.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/journal.hpp"
#include "core/read_file.hpp"
#include "report/result_set.hpp"
#include "runners/command.hpp"
#include "runners/run.hpp"
#include "scenarios/registry.hpp"

namespace calbench {
namespace {

// calbench merge: the shards' journals joined and replayed by one run of their config, which
// computes nothing the shards recorded and writes the result set a single run writes.
int merge_command(const std::vector<std::string>& dirs, RunOptions options) {
  std::vector<std::filesystem::path> journals(dirs.size());
  std::vector<std::size_t> records(dirs.size());  // each shard's count, from its shard.json
  std::string config_text;
  std::string config_source;  // the config file the shards ran (shard.json), if recorded
  std::size_t count = 0;
  for (const auto& dir : dirs) {
    const std::filesystem::path info_file = std::filesystem::path(dir) / "shard.json";
    const FileBytes info_text = read_file(info_file);
    if (!info_text) throw InputError(dir + " is not a shard of a run (no shard.json)");
    nlohmann::json info;
    try {
      info = nlohmann::json::parse(info_text.bytes);
    } catch (const nlohmann::json::exception&) {
      throw InputError(info_file.string() + ": not valid JSON");
    }
    // Whole numbers only: "shard": 2.7 was read as shard 2, "shard": "2" was a raw type error.
    for (const char* key : {"shard", "shards", "records"})
      if (!info.is_object() || !info.contains(key) || !info[key].is_number_unsigned())
        throw InputError(info_file.string() + ": /" + key + ": expected an integer >= " +
                         (std::string_view(key) == "records" ? "0" : "1") + ", found " +
                         (info.is_object() && info.contains(key) ? info[key].dump() : "nothing"));
    if (info.contains("config_file") && info["config_file"].is_string())
      config_source = info["config_file"].get<std::string>();
    const auto shard = info["shard"].get<std::size_t>();
    const auto shards = info["shards"].get<std::size_t>();
    if (count == 0) count = shards;
    if (shards != count || shards != dirs.size() || shard < 1 || shard > shards)
      throw InputError(info_file.string() + ": shard " + std::to_string(shard) + " of " +
                       std::to_string(shards) + ", but " + std::to_string(dirs.size()) +
                       " shard directories were given: merge takes every shard of one run once");
    if (!journals[shard - 1].empty())
      throw InputError(dir + ": shard " + std::to_string(shard) + " is given twice");
    journals[shard - 1] = std::filesystem::path(dir) / "journal.bin";
    records[shard - 1] = info["records"].get<std::size_t>();
    if (const std::string kind = special_file_kind(journals[shard - 1]);
        !kind.empty() || !std::filesystem::exists(journals[shard - 1]))
      throw InputError(journals[shard - 1].string() + ": the shard's journal is " +
                       (kind.empty() ? std::string("missing") : kind) +
                       ": rerun the shard (calbench run CONFIG --shard " + std::to_string(shard) +
                       "/" + std::to_string(shards) + ")");
    const std::filesystem::path shard_config = std::filesystem::path(dir) / "config.json";
    const FileBytes text = read_file(shard_config);
    if (!text)
      throw InputError(shard_config.string() + ": cannot read the config the shard ran (" +
                       text.error.message() + ")");
    if (config_text.empty()) config_text = text.bytes;
    if (text.bytes != config_text)
      throw InputError(dir + "/config.json differs from " + dirs.front() +
                       "/config.json: the shards are of different runs");
  }
  // The config is the shards' copy, read as the file the shards ran (shard.json's config_file):
  // its relative paths (an empirical generator's rows, checked by their SHA-256) name files
  // beside that file, not beside the copy. Shards written before config_file: the copy.
  const std::string config_file = (std::filesystem::path(dirs.front()) / "config.json").string();
  std::unique_ptr<ExperimentBase> config;
  if (config_source.empty()) {
    config = load_experiment(config_file);
  } else {
    // The config loader's own reader: duplicate keys and limits as for any config file.
    Problems problems;
    const Json document = parse_json_source(config_text, config_file, problems);
    if (!problems.empty()) throw ConfigError(problems.render(config_file));
    config = parse_experiment(document, config_source);
  }
  if (options.out) config->output.directory = *options.out;
  module_of(*config);
  // The merged set replaces OUT whole: OUT must not be one of the shards it reads.
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (std::filesystem::equivalent(dir, config->output.directory, ec))
      throw OutputError("the output directory " + config->output.directory.string() +
                        " is the shard " + dir +
                        ": merge replaces its output whole; choose another --out");
  }
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, options.threads);
  const std::string shown_out = config->output.directory.string();
  ResultSetTransaction results_set(config->output.directory, options.overwrite);
  if (results_set.previous_journal()) results_set.discard_previous();
  const std::string identity = run_identity(*config);
  try {
    merge_shards(journals, identity, results_set.journal_path(), records);
  } catch (const JournalCorrupt& e) {
    throw JournalCorrupt(std::string(e.what()) +
                         ": run that shard again (calbench run CONFIG --shard I/N --out DIR "
                         "--overwrite)");
  }
  TaskJournal journal = TaskJournal::resume(results_set.journal_path(), identity);
  options.shard.reset();
  std::string command = "calbench merge";
  for (const auto& dir : dirs) command += " " + dir;
  return execute(config_file, *config, shown_out, results_set, journal, options,
                 command + " --out " + shown_out +
                     (options.overwrite == Overwrite::yes ? " --overwrite" : ""));
}

}  // namespace

Command add_merge_command(CLI::App& app) {
  struct Arguments {
    std::vector<std::string> dirs;
    RunOptions options;
    bool overwrite = false;
  };
  auto a = std::make_shared<Arguments>();
  a->options.threads = default_threads();
  auto* merge = app.add_subcommand(
      "merge", "join the shards of one run (calbench run --shard I/N) into its result set");
  merge->add_option("SHARD_DIRS", a->dirs, "every shard's directory, in any order")->required();
  merge->add_option("--out", a->options.out, "output directory (overrides output.directory)")
      ->check(directory_text());
  merge->add_option("--threads", a->options.threads, "worker threads (default: all cores)")
      ->check(thread_range());
  merge->add_flag("--quiet", a->options.quiet, "no progress and no summary table");
  merge->add_flag("--overwrite", a->overwrite,
                  "replace the finished result set already in the output directory (without it "
                  "a merge into a finished set is refused, exit 2)");
  return {merge, [a] {
            RunOptions options = a->options;
            options.overwrite = a->overwrite ? Overwrite::yes : Overwrite::no;
            return merge_command(a->dirs, options);
          }};
}

}  // namespace calbench
