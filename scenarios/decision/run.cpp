#include "scenarios/decision/run.hpp"

#include <cmath>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "core/finite_guard.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "core/task_kernel.hpp"
#include "decisions/decision_value.hpp"
#include "report/value_format.hpp"
#include "scenarios/common.hpp"
#include "scenarios/decision/verdict.hpp"
#include "scenarios/task_codec.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {
namespace {

double metric_value(const DecisionRecord& d, const Requirement& requirement) {
  switch (requirement.metric) {
    case DecisionMetric::expected_utility:
      return d.expected_utility;
    case DecisionMetric::oracle_expected_utility:
      return d.oracle_expected_utility;
    case DecisionMetric::miscalibration_cost:
      return d.miscalibration_cost;
    case DecisionMetric::figure:
      break;
  }
  for (const auto& [name, value] : d.figures)
    if (name == requirement.figure) return value;
  return NAN;
}

// One replicate's fitted recalibrator (or why the fit failed), in a pre-sized slot.
struct FitOutcome {
  std::unique_ptr<const CalibrationModel> model;
  std::string failure;
};

// A cell's recalibrator over its replicates: which fits succeeded (and why the others
// failed), and the decision value of every fitted model, in replicate order.
struct RecalibrationOutcome {
  std::vector<bool> fitted;
  std::vector<std::string> failures;  // "" where the fit succeeded
  std::vector<RecalibratedValue> values;
};

template <typename Archive>
void serialize(Archive& a, RecalibrationOutcome& x) {
  a(x.fitted, x.failures, x.values);
}

// Per replicate, the exact expected utility after recalibration is the oracle's minus the
// recalibrated cost: the cost is the mean of a per-draw difference that is 0 wherever the two
// decide alike (common random numbers), so this carries far less noise than the policy's
// own Monte Carlo mean, and uses the oracle's quadrature where that applies.
RecalibratedRecord summarise_recalibrated(const DecisionRecalibratorConfig& rc,
                                          const DecisionValue& v,
                                          const RecalibrationOutcome& outcome) {
  RecalibratedRecord out;
  out.label = rc.method.label;
  out.name = rc.method.name;
  out.params = params_value(rc.method.params);
  out.fit_size = rc.fit_size;
  out.samples = rc.samples;
  RunningStats utility, cost;  // replicates in order
  double error = 0.0;
  std::size_t j = 0;
  for (std::size_t r = 0; r < outcome.fitted.size(); ++r) {
    if (!outcome.fitted[r]) {
      ++out.failed_fits;
      if (out.failure.empty()) out.failure = outcome.failures[r];
      continue;
    }
    const RecalibratedValue& value = outcome.values[j++];
    utility.add(v.oracle.value - value.cost.value);
    cost.add(value.cost.value);
    error += value.cost.error;
  }
  out.fits = j;
  if (j > 0) {
    error /= static_cast<double>(j);
    out.utility_mean = utility.mean();
    out.utility_sd = utility.sd();
    out.utility_error = std::hypot(v.oracle.error, error);
    out.cost_mean = cost.mean();
    out.cost_sd = cost.sd();
    out.cost_error = error;
  }
  return out;
}

// Cell c's recalibrator: fitted per replicate on fit_size cases from the stream
// (seed, cell, replicate, fit), in parallel, then every fitted model valued on the same draws
// (itself parallel over fixed batches).
RecalibrationOutcome recalibrate_cell(const DecisionConfig& config, const Generators& generators,
                                      const DecisionTask& task, std::size_t cell) {
  const DecisionRecalibratorConfig& rc = *config.cells[cell].recalibrator;
  std::vector<FitOutcome> fits(config.cells[cell].replicates);
  for_each_index(fits.size(), [&](std::size_t rep) {
    Engine engine = make_engine({config.seed, cell, rep, Purpose::fit});
    Sample sample;
    GeneratorScratch scratch;
    scratch.reserve(generators[cell]->classes());
    generators[cell]->sample(engine, rc.fit_size, sample, scratch);
    try {
      fits[rep].model = fit(*rc.method.method, sample);
    } catch (const DomainError& error) {
      fits[rep].failure = error.what();
    }
  });
  RecalibrationOutcome out;
  std::vector<const CalibrationModel*> models;
  for (const auto& f : fits) {
    out.fitted.push_back(f.model != nullptr);
    out.failures.push_back(f.failure);
    if (f.model) models.push_back(f.model.get());
  }
  if (!models.empty())
    out.values = recalibrated_decision_values(*generators[cell], task, models, rc.samples);
  return out;
}

// Cell c's exact decision value, guarded: a Boost.Math error in its integral is reported
// naming the cell (as the truth engine's are, scenarios/common.cpp) and every value, error and
// figure that summary.json shows must be finite (core/finite_guard.hpp).
DecisionValue checked_decision_value(const DecisionConfig& config, const Generators& generators,
                                     const DecisionTask& task, std::size_t c,
                                     const std::vector<std::string>& figure_names) {
  const auto where = [&] {
    return "cell " + std::to_string(config.cells[c].index) + " (" +
           generators[c]->canonical_text() + "): decision task " + config.cells[c].decision.task;
  };
  DecisionValue v;
  try {
    v = exact_decision_value(*generators[c], task, config.cells[c].truth.samples);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    throw NumericalError(where() + ": the exact decision value could not be computed: " + e.what());
  }
  const std::pair<const char*, const TruthValue*> parts[] = {{"expected_utility", &v.policy},
                                                             {"oracle_expected_utility", &v.oracle},
                                                             {"miscalibration_cost", &v.cost}};
  for (const auto& part : parts) {
    require_finite(part.second->value, [&] { return where() + ": " + part.first; });
    require_finite(part.second->error, [&] { return where() + ": the error of " + part.first; });
  }
  for (std::size_t i = 0; i < v.figures.size(); ++i) {
    require_finite(v.figures[i], [&] { return where() + ": figure " + figure_names[i]; });
    require_finite(v.oracle_figures[i],
                   [&] { return where() + ": the oracle's figure " + figure_names[i]; });
  }
  return v;
}

}  // namespace

