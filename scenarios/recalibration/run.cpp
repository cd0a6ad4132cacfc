#include "scenarios/recalibration/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>

#include "core/error.hpp"
#include "core/finite_guard.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "core/task_kernel.hpp"
#include "decisions/decision_value.hpp"
#include "recalibrators/recalibrators_json.hpp"
#include "scenarios/common.hpp"
#include "scenarios/task_codec.hpp"
#include "truth/composed_truth.hpp"
#include "truth/reliability_curve.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {
namespace {

// What one (cell, replicate, method) task produced, in a pre-sized slot.
struct MethodOutcome {
  bool fitted = false;
  std::string failure;
  double seconds = 0.0;
  std::vector<FittedValue> parameters;
  std::vector<double> estimates;  // one per estimator
  ComposedTruth truth;
  // With a decision task: the true regret of acting on q = g(p), and the test sample's
  // realised utility.
  std::optional<TruthValue> regret;
  std::optional<double> utility;
};

struct ReplicateOutcome {
  std::vector<double> uncalibrated;    // estimates of the uncalibrated model
  std::vector<MethodOutcome> methods;  // one per method
  // With a decision task: the uncalibrated model's realised utility on the test sample.
  std::optional<double> uncalibrated_utility;
};

template <typename Archive>
void serialize(Archive& a, MethodOutcome& m) {
  a(m.fitted, m.failure, m.seconds, m.parameters, m.estimates, m.truth, m.regret, m.utility);
}

template <typename Archive>
void serialize(Archive& a, ReplicateOutcome& r) {
  a(r.uncalibrated, r.uncalibrated_utility, r.methods);
}

struct Buffers {
  Sample fit, test, calibrated;
  GeneratorScratch scratch;
  EstimatorWorkspace workspace;
};

// The stream cell of the run's pooled leaderboard (a cell's own board uses its index; generator
// g's board 2^63 + 1 + g).
constexpr std::uint64_t pooled_leaderboard_scope = std::uint64_t{1} << 63;

bool higher_is_better(Quantity q) {
  return q == Quantity::accuracy;
}

void run_task(const RecalibrationConfig& config, const Generators& generators, std::size_t cell,
              std::size_t rep, Buffers& buf, ReplicateOutcome& out) {
  const RecalibrationCell& cc = config.cells[cell];
  const RecalibrationCell& rs = cc;
  const Generator& gen = *generators[cell];
  Engine fit_engine = make_engine({config.seed, cell, rep, Purpose::fit});
  gen.sample(fit_engine, rs.fit_size, buf.fit, buf.scratch);
  Engine test_engine = make_engine({config.seed, cell, rep, Purpose::test});
  gen.sample(test_engine, rs.test_size, buf.test, buf.scratch);
  const std::size_t E = cc.estimators.size(), M = rs.methods.size();
  out.uncalibrated.resize(E);
  for (std::size_t e = 0; e < E; ++e)
    out.uncalibrated[e] = cc.estimators[e].estimator->estimate(buf.test, buf.workspace);
  const std::unique_ptr<DecisionTask> task = cc.decision ? make_task(cc.decision->spec) : nullptr;
  if (task) out.uncalibrated_utility = realised_utility(*task, buf.test);
  out.methods.assign(M, {});
  std::vector<std::unique_ptr<const CalibrationModel>> models(M);
  for (std::size_t m = 0; m < M; ++m) {
    MethodOutcome& mo = out.methods[m];
    const auto start = std::chrono::steady_clock::now();
    try {
      models[m] = fit(*rs.methods[m].method, buf.fit);
    } catch (const DomainError& error) {
      mo.failure = error.what();
      continue;
    }
    mo.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    mo.fitted = true;
    mo.parameters = models[m]->parameters();
    apply_to_sample(*models[m], buf.test, buf.calibrated);
    mo.estimates.resize(E);
    for (std::size_t e = 0; e < E; ++e)
      mo.estimates[e] = cc.estimators[e].estimator->estimate(buf.calibrated, buf.workspace);
    if (task) mo.utility = realised_utility(*task, buf.calibrated);
  }
  std::vector<const CalibrationModel*> fitted;
  std::vector<std::size_t> index;
  for (std::size_t m = 0; m < M; ++m)
    if (models[m]) {
      fitted.push_back(models[m].get());
      index.push_back(m);
    }
  if (fitted.empty()) return;
  auto truths = composed_truth(gen, fitted, rs.truth_samples);
  for (std::size_t j = 0; j < index.size(); ++j) out.methods[index[j]].truth = std::move(truths[j]);
  if (!task) return;
  // The true regret of acting on q = g(p), on the cell's keyed decision draws: the same for
  // every model and replicate (common random numbers, decisions/decision_value.hpp).
  const auto values = recalibrated_decision_values(gen, *task, fitted, rs.truth_samples);
  for (std::size_t j = 0; j < index.size(); ++j) out.methods[index[j]].regret = values[j].cost;
}

// The non-finite guard (core/finite_guard.hpp) over one composed truth; the canonical error
// NaN with an infinite error is the documented "unknown" (docs/truth.md), as for the
// generator's truth (scenarios/common.cpp).
template <typename Where>
void require_finite_truth(const ComposedTruth& truth, Where&& where) {
  for (std::size_t j = 0; j < composed_quantities.size(); ++j) {
    const auto& v = truth.values[j];
    if (!v || (std::isnan(v->value) && std::isinf(v->error))) continue;
    require_finite(v->value, [&] {
      return where() + ": the true " + std::string(to_string(composed_quantities[j]));
    });
  }
}

// The guard over one task's outcome: every estimate, fitted parameter and composed truth that
// summary.json would show.
void require_finite_outcome(const RecalibrationConfig& config, TaskKey key,
                            const ReplicateOutcome& r) {
  const RecalibrationCell& cc = config.cells[key.cell];
  const auto at = [&] {
    return "cell " + std::to_string(cc.index) + ", replicate " + std::to_string(key.replicate);
  };
  for (std::size_t e = 0; e < r.uncalibrated.size(); ++e)
    require_finite(r.uncalibrated[e], [&] {
      return at() + ": estimator " + cc.estimators[e].label + " (uncalibrated)";
    });
  for (std::size_t m = 0; m < r.methods.size(); ++m) {
    const MethodOutcome& mo = r.methods[m];
    const auto method = [&] { return at() + ": method " + cc.methods[m].label; };
    for (const FittedValue& p : mo.parameters)
      require_finite(p.value, [&] { return method() + ": fitted " + p.name; });
    for (std::size_t e = 0; e < mo.estimates.size(); ++e)
      require_finite(mo.estimates[e],
                     [&] { return method() + ": estimator " + cc.estimators[e].label; });
    require_finite_truth(mo.truth, method);
    if (mo.regret)
      require_finite(mo.regret->value, [&] { return method() + ": the true decision regret"; });
    if (mo.utility)
      require_finite(*mo.utility, [&] { return method() + ": the realised decision utility"; });
  }
  if (r.uncalibrated_utility)
    require_finite(*r.uncalibrated_utility,
                   [&] { return at() + ": the realised decision utility (uncalibrated)"; });
}

// Ranks of values (0 = best), ties broken by position.
std::vector<std::size_t> ranks(const std::vector<double>& values, bool higher_better) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return higher_better ? values[a] > values[b] : values[a] < values[b];
  });
  std::vector<std::size_t> rank(values.size());
  for (std::size_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  return rank;
}

