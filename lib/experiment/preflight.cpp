#include "experiment/preflight.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/format.hpp"
#include "truth/monte_carlo_core.hpp"

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

// The keys that set how many vectors the truth engine's Monte Carlo may draw per cell.
constexpr const char* truth_sample_keys[] = {"truth.samples", "truth.population_samples",
                                             "truth_samples", "recalibrator.samples",
                                             "reliability.samples"};

// The largest value a number-valued key takes: its value in the base document (at `path`, a
// JSON pointer) and every value the sweep gives `dotted`; with where it was found.
struct Largest {
  double value = 0.0;
  std::string pointer;
};

void consider(Largest& best, const Json* value, const std::string& pointer) {
  if (value != nullptr && value->is_number() && value->get<double>() > best.value)
    best = {value->get<double>(), pointer};
}

Largest largest(const Json& resolved, const std::string& pointer, const std::string& dotted) {
  Largest best;
  const Json::json_pointer at(pointer);
  if (resolved.contains(at)) consider(best, &resolved.at(at), pointer);
  if (const auto sweep = resolved.find("sweep"); sweep != resolved.end() && sweep->is_object())
    if (const auto values = sweep->find(dotted); values != sweep->end() && values->is_array())
      for (std::size_t i = 0; i < values->size(); ++i)
        consider(best, &(*values)[i], pointer_join(pointer_join("/sweep", dotted), i));
  return best;
}

// The largest `bins` of any estimator or method entry (swept bins are in the sweep as
// "estimators.I.bins").
Largest largest_bins(const Json& resolved) {
  Largest best;
  for (const char* list : {"estimators", "methods"}) {
    const auto entries = resolved.find(list);
    if (entries == resolved.end() || !entries->is_array()) continue;
    for (std::size_t i = 0; i < entries->size(); ++i) {
      const std::string at = pointer_join(pointer_join("", list), i);
      const Largest b =
          largest(resolved, at + "/bins", std::string(list) + "." + std::to_string(i) + ".bins");
      if (b.value > best.value) best = b;
    }
  }
  return best;
}

std::string amount(double x) {
  return format_double(x);
}

// Whether every cell's classes are exchangeable for the truth engine (one channel of fine bins
// for all classes): a dirichlet family with a symmetric alpha (a number) and a class-symmetric
// map (identity, temperature, top_label), and no sweep of the family, alpha or the map. Anything
// else is counted as one channel per class (an upper bound).
bool exchangeable_classes(const Json& r) {
  const Json::json_pointer generator("/generator");
  if (!r.contains(generator)) return false;
  const Json& g = r.at(generator);
  if (!g.is_object() || g.value("family", std::string()) != "dirichlet") return false;
  if (const auto alpha = g.find("alpha"); alpha != g.end() && !alpha->is_number()) return false;
  const auto map = g.find("miscalibration");
  const std::string name =
      map != g.end() && map->is_object() ? map->value("map", std::string("identity")) : "identity";
  if (name != "identity" && name != "temperature" && name != "top_label") return false;
  if (const auto sweep = r.find("sweep"); sweep != r.end() && sweep->is_object())
    for (const auto& item : sweep->items())
      for (const char* key : {"generator", "generator.family", "generator.alpha",
                              "generator.miscalibration", "generator.miscalibration.map"})
        if (item.key() == key || item.key().rfind(std::string("generator.alpha."), 0) == 0)
          return false;
  return true;
}

}  // namespace

std::string gigabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
  return buf;
}

