#include "experiment/preflight.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/format.hpp"
#include "generators/generator.hpp"
#include "truth/monte_carlo_core.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {
namespace {

// Per worker: the sample (p, log p, c and a scratch copy: 4 doubles per component, plus the
// label) and the estimators' bin arrays (classwise: sums of p, of outcomes and counts per bin
// and class, 3 doubles).
constexpr double bytes_per_component = 4.0 * sizeof(double);
constexpr double bytes_per_row = sizeof(double);
constexpr double bytes_per_bin_and_class = 3.0 * sizeof(double);

// The truth engine's Monte Carlo keeps, per class whose conditional calibration it estimates
// (one channel when the classes are exchangeable), fine bins (monte_carlo_core.hpp: 2,562) of
// 3 running sums in each of its 8 groups plus the 3 merged halves it summarises: about 0.68 MB
// per class, so classes 1e6 would need 676 GB (it used to pass the pre-flight and then run out
// of memory). The true reliability curves keep 8 sums per fine bin and class in 8 groups.
constexpr double truth_bytes_per_channel =
    static_cast<double>((mc::groups + 3) * mc::fine_bins) * 3.0 * sizeof(double);
constexpr double reliability_bytes_per_channel =
    static_cast<double>(mc::groups * mc::fine_bins) * 8.0 * sizeof(double);

// The largest value a figure takes over the cells, with its JSON pointer at its place in the
// config (the swept value's place when a sweep sets it).
struct Largest {
  double value = 0.0;
  std::string pointer;
};

void consider(Largest& best, const ExperimentBase& config, const CellBase& cell, double value,
              const std::string& pointer) {
  if (value > best.value) best = {value, cell_pointer(config, cell, pointer)};
}

std::string amount(double x) {
  return format_double(x);
}

// "truth.samples" for /truth/samples: how the messages name a truth sample count.
std::string dotted(const std::string& pointer) {
  std::string out = pointer.substr(1);
  std::replace(out.begin(), out.end(), '/', '.');
  return out;
}

}  // namespace

std::string gigabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
  return buf;
}