std::optional<std::size_t> quantity_index(Quantity q) {
  for (std::size_t j = 0; j < composed_quantities.size(); ++j)
    if (composed_quantities[j] == q) return j;
  return std::nullopt;
}

// The replicates of a cell as the summary sees them: the cell, its outcomes, and the estimators'
// directions (by their target; without one, lower is better).
struct CellReplicates {
  const RecalibrationCell& cell;
  const std::vector<ReplicateOutcome>& reps;
  std::vector<bool> estimate_higher_better;  // per estimator

  CellReplicates(const RecalibrationCell& c, const std::vector<ReplicateOutcome>& r)
      : cell(c), reps(r), estimate_higher_better(c.estimators.size(), false) {
    for (std::size_t e = 0; e < c.estimators.size(); ++e)
      if (auto t = c.estimators[e].estimator->target())
        estimate_higher_better[e] = higher_is_better(*t);
  }
};

// The uncalibrated model: its composed truth and the estimators' mean on it; with a decision
// task its regret (the same draws in every replicate) and realised utility.
MethodRecord uncalibrated_record(const CellReplicates& cell, const ComposedTruth& uncal_truth,
                                 const std::optional<TruthValue>& uncal_regret) {
  const RecalibrationCell& cc = cell.cell;
  MethodRecord un;
  un.label = uncalibrated_label;
  un.name = uncalibrated_label;
  un.params = Value::Object{};
  un.fits = cc.replicates;
  for (std::size_t j = 0; j < composed_quantities.size(); ++j) {
    if (!uncal_truth.values[j]) continue;
    TruthStat s;
    s.quantity = composed_quantities[j];
    s.mean = uncal_truth.values[j]->value;
    s.error = uncal_truth.values[j]->error;
    un.truth.push_back(s);
  }
  for (std::size_t e = 0; e < cc.estimators.size(); ++e) {
    RunningStats stats;
    for (std::size_t r = 0; r < cc.replicates; ++r) stats.add(cell.reps[r].uncalibrated[e]);
    MethodStat s;
    s.key = cc.estimators[e].label;
    s.mean = stats.mean();
    s.sd = stats.sd();
    s.target = cc.estimators[e].estimator->target();
    un.estimates.push_back(s);
  }
  if (uncal_regret)
    un.regret = DecisionStat{
        .mean = uncal_regret->value, .sd = 0.0, .error = uncal_regret->error, .improvement = {}};
  if (cc.decision) {
    RunningStats stats;
    for (std::size_t r = 0; r < cc.replicates; ++r) stats.add(*cell.reps[r].uncalibrated_utility);
    un.utility =
        DecisionStat{.mean = stats.mean(), .sd = stats.sd(), .error = {}, .improvement = {}};
  }
  return un;
}

