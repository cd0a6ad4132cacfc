#pragma once
// Scenario `estimator_bias`: per cell, the ground truth of the generator and, over replicates
// of n draws each, the mean, spread, bias and RMSE of every estimator against its target.
#include <atomic>
#include <cstddef>
#include <functional>

#include "config/experiment.hpp"
#include "report/results.hpp"

namespace calbench {

struct RunControl {
  // Called from worker threads after each finished task with the number done so far; must be
  // thread-safe and cheap.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

ResultSet run_estimator_bias(const ExperimentConfig& config, const RunControl& control);

// The replicate loop alone (no ground truth): values[cell][replicate * E + estimator]. Tasks
// (cell, replicate) run on TBB with per-thread buffers; each draws from the stream
// (seed, cell, replicate, sample), so the values do not depend on the thread count.
std::vector<std::vector<double>> simulate_estimates(const ExperimentConfig& config,
                                                    const RunControl& control);

}  // namespace calbench