RequirementsRecord requirements_record(const DecisionConfig& config,
                                       const std::vector<DecisionCellRecord>& records) {
  const RequirementConfig& rc = *config.requirement;
  RequirementsRecord q;
  q.requirement = rc.requirement;
  q.accuracy_key = rc.accuracy_key;
  for (const auto& k : config.sweep_keys)
    if (k != rc.accuracy_key) q.group_keys.push_back(k);
  std::vector<FrontierCell> cells;
  for (std::size_t c = 0; c < records.size(); ++c) {
    const DecisionCellRecord& r = records[c];
    FrontierCell cell;
    cell.cell = r.cell.index;
    for (const auto& s : r.cell.swept)
      if (s.key != rc.accuracy_key) cell.group.push_back(s);
    cell.accuracy = r.cell.truth_value(Quantity::accuracy);
    cell.ece_top_l1 = r.cell.truth_value(Quantity::ece_top_l1);
    cell.value = metric_value(r.decision, rc.requirement);
    const auto* dirichlet = std::get_if<DirichletSpec>(&config.cells[c].generator);
    cell.calibrated = dirichlet != nullptr && is_identity(dirichlet->map);
    cells.push_back(std::move(cell));
  }
  q.rows = requirement_frontier(cells, rc.requirement);
  VerdictFacts facts;
  facts.requirement = rc.requirement;
  facts.task = records.front().decision.task;
  facts.params = records.front().decision.params;
  facts.accuracy_swept = !rc.accuracy_key.empty();
  facts.sample_size = records.front().sample_size;
  facts.rows = q.rows;
  for (const auto& r : records) {
    VerdictCell v{r.cell.index, r.decision.miscalibration_cost, r.decision.realised_sd, {}};
    if (const auto& rr = r.decision.recalibrated)
      v.recalibrated = VerdictCell::Recalibrated{rr->label,       rr->fit_size,  rr->fits,
                                                 rr->failed_fits, rr->cost_mean, rr->cost_sd};
    facts.cells.push_back(std::move(v));
  }
  q.verdict = requirement_verdict(facts);
  return q;
}