// Replicates in which every method was fitted: the rankings use only those.
std::vector<std::size_t> complete_replicates(const CellReplicates& cell) {
  const auto& reps = cell.reps;
  std::vector<std::size_t> complete;
  for (std::size_t r = 0; r < cell.cell.replicates; ++r)
    if (std::all_of(reps[r].methods.begin(), reps[r].methods.end(),
                    [](const MethodOutcome& m) { return m.fitted; }))
      complete.push_back(r);
  return complete;
}

// How the estimators rank the M + 1 models (uncalibrated first) against the truth.
struct Rankings {
  std::vector<RankingRecord> records;
  // Per estimator and model: complete replicates in which its rank by the estimate differs
  // from its rank by the truth.
  std::vector<std::vector<std::size_t>> mismatch;
};

// Per estimator with a target among the composed quantities: ranks of the M + 1 models by the
// estimate and by the truth, per complete replicate.
Rankings rank_models(const CellReplicates& cell, const ComposedTruth& uncal_truth) {
  const RecalibrationCell& cc = cell.cell;
  const auto& reps = cell.reps;
  const std::size_t E = cc.estimators.size(), M = cc.methods.size();
  const std::vector<std::size_t> complete = complete_replicates(cell);
  Rankings out;
  out.mismatch.assign(E, std::vector<std::size_t>(M + 1, 0));
  for (std::size_t e = 0; e < E; ++e) {
    const auto target = cc.estimators[e].estimator->target();
    const auto qi = target ? quantity_index(*target) : std::nullopt;
    if (!qi || !uncal_truth.values[*qi] || complete.empty()) continue;
    RankingRecord rr;
    rr.estimator = cc.estimators[e].label;
    rr.target = *target;
    std::size_t differ = 0, best_differ = 0;
    bool usable = true;
    for (std::size_t r : complete) {
      std::vector<double> est = {reps[r].uncalibrated[e]}, tru = {uncal_truth.values[*qi]->value};
      for (const auto& mo : reps[r].methods) {
        est.push_back(mo.estimates[e]);
        if (!mo.truth.values[*qi]) {
          usable = false;
          break;
        }
        tru.push_back(mo.truth.values[*qi]->value);
      }
      if (!usable) break;
      const auto re = ranks(est, cell.estimate_higher_better[e]),
                 rt = ranks(tru, higher_is_better(*target));
      if (re != rt) ++differ;
      const auto best_e = std::find(re.begin(), re.end(), 0) - re.begin();
      const auto best_t = std::find(rt.begin(), rt.end(), 0) - rt.begin();
      if (best_e != best_t) ++best_differ;
      for (std::size_t m = 0; m <= M; ++m)
        if (re[m] != rt[m]) ++out.mismatch[e][m];
    }
    if (!usable) continue;
    const double n = static_cast<double>(complete.size());
    rr.disagreement = static_cast<double>(differ) / n;
    rr.best_disagreement = static_cast<double>(best_differ) / n;
    rr.replicates = complete.size();
    out.records.push_back(rr);
  }
  return out;
}

// Method m's composed truth over its fitted replicates `ok`, where every one of them has it;
// improvement over the uncalibrated model, positive when better.
void add_method_truth(MethodRecord& mr, const CellReplicates& cell, std::size_t m,
                      const std::vector<std::size_t>& ok, const ComposedTruth& uncal_truth) {
  const auto& reps = cell.reps;
  for (std::size_t j = 0; j < composed_quantities.size(); ++j) {
    const bool everywhere = std::all_of(ok.begin(), ok.end(), [&](std::size_t r) {
      return reps[r].methods[m].truth.values[j].has_value();
    });
    if (!everywhere) continue;
    RunningStats stats;
    double err_sq = 0.0;
    for (std::size_t r : ok) {
      const TruthValue& v = *reps[r].methods[m].truth.values[j];
      stats.add(v.value);
      err_sq += v.error * v.error;
    }
    TruthStat s;
    s.quantity = composed_quantities[j];
    s.mean = stats.mean();
    s.sd = stats.sd();
    s.error = std::sqrt(err_sq / static_cast<double>(ok.size()));
    if (uncal_truth.values[j]) {
      const double d = s.mean - uncal_truth.values[j]->value;
      s.improvement = higher_is_better(composed_quantities[j]) ? d : -d;
    }
    mr.truth.push_back(s);
  }
}

