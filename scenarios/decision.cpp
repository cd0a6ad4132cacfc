#include "scenarios/decision.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "decisions/decision_value.hpp"
#include "scenarios/common.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {
namespace {

double truth_value(const CellRecord& c, std::string_view quantity) {
  for (const auto& t : c.truth)
    if (t.quantity == quantity) return t.value;
  return 0.0;
}

double metric_value(const DecisionRecord& d, const std::string& metric) {
  if (metric == "expected_utility") return d.expected_utility;
  if (metric == "oracle_expected_utility") return d.oracle_expected_utility;
  if (metric == "miscalibration_cost") return d.miscalibration_cost;
  for (const auto& [name, value] : d.figures)
    if (name == metric) return value;
  return NAN;
}

std::string short_key(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string group_text(const RequirementRow& row) {
  std::string out;
  for (const auto& [k, v] : row.group)
    out += (out.empty() ? "" : ", ") + short_key(k) + " " + v.dump();
  return out.empty() ? std::string("all cells") : out;
}

std::string verdict(const ExperimentConfig& config, const std::vector<CellRecord>& cells,
                    const RequirementsRecord& q, const std::vector<bool>& calibrated_group) {
  const Requirement& req = config.requirement->requirement;
  std::string out =
      "Verdict: the requirement " + q.metric + (req.bound == Bound::at_least ? " >= " : " <= ") +
      format_double(q.value) + (req.regret ? " (a regret bound)" : "") + " for task " +
      cells.front().decision->task + " " + cells.front().decision->params.dump() + " ";
  std::vector<std::string> parts;
  std::optional<double> calibrated;
  bool calibrated_bound = false;  // the calibrated model met it everywhere: a* <= the value
  double worst_shift = 0.0;
  for (std::size_t g = 0; g < q.rows.size(); ++g) {
    const RequirementRow& row = q.rows[g];
    std::string part = group_text(row) + ": ";
    if (row.status == "reached") {
      part += "accuracy " + fixed(*row.minimal_accuracy, 3) + " (cells " +
              std::to_string(*row.lower_cell) + "-" + std::to_string(*row.upper_cell) + ")";
      if (calibrated_group[g]) calibrated = row.minimal_accuracy;
    } else if (row.status == "met_everywhere") {
      part += "met at every swept accuracy (from " + fixed(*row.minimal_accuracy, 3) + ")";
      if (calibrated_group[g]) {
        calibrated = row.minimal_accuracy;
        calibrated_bound = true;
      }
    } else {
      part += "unreachable (best " + q.metric + " " + fixed(row.lower_value.value_or(NAN), 4) +
              " at accuracy " + fixed(row.lower_accuracy.value_or(NAN), 3) + ")";
    }
    parts.push_back(part);
  }
  if (q.accuracy_key.empty())
    out += "is checked cell by cell (no accuracy key is swept): ";
  else
    out += "needs, by level of miscalibration, at least: ";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  out += ".";
  std::size_t reached = 0, unreachable = 0;
  for (std::size_t g = 0; g < q.rows.size(); ++g) {
    if (q.rows[g].status == "unreachable") ++unreachable;
    if (q.rows[g].status == "reached") {
      ++reached;
      if (calibrated)
        worst_shift = std::max(worst_shift, *q.rows[g].minimal_accuracy - *calibrated);
    }
  }
  if (calibrated && reached > 0)
    out += " Against the calibrated model, miscalibration raises the accuracy needed by " +
           std::string(calibrated_bound ? "at least " : "up to ") + fixed(worst_shift, 3) +
           (calibrated_bound ? " (the calibrated model meets it at every swept accuracy)" : "") +
           ".";
  if (unreachable > 0)
    out.append(1, ' ')
        .append(std::to_string(unreachable))
        .append(" of ")
        .append(std::to_string(q.rows.size()))
        .append(" miscalibration levels cannot meet it at any swept accuracy.");
  std::size_t worst = 0;
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (cells[c].decision->miscalibration_cost > cells[worst].decision->miscalibration_cost)
      worst = c;
  double sd = 0.0;
  for (const auto& c : cells) sd += c.decision->realised_sd;
  sd /= static_cast<double>(cells.size());
  out += " The cost of miscalibration is at most " +
         fixed(cells[worst].decision->miscalibration_cost, 4) + " utility per decision (cell " +
         std::to_string(cells[worst].index) + "); a test set of " +
         std::to_string(cells.front().sample_size) +
         " cases measures the utility with a spread (sd) of about " + fixed(sd, 4) +
         ", so differences much below " + fixed(2.0 * sd, 4) + " will not be visible on such data.";
  // After the recalibrator: the largest remaining cost over the cells with a fit.
  std::optional<std::size_t> worst_recal;
  std::size_t failed = 0;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const auto& r = cells[c].decision->recalibrated;
    if (!r) continue;
    failed += r->failed_fits;
    if (r->fits > 0 &&
        (!worst_recal || r->cost_mean > cells[*worst_recal].decision->recalibrated->cost_mean))
      worst_recal = c;
  }
  if (worst_recal) {
    const RecalibratedRecord& r = *cells[*worst_recal].decision->recalibrated;
    out += " After recalibration by " + r.label + " fitted on " + std::to_string(r.fit_size) +
           " cases, the cost is at most " + fixed(r.cost_mean, 4) + " (sd " + fixed(r.cost_sd, 4) +
           " over fits; cell " + std::to_string(cells[*worst_recal].index) + ")" +
           (failed > 0 ? "; " + std::to_string(failed) + " fits failed" : std::string()) + ".";
  }
  return out;
}

// One replicate's fitted recalibrator (or why the fit failed), in a pre-sized slot.
struct FitOutcome {
  std::unique_ptr<const CalibrationModel> model;
  std::string failure;
};

nlohmann::ordered_json params_json(const std::vector<NamedParam>& params) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& p : params) std::visit([&](const auto& v) { out[p.key] = v; }, p.value);
  return out;
}

