#include "scenarios/estimator_bias/run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/finite_guard.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "core/task_kernel.hpp"
#include "estimators/binned_reliability.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/external.hpp"
#include "estimators/interval_methods.hpp"
#include "estimators/uncertainty.hpp"
#include "report/value_format.hpp"
#include "scenarios/common.hpp"
#include "scenarios/task_codec.hpp"
#include "truth/population.hpp"
#include "truth/reliability_curve.hpp"
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
};

// What one (cell, replicate) task produced: every estimator's value and, with intervals, each
// requested method's interval ([m * E + e], NaN ends where the method does not apply) and the
// consistency test's p-value ([e]).
struct ReplicateResult {
  std::vector<double> values;
  std::vector<Interval> intervals;
  std::vector<double> p_values;
};

// The method the m-th requested one is for estimator `ec`.
IntervalMethod resolved_method(const IntervalSettings& settings, std::size_t m,
                               const EstimatorConfig& ec) {
  return settings.methods[m].value_or(ec.interval);
}

// methods[c][m][e]: the m-th requested method for cell c's estimator e (sample_intervals'
// table), built once per cell for all its replicates; empty without intervals.
using MethodTables = std::vector<std::vector<std::vector<IntervalMethod>>>;

MethodTables method_tables(const EstimatorBiasConfig& config) {
  MethodTables out(config.cells.size());
  if (!config.intervals) return out;
  const IntervalSettings& is = *config.intervals;
  for (std::size_t c = 0; c < config.cells.size(); ++c) {
    out[c].resize(is.methods.size());
    for (std::size_t m = 0; m < is.methods.size(); ++m)
      for (const auto& ec : config.cells[c].estimators)
        out[c][m].push_back(resolved_method(is, m, ec));
  }
  return out;
}

template <typename Archive>
void serialize(Archive& a, ReplicateResult& r) {
  a(r.values, r.intervals, r.p_values);
}

// The external estimators' values (estimators/external.hpp, docs/external.md), computed before
// the task stream: values[c][r * X + x] for external estimator x (in the cell's estimator order)
// of cell c's X external ones, replicate r. index[c][e] is estimator e's x, or none. The memory
// is cells x replicates x external estimators doubles (the other estimators' values are folded
// as they arrive and not kept).
struct ExternalValues {
  std::vector<std::vector<std::optional<std::size_t>>> index;
  std::vector<std::vector<double>> values;
  std::vector<std::size_t> count;  // X per cell
};

// "cell 3 (sample_size = 100, ...)": where an external estimator's messages say it failed.
std::string cell_place(const EstimatorBiasCell& cell) {
  std::string swept;
  for (const auto& s : cell.swept)
    swept += (swept.empty() ? " (" : ", ") + s.key + " = " + to_text(s.value);
  return "cell " + std::to_string(cell.index) + swept + (swept.empty() ? "" : ")");
}

// One command start per (cell, external estimator): the cell's replicates are drawn again from
// their streams (the tasks' draws, bit for bit) and written as NPY files into one directory in
// parallel; the directory goes when the cell is done. Deterministic, so a resumed run or a
// shard computes the same values again.
ExternalValues run_externals(const EstimatorBiasConfig& config, const Generators& generators) {
  const std::size_t cells = config.cells.size();
  ExternalValues out;
  out.index.resize(cells);
  out.values.resize(cells);
  out.count.assign(cells, 0);
  for (std::size_t cell = 0; cell < cells; ++cell) {
    const EstimatorBiasCell& cc = config.cells[cell];
    std::vector<const ExternalEstimator*> externals;
    for (const auto& ec : cc.estimators) {
      const ExternalEstimator* external = ec.estimator->capabilities().external;
      out.index[cell].push_back(external != nullptr ? std::optional(externals.size())
                                                    : std::nullopt);
      if (external != nullptr) externals.push_back(external);
    }
    if (externals.empty()) continue;
    const std::size_t R = cc.replicates, X = externals.size();
    out.count[cell] = X;
    out.values[cell].resize(R * X);
    const TempDirectory directory("calbench-cell-");
    for_each_index<ThreadBuffers>(R, [&](std::size_t rep, ThreadBuffers& buf) {
      Engine engine = make_engine({config.seed, cell, rep, Purpose::sample});
      generators[cell]->sample(engine, cc.sample_size, buf.sample, buf.scratch);
      write_replicate(directory.path(), rep, R, buf.sample);
    });
    const ExternalBatch batch{{}, cell_place(cc), R, cc.sample_size, generators[cell]->classes()};
    for (std::size_t e = 0; e < cc.estimators.size(); ++e) {
      if (!out.index[cell][e]) continue;
      const std::size_t x = *out.index[cell][e];
      ExternalBatch named = batch;
      named.label = cc.estimators[e].label;
      const std::vector<double> values = externals[x]->run(directory.path(), named);
      for (std::size_t r = 0; r < R; ++r) out.values[cell][r * X + x] = values[r];
    }
  }
  return out;
}

