#pragma once
// Scenario `decision` (docs/decisions.md): per cell, the exact expected utility of a decision
// task acting on the reported p and on the true r(p), the cost of miscalibration, the task's
// figures, and the spread of the realised utility on test sets of sample_size; with a
// requirement, the minimal accuracy meeting it at each level of miscalibration
// (requirements.csv) and a verdict.
#include <vector>

#include "config/experiment.hpp"
#include "report/results.hpp"
#include "scenarios/estimator_bias.hpp"

namespace calbench {

ResultSet run_decision(const ExperimentConfig& config, const RunControl& control);

// The requirements record of finished cells: groups the cells by every swept value but the
// accuracy key (in order of first appearance), finds each group's frontier and writes the
// verdict. `cells` are the records of `config.cells`, in order.
RequirementsRecord requirement_frontier(const ExperimentConfig& config,
                                        const std::vector<CellRecord>& cells);

}  // namespace calbench