// The estimators on method m's fitted replicates `ok`: mean, sd, the paired improvement over
// the uncalibrated model, and how often they rank the method wrongly.
void add_method_estimates(MethodRecord& mr, const CellReplicates& cell, std::size_t m,
                          const std::vector<std::size_t>& ok, const Rankings& rankings) {
  const RecalibrationCell& cc = cell.cell;
  const auto& reps = cell.reps;
  for (std::size_t e = 0; e < cc.estimators.size(); ++e) {
    RunningStats stats, gain;
    for (std::size_t r : ok) {
      const double v = reps[r].methods[m].estimates[e];
      stats.add(v);
      const double d = v - reps[r].uncalibrated[e];
      gain.add(cell.estimate_higher_better[e] ? d : -d);
    }
    MethodStat s;
    s.key = cc.estimators[e].label;
    s.mean = stats.mean();
    s.sd = stats.sd();
    s.improvement = gain.mean();
    s.target = cc.estimators[e].estimator->target();
    for (const auto& rr : rankings.records)
      if (rr.estimator == s.key)
        s.rank_disagreement =
            static_cast<double>(rankings.mismatch[e][m + 1]) / static_cast<double>(rr.replicates);
    mr.estimates.push_back(s);
  }
}

// With a decision task: method m's true regret and realised utility over its fitted replicates
// `ok`, each with its improvement over the uncalibrated model (the utility's paired per
// replicate).
void add_method_decision(MethodRecord& mr, const CellReplicates& cell, std::size_t m,
                         const std::vector<std::size_t>& ok,
                         const std::optional<TruthValue>& uncal_regret) {
  if (!cell.cell.decision) return;
  RunningStats regret, utility, gain;
  double err_sq = 0.0;
  for (std::size_t r : ok) {
    const MethodOutcome& mo = cell.reps[r].methods[m];
    regret.add(mo.regret->value);
    err_sq += mo.regret->error * mo.regret->error;
    utility.add(*mo.utility);
    gain.add(*mo.utility - *cell.reps[r].uncalibrated_utility);
  }
  mr.regret = DecisionStat{.mean = regret.mean(),
                           .sd = regret.sd(),
                           .error = std::sqrt(err_sq / static_cast<double>(ok.size())),
                           .improvement = {}};
  if (uncal_regret) mr.regret->improvement = uncal_regret->value - regret.mean();
  mr.utility = DecisionStat{
      .mean = utility.mean(), .sd = utility.sd(), .error = {}, .improvement = gain.mean()};
}

// Fitted scalars, by name, where every fitted replicate has them in the same order.
void add_fitted_parameters(MethodRecord& mr, const CellReplicates& cell, std::size_t m,
                           const std::vector<std::size_t>& ok) {
  const auto& reps = cell.reps;
  const auto& first = reps[ok.front()].methods[m].parameters;
  for (std::size_t p = 0; p < first.size(); ++p) {
    RunningStats stats;
    bool same = true;
    for (std::size_t r : ok) {
      const auto& ps = reps[r].methods[m].parameters;
      if (ps.size() != first.size() || ps[p].name != first[p].name) {
        same = false;
        break;
      }
      stats.add(ps[p].value);
    }
    if (!same) continue;
    MethodStat s;
    s.key = first[p].name;
    s.mean = stats.mean();
    s.sd = stats.sd();
    mr.parameters.push_back(s);
  }
}

// Method m over its fitted replicates; the first failure's message when a fit failed.
MethodRecord method_record(const CellReplicates& cell, std::size_t m,
                           const ComposedTruth& uncal_truth,
                           const std::optional<TruthValue>& uncal_regret,
                           const Rankings& rankings) {
  const MethodConfig& mc = cell.cell.methods[m];
  MethodRecord mr;
  mr.label = mc.label;
  mr.name = mc.name;
  mr.params = params_value(mc.params);
  std::vector<std::size_t> ok;
  for (std::size_t r = 0; r < cell.cell.replicates; ++r) {
    const MethodOutcome& mo = cell.reps[r].methods[m];
    if (mo.fitted) {
      ok.push_back(r);
    } else {
      ++mr.failed_fits;
      if (mr.failure.empty()) mr.failure = mo.failure;
    }
  }
  mr.fits = ok.size();
  if (ok.empty()) return mr;
  add_method_truth(mr, cell, m, ok, uncal_truth);
  add_method_estimates(mr, cell, m, ok, rankings);
  add_method_decision(mr, cell, m, ok, uncal_regret);
  add_fitted_parameters(mr, cell, m, ok);
  double seconds = 0.0;
  for (std::size_t r : ok) seconds += cell.reps[r].methods[m].seconds;
  mr.fit_seconds = seconds / static_cast<double>(ok.size());
  return mr;
}

Better better_of(bool higher) {
  return higher ? Better::higher : Better::lower;
}