ReplicateResult run_replicate(const EstimatorBiasConfig& config, const Generators& generators,
                              const ExternalValues& externals, const MethodTables& methods,
                              TaskKey key, ThreadBuffers& buf) {
  const std::size_t cell = key.cell, rep = key.replicate;
  const EstimatorBiasCell& cc = config.cells[cell];
  Engine engine = make_engine({config.seed, cell, rep, Purpose::sample});
  generators[cell]->sample(engine, cc.sample_size, buf.sample, buf.scratch);
  const std::size_t E = cc.estimators.size();
  ReplicateResult out;
  out.values.resize(E);
  for (std::size_t e = 0; e < E; ++e)
    if (const auto x = externals.index[cell][e])  // computed per cell, before the tasks
      out.values[e] = externals.values[cell][rep * externals.count[cell] + *x];
    else
      out.values[e] = cc.estimators[e].estimator->estimate(buf.sample, buf.workspace);
  if (!config.intervals) return out;
  // Serial inside the task: the (cell, replicate) tasks already fill the cores.
  const IntervalSettings& is = *config.intervals;
  buf.estimators.clear();
  for (const auto& ec : cc.estimators) buf.estimators.push_back(ec.estimator.get());
  const ResampleKey resample_key{config.seed, cell, rep};
  const std::size_t M = is.methods.size();
  auto intervals = sample_intervals(buf.sample, buf.estimators, out.values, methods[cell],
                                    {is.resamples, is.level, is.jackknife_groups}, resample_key,
                                    Execution::serial, buf.resample, buf.workspace);
  out.p_values = std::move(intervals.p_values);
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  out.intervals.reserve(M * E);
  for (const auto& ci : intervals.intervals)
    out.intervals.push_back(ci.value_or(Interval{nan, nan}));
  return out;
}

// Runs every (cell, replicate) task and hands its result to consume(key, result), in task
// order (stream_tasks): each task draws from the stream (seed, cell, replicate, sample). The
// external estimators run first, per cell (run_externals), and the tasks take their values.
template <typename Consume>
void simulate(const EstimatorBiasConfig& config, const Generators& generators,
              const RunControl& control, Consume&& consume) {
  std::vector<std::size_t> replicates;
  for (const auto& cell : config.cells) replicates.push_back(cell.replicates);
  const ExternalValues externals = run_externals(config, generators);
  const MethodTables methods = method_tables(config);
  stream_tasks<ReplicateResult, ThreadBuffers>(
      TaskGrid(replicates),
      [&](TaskKey key, ThreadBuffers& buf) {
        return run_replicate(config, generators, externals, methods, key, buf);
      },
      std::forward<Consume>(consume), control);
}

// What an estimator's bias is measured against in one cell: its target's truth, or its own
// population value (with that value's error); neither: no bias.
struct Reference {
  std::optional<double> value;
  double error = 0.0;
};

// One estimator's statistics over a cell's replicates, folded in replicate order (the same
// bits for any thread count), so that no replicate value need be kept.
// One interval method's counts for one estimator: replicates whose interval lies wholly above
// the reference (below) or wholly below it (above), and the widths.
struct IntervalFold {
  bool applies = true;  // false once a replicate's interval is NaN (the method gives none)
  std::size_t below = 0, above = 0;
  RunningStats width;
};

struct EstimatorFold {
  RunningStats stats;
  double squared_error = 0.0;  // sum of (value - reference)^2
  std::size_t rejected = 0;
  std::vector<IntervalFold> intervals;  // one per intervals.methods
};

