#pragma once
// `calbench run CONFIG`: one experiment, from the config to its committed result set, and the
// part of it `calbench merge` shares (runners/merge.cpp): the run once its result set is locked
// and its journal open (docs/durability.md, docs/cluster.md).
#include <cstddef>
#include <optional>
#include <string>

#include "core/journal.hpp"
#include "experiment/experiment.hpp"
#include "report/result_set.hpp"
#include "scenarios/scenario.hpp"

namespace calbench {

enum class Continue { no, resume, restart };

struct RunOptions {
  std::size_t threads = 1;
  std::optional<std::string> out;
  bool quiet = false;
  Continue mode = Continue::no;
  std::optional<RunControl::Shard> shard;
  bool report = true;  // render OUT/report/index.html after the results (not for a shard)
  Overwrite overwrite = Overwrite::no;  // --overwrite: a finished result set at OUT is replaced
  bool long_run = false;                // --long: start a run estimated above time_refusal_seconds
};

// What a run's journal and shards are tied to: the resolved config's hash and this calbench.
std::string run_identity(const ExperimentBase& config);

// The run itself, once its result set is locked and its journal open: the scenario's prepare
// and run, the result files (or a shard's), the commit, the HTML report. SIGINT and SIGTERM
// stop it with status 128 + the signal and `resume_command` printed.
int execute(const std::string& config_file, ExperimentBase& config, const std::string& shown_out,
            ResultSetTransaction& results_set, TaskJournal& journal, const RunOptions& options,
            const std::string& resume_command);

}  // namespace calbench
