#pragma once
// `calbench bench`: throughput of the estimator_bias replicate loop on the benchmark workloads
// of shared/bench (W1, W2, W3), the time of the truth engine and the fit times of the
// recalibrators (docs/performance.md).
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace calbench {

struct BenchOptions {
  std::vector<std::string> workloads;  // empty: all
  std::size_t runs = 3;
  double replicate_scale = 1.0;
  std::vector<std::size_t> threads;  // empty: 1 and all cores
  // Which estimators the replicate loop evaluates: "first" (issue #2's set), "baseline" (the
  // numpy baseline's set: first + classwise ECE), "binned" (baseline + every binned row of
  // the registry at its defaults and the l2 / max norms).
  std::string estimators = "baseline";
  // --data FILE: instead of the workloads, the time of one evaluation of each `estimator` (a
  // JSON object like a config's estimators entry; default: the heavy ones, smooth_ece,
  // kde_ece, ece_sweep and kde_canonical) on the model outputs in FILE, single-threaded, with
  // the workspace reused as eval's resamples reuse it: one JSON line per estimator with its
  // value and the median over `runs` of the mean time of `repeat` evaluations
  // (scripts/bench_references.py sets these beside the Python references).
  std::string data;
  std::vector<std::string> estimator;
  std::size_t repeat = 20;
};

int run_bench(const BenchOptions& options, std::ostream& out);

}  // namespace calbench