namespace {

// The truth engine's Monte Carlo numbers as the run draws them, for the time estimate: the
// truth (truth.samples) and the estimators' population values (truth.population_samples) and
// the true reliability curves once per distinct generator, as their caches compute them, the
// truth none when it needs no Monte Carlo; the per-cell truths of the recalibration and
// decision scenarios per cell, and per replicate and model the recalibration scenario's
// composed truths (CellDemand::replicate_truth_draws). A cell given by a target (generator.target,
// not yet solved) is its own generator, and solving it costs about two truths more
// (target_solver.hpp: Newton steps on the truth engine, whose last result the run reuses).
double truth_time_draws(const std::vector<CellDemand>& cells) {
  std::map<std::string, double> per_generator;  // canonical text -> numbers
  double per_cell = 0.0;
  for (const CellDemand& demand : cells) {
    const CellBase& cell = *demand.cell;
    const Generator generator(cell.generator);
    const double K = static_cast<double>(generator.classes());
    double vectors = static_cast<double>(cell.truth.population_samples);
    if (!truth_without_monte_carlo(generator)) vectors += static_cast<double>(cell.truth.samples);
    for (const Demand& d : demand.generator_draws) vectors += d.value;
    const bool unsolved = cell.target && !cell.solution;
    if (unsolved && generator.classes() >= 3)
      vectors += 2.0 * static_cast<double>(cell.truth.samples);
    const std::string key = unsolved ? "target " + format_double(cell.target->accuracy) + " " +
                                           format_double(cell.target->ece_top_l1) + " " +
                                           std::string(to_string(cell.target->direction)) + " " +
                                           std::string(to_string(cell.target->map)) + " " +
                                           generator.canonical_text()
                                     : generator.canonical_text();
    double& once = per_generator[key];
    once = std::max(once, vectors * K);
    for (const Demand& d : demand.truth_draws) per_cell += d.value * K;
    per_cell += demand.replicate_truth_draws * static_cast<double>(cell.replicates) *
                demand.replicate_models * K;
  }
  double out = per_cell;
  for (const auto& [key, numbers] : per_generator) out += numbers;
  return out;
}

// The estimate with the largest values it was computed from.
struct Figures {
  PreflightEstimate estimate;
  Largest n, K, bins, reps;
  Largest truth_K;      // the classes of the cell whose truth needs the most memory
  Largest evaluations;  // the most estimator evaluations per replicate beyond the first
  // Per truth sample count (by its base pointer, in the order first met), its largest value.
  std::vector<std::pair<std::string, Largest>> truth_samples;
};

void consider_truth_samples(Figures& f, const ExperimentBase& config, const CellBase& cell,
                            const Demand& d) {
  auto it = std::find_if(f.truth_samples.begin(), f.truth_samples.end(),
                         [&](const auto& t) { return t.first == d.pointer; });
  if (it == f.truth_samples.end()) it = f.truth_samples.insert(it, {d.pointer, Largest{}});
  consider(it->second, config, cell, d.value, d.pointer);
}

Figures figures_of(const ExperimentBase& config, const std::vector<CellDemand>& cells) {
  Figures f;
  PreflightEstimate& e = f.estimate;
  e.cells = cells.size();
  for (const CellDemand& demand : cells) {
    const CellBase& cell = *demand.cell;
    for (const Demand& d : demand.rows) consider(f.n, config, cell, d.value, d.pointer);
    for (const Demand& d : demand.bins) consider(f.bins, config, cell, d.value, d.pointer);
    consider(f.reps, config, cell, static_cast<double>(cell.replicates), "/replicates");
    // The generator as the run builds it (its spec validated by the parser), asked whether the
    // truth engine pools its classes into one channel of fine bins.
    const Generator generator(cell.generator);
    const double K = static_cast<double>(generator.classes());
    consider(f.K, config, cell, K, "/generator/classes");
    const double channels = generator.exchangeable_classes() ? 1.0 : K;
    double truth_bytes = channels * truth_bytes_per_channel;
    if (demand.reliability)
      truth_bytes = std::max(truth_bytes, channels * reliability_bytes_per_channel);
    if (truth_bytes > e.truth_bytes) {
      e.truth_bytes = truth_bytes;
      f.truth_K = {K, cell_pointer(config, cell, "/generator/classes")};
    }
    consider_truth_samples(f, config, cell,
                           {static_cast<double>(cell.truth.samples), "/truth/samples"});
    consider_truth_samples(
        f, config, cell,
        {static_cast<double>(cell.truth.population_samples), "/truth/population_samples"});
    for (const Demand& d : demand.truth_draws) consider_truth_samples(f, config, cell, d);
    for (const Demand& d : demand.generator_draws) consider_truth_samples(f, config, cell, d);
    consider(f.evaluations, config, cell, demand.evaluations.value, demand.evaluations.pointer);
  }
  const double K = std::max(f.K.value, 2.0), reps = std::max(f.reps.value, 1.0);
  const double n_cells = static_cast<double>(e.cells);
  e.tasks = static_cast<std::uint64_t>(std::min(n_cells * reps, 1e19));
  e.bytes_per_thread = f.n.value * (K * bytes_per_component + bytes_per_row) +
                       f.bins.value * K * bytes_per_bin_and_class;
  e.component_draws = n_cells * reps * f.n.value * K;
  for (const auto& [pointer, t] : f.truth_samples)
    e.truth_draws = std::max(e.truth_draws, n_cells * t.value * K);
  e.resampled_components = e.component_draws * f.evaluations.value;
  e.truth_time_draws = truth_time_draws(cells);
  for (const CellDemand& demand : cells)
    e.fit_components += static_cast<double>(demand.cell->replicates) * demand.replicate_fit_rows *
                        static_cast<double>(Generator(demand.cell->generator).classes()) *
                        fit_passes;
  return f;
}

}  // namespace

std::optional<Demand> bins_of(const std::vector<NamedParam>& params, const std::string& pointer) {
  for (const NamedParam& param : params)
    if (const auto* bins = std::get_if<std::int64_t>(&param.value.data);
        bins && param.key == "bins")
      return Demand{static_cast<double>(*bins), pointer + "/bins"};
  return std::nullopt;
}

