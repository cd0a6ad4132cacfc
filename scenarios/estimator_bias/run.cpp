#include "scenarios/estimator_bias/run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "core/task_kernel.hpp"
#include "estimators/interval_methods.hpp"
#include "estimators/uncertainty.hpp"
#include "report/value_format.hpp"
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
  std::vector<double> column;  // one estimator's bootstrap or jackknife values
  std::vector<double> jack_column;
};

// With intervals, per (method, replicate, estimator): the interval (NaN ends where the method
// does not apply) and per (replicate, estimator) the consistency test's p-value, in
// pre-sized slots like the values.
struct IntervalSlots {
  std::vector<std::vector<Interval>> interval;  // [cell][(m * R + r) * E + e]
  std::vector<std::vector<double>> p_value;     // [cell][r * E + e]
};

// The method the m-th requested one is for estimator `ec`.
IntervalMethod resolved_method(const IntervalSettings& settings, std::size_t m,
                               const EstimatorConfig& ec) {
  return settings.methods[m].value_or(ec.interval);
}

// The values of estimator e from values[b * E + e].
void column_of(const std::vector<double>& values, std::size_t E, std::size_t e,
               std::vector<double>& out) {
  const std::size_t R = E == 0 ? 0 : values.size() / E;
  out.resize(R);
  for (std::size_t b = 0; b < R; ++b) out[b] = values[b * E + e];
}

struct Simulation {
  std::vector<std::vector<double>> values;  // [cell][r * E + e]
  IntervalSlots intervals;                  // empty without intervals
};

