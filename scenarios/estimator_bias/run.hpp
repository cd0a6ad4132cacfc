#pragma once
// Scenario `estimator_bias`: per cell, the ground truth of the generator and, over replicates
// of n draws each, the mean, spread, bias and RMSE of every estimator against its target.
#include <vector>

#include "scenarios/estimator_bias/config.hpp"
#include "scenarios/estimator_bias/record.hpp"
#include "scenarios/scenario.hpp"

namespace calbench {

// The cells' targets must be solved (solve_targets, scenarios/common.hpp).
EstimatorBiasResults run_estimator_bias(const EstimatorBiasConfig& config,
                                        const RunControl& control);

// The replicate loop alone (no ground truth): values[cell][replicate * E + estimator]. Tasks
// (cell, replicate) run on the execution kernel with per-thread buffers; each draws from the
// stream (seed, cell, replicate, sample), so the values do not depend on the thread count.
std::vector<std::vector<double>> simulate_estimates(const EstimatorBiasConfig& config,
                                                    const RunControl& control);

// summary.json, cells.csv, replicates.csv (on request) and the terminal table.
void report_estimator_bias(const EstimatorBiasResults& results, Reporter& reporter);
std::string describe_estimator_bias(const EstimatorBiasConfig& config);

}  // namespace calbench
