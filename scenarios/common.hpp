#pragma once
// What every scenario does alike: the run setup (targets solved, one generator per cell, the
// generators' ground truth once per distinct generator), the common part of its records and of
// `calbench validate`'s text.
#include <memory>
#include <string>
#include <vector>

#include "estimators/estimators_json.hpp"
#include "experiment/experiment.hpp"
#include "generators/generator.hpp"
#include "report/cell_record.hpp"
#include "report/reporter.hpp"
#include "truth/ground_truth.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {

using Generators = std::vector<std::unique_ptr<Generator>>;

// The cells' common parts, for the functions below.
template <typename Cells>
std::vector<const CellBase*> bases(const Cells& cells) {
  std::vector<const CellBase*> out;
  for (const auto& c : cells) out.push_back(&c);
  return out;
}

// Solves every cell's target into its generator (the step after parsing: `calbench validate`
// does not take it) and lists the solutions in the resolved config ("solved_targets"). A
// target that cannot be reached is a ConfigError at the target key at fault (or at its value
// in `sweep`). Throws std::logic_error for a run on a cell whose target is unsolved.
// `progress` (when set) hears (targets solved, targets to solve) after each one: a target at
// K = 100 takes seconds, a grid of them minutes.
void solve_targets(ExperimentBase& config, const std::vector<CellBase*>& cells,
                   const TargetProgress& progress = {});
template <typename Config>
void solve_targets(Config& config, const TargetProgress& progress = {}) {
  std::vector<CellBase*> cells;
  for (auto& c : config.cells) cells.push_back(&c);
  solve_targets(static_cast<ExperimentBase&>(config), cells, progress);
}

Generators make_generators(const std::vector<const CellBase*>& cells);

// Each estimator that cannot take the generator's number of classes (Estimator::classes_problem)
// as a problem at /estimators/I of the cell's document: the run would stop at its first
// estimate, and `validate` would pass it.
void check_estimator_classes(ObjectReader& top, const ParsedGenerator& generator,
                             const std::vector<EstimatorConfig>& estimators);

// The truth of each cell's generator: a solved target's (the solver computed it under the
// same settings), else the cache's, computed once per distinct generator and settings. The
// pointers live as long as the cells' solutions and `cache`.
std::vector<const GroundTruth*> cell_truths(const std::vector<const CellBase*>& cells,
                                            const Generators& generators, TruthCache& cache);

ResultMeta result_meta(const ExperimentBase& config);

CellHeader cell_header(const CellBase& cell, const Generator& generator, const GroundTruth& truth);

// The typed parameters of a component as a record value.
Value params_value(const std::vector<NamedParam>& params);

// `calbench validate`: the experiment's lines (`components` is e.g. {"estimators:", labels})
// and one row per cell.
std::string describe_experiment(const ExperimentBase& config,
                                const std::vector<std::string>& components,
                                const std::vector<std::vector<std::string>>& cell_rows);
// The common part of a cell's row after its sizes: replicates, the swept values not in
// `sizes`, and a target as requested (solved when the experiment runs).
std::vector<std::string> describe_cell(const CellBase& cell, std::vector<std::string> sizes,
                                       const std::vector<std::string>& size_keys);

}  // namespace calbench