// Per replicate, the exact expected utility after recalibration is the oracle's minus the
// recalibrated cost: the cost is the mean of a per-draw difference that is 0 wherever the two
// decide alike (common random numbers), so this carries far less noise than the policy's
// own Monte Carlo mean, and uses the oracle's quadrature where that applies.
RecalibratedRecord summarise_recalibrated(const DecisionRecalibratorConfig& rc,
                                          const DecisionValue& v,
                                          const std::vector<FitOutcome>& fits,
                                          const std::vector<RecalibratedValue>& values) {
  RecalibratedRecord out;
  out.label = rc.method.label;
  out.name = rc.method.name;
  out.params = params_json(rc.method.params);
  out.fit_size = rc.fit_size;
  out.samples = rc.samples;
  RunningStats utility, cost;  // replicates in order
  double error = 0.0;
  std::size_t j = 0;
  for (const auto& f : fits) {
    if (!f.model) {
      ++out.failed_fits;
      if (out.failure.empty()) out.failure = f.failure;
      continue;
    }
    const RecalibratedValue& r = values[j++];
    utility.add(v.oracle.value - r.cost.value);
    cost.add(r.cost.value);
    error += r.cost.error;
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

// Per (cell, replicate) with a recalibrator: the method fitted on fit_size cases from the
// stream (seed, cell, replicate, fit), into `fits` (pre-sized slots); then per cell every
// replicate's model valued on the same draws (each call parallel over its fixed batches).
std::vector<std::vector<RecalibratedValue>> recalibrate(
    const ExperimentConfig& config, const std::vector<std::unique_ptr<Generator>>& generators,
    const std::vector<std::unique_ptr<DecisionTask>>& tasks,
    std::vector<std::vector<FitOutcome>>& fits) {
  const std::size_t cells = config.cells.size();
  std::vector<std::size_t> fit_cells;
  std::vector<std::size_t> first_fit(1, 0);
  for (std::size_t c = 0; c < cells; ++c)
    if (config.cells[c].recalibrator) {
      fits[c].resize(config.cells[c].replicates);
      fit_cells.push_back(c);
      first_fit.push_back(first_fit.back() + config.cells[c].replicates);
    }
  tbb::parallel_for(std::size_t{0}, first_fit.back(), [&](std::size_t task) {
    const auto i = static_cast<std::size_t>(
        std::upper_bound(first_fit.begin(), first_fit.end(), task) - first_fit.begin() - 1);
    const std::size_t cell = fit_cells[i], rep = task - first_fit[i];
    const DecisionRecalibratorConfig& rc = *config.cells[cell].recalibrator;
    Engine engine = make_engine({config.seed, cell, rep, Purpose::fit});
    Sample sample;
    GeneratorScratch scratch;
    scratch.reserve(generators[cell]->classes());
    generators[cell]->sample(engine, rc.fit_size, sample, scratch);
    try {
      fits[cell][rep].model = fit(*rc.method.method, sample);
    } catch (const DomainError& error) {
      fits[cell][rep].failure = error.what();
    }
  });
  std::vector<std::vector<RecalibratedValue>> out(cells);
  for (std::size_t c : fit_cells) {
    std::vector<const CalibrationModel*> models;
    for (const auto& f : fits[c])
      if (f.model) models.push_back(f.model.get());
    if (!models.empty())
      out[c] = recalibrated_decision_values(*generators[c], *tasks[c], models,
                                            config.cells[c].recalibrator->samples);
  }
  return out;
}

}  // namespace

RequirementsRecord requirement_frontier(const ExperimentConfig& config,
                                        const std::vector<CellRecord>& cells) {
  const RequirementConfig& rc = *config.requirement;
  RequirementsRecord q;
  q.metric = rc.requirement.metric;
  q.bound = rc.requirement.regret ? "regret" : std::string(to_string(rc.requirement.bound));
  q.value = rc.requirement.value;
  q.accuracy_key = rc.accuracy_key;
  for (const auto& k : config.sweep_keys)
    if (k != rc.accuracy_key) q.group_keys.push_back(k);
  // Groups in order of first appearance.
  std::vector<RequirementRow> rows;
  std::vector<bool> calibrated;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    std::vector<std::pair<std::string, nlohmann::ordered_json>> group;
    for (const auto& [k, v] : cells[c].swept)
      if (k != rc.accuracy_key) group.emplace_back(k, v);
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const RequirementRow& r) { return r.group == group; });
    const auto* dirichlet = std::get_if<DirichletSpec>(&config.cells[c].generator);
    const bool identity = dirichlet != nullptr && is_identity(dirichlet->map);
    if (it == rows.end()) {
      rows.push_back(RequirementRow{group, {}, "", {}, {}, {}, {}, {}, {}, {}, {}, true});
      calibrated.push_back(identity);
      it = rows.end() - 1;
    }
    it->cells.push_back(c);
    calibrated[static_cast<std::size_t>(it - rows.begin())] =
        calibrated[static_cast<std::size_t>(it - rows.begin())] && identity;
  }
  for (auto& row : rows) {
    std::vector<FrontierPoint> points;
    for (std::size_t c : row.cells)
      points.push_back({c, truth_value(cells[c], "accuracy"),
                        metric_value(*cells[c].decision, rc.requirement.metric)});
    const Frontier f = minimal_accuracy(points, rc.requirement);
    row.status = std::string(to_string(f.status));
    row.minimal_accuracy = f.minimal_accuracy;
    row.monotone = f.monotone;
    for (auto& c : row.cells) c = cells[c].index;
    if (f.below && f.above) {
      row.lower_cell = cells[f.below->cell].index;
      row.upper_cell = cells[f.above->cell].index;
      row.lower_accuracy = f.below->accuracy;
      row.upper_accuracy = f.above->accuracy;
      row.lower_value = f.below->value;
      row.upper_value = f.above->value;
      const double span = f.above->accuracy - f.below->accuracy;
      const double frac = span > 0.0 ? (*f.minimal_accuracy - f.below->accuracy) / span : 0.0;
      const double e_lo = truth_value(cells[f.below->cell], "ece_top_l1");
      const double e_hi = truth_value(cells[f.above->cell], "ece_top_l1");
      row.ece_top_l1 = e_lo + (e_hi - e_lo) * frac;
    } else if (f.closest) {
      row.lower_cell = cells[f.closest->cell].index;
      row.lower_accuracy = f.closest->accuracy;
      row.lower_value = f.closest->value;
    } else if (f.status == FrontierStatus::met_everywhere) {
      // The lowest-accuracy cell of the group.
      const auto lowest = std::min_element(
          points.begin(), points.end(), [](const FrontierPoint& a, const FrontierPoint& b) {
            return a.accuracy != b.accuracy ? a.accuracy < b.accuracy : a.cell < b.cell;
          });
      row.upper_cell = cells[lowest->cell].index;
      row.upper_accuracy = lowest->accuracy;
      row.upper_value = lowest->value;
      row.ece_top_l1 = truth_value(cells[lowest->cell], "ece_top_l1");
    }
  }
  q.rows = std::move(rows);
  q.verdict = verdict(config, cells, q, calibrated);
  return q;
}

