#pragma once
// Scenario `decision` (docs/decisions.md): per cell, the exact expected utility of a decision
// task acting on the reported p and on the true r(p), the cost of miscalibration, the task's
// figures, and the spread of the realised utility on test sets of sample_size; with a
// requirement, the minimal accuracy meeting it at each level of miscalibration
// (requirements.csv) and a verdict.
#include <string>
#include <vector>

#include "scenarios/decision/config.hpp"
#include "scenarios/decision/record.hpp"
#include "scenarios/scenario.hpp"

namespace calbench {

// The cells' targets must be solved (solve_targets, scenarios/common.hpp).
DecisionResults run_decision(const DecisionConfig& config, const RunControl& control);

// The requirements record of finished cells (`records` are those of config.cells, in order):
// the frontier (decisions/frontier.hpp) and the verdict (scenarios/decision/verdict.hpp).
RequirementsRecord requirements_record(const DecisionConfig& config,
                                       const std::vector<DecisionCellRecord>& records);

void report_decision(const DecisionResults& results, Reporter& reporter);
std::string describe_decision(const DecisionConfig& config);

}  // namespace calbench
