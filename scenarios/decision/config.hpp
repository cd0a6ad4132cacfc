#pragma once
// Scenario decision's config (docs/decisions.md): per cell `sample_size`, `decision`
// {task, params...} and optionally `recalibrator`; for the whole experiment `requirement`
// {metric, at_least | at_most | regret, accuracy_key}.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/value.hpp"
#include "decisions/decision_spec.hpp"
#include "decisions/requirement.hpp"
#include "experiment/experiment.hpp"
#include "experiment/preflight.hpp"
#include "recalibrators/recalibrators_json.hpp"

namespace calbench {

struct DecisionTaskConfig {
  std::string task;                  // registry name
  DecisionSpec spec;                 // validated: make_task(spec) does not throw
  Value params;                      // the task's parameters, defaults filled (no "task")
  std::vector<std::string> figures;  // the task's figure names
};

// `recalibrator`: per replicate, `method` is fitted on `fit_size` cases drawn from the stream
// (seed, cell, replicate, fit) and the policy acting on q = g(p) is valued over `samples`
// draws of c (decisions/decision_value.hpp).
struct DecisionRecalibratorConfig {
  MethodConfig method;  // parsed exactly as an item of scenario recalibration's `methods`
  std::size_t fit_size = 0;
  std::uint64_t samples = 200'000;
};

struct RequirementConfig {
  Requirement requirement;
  // The sweep key that sets accuracy; cells are grouped by every other swept key. Empty when
  // none is swept (each cell is then its own group).
  std::string accuracy_key;
};

struct DecisionCell : CellBase {
  std::size_t sample_size = 0;  // cases per test set (realised utility)
  DecisionTaskConfig decision;
  std::optional<DecisionRecalibratorConfig> recalibrator;
};

struct DecisionConfig : ExperimentBase {
  std::optional<RequirementConfig> requirement;
  std::vector<DecisionCell> cells;
};

// Top-level `decision` of a cell (required; a problem at /decision when absent): the task
// from the registry (decisions/decision_tasks_json.hpp), checked against `classes`, the
// generator's K when it is known. Scenario recalibration reads its optional `decision` with it.
std::optional<DecisionTaskConfig> parse_decision_section(ObjectReader& top,
                                                         std::optional<std::size_t> classes);

std::unique_ptr<ScenarioSections> decision_sections();
// Per cell, what the pre-flight bounds (experiment/preflight.hpp).
std::vector<CellDemand> decision_demand(const DecisionConfig& config);

}  // namespace calbench
