#pragma once
// The pre-flight check of a run: before any computation (and before its output directory is
// created), an upper estimate of the memory and the work a config asks for, refused with the
// figure and the parameters behind it when it cannot fit (docs/config.md, "Pre-flight").
//
// The estimates are upper bounds computed from the typed cells (every default filled), which
// each scenario module lists as CellDemands: the largest sample size, K and bin count over the
// cells, the number of cells times the largest replicate count, and per cell whether its
// generator's classes are exchangeable (Generator::exchangeable_classes, the property the truth
// engine pools its bins by).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.hpp"
#include "experiment/experiment.hpp"

namespace calbench {

// One figure of a cell's demand: its value and the JSON pointer of its parameter in the base
// document (/fit_size, /estimators/0/bins). The pre-flight reports it at its swept place
// (/sweep/KEY/i, cell_pointer) when a sweep sets it.
struct Demand {
  double value = 0.0;
  std::string pointer;
};

// What one cell asks of the machine, listed by its scenario module (ScenarioModule::demand)
// from its typed cell; the pre-flight computes from these alone, never from the JSON.
struct CellDemand {
  const CellBase* cell = nullptr;  // its generator, replicates and truth settings
  std::vector<Demand> rows;        // rows one replicate draws (sample_size, fit_size, test_size)
  std::vector<Demand> bins;        // the bins of its estimators and methods
  // Monte Carlo vectors the run draws per cell besides the truth engine's (truth.samples and
  // truth.population_samples, from `cell`): truth_samples, recalibrator.samples,
  // reliability.samples.
  std::vector<Demand> truth_draws;
  // Monte Carlo vectors drawn once per distinct generator (its canonical text), as the truth
  // engine's cache and the true reliability curves' are: reliability.samples.
  std::vector<Demand> generator_draws;
  // Monte Carlo vectors each replicate draws and passes through `replicate_models` models, for
  // the time estimate only: the recalibration scenario's composed truths (truth_samples per
  // replicate, every fitted method and the uncalibrated model; again for a decision task).
  double replicate_truth_draws = 0.0;
  double replicate_models = 1.0;
  // Rows the replicate's recalibration methods are fitted on, summed over the methods (each
  // method's fit_size, or its subsample cap): for the time estimate only.
  double replicate_fit_rows = 0.0;
  bool reliability = false;  // the true reliability curves are computed
  // Evaluations of the estimators per replicate besides the first, each on the replicate's
  // rows: 2 x intervals.resamples (bootstrap and consistency) plus the jackknife groups of bca.
  Demand evaluations;
};

// The `bins` of a component (an estimator, a method) whose entry is at `pointer`: its parameter
// of that name, as every binned row declares it; nullopt when it has none.
std::optional<Demand> bins_of(const std::vector<NamedParam>& params, const std::string& pointer);
// The same for each entry of a list (estimators, methods) at `list` (its entries at list/i).
template <typename Config>
std::vector<Demand> bins_of(const std::vector<Config>& entries, std::string_view list) {
  std::vector<Demand> out;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (auto bins = bins_of(entries[i].params, std::string(list) + "/" + std::to_string(i)))
      out.push_back(std::move(*bins));
  return out;
}

struct PreflightEstimate {
  std::uint64_t cells = 0;
  std::uint64_t tasks = 0;        // cells x replicates (at most)
  double bytes_per_thread = 0.0;  // sample buffers and bin arrays of one worker
  double component_draws = 0.0;   // tasks x n x K: the numbers the replicates draw
  double truth_bytes = 0.0;       // the truth engine's fine bins (one truth at a time)
  double truth_draws = 0.0;       // cells x the largest truth sample count x K (at most)
  // For the time estimate: the estimators' evaluations on resampled rows (tasks x n x K x the
  // evaluations per replicate), and the truth engine's Monte Carlo numbers counted as it draws
  // them: once per distinct generator (its cache), none for a truth without Monte Carlo
  // (truth_without_monte_carlo), the per-cell truths (truth_samples, recalibrator.samples) per
  // cell.
  double resampled_components = 0.0;
  double truth_time_draws = 0.0;
  // The recalibration methods' fits: replicates x fit rows x K x fit_passes, summed over cells.
  double fit_components = 0.0;
};

// A recalibration method's fit as passes over its rows, for the time estimate: iterative fits
// (L-BFGS, Newton, EM) make tens of passes. Set by the shipped binary arena (25 methods, fit
// sizes 100 to 100,000, 20 replicates: 429 CPU-s measured, docs/arena.md; the estimate with 40
// passes is about 520 thread-seconds of fits plus its composed truths).
inline constexpr double fit_passes = 40.0;

// What the config's cells ask for (`cells`: its scenario module's demand of each).
PreflightEstimate estimate_run(const ExperimentBase& config, const std::vector<CellDemand>& cells);

// Throws ConfigError naming the file, the parameter's JSON pointer and the figure when the
// estimate for `threads` workers exceeds `memory_bytes` or the work limits below.
void preflight(const ExperimentBase& config, const std::vector<CellDemand>& cells,
               std::size_t threads, double memory_bytes);

// An upper estimate of a run's time on `threads` workers: the replicates' drawn components at
// replicate_components_per_second, their resampled evaluations at
// resampled_components_per_second, plus the truth engine's at truth_components_per_second,
// per worker. The rates are docs/performance.md's: the replicate loop with the baseline
// estimators draws 4.6e7 to 5.7e7 components per second per thread (W1, W2), and the truth
// engine's Monte Carlo at K = 300 drew 16e6 x 300 components in 126 s on 2 threads (issue
// #28), 1.9e7 per second per thread; the resampled rate is docs/config.md's measurement of
// intervals.resamples. The truth stops early once its error is met, and other estimators cost
// more or less, so this is a rough figure.
inline constexpr double replicate_components_per_second = 4e7;
inline constexpr double resampled_components_per_second = 1e8;
inline constexpr double truth_components_per_second = 1.5e7;
double estimated_seconds(const PreflightEstimate& estimate, std::size_t threads);
// "45 s", "12 minutes", "3.4 hours", "2.1 days".
std::string duration_text(double seconds);
// Runs estimated above this print the estimate before they start (docs/config.md).
inline constexpr double time_warning_seconds = 60.0;
// Runs estimated above this (on the threads given, for a shard its part) are refused unless
// asked for (`calbench run --long`, calbench.run(..., long=True)): a run of days is more often
// a slip (replicates 1e6 for 1e3) than a plan, and a plan can say so.
inline constexpr double time_refusal_seconds = 86400.0;
// Throws ConfigError naming the file, the estimate and the figures behind it, and how to start
// the run anyway, when `seconds` exceeds time_refusal_seconds and `long_run` is false.
void check_run_time(const ExperimentBase& config, const std::vector<CellDemand>& cells,
                    double seconds, std::size_t threads, bool long_run);

// The machine's physical memory in bytes (sysconf), or +infinity when unknown.
double physical_memory_bytes();
// The memory available now (/proc/meminfo's MemAvailable, else physical_memory_bytes()), and
// no more than an address-space limit (ulimit -v) leaves: what the pre-flight compares with.
double available_memory_bytes();

// `bytes` as the pre-flight's messages print it: "%.3g GB".
std::string gigabytes(double bytes);

// Limits on the work one run may ask for. A task journals at least ~100 bytes
// (docs/durability.md), so 1e10 tasks would need a terabyte of journal; 1e15 drawn components
// are months of CPU time at the measured rates (docs/performance.md).
inline constexpr double max_tasks = 1e10;
inline constexpr double max_component_draws = 1e15;

}  // namespace calbench
