#include "scenarios/estimator_bias.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "core/format.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "estimators/uncertainty.hpp"
#include "scenarios/common.hpp"
#include "truth/population.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {
namespace {

// Per-thread buffers, allocated once and reused by every task the thread runs.
struct ThreadBuffers {
  Sample sample;
  GeneratorScratch scratch;
  EstimatorWorkspace workspace;
  ResampleWorkspace resample;  // bootstrap and consistency resamples (intervals)
  std::vector<const Estimator*> estimators;
  std::vector<double> observed;
};

// With intervals, per (replicate, estimator): the bootstrap interval and the consistency
// test's p-value, in pre-sized slots like the values.
struct IntervalSlots {
  std::vector<std::vector<Interval>> interval;  // [cell][r * E + e]
  std::vector<std::vector<double>> p_value;     // [cell][r * E + e]
};

struct Simulation {
  std::vector<std::vector<double>> values;  // [cell][r * E + e]
  IntervalSlots intervals;                  // empty without intervals
};

nlohmann::ordered_json params_json(const std::vector<NamedParam>& params) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& p : params) std::visit([&](const auto& v) { out[p.key] = v; }, p.value);
  return out;
}

Simulation simulate(const ExperimentConfig& config, const Generators& generators,
                    const RunControl& control) {
  const std::size_t cells = config.cells.size();
  std::vector<std::size_t> first_task(cells + 1, 0);
  for (std::size_t c = 0; c < cells; ++c)
    first_task[c + 1] = first_task[c] + config.cells[c].replicates;
  // values[c][r * E + e]: pre-sized slots, so tasks never share a write.
  std::vector<std::vector<double>> values(cells);
  for (std::size_t c = 0; c < cells; ++c)
    values[c].resize(config.cells[c].replicates * config.cells[c].estimators.size());
  IntervalSlots slots;
  if (config.intervals) {
    slots.interval.resize(cells);
    slots.p_value.resize(cells);
    for (std::size_t c = 0; c < cells; ++c) {
      slots.interval[c].resize(values[c].size());
      slots.p_value[c].resize(values[c].size());
    }
  }

  const std::size_t total = first_task[cells];
  std::atomic<std::size_t> done{0};
  tbb::enumerable_thread_specific<ThreadBuffers> buffers;
  tbb::parallel_for(std::size_t{0}, total, [&](std::size_t task) {
    const auto cell = static_cast<std::size_t>(
        std::upper_bound(first_task.begin(), first_task.end(), task) - first_task.begin() - 1);
    const std::size_t rep = task - first_task[cell];
    const CellConfig& cc = config.cells[cell];
    ThreadBuffers& buf = buffers.local();
    Engine engine = make_engine({config.seed, cell, rep, Purpose::sample});
    generators[cell]->sample(engine, cc.sample_size, buf.sample, buf.scratch);
    const std::size_t E = cc.estimators.size();
    for (std::size_t e = 0; e < E; ++e)
      values[cell][rep * E + e] = cc.estimators[e].estimator->estimate(buf.sample, buf.workspace);
    if (config.intervals) {
      // Serial inside the task: the (cell, replicate) tasks already fill the cores.
      const IntervalSettings& is = *config.intervals;
      buf.estimators.clear();
      for (const auto& ec : cc.estimators) buf.estimators.push_back(ec.estimator.get());
      const ResampleKey key{config.seed, cell, rep};
      const auto boot = bootstrap_values(buf.sample, buf.estimators, key, is.resamples,
                                         Execution::serial, buf.resample);
      const auto ci = percentile_intervals(boot, E, is.level);
      const auto null = consistency_values(buf.sample, buf.estimators, key, is.resamples,
                                           Execution::serial, buf.resample);
      buf.observed.assign(values[cell].begin() + static_cast<std::ptrdiff_t>(rep * E),
                          values[cell].begin() + static_cast<std::ptrdiff_t>(rep * E + E));
      const auto p = consistency_p_values(null, buf.observed);
      for (std::size_t e = 0; e < E; ++e) {
        slots.interval[cell][rep * E + e] = ci[e];
        slots.p_value[cell][rep * E + e] = p[e];
      }
    }
    const std::size_t now = done.fetch_add(1, std::memory_order_relaxed) + 1;
    if (control.progress) control.progress(now, total);
  });
  return {std::move(values), std::move(slots)};
}

// A fraction of R replicates and its binomial standard error.
std::pair<double, double> proportion(std::size_t hits, std::size_t R) {
  const double f = static_cast<double>(hits) / static_cast<double>(R);
  return {f, std::sqrt(f * (1.0 - f) / static_cast<double>(R))};
}

// populations[c][e]: the own population value of estimator e in cell c, where it is needed:
// for an estimator without a target, or one that does not converge to its target. Computed
// once per distinct (generator, estimator, sample count).
using Populations = std::vector<std::vector<std::optional<PopulationValue>>>;

bool needs_population(const Estimator& estimator) {
  return !estimator.target() || !estimator.converges_to_target();
}