DecisionResults run_decision(const DecisionConfig& config, const RunControl& control) {
  const std::size_t cells = config.cells.size();
  const Generators generators = make_generators(bases(config.cells));
  std::vector<std::unique_ptr<DecisionTask>> tasks;
  for (const auto& cell : config.cells) tasks.push_back(make_task(cell.decision.spec));
  TruthCache cache;
  const std::vector<const GroundTruth*> truths =
      cell_truths(bases(config.cells), generators, cache);

  // Exact decision values, once per distinct (generator, task, samples); the distinct ones in
  // parallel, each into its own slot.
  std::vector<std::string> keys(cells);
  std::map<std::string, std::size_t> slot_of;
  std::vector<std::size_t> first_cell;
  for (std::size_t c = 0; c < cells; ++c) {
    const DecisionCell& cc = config.cells[c];
    keys[c] = generators[c]->canonical_text() + "|" + cc.decision.task + "|" +
              to_text(cc.decision.params) + "|" + std::to_string(cc.truth.samples);
    if (slot_of.emplace(keys[c], first_cell.size()).second) first_cell.push_back(c);
  }
  // Each stream below is a stage of the run journal; only the realised utilities report
  // progress (they are the (cell, replicate) tasks).
  StreamControl quiet = control;
  quiet.progress = {};
  std::vector<DecisionValue> values(first_cell.size());
  stream_tasks<DecisionValue>(
      TaskGrid(std::vector<std::size_t>(first_cell.size(), 1)),
      [&](TaskKey key) {
        const std::size_t c = first_cell[key.cell];
        return checked_decision_value(config, generators, *tasks[c], c, tasks[c]->figure_names());
      },
      [&](TaskKey key, DecisionValue&& v) { values[key.cell] = std::move(v); }, quiet);

  // Realised utility on test sets: tasks (cell, replicate), each from the stream
  // (seed, cell, replicate, sample), folded per cell in replicate order.
  std::vector<std::size_t> replicates(cells);
  for (std::size_t c = 0; c < cells; ++c) replicates[c] = config.cells[c].replicates;
  std::vector<RunningStats> realised(cells);
  stream_tasks<double>(
      TaskGrid(replicates),
      [&](TaskKey key) {
        Engine engine = make_engine({config.seed, key.cell, key.replicate, Purpose::sample});
        return realised_utility(*generators[key.cell], *tasks[key.cell],
                                config.cells[key.cell].sample_size, engine);
      },
      [&](TaskKey key, double u) {
        realised[key.cell].add(require_finite(u, [&] {
          return "cell " + std::to_string(config.cells[key.cell].index) + ", replicate " +
                 std::to_string(key.replicate) + ": the realised utility";
        }));
      },
      control);

  // The recalibrators: one task per cell that has one.
  std::vector<std::size_t> has_recalibrator(cells, 0);
  for (std::size_t c = 0; c < cells; ++c)
    has_recalibrator[c] = config.cells[c].recalibrator ? 1 : 0;
  std::vector<RecalibrationOutcome> recalibrated(cells);
  stream_tasks<RecalibrationOutcome>(
      TaskGrid(has_recalibrator),
      [&](TaskKey key) { return recalibrate_cell(config, generators, *tasks[key.cell], key.cell); },
      [&](TaskKey key, RecalibrationOutcome&& r) {
        for (const RecalibratedValue& value : r.values)
          require_finite(value.cost.value, [&] {
            return "cell " + std::to_string(config.cells[key.cell].index) + ": recalibrator " +
                   config.cells[key.cell].recalibrator->method.label + ": miscalibration cost";
          });
        recalibrated[key.cell] = std::move(r);
      },
      quiet);
  if (control.shard) return {};  // a shard's results are its journal

  DecisionResults out;
  out.meta = result_meta(config);
  out.cells = cells;
  out.sweep_keys = config.sweep_keys;
  for (std::size_t c = 0; c < cells; ++c) {
    const DecisionCell& cc = config.cells[c];
    const DecisionValue& v = values[slot_of.at(keys[c])];
    DecisionCellRecord rec;
    rec.cell = cell_header(cc, *generators[c], *truths[c]);
    rec.sample_size = cc.sample_size;
    DecisionRecord& d = rec.decision;
    d.task = cc.decision.task;
    d.params = cc.decision.params;
    d.method = v.policy.method;
    d.samples = v.samples;
    d.expected_utility = v.policy.value;
    d.expected_utility_error = v.policy.error;
    d.oracle_expected_utility = v.oracle.value;
    d.oracle_expected_utility_error = v.oracle.error;
    d.miscalibration_cost = v.cost.value;
    d.miscalibration_cost_error = v.cost.error;
    d.realised_mean = realised[c].mean();  // replicates in order: the same bits for any
    d.realised_sd = realised[c].sd();      // thread count
    const auto names = tasks[c]->figure_names();
    for (std::size_t i = 0; i < names.size(); ++i) {
      d.figures.emplace_back(names[i], v.figures[i]);
      d.oracle_figures.emplace_back(names[i], v.oracle_figures[i]);
    }
    if (cc.recalibrator)
      d.recalibrated = summarise_recalibrated(*cc.recalibrator, v, recalibrated[c]);
    out.records.push_back(std::move(rec));
  }
  if (config.requirement) out.requirements = requirements_record(config, out.records);
  return out;
}

}  // namespace calbench