// The cell's leaderboard cases: per replicate and per key, every model's value, the
// uncalibrated model first. A method whose fit failed in a replicate loses that case
// (LeaderboardTable::failed); the case stays for every other model. A true quantity enters only
// when every model has a finite value of it in every case it fitted (canonical_l1 can be
// unknown); each replicate is its own bootstrap block. With a decision task, the true regret
// and the test set's realised utility are keys too.
LeaderboardRecord leaderboard_cases(const CellReplicates& cell, const ComposedTruth& uncal_truth,
                                    const std::optional<TruthValue>& uncal_regret) {
  const RecalibrationCell& cc = cell.cell;
  const std::size_t M = cc.methods.size();
  LeaderboardRecord out;
  out.table.methods.push_back(uncalibrated_label);
  for (const MethodConfig& m : cc.methods) out.table.methods.push_back(m.label);
  for (std::size_t r = 0; r < cc.replicates; ++r) {
    out.table.clusters.push_back(r);
    out.table.failed.push_back(false);
    for (std::size_t m = 0; m < M; ++m) out.table.failed.push_back(!cell.reps[r].methods[m].fitted);
  }
  if (std::none_of(out.table.failed.begin(), out.table.failed.end(), [](bool f) { return f; }))
    out.table.failed.clear();
  const double lost = std::numeric_limits<double>::quiet_NaN();  // a failed fit's slot
  const auto known = [](const std::optional<TruthValue>& v) {
    return v.has_value() && std::isfinite(v->value);
  };
  for (std::size_t j = 0; j < composed_quantities.size(); ++j) {
    const Quantity q = composed_quantities[j];
    RankingKey key{
        .name = std::string(to_string(q)), .better = better_of(higher_is_better(q)), .values = {}};
    bool usable = known(uncal_truth.values[j]);
    for (std::size_t r = 0; r < cc.replicates && usable; ++r) {
      key.values.push_back(uncal_truth.values[j]->value);
      for (std::size_t m = 0; m < M && usable; ++m) {
        const MethodOutcome& mo = cell.reps[r].methods[m];
        usable = !mo.fitted || known(mo.truth.values[j]);
        key.values.push_back(mo.fitted && usable ? mo.truth.values[j]->value : lost);
      }
    }
    if (!usable) continue;
    out.table.keys.push_back(std::move(key));
    out.estimate.push_back(false);
    out.target.emplace_back();
  }
  if (uncal_regret) {
    RankingKey key{.name = std::string(decision_regret_key), .better = Better::lower, .values = {}};
    for (std::size_t r = 0; r < cc.replicates; ++r) {
      key.values.push_back(uncal_regret->value);
      for (const MethodOutcome& mo : cell.reps[r].methods)
        key.values.push_back(mo.fitted ? mo.regret->value : lost);
    }
    out.table.keys.push_back(std::move(key));
    out.estimate.push_back(false);
    out.target.emplace_back();
  }
  for (std::size_t e = 0; e < cc.estimators.size(); ++e) {
    RankingKey key{.name = cc.estimators[e].label,
                   .better = better_of(cell.estimate_higher_better[e]),
                   .values = {}};
    for (std::size_t r = 0; r < cc.replicates; ++r) {
      key.values.push_back(cell.reps[r].uncalibrated[e]);
      for (const MethodOutcome& mo : cell.reps[r].methods)
        key.values.push_back(mo.fitted ? mo.estimates[e] : lost);
    }
    out.table.keys.push_back(std::move(key));
    out.estimate.push_back(true);
    out.target.push_back(cc.estimators[e].estimator->target());
  }
  if (cc.decision) {
    RankingKey key{
        .name = std::string(realised_utility_key), .better = Better::higher, .values = {}};
    for (std::size_t r = 0; r < cc.replicates; ++r) {
      key.values.push_back(*cell.reps[r].uncalibrated_utility);
      for (const MethodOutcome& mo : cell.reps[r].methods)
        key.values.push_back(mo.fitted ? *mo.utility : lost);
    }
    out.table.keys.push_back(std::move(key));
    out.estimate.push_back(true);
    out.target.emplace_back();
  }
  return out;
}

// The boards of every key, the agreement of every (estimator, true quantity) pair and the
// contrasts of the estimators against each true quantity; with a decision task also the
// agreement of the true regret's board with every other true quantity's.
void rank_leaderboard(LeaderboardRecord& lb, StreamKey stream) {
  std::vector<std::pair<std::size_t, std::size_t>> compare;
  for (std::size_t k = 0; k < lb.estimate.size(); ++k)
    for (std::size_t r = 0; r < lb.estimate.size(); ++r)
      if (lb.estimate[k] && !lb.estimate[r]) compare.emplace_back(k, r);
  const std::size_t contrasted = compare.size();  // estimators against true quantities only
  const auto& keys = lb.table.keys;
  const auto regret = std::find_if(keys.begin(), keys.end(), [](const RankingKey& key) {
    return key.name == decision_regret_key;
  });
  if (regret != keys.end()) {
    const auto reference = static_cast<std::size_t>(regret - keys.begin());
    for (std::size_t k = 0; k < keys.size(); ++k)
      if (!lb.estimate[k] && k != reference) compare.emplace_back(reference, k);
  }
  lb.boards = compute_leaderboards(lb.table, compare, {}, stream, contrasted);
}