namespace {

// The estimate with the largest values it was computed from.
struct Figures {
  PreflightEstimate estimate;
  Largest n, K, bins, reps;
};

Figures figures_of(const Json& r) {
  Figures f;
  PreflightEstimate& e = f.estimate;
  e.cells = 1;
  if (const auto sweep = r.find("sweep"); sweep != r.end() && sweep->is_object())
    for (const auto& item : sweep->items())
      if (item.value().is_array()) e.cells *= std::max<std::size_t>(item.value().size(), 1);
  for (const char* key : {"sample_size", "fit_size", "test_size"}) {
    const Largest x = largest(r, std::string("/") + key, key);
    if (x.value > f.n.value) f.n = x;
  }
  f.K = largest(r, "/generator/classes", "generator.classes");
  f.bins = largest_bins(r);
  f.reps = largest(r, "/replicates", "replicates");
  const double K = std::max(f.K.value, 2.0), reps = std::max(f.reps.value, 1.0);
  const double cells = static_cast<double>(e.cells);
  e.tasks = static_cast<std::uint64_t>(std::min(cells * reps, 1e19));
  e.bytes_per_thread = f.n.value * (K * bytes_per_component + bytes_per_row) +
                       f.bins.value * K * bytes_per_bin_and_class;
  e.component_draws = cells * reps * f.n.value * K;
  for (const char* dotted : truth_sample_keys) {
    std::string pointer(1, '/');
    pointer.append(dotted);
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    e.truth_draws = std::max(e.truth_draws, cells * largest(r, pointer, dotted).value * K);
  }
  const double channels = exchangeable_classes(r) ? 1.0 : K;
  e.truth_bytes = channels * truth_bytes_per_channel;
  if (r.contains(Json::json_pointer("/reliability")))
    e.truth_bytes = std::max(e.truth_bytes, channels * reliability_bytes_per_channel);
  return f;
}

}  // namespace

PreflightEstimate estimate_run(const ExperimentBase& config) {
  return figures_of(config.resolved).estimate;
}

void preflight(const ExperimentBase& config, std::size_t threads, double memory_bytes) {
  const Figures f = figures_of(config.resolved);
  const PreflightEstimate& e = f.estimate;
  const Largest &n = f.n, &K = f.K, &bins = f.bins, &reps = f.reps;
  std::vector<std::string> problems;
  const auto add = [&](const std::string& pointer, const std::string& message) {
    problems.push_back(config.source + ": " + (pointer.empty() ? "/" : pointer) + ": " + message);
  };
  const double needed = static_cast<double>(threads) * e.bytes_per_thread;
  if (e.truth_bytes > memory_bytes && e.truth_bytes >= needed) {
    add(K.pointer, "the ground truth needs about " + gigabytes(e.truth_bytes) +
                       " of memory (classes " + amount(K.value) + ": " +
                       amount(e.truth_bytes / truth_bytes_per_channel) + " x " +
                       gigabytes(truth_bytes_per_channel) +
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
  for (const char* dotted : truth_sample_keys) {
    std::string pointer(1, '/');  // appended, not "/" + ...: GCC 12 warns (-Wrestrict)
    pointer.append(dotted);
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    const Largest t = largest(config.resolved, pointer, dotted);
    const double draws = static_cast<double>(e.cells) * t.value * std::max(K.value, 2.0);
    if (draws > max_component_draws)
      add(t.pointer, "the truth engine may draw " + amount(draws) + " numbers (" +
                         amount(static_cast<double>(e.cells)) + " cells x " + dotted + " " +
                         amount(t.value) + " x classes " + amount(std::max(K.value, 2.0)) +
                         "), more than calbench's limit of " + amount(max_component_draws) +
                         " (months of CPU time)");
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
}

double estimated_seconds(const PreflightEstimate& e, std::size_t threads) {
  const double workers = static_cast<double>(std::max<std::size_t>(threads, 1));
  return (e.component_draws / replicate_components_per_second +
          e.truth_draws / truth_components_per_second) /
         workers;
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

double available_memory_bytes() {
  // MemAvailable (Linux >= 3.14): what can be allocated without swapping, page cache
  // included; total memory let a run start that another process's use made fail later.
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  double kib = 0.0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024.0;
  return physical_memory_bytes();
}

}  // namespace calbench