Populations compute_populations(const ExperimentConfig& config, const Generators& generators) {
  std::map<std::string, PopulationValue> cache;
  Populations out(config.cells.size());
  for (std::size_t c = 0; c < config.cells.size(); ++c) {
    const CellConfig& cc = config.cells[c];
    const std::uint64_t samples = cc.truth.population_samples;
    const std::string generator = generators[c]->canonical_text();
    auto key = [&](const EstimatorConfig& ec) {
      return generator + "|" + std::to_string(samples) + "|" + ec.name + "|" +
             params_json(ec.params).dump();
    };
    std::vector<const Estimator*> missing;
    std::vector<std::string> missing_keys;
    for (const auto& ec : cc.estimators) {
      const std::string k = key(ec);
      if (needs_population(*ec.estimator) && !cache.contains(k) &&
          std::find(missing_keys.begin(), missing_keys.end(), k) == missing_keys.end()) {
        missing.push_back(ec.estimator.get());
        missing_keys.push_back(k);
      }
    }
    if (!missing.empty()) {
      const auto values = population_values(*generators[c], missing, samples);
      for (std::size_t i = 0; i < missing.size(); ++i) cache.emplace(missing_keys[i], values[i]);
    }
    for (const auto& ec : cc.estimators) {
      const auto it = cache.find(key(ec));
      out[c].push_back(needs_population(*ec.estimator) ? std::optional(it->second) : std::nullopt);
    }
  }
  return out;
}

}  // namespace

std::vector<std::vector<double>> simulate_estimates(const ExperimentConfig& config,
                                                    const RunControl& control) {
  return simulate(config, make_generators(config), control).values;
}

ResultSet run_estimator_bias(const ExperimentConfig& config, const RunControl& control) {
  const std::size_t cells = config.cells.size();
  // Ground truth first, once per distinct generator (each computation is itself parallel).
  const Generators generators = make_generators(config);
  TruthCache cache;
  const std::vector<const GroundTruth*> truths = cell_truths(config, generators, cache);
  const Populations populations = compute_populations(config, generators);
  const Simulation simulation = simulate(config, generators, control);
  const std::vector<std::vector<double>>& values = simulation.values;

  ResultSet out = result_set_header(config);
  if (config.intervals)
    out.intervals = ResultSet::Intervals{config.intervals->resamples, config.intervals->level,
                                         config.intervals->test_level};
  for (std::size_t c = 0; c < cells; ++c) {
    const CellConfig& cc = config.cells[c];
    CellRecord rec = cell_record(cc, generators[c]->canonical_text(), *truths[c]);
    rec.sample_size = cc.sample_size;
    const std::size_t E = cc.estimators.size(), R = cc.replicates;
    for (std::size_t e = 0; e < E; ++e) {
      const EstimatorConfig& ec = cc.estimators[e];
      RunningStats stats;  // replicates in order: the same bits for any thread count
      for (std::size_t r = 0; r < R; ++r) stats.add(values[c][r * E + e]);
      EstimatorRecord er;
      er.label = ec.label;
      er.name = ec.name;
      er.params = params_json(ec.params);
      er.mean = stats.mean();
      er.sd = stats.sd();
      er.replicates = R;
      const std::optional<PopulationValue>& population = populations[c][e];
      if (population) {
        er.population = population->value;
        er.population_error = population->error;
        er.population_samples = population->samples;
      }
      // Bias against the target's truth, or against the estimator's own population value.
      std::optional<double> reference;
      double reference_error = 0.0;
      if (auto target = ec.estimator->target()) {
        er.target = std::string(to_string(*target));
        reference = (*truths[c])[*target].value;
        if (population) {
          er.binning_bias = population->value - *reference;
          er.finite_sample_bias = stats.mean() - population->value;
        }
      } else if (population) {
        er.target = "own";
        reference = population->value;
        reference_error = population->error;
      }
      if (reference) {
        er.truth = *reference;
        er.bias = stats.mean() - *reference;
        double sq = 0.0;
        for (std::size_t r = 0; r < R; ++r) {
          const double d = values[c][r * E + e] - *reference;
          sq += d * d;
        }
        er.rmse = std::sqrt(sq / static_cast<double>(R));
        const double se = stats.standard_error();
        er.se_bias = std::sqrt(se * se + reference_error * reference_error);
      }
      if (config.intervals) {
        const auto& ci = simulation.intervals.interval[c];
        const auto& p = simulation.intervals.p_value[c];
        std::size_t rejected = 0;
        for (std::size_t r = 0; r < R; ++r)
          if (p[r * E + e] <= config.intervals->test_level) ++rejected;
        std::tie(er.rejection_rate, er.rejection_se) = proportion(rejected, R);
        if (er.truth) {
          std::size_t covered = 0;
          for (std::size_t r = 0; r < R; ++r)
            if (ci[r * E + e].lo <= *er.truth && *er.truth <= ci[r * E + e].hi) ++covered;
          std::tie(er.coverage, er.coverage_se) = proportion(covered, R);
        }
      }
      rec.estimators.push_back(std::move(er));
    }
    if (config.output.replicate_values) {
      rec.replicate_values.assign(R, std::vector<double>(E));
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t e = 0; e < E; ++e) rec.replicate_values[r][e] = values[c][r * E + e];
    }
    out.cells.push_back(std::move(rec));
  }
  return out;
}

}  // namespace calbench