// The cases of `cells` (indices into `records`) in one leaderboard, case c of cell i in block
// block_of(i, c), when every one of them ranks the same models: by the keys all of them have (a
// true quantity can be unknown for a method in one cell, canonical_l1 in particular, and leaves
// only that cell's board).
template <typename BlockOf>
std::optional<LeaderboardRecord> pool_cells(const std::vector<RecalibrationCellRecord>& records,
                                            const std::vector<std::size_t>& cells,
                                            BlockOf&& block_of) {
  const LeaderboardRecord& first = *records[cells.front()].leaderboard;
  const auto position = [](const LeaderboardRecord& lb, const RankingKey& key, bool estimate) {
    for (std::size_t k = 0; k < lb.table.keys.size(); ++k)
      if (lb.table.keys[k].name == key.name && lb.table.keys[k].better == key.better &&
          lb.estimate[k] == estimate)
        return std::optional<std::size_t>(k);
    return std::optional<std::size_t>();
  };
  LeaderboardRecord out;
  out.table.methods = first.table.methods;
  std::vector<std::vector<std::size_t>> source(cells.size());  // per cell, each pooled key's index
  for (std::size_t k = 0; k < first.table.keys.size(); ++k) {
    std::vector<std::size_t> at;
    for (std::size_t i : cells)
      if (const auto p = position(*records[i].leaderboard, first.table.keys[k], first.estimate[k]))
        at.push_back(*p);
    if (at.size() < cells.size()) continue;
    for (std::size_t j = 0; j < cells.size(); ++j) source[j].push_back(at[j]);
    out.table.keys.push_back(
        {.name = first.table.keys[k].name, .better = first.table.keys[k].better, .values = {}});
    out.estimate.push_back(first.estimate[k]);
    out.target.push_back(first.target[k]);
  }
  bool failures = false;
  for (std::size_t j = 0; j < cells.size(); ++j) {
    const std::size_t i = cells[j];
    const LeaderboardRecord& lb = *records[i].leaderboard;
    if (lb.table.methods != first.table.methods) return std::nullopt;
    for (std::size_t k = 0; k < out.table.keys.size(); ++k) {
      const auto& from = lb.table.keys[source[j][k]].values;
      out.table.keys[k].values.insert(out.table.keys[k].values.end(), from.begin(), from.end());
    }
    for (std::size_t c = 0; c < lb.table.cases(); ++c) out.table.clusters.push_back(block_of(i, c));
    failures = failures || !lb.table.failed.empty();
  }
  if (failures)
    for (std::size_t i : cells) {
      const LeaderboardTable& t = records[i].leaderboard->table;
      for (std::size_t c = 0; c < t.cases(); ++c)
        for (std::size_t m = 0; m < t.methods.size(); ++m)
          out.table.failed.push_back(t.failed_in(c, m));
    }
  return out;
}

// Each cell's generator as 0 .. G - 1, in order of first appearance.
std::vector<std::size_t> generator_of_cell(const Generators& generators) {
  std::map<std::string, std::size_t> index;
  std::vector<std::size_t> out;
  for (const auto& g : generators)
    out.push_back(index.try_emplace(g->canonical_text(), index.size()).first->second);
  return out;
}

// Every cell's cases in one leaderboard, when there are two or more cells: each cell a bootstrap
// block (CalArena's block bootstrap over datasets), or with block "generator" each generator.
std::optional<LeaderboardRecord> pooled_leaderboard(
    const std::vector<RecalibrationCellRecord>& records, BoardBlock block,
    const std::vector<std::size_t>& generator) {
  if (records.size() < 2) return std::nullopt;
  std::vector<std::size_t> cells(records.size());
  std::iota(cells.begin(), cells.end(), std::size_t{0});
  return pool_cells(records, cells, [&](std::size_t i, std::size_t /*case*/) {
    return block == BoardBlock::generator ? generator[i] : i;
  });
}

// Per generator, the board over its cells' cases, each case its own block (the replicates are
// independent given the model).
std::vector<RecalibrationResults::GeneratorBoard> generator_leaderboards(
    const std::vector<RecalibrationCellRecord>& records,
    const std::vector<std::size_t>& generator) {
  std::vector<RecalibrationResults::GeneratorBoard> out;
  for (std::size_t c = 0; c < records.size(); ++c) {
    if (generator[c] == out.size())
      out.push_back({.generator = generator[c], .cells = {}, .board = {}});
    out[generator[c]].cells.push_back(c);
  }
  std::vector<RecalibrationResults::GeneratorBoard> boards;
  for (auto& g : out) {
    std::size_t next = 0;
    auto pooled = pool_cells(records, g.cells, [&](std::size_t, std::size_t) { return next++; });
    if (!pooled) continue;
    g.board = std::move(*pooled);
    boards.push_back(std::move(g));
  }
  return boards;
}

