#pragma once
// The pre-flight check of a run: before any computation (and before its output directory is
// created), an upper estimate of the memory and the work a config asks for, refused with the
// figure and the parameters behind it when it cannot fit (docs/config.md, "Pre-flight").
//
// The estimates are upper bounds computed from the resolved config alone (every default
// filled): the largest sample size, K and bin count over the base document and the sweep, and
// the number of cells times the largest replicate count.
#include <cstddef>
#include <cstdint>
#include <string>

#include "experiment/experiment.hpp"

namespace calbench {

struct PreflightEstimate {
  std::uint64_t cells = 0;
  std::uint64_t tasks = 0;        // cells x replicates (at most)
  double bytes_per_thread = 0.0;  // sample buffers and bin arrays of one worker
  double component_draws = 0.0;   // tasks x n x K: the numbers the replicates draw
  double truth_bytes = 0.0;       // the truth engine's fine bins (one truth at a time)
};

// What the resolved config asks for.
PreflightEstimate estimate_run(const ExperimentBase& config);

// Throws ConfigError naming the file, the parameter's JSON pointer and the figure when the
// estimate for `threads` workers exceeds `memory_bytes` or the work limits below.
void preflight(const ExperimentBase& config, std::size_t threads, double memory_bytes);

// The machine's physical memory in bytes (sysconf), or +infinity when unknown.
double physical_memory_bytes();

// `bytes` as the pre-flight's messages print it: "%.3g GB".
std::string gigabytes(double bytes);

// Limits on the work one run may ask for. A task journals at least ~100 bytes
// (docs/durability.md), so 1e10 tasks would need a terabyte of journal; 1e15 drawn components
// are months of CPU time at the measured rates (docs/performance.md).
inline constexpr double max_tasks = 1e10;
inline constexpr double max_component_draws = 1e15;

}  // namespace calbench