ResultSet run_decision(const ExperimentConfig& config, const RunControl& control) {
  const std::size_t cells = config.cells.size();
  const Generators generators = make_generators(config);
  std::vector<std::unique_ptr<DecisionTask>> tasks;
  for (const auto& cell : config.cells) tasks.push_back(make_task(cell.decision->spec));
  TruthCache cache;
  const std::vector<const GroundTruth*> truths = cell_truths(config, generators, cache);

  // Exact decision values, once per distinct (generator, task, samples); the distinct ones in
  // parallel, each into its own slot.
  std::vector<std::string> keys(cells);
  std::map<std::string, std::size_t> slot_of;
  std::vector<std::size_t> first_cell;
  for (std::size_t c = 0; c < cells; ++c) {
    const CellConfig& cc = config.cells[c];
    keys[c] = generators[c]->canonical_text() + "|" + cc.decision->task + "|" +
              cc.decision->params.dump() + "|" + std::to_string(cc.truth.samples);
    if (slot_of.emplace(keys[c], first_cell.size()).second) first_cell.push_back(c);
  }
  std::vector<DecisionValue> values(first_cell.size());
  tbb::parallel_for(std::size_t{0}, first_cell.size(), [&](std::size_t s) {
    const std::size_t c = first_cell[s];
    values[s] = exact_decision_value(*generators[c], *tasks[c], config.cells[c].truth.samples);
  });

  // Realised utility on test sets: tasks (cell, replicate), each from the stream
  // (seed, cell, replicate, sample), into pre-sized slots.
  std::vector<std::size_t> first_task(cells + 1, 0);
  for (std::size_t c = 0; c < cells; ++c)
    first_task[c + 1] = first_task[c] + config.cells[c].replicates;
  std::vector<std::vector<double>> realised;
  for (const auto& cell : config.cells) realised.emplace_back(cell.replicates);
  const std::size_t total = first_task[cells];
  std::atomic<std::size_t> done{0};
  tbb::parallel_for(std::size_t{0}, total, [&](std::size_t task) {
    const auto cell = static_cast<std::size_t>(
        std::upper_bound(first_task.begin(), first_task.end(), task) - first_task.begin() - 1);
    const std::size_t rep = task - first_task[cell];
    Engine engine = make_engine({config.seed, cell, rep, Purpose::sample});
    realised[cell][rep] =
        realised_utility(*generators[cell], *tasks[cell], config.cells[cell].sample_size, engine);
    const std::size_t now = done.fetch_add(1, std::memory_order_relaxed) + 1;
    if (control.progress) control.progress(now, total);
  });

  std::vector<std::vector<FitOutcome>> fits(cells);
  const auto recalibrated = recalibrate(config, generators, tasks, fits);

  ResultSet out = result_set_header(config);
  for (std::size_t c = 0; c < cells; ++c) {
    const CellConfig& cc = config.cells[c];
    const DecisionValue& v = values[slot_of.at(keys[c])];
    CellRecord rec = cell_record(cc, generators[c]->canonical_text(), *truths[c]);
    rec.sample_size = cc.sample_size;
    DecisionRecord d;
    d.task = cc.decision->task;
    d.params = cc.decision->params;
    d.method = std::string(to_string(v.policy.method));
    d.samples = v.samples;
    d.expected_utility = v.policy.value;
    d.expected_utility_error = v.policy.error;
    d.oracle_expected_utility = v.oracle.value;
    d.oracle_expected_utility_error = v.oracle.error;
    d.miscalibration_cost = v.cost.value;
    d.miscalibration_cost_error = v.cost.error;
    RunningStats stats;  // replicates in order: the same bits for any thread count
    for (double u : realised[c]) stats.add(u);
    d.realised_mean = stats.mean();
    d.realised_sd = stats.sd();
    const auto names = tasks[c]->figure_names();
    for (std::size_t i = 0; i < names.size(); ++i) {
      d.figures.emplace_back(names[i], v.figures[i]);
      d.oracle_figures.emplace_back(names[i], v.oracle_figures[i]);
    }
    if (cc.recalibrator)
      d.recalibrated = summarise_recalibrated(*cc.recalibrator, v, fits[c], recalibrated[c]);
    rec.decision = std::move(d);
    out.cells.push_back(std::move(rec));
  }
  if (config.requirement) out.requirements = requirement_frontier(config, out.cells);
  return out;
}

}  // namespace calbench