struct CellFold {
  std::vector<EstimatorFold> estimators;
  std::vector<std::vector<double>> replicate_values;  // [r][e], on request only
};

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
  return estimator.has_population_value() &&
         (!estimator.target() || !estimator.converges_to_target());
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

// The curves of reliability.csv for one cell: the generator's true curves (computed once per
// distinct generator, `cache`) and those of replicate 0's sample (its stream is the replicate's,
// so the estimated top-label equal-width curve gives replicate 0's 15-bin `ece` when bins = 15).
std::vector<CurveRecord> cell_curves(const EstimatorBiasConfig& config, std::size_t cell,
                                     const Generator& generator,
                                     std::map<std::string, ReliabilityCurves>& cache) {
  const ReliabilityOutput& settings = *config.reliability;
  auto it = cache.find(generator.canonical_text());
  if (it == cache.end())
    it =
        cache
            .emplace(generator.canonical_text(), true_reliability_curves(generator, settings.truth))
            .first;
  const ReliabilityCurves& truth = it->second;
  const std::size_t K = generator.classes();
  const CurveScope class_scope = truth.pooled ? CurveScope::classes_pooled : CurveScope::one_class;
  auto class_index = [&](std::size_t k) {
    return truth.pooled ? std::nullopt : std::optional<std::size_t>(k);
  };
  std::vector<CurveRecord> out;
  out.push_back({.points = truth.top});
  for (std::size_t k = 0; k < truth.classes.size(); ++k)
    out.push_back(
        {.scope = class_scope, .class_index = class_index(k), .points = truth.classes[k]});

  Sample sample;
  GeneratorScratch scratch;
  EstimatorWorkspace workspace;
  Engine engine = make_engine({config.seed, cell, 0, Purpose::sample});
  generator.sample(engine, config.cells[cell].sample_size, sample, scratch);
  const std::size_t n = sample.size;
  std::vector<double> correct(n);
  for (std::size_t i = 0; i < n; ++i) correct[i] = sample.predicted[i] == sample.label[i];
  // Per class (or all classes pooled): the scores p_ik and outcomes 1{y_i = k}.
  std::vector<std::vector<double>> scores(truth.classes.size()), hits(truth.classes.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t ch = truth.pooled ? 0 : k;
      scores[ch].push_back(sample.p[i * K + k]);
      hits[ch].push_back(sample.label[i] == k ? 1.0 : 0.0);
    }
  for (const Binning binning : {Binning::equal_width, Binning::equal_mass}) {
    out.push_back({.curve = CurveOrigin::estimated,
                   .grouping = grouping_of(binning),
                   .points = binned_reliability(sample.confidence, correct, binning, settings.bins,
                                                workspace)});
    for (std::size_t ch = 0; ch < scores.size(); ++ch)
      out.push_back(
          {.curve = CurveOrigin::estimated,
           .grouping = grouping_of(binning),
           .scope = class_scope,
           .class_index = class_index(ch),
           .points = binned_reliability(scores[ch], hits[ch], binning, settings.bins, workspace)});
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
  std::vector<std::vector<double>> values(config.cells.size());
  simulate(config, make_generators(bases(config.cells)), control,
           [&](TaskKey key, ReplicateResult&& r) {
             values[key.cell].insert(values[key.cell].end(), r.values.begin(), r.values.end());
           });
  return values;
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

  // Bias against the target's truth, or against the estimator's own population value.
  std::vector<std::vector<Reference>> references(cells);
  for (std::size_t c = 0; c < cells; ++c)
    for (std::size_t e = 0; e < config.cells[c].estimators.size(); ++e) {
      Reference ref;
      if (auto target = config.cells[c].estimators[e].estimator->target()) {
        ref.value = (*truths[c])[*target].value;
      } else if (const auto& population = populations[c][e]) {
        ref.value = population->value;
        ref.error = population->error;
      }
      references[c].push_back(ref);
    }

  // The replicates, folded as they arrive: O(cells x estimators) memory, not O(replicates).
  std::vector<CellFold> folds(cells);
  for (std::size_t c = 0; c < cells; ++c) {
    folds[c].estimators.resize(config.cells[c].estimators.size());
    if (config.intervals)
      for (auto& f : folds[c].estimators) f.intervals.resize(config.intervals->methods.size());
  }
  simulate(config, generators, control, [&](TaskKey key, ReplicateResult&& r) {
    CellFold& fold = folds[key.cell];
    const std::vector<Reference>& refs = references[key.cell];
    for (std::size_t e = 0; e < r.values.size(); ++e) {
      EstimatorFold& f = fold.estimators[e];
      const double v = require_finite(r.values[e], [&] {
        return "cell " + std::to_string(config.cells[key.cell].index) + ", replicate " +
               std::to_string(key.replicate) + ": estimator " +
               config.cells[key.cell].estimators[e].label;
      });
      f.stats.add(v);
      if (refs[e].value) {
        const double d = v - *refs[e].value;
        f.squared_error += d * d;
      }
      if (!config.intervals) continue;
      if (r.p_values[e] <= config.intervals->test_level) ++f.rejected;
      const std::size_t E = r.values.size();
      for (std::size_t m = 0; m < f.intervals.size(); ++m) {
        IntervalFold& fi = f.intervals[m];
        const Interval& ci = r.intervals[m * E + e];
        if (std::isnan(ci.lo)) {
          fi.applies = false;
          continue;
        }
        fi.width.add(ci.hi - ci.lo);
        if (refs[e].value && *refs[e].value < ci.lo) ++fi.below;
        if (refs[e].value && *refs[e].value > ci.hi) ++fi.above;
      }
    }
    if (config.replicate_values) fold.replicate_values.push_back(std::move(r.values));
  });
  if (control.shard) return {};  // a shard's results are its journal

  EstimatorBiasResults out;
  out.meta = result_meta(config);
  out.cells = cells;
  out.sweep_keys = config.sweep_keys;
  out.intervals = config.intervals;
  out.reliability = config.reliability;
  std::map<std::string, ReliabilityCurves> curve_cache;
  out.replicate_values = config.replicate_values;
  for (std::size_t c = 0; c < cells; ++c) {
    const EstimatorBiasCell& cc = config.cells[c];
    EstimatorBiasCellRecord rec;
    rec.cell = cell_header(cc, *generators[c], *truths[c]);
    rec.sample_size = cc.sample_size;
    const std::size_t E = cc.estimators.size(), R = cc.replicates;
    for (std::size_t e = 0; e < E; ++e) {
      const EstimatorConfig& ec = cc.estimators[e];
      const EstimatorFold& f = folds[c].estimators[e];
      const RunningStats& stats = f.stats;
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
      const Reference& reference = references[c][e];
      if (auto target = ec.estimator->target()) {
        er.target = *target;
        if (population) {
          er.binning_bias = population->value - *reference.value;
          er.finite_sample_bias = stats.mean() - population->value;
        }
      } else if (population) {
        er.own_target = true;
      }
      if (reference.value) {
        er.truth = *reference.value;
        er.bias = stats.mean() - *reference.value;
        er.rmse = std::sqrt(f.squared_error / static_cast<double>(R));
        const double se = stats.standard_error();
        er.se_bias = std::sqrt(se * se + reference.error * reference.error);
      }
      if (config.intervals) {
        const IntervalSettings& is = *config.intervals;
        std::tie(er.rejection_rate, er.rejection_se) = proportion(f.rejected, R);
        for (std::size_t m = 0; m < is.methods.size(); ++m) {
          const IntervalFold& fi = f.intervals[m];
          IntervalRecord ir;
          ir.requested = is.methods[m];
          ir.method = resolved_method(is, m, ec);
          ir.applies = R > 0 && fi.applies;
          if (ir.applies) ir.mean_width = fi.width.mean();
          if (ir.applies && er.truth) {
            std::tie(ir.coverage, ir.coverage_se) = proportion(R - fi.below - fi.above, R);
            ir.truth_below = proportion(fi.below, R).first;
            ir.truth_above = proportion(fi.above, R).first;
          }
          er.intervals.push_back(ir);
        }
        er.coverage = er.intervals.front().coverage;
        er.coverage_se = er.intervals.front().coverage_se;
      }
      rec.estimators.push_back(std::move(er));
    }
    rec.replicate_values = std::move(folds[c].replicate_values);
    if (config.reliability) rec.reliability = cell_curves(config, c, *generators[c], curve_cache);
    out.records.push_back(std::move(rec));
  }
  return out;
}

}  // namespace calbench
