#pragma once
// What a scenario module is (one folder each under scenarios/, listed in scenarios/registry.cpp):
// its config section (a ScenarioSyntax with its ScenarioSections), its run, its typed records
// and its report section. The runner knows only this interface.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/task_kernel.hpp"
#include "experiment/experiment.hpp"
#include "experiment/preflight.hpp"
#include "report/reporter.hpp"

namespace calbench {

// Progress (called after each finished (cell, replicate) task; see ProgressFn), the run
// journal and the stop flag, handed by a scenario's run to every task stream it starts
// (stream_tasks in core/task_kernel.hpp), in a fixed order: each stream is a journal stage.
struct RunControl : StreamControl {};

// A scenario's results: its typed records (a scenario's Results struct derives from this).
struct ScenarioResults {
  virtual ~ScenarioResults() = default;
  ResultMeta meta;
  std::size_t cells = 0;
  // Volatile facts of this run (fit times): run.json only.
  Value::Object volatile_blocks;
  // What the results lack and why (a method whose fits failed), one sentence each: the runner
  // prints them on stderr, also with --quiet.
  std::vector<std::string> warnings;
  // Some part of the experiment has no result at all (a method failed in every fit): the
  // results are written, with the failure in them, and the run exits with status 1.
  bool incomplete = false;
};

struct ScenarioModule {
  ScenarioSyntax syntax;  // name, keys, section parser
  std::string_view summary;
  // Solves the cells' targets into their generators (after parsing, before a run).
  void (*prepare)(ExperimentBase& config, const TargetProgress& progress);
  std::unique_ptr<ScenarioResults> (*run)(const ExperimentBase& config, const RunControl& control);
  // Streams the records to a reporter (summary.json, the CSV tables, the terminal).
  void (*report)(const ScenarioResults& results, Reporter& reporter);
  // `calbench validate`: the experiment and its cells.
  std::string (*describe)(const ExperimentBase& config);
  // What each cell asks of the machine, from its typed parts: the pre-flight's input.
  std::vector<CellDemand> (*demand)(const ExperimentBase& config);
};

}  // namespace calbench