PreflightEstimate estimate_run(const ExperimentBase& config, const std::vector<CellDemand>& cells) {
  return figures_of(config, cells).estimate;
}

void preflight(const ExperimentBase& config, const std::vector<CellDemand>& cells,
               std::size_t threads, double memory_bytes) {
  const Figures f = figures_of(config, cells);
  const PreflightEstimate& e = f.estimate;
  const Largest &n = f.n, &K = f.K, &bins = f.bins, &reps = f.reps;
  std::vector<std::string> problems;
  const auto add = [&](const std::string& pointer, const std::string& message) {
    problems.push_back(config.source + ": " + (pointer.empty() ? "/" : pointer) + ": " + message);
  };
  const double needed = static_cast<double>(threads) * e.bytes_per_thread;
  if (e.truth_bytes > memory_bytes && e.truth_bytes >= needed) {
    add(f.truth_K.pointer,
        "the ground truth needs about " + gigabytes(e.truth_bytes) + " of memory (classes " +
            amount(f.truth_K.value) + ": " + amount(e.truth_bytes / truth_bytes_per_channel) +
            " x " + gigabytes(truth_bytes_per_channel) +
            " of the truth engine's fine bins, one per class unless the classes are "
            "exchangeable) but the machine has " +
            gigabytes(memory_bytes) + " available; lower the number of classes");
  } else if (needed > memory_bytes) {
    // Name the term that dominates: the samples (n x K) or the bins (bins x K).
    const double sample_bytes = n.value * (K.value * bytes_per_component + bytes_per_row);
    const bool by_bins = bins.value * K.value * bytes_per_bin_and_class > sample_bytes;
    const std::string why = by_bins ? "bins " + amount(bins.value) + " x classes " +
                                          amount(K.value) + " x 3 doubles per worker"
                                    : "sample size " + amount(n.value) + " x classes " +
                                          amount(K.value) + " x 4 doubles per worker";
    add(by_bins ? bins.pointer : n.pointer,
        "the run needs about " + gigabytes(needed) + " of memory (" + why + ", " +
            std::to_string(threads) + " workers) but the machine has " + gigabytes(memory_bytes) +
            " available; lower it or run with fewer --threads");
  }
  if (static_cast<double>(e.cells) * std::max(reps.value, 1.0) > max_tasks)
    add(reps.pointer, "the run has " + amount(static_cast<double>(e.cells)) + " cells x " +
                          amount(reps.value) +
                          " replicates = " + amount(static_cast<double>(e.cells) * reps.value) +
                          " tasks, more than calbench's limit of " + amount(max_tasks) +
                          " (each task is journaled: about a terabyte of journal)");
  else if (e.component_draws > max_component_draws)
    add(n.pointer, "the run draws about " + amount(e.component_draws) + " numbers (" +
                       amount(static_cast<double>(e.cells)) + " cells x " + amount(reps.value) +
                       " replicates x sample size " + amount(n.value) + " x classes " +
                       amount(K.value) + "), more than calbench's limit of " +
                       amount(max_component_draws) + " (months of CPU time)");
  // The truth engine's Monte Carlo draws up to truth.samples (and population_samples) vectors
  // per distinct generator: at most one per cell.
  // So do the recalibration scenario's composed truths (truth_samples), the decision
  // scenario's recalibrated decision values (recalibrator.samples) and the true reliability
  // curves (reliability.samples: 1e15 ran without end).
  for (const auto& [pointer, t] : f.truth_samples) {
    const double draws = static_cast<double>(e.cells) * t.value * std::max(K.value, 2.0);
    if (draws > max_component_draws)
      add(t.pointer, "the truth engine may draw " + amount(draws) + " numbers (" +
                         amount(static_cast<double>(e.cells)) + " cells x " + dotted(pointer) +
                         " " + amount(t.value) + " x classes " + amount(std::max(K.value, 2.0)) +
                         "), more than calbench's limit of " + amount(max_component_draws) +
                         " (months of CPU time)");
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
}

namespace {

// The three parts of estimated_seconds, in thread-seconds.
struct TimeParts {
  double replicates, resamples, truth;
};
TimeParts time_parts(const PreflightEstimate& e) {
  return {(e.component_draws + e.fit_components) / replicate_components_per_second,
          e.resampled_components / resampled_components_per_second,
          e.truth_time_draws / truth_components_per_second};
}

}  // namespace

double estimated_seconds(const PreflightEstimate& e, std::size_t threads) {
  const double workers = static_cast<double>(std::max<std::size_t>(threads, 1));
  const TimeParts t = time_parts(e);
  return (t.replicates + t.resamples + t.truth) / workers;
}

void check_run_time(const ExperimentBase& config, const std::vector<CellDemand>& cells,
                    double seconds, std::size_t threads, bool long_run) {
  if (long_run || !(seconds > time_refusal_seconds)) return;
  const Figures f = figures_of(config, cells);
  const PreflightEstimate& e = f.estimate;
  const TimeParts t = time_parts(e);
  // The part that dominates, with the figures behind it and the pointer of the one to lower.
  std::string pointer, why;
  const std::string tasks = amount(static_cast<double>(e.cells)) + " cells x " +
                            amount(f.reps.value) + " replicates x sample size " +
                            amount(f.n.value) + " x classes " + amount(f.K.value);
  if (t.truth >= t.replicates && t.truth >= t.resamples) {
    pointer = f.K.pointer;
    why = "the ground truth's Monte Carlo: about " + amount(e.truth_time_draws) +
          " numbers drawn over the distinct generators (truth.samples x classes each)";
  } else if (t.resamples >= t.replicates) {
    pointer = f.evaluations.pointer;
    why = "the intervals' resamples: " + tasks + " x " + amount(f.evaluations.value) +
          " evaluations on resampled rows";
  } else {
    pointer = f.reps.pointer;
    why = "the replicates: " + tasks + " numbers drawn";
  }
  throw ConfigError({config.source + ": " + (pointer.empty() ? "/" : pointer) +
                     ": this run may take up to about " + duration_text(seconds) + " on " +
                     std::to_string(threads) + " threads, more than calbench starts unasked (" +
                     duration_text(time_refusal_seconds) + "); most of it is " + why +
                     ". Check the config (a slip such as replicates 1e6 for 1e3?), or start it "
                     "anyway with --long (calbench.run(..., long=True)); docs/config.md, "
                     "\"Pre-flight\""});
}

std::string duration_text(double seconds) {
  char buf[48];
  if (seconds < 120.0)
    std::snprintf(buf, sizeof buf, "%.0f s", std::ceil(seconds));
  else if (seconds < 7200.0)
    std::snprintf(buf, sizeof buf, "%.0f minutes", std::ceil(seconds / 60.0));
  else if (seconds < 2.0 * 86400.0)
    std::snprintf(buf, sizeof buf, "%.1f hours", seconds / 3600.0);
  else
    std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400.0);
  return buf;
}

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(pages) * static_cast<double>(page);
}

namespace {

// What the address-space limit (ulimit -v, RLIMIT_AS) leaves this process: the limit less the
// address space it holds now (VmSize in /proc/self/status); +infinity without a limit.
double address_space_left() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::numeric_limits<double>::infinity();
  std::ifstream status("/proc/self/status");
  std::string line;
  double used_kib = 0.0;
  while (std::getline(status, line))
    if (line.rfind("VmSize:", 0) == 0) used_kib = std::strtod(line.c_str() + 7, nullptr);
  return std::max(0.0, static_cast<double>(limit.rlim_cur) - used_kib * 1024.0);
}

}  // namespace

double available_memory_bytes() {
  // MemAvailable (Linux >= 3.14): what can be allocated without swapping, page cache
  // included; total memory let a run start that another process's use made fail later.
  double available = physical_memory_bytes();
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  double kib = 0.0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") {
      available = kib * 1024.0;
      break;
    }
  return std::min(available, address_space_left());
}

}  // namespace calbench