RecalibrationCellRecord summarise_cell(const RecalibrationConfig& config, std::size_t c,
                                       const Generator& generator,
                                       const GroundTruth& generator_truth,
                                       const ComposedTruth& uncal_truth,
                                       const std::optional<TruthValue>& uncal_regret,
                                       const std::vector<ReplicateOutcome>& reps) {
  const RecalibrationCell& cc = config.cells[c];
  const CellReplicates cell(cc, reps);
  RecalibrationCellRecord rec;
  rec.cell = cell_header(cc, generator, generator_truth);
  rec.fit_size = cc.fit_size;
  rec.test_size = cc.test_size;
  if (cc.decision)
    rec.decision = Value::Object{{"task", cc.decision->task}, {"params", cc.decision->params}};
  Rankings rankings = rank_models(cell, uncal_truth);
  MethodRecord un = uncalibrated_record(cell, uncal_truth, uncal_regret);
  for (const RankingRecord& rr : rankings.records)
    for (std::size_t e = 0; e < cc.estimators.size(); ++e)
      if (cc.estimators[e].label == rr.estimator)
        un.estimates[e].rank_disagreement =
            static_cast<double>(rankings.mismatch[e][0]) / static_cast<double>(rr.replicates);
  rec.methods.push_back(std::move(un));
  for (std::size_t m = 0; m < cc.methods.size(); ++m)
    rec.methods.push_back(method_record(cell, m, uncal_truth, uncal_regret, rankings));
  rec.rankings = std::move(rankings.records);
  rec.leaderboard = leaderboard_cases(cell, uncal_truth, uncal_regret);
  rank_leaderboard(*rec.leaderboard, leaderboard_stream(config.seed, c));
  return rec;
}

// With `reliability`: the true top-label curve of the uncalibrated model and of each method as
// fitted in replicate 0 (its fit sample redrawn from the same stream, so the same model as in the
// run, also when the replicate's outcome came from the journal). A failed fit has no curve.
std::vector<std::vector<CurvePoint>> replicate0_curves(
    const RecalibrationConfig& config, std::size_t cell, const Generator& gen,
    const std::vector<CurvePoint>& uncalibrated) {
  const RecalibrationCell& cc = config.cells[cell];
  Sample fit_sample;
  GeneratorScratch scratch;
  Engine fit_engine = make_engine({config.seed, cell, 0, Purpose::fit});
  gen.sample(fit_engine, cc.fit_size, fit_sample, scratch);
  std::vector<std::vector<CurvePoint>> out{uncalibrated};
  for (const auto& method : cc.methods) {
    std::unique_ptr<const CalibrationModel> model;
    try {
      model = fit(*method.method, fit_sample);
    } catch (const DomainError&) {
      out.emplace_back();
      continue;
    }
    out.push_back(true_top_reliability_curve(gen, model.get(), *config.reliability));
  }
  return out;
}

// One warning per method with failed fits (how many, in which cells, the first message);
// `incomplete` when a method never fitted.
void failure_warnings(const RecalibrationConfig& config, RecalibrationResults& out) {
  const auto cell_list = [&](const std::vector<std::size_t>& cells) {
    std::vector<std::string> names;
    for (std::size_t c : cells) names.push_back(std::to_string(config.cells[c].index));
    return (cells.size() == 1 ? "cell " : "cells ") + join(names, ", ");
  };
  if (out.records.empty()) return;
  // Methods are the same in every cell; records[c].methods[0] is the uncalibrated model.
  for (std::size_t m = 1; m < out.records.front().methods.size(); ++m) {
    std::size_t fits = 0, failed = 0;
    std::vector<std::size_t> cells;
    std::string first;
    for (std::size_t c = 0; c < out.records.size(); ++c) {
      if (m >= out.records[c].methods.size()) continue;
      const MethodRecord& mr = out.records[c].methods[m];
      fits += mr.fits;
      failed += mr.failed_fits;
      if (mr.failed_fits == 0) continue;
      cells.push_back(c);
      if (first.empty()) first = mr.failure;
    }
    if (failed == 0) continue;
    const std::string& label = out.records.front().methods[m].label;
    if (fits == 0) {
      out.incomplete = true;
      out.warnings.push_back("method " + label + " failed in every fit (" + std::to_string(failed) +
                             " of " + std::to_string(failed) +
                             "): it has no results; first failure: " + first);
    } else {
      out.warnings.push_back(
          "method " + label + " failed in " + std::to_string(failed) + " of " +
          std::to_string(fits + failed) + " fits (" + cell_list(cells) +
          "; cells.csv rows of kind \"failure\"; it loses those cases on the leaderboards): first "
          "failure: " +
          first);
    }
  }
}

// With a decision task: per cell the uncalibrated model's true regret, on the same keyed draws
// as the fitted models' (decisions/decision_value.hpp); none without a task.
std::vector<std::optional<TruthValue>> uncalibrated_regrets(const RecalibrationConfig& config,
                                                            const Generators& generators) {
  std::vector<std::optional<TruthValue>> out(config.cells.size());
  for (std::size_t c = 0; c < config.cells.size(); ++c) {
    const RecalibrationCell& cc = config.cells[c];
    if (!cc.decision) continue;
    const auto task = make_task(cc.decision->spec);
    const std::vector<const CalibrationModel*> none = {nullptr};
    out[c] =
        recalibrated_decision_values(*generators[c], *task, none, cc.truth_samples).front().cost;
    require_finite(out[c]->value, [&] {
      return "cell " + std::to_string(cc.index) + " (" + generators[c]->canonical_text() +
             "): the uncalibrated model's true decision regret";
    });
  }
  return out;
}

}  // namespace