Simulation simulate(const EstimatorBiasConfig& config, const Generators& generators,
                    const RunControl& control) {
  const std::size_t cells = config.cells.size();
  std::vector<std::size_t> replicates(cells);
  // values[c][r * E + e]: pre-sized slots, so tasks never share a write.
  std::vector<std::vector<double>> values(cells);
  for (std::size_t c = 0; c < cells; ++c) {
    replicates[c] = config.cells[c].replicates;
    values[c].resize(config.cells[c].replicates * config.cells[c].estimators.size());
  }
  IntervalSlots slots;
  if (config.intervals) {
    slots.interval.resize(cells);
    slots.p_value.resize(cells);
    for (std::size_t c = 0; c < cells; ++c) {
      slots.interval[c].resize(config.intervals->methods.size() * values[c].size());
      slots.p_value[c].resize(values[c].size());
    }
  }
  for_each_task<ThreadBuffers>(
      TaskGrid(replicates),
      [&](TaskKey key, ThreadBuffers& buf) {
        const std::size_t cell = key.cell, rep = key.replicate;
        const EstimatorBiasCell& cc = config.cells[cell];
        Engine engine = make_engine({config.seed, cell, rep, Purpose::sample});
        generators[cell]->sample(engine, cc.sample_size, buf.sample, buf.scratch);
        const std::size_t E = cc.estimators.size();
        for (std::size_t e = 0; e < E; ++e)
          values[cell][rep * E + e] =
              cc.estimators[e].estimator->estimate(buf.sample, buf.workspace);
        if (!config.intervals) return;
        // Serial inside the task: the (cell, replicate) tasks already fill the cores.
        const IntervalSettings& is = *config.intervals;
        buf.estimators.clear();
        for (const auto& ec : cc.estimators) buf.estimators.push_back(ec.estimator.get());
        const ResampleKey resample_key{config.seed, cell, rep};
        const std::size_t M = is.methods.size(), R = cc.replicates;
        bool bca = false, analytic = false;
        for (std::size_t m = 0; m < M; ++m)
          for (const auto& ec : cc.estimators) {
            bca |= resolved_method(is, m, ec) == IntervalMethod::bca;
            analytic |= resolved_method(is, m, ec) == IntervalMethod::analytic;
          }
        const auto boot = bootstrap_values(buf.sample, buf.estimators, resample_key, is.resamples,
                                           Execution::serial, buf.resample);
        const auto null = consistency_values(buf.sample, buf.estimators, resample_key, is.resamples,
                                             Execution::serial, buf.resample);
        const auto jack = bca && cc.sample_size >= 2
                              ? jackknife_values(buf.sample, buf.estimators, is.jackknife_groups,
                                                 Execution::serial, buf.resample)
                              : std::vector<double>();
        buf.observed.assign(values[cell].begin() + static_cast<std::ptrdiff_t>(rep * E),
                            values[cell].begin() + static_cast<std::ptrdiff_t>(rep * E + E));
        const auto p = consistency_p_values(null, buf.observed);
        constexpr double nan = std::numeric_limits<double>::quiet_NaN();
        for (std::size_t e = 0; e < E; ++e) {
          slots.p_value[cell][rep * E + e] = p[e];
          column_of(boot, E, e, buf.column);
          column_of(jack, E, e, buf.jack_column);
          IntervalInputs in;
          in.estimate = buf.observed[e];
          in.bootstrap = buf.column;
          in.jackknife = buf.jack_column;
          in.p_calibrated = p[e];
          in.vanishes_when_calibrated = buf.estimators[e]->vanishes_when_calibrated();
          if (analytic) in.squared = buf.estimators[e]->squared_error(buf.sample, buf.workspace);
          for (std::size_t m = 0; m < M; ++m) {
            const auto ci = interval_of(resolved_method(is, m, cc.estimators[e]), in, is.level);
            slots.interval[cell][(m * R + rep) * E + e] = ci.value_or(Interval{nan, nan});
          }
        }
      },
      control.progress);
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

Populations compute_populations(const EstimatorBiasConfig& config, const Generators& generators) {
  std::map<std::string, PopulationValue> cache;
  Populations out(config.cells.size());
  for (std::size_t c = 0; c < config.cells.size(); ++c) {
    const EstimatorBiasCell& cc = config.cells[c];
    const std::uint64_t samples = cc.truth.population_samples;
    const std::string generator = generators[c]->canonical_text();
    auto key = [&](const EstimatorConfig& ec) {
      return generator + "|" + std::to_string(samples) + "|" + ec.name + "|" +
             to_text(params_value(ec.params));
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

std::string target_name(const EstimatorRecord& e) {
  if (e.target) return std::string(to_string(*e.target));
  return e.own_target ? "own" : "";
}

std::vector<std::vector<double>> simulate_estimates(const EstimatorBiasConfig& config,
                                                    const RunControl& control) {
  return simulate(config, make_generators(bases(config.cells)), control).values;
}

EstimatorBiasResults run_estimator_bias(const EstimatorBiasConfig& config,
                                        const RunControl& control) {
  const std::size_t cells = config.cells.size();
  // Ground truth first, once per distinct generator (each computation is itself parallel).
  const Generators generators = make_generators(bases(config.cells));
  TruthCache cache;
  const std::vector<const GroundTruth*> truths =
      cell_truths(bases(config.cells), generators, cache);
  const Populations populations = compute_populations(config, generators);
  const Simulation simulation = simulate(config, generators, control);
  const std::vector<std::vector<double>>& values = simulation.values;

  EstimatorBiasResults out;
  out.meta = result_meta(config);
  out.cells = cells;
  out.sweep_keys = config.sweep_keys;
  out.intervals = config.intervals;
  out.replicate_values = config.replicate_values;
  for (std::size_t c = 0; c < cells; ++c) {
    const EstimatorBiasCell& cc = config.cells[c];
    EstimatorBiasCellRecord rec;
    rec.cell = cell_header(cc, *generators[c], *truths[c]);
    rec.sample_size = cc.sample_size;
    const std::size_t E = cc.estimators.size(), R = cc.replicates;
    for (std::size_t e = 0; e < E; ++e) {
      const EstimatorConfig& ec = cc.estimators[e];
      RunningStats stats;  // replicates in order: the same bits for any thread count
      for (std::size_t r = 0; r < R; ++r) stats.add(values[c][r * E + e]);
      EstimatorRecord er;
      er.label = ec.label;
      er.name = ec.name;
      er.params = params_value(ec.params);
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
        er.target = *target;
        reference = (*truths[c])[*target].value;
        if (population) {
          er.binning_bias = population->value - *reference;
          er.finite_sample_bias = stats.mean() - population->value;
        }
      } else if (population) {
        er.own_target = true;
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
        const IntervalSettings& is = *config.intervals;
        const auto& ci = simulation.intervals.interval[c];
        const auto& p = simulation.intervals.p_value[c];
        std::size_t rejected = 0;
        for (std::size_t r = 0; r < R; ++r)
          if (p[r * E + e] <= is.test_level) ++rejected;
        std::tie(er.rejection_rate, er.rejection_se) = proportion(rejected, R);
        for (std::size_t m = 0; m < is.methods.size(); ++m) {
          const auto of = [&](std::size_t r) -> const Interval& { return ci[(m * R + r) * E + e]; };
          IntervalRecord ir;
          ir.requested = is.methods[m];
          ir.method = resolved_method(is, m, ec);
          ir.applies = R > 0 && !std::isnan(of(0).lo);
          if (ir.applies) {
            RunningStats width;
            for (std::size_t r = 0; r < R; ++r) width.add(of(r).hi - of(r).lo);
            ir.mean_width = width.mean();
          }
          if (ir.applies && er.truth) {
            std::size_t below = 0, above = 0;
            for (std::size_t r = 0; r < R; ++r) {
              if (*er.truth < of(r).lo) ++below;
              if (*er.truth > of(r).hi) ++above;
            }
            std::tie(ir.coverage, ir.coverage_se) = proportion(R - below - above, R);
            ir.truth_below = proportion(below, R).first;
            ir.truth_above = proportion(above, R).first;
          }
          er.intervals.push_back(ir);
        }
        er.coverage = er.intervals.front().coverage;
        er.coverage_se = er.intervals.front().coverage_se;
      }
      rec.estimators.push_back(std::move(er));
    }
    if (config.replicate_values) {
      rec.replicate_values.assign(R, std::vector<double>(E));
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t e = 0; e < E; ++e) rec.replicate_values[r][e] = values[c][r * E + e];
    }
    out.records.push_back(std::move(rec));
  }
  return out;
}

}  // namespace calbench