RecalibrationResults run_recalibration(const RecalibrationConfig& config,
                                       const RunControl& control) {
  const std::size_t cells = config.cells.size();
  const Generators generators = make_generators(bases(config.cells));
  // The generator's own truth and the uncalibrated model's composed truth, once per distinct
  // generator (and truth sample count).
  TruthCache cache;
  const std::vector<const GroundTruth*> truths =
      cell_truths(bases(config.cells), generators, cache);
  std::map<std::string, ComposedTruth> uncal_cache;
  std::vector<const ComposedTruth*> uncal(cells);
  for (std::size_t c = 0; c < cells; ++c) {
    const std::string key =
        generators[c]->canonical_text() + "|" + std::to_string(config.cells[c].truth_samples);
    auto it = uncal_cache.find(key);
    if (it == uncal_cache.end()) {
      const std::vector<const CalibrationModel*> none = {nullptr};
      it = uncal_cache
               .emplace(
                   key,
                   std::move(
                       composed_truth(*generators[c], none, config.cells[c].truth_samples).front()))
               .first;
    }
    uncal[c] = &it->second;
    require_finite_truth(*uncal[c], [&] {
      return "cell " + std::to_string(config.cells[c].index) + " (" +
             generators[c]->canonical_text() + "): the uncalibrated model";
    });
  }

  const std::vector<std::optional<TruthValue>> uncal_regret =
      uncalibrated_regrets(config, generators);

  RecalibrationResults out;
  out.records.resize(cells);
  // One task per (cell, replicate); a cell is summarised as soon as its last replicate
  // arrives (in order), so only one cell's outcomes are held at a time.
  std::vector<std::size_t> replicates(cells);
  for (std::size_t c = 0; c < cells; ++c) replicates[c] = config.cells[c].replicates;
  std::vector<ReplicateOutcome> outcomes;
  const auto summarise = [&](std::size_t c) {
    out.records[c] =
        summarise_cell(config, c, *generators[c], *truths[c], *uncal[c], uncal_regret[c], outcomes);
    outcomes.clear();
  };
  std::size_t next_cell = 0;  // the first cell not summarised
  stream_tasks<ReplicateOutcome, Buffers>(
      TaskGrid(replicates),
      [&](TaskKey key, Buffers& buffers) {
        ReplicateOutcome outcome;
        run_task(config, generators, key.cell, key.replicate, buffers, outcome);
        return outcome;
      },
      [&](TaskKey key, ReplicateOutcome&& outcome) {
        for (; next_cell < key.cell; ++next_cell) summarise(next_cell);  // cells without tasks
        require_finite_outcome(config, key, outcome);
        outcomes.push_back(std::move(outcome));
        if (outcomes.size() == replicates[key.cell]) summarise(next_cell++);
      },
      control);
  if (control.shard) return {};  // a shard's results are its journal
  for (; next_cell < cells; ++next_cell) summarise(next_cell);
  failure_warnings(config, out);
  const std::vector<std::size_t> generator = generator_of_cell(generators);
  out.pooled_leaderboard = pooled_leaderboard(out.records, config.boards.block, generator);
  if (out.pooled_leaderboard)
    rank_leaderboard(*out.pooled_leaderboard,
                     leaderboard_stream(config.seed, pooled_leaderboard_scope));
  if (config.boards.generator_boards) {
    out.generator_leaderboards = generator_leaderboards(out.records, generator);
    for (auto& g : out.generator_leaderboards)
      rank_leaderboard(g.board,
                       leaderboard_stream(config.seed, pooled_leaderboard_scope + 1 + g.generator));
  }
  if (config.reliability) {
    std::map<std::string, std::vector<CurvePoint>> uncalibrated;  // per distinct generator
    for (std::size_t c = 0; c < cells; ++c) {
      auto [it, added] = uncalibrated.try_emplace(generators[c]->canonical_text());
      if (added)
        it->second = true_top_reliability_curve(*generators[c], nullptr, *config.reliability);
      out.records[c].curves = replicate0_curves(config, c, *generators[c], it->second);
    }
  }
  out.reliability = config.reliability;

  out.meta = result_meta(config);
  out.cells = cells;
  out.sweep_keys = config.sweep_keys;
  out.timings_in_summary = config.timings;
  // Fit times are volatile: in run.json always, in summary.json only on request.
  Value::Object times;
  for (std::size_t c = 0; c < cells; ++c) {
    Value::Object cell;
    for (const auto& m : out.records[c].methods)
      cell.emplace_back(m.label, optional_value(m.fit_seconds));
    times.emplace_back(std::to_string(config.cells[c].index), std::move(cell));
  }
  out.volatile_blocks.emplace_back("fit_seconds", std::move(times));
  return out;
}

}  // namespace calbench
