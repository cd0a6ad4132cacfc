#pragma once
// What every scenario does alike: the run setup (targets solved, one generator per cell, the
// generators' ground truth once per distinct generator), the common part of its records and of
// `calbench validate`'s text.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/format.hpp"
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
// A cell's sizes, first in its row: {{"sample_size", 1000}}.
using CellSizes = std::vector<std::pair<std::string, std::size_t>>;
// A cell's row: its sizes, replicates, the swept values that are not sizes, and a target as
// requested (solved when the experiment runs).
std::vector<std::string> describe_cell(const CellBase& cell, const CellSizes& sizes);

// The labels of a cell's components (estimators, methods), joined by ", ".
template <typename Components>
std::string joined_labels(const Components& components) {
  std::vector<std::string> out;
  for (const auto& c : components) out.push_back(c.label);
  return join(out, ", ");
}

// `calbench validate` of a scenario: `heading` ("estimators:") with the first cell's components
// (their labels), and a row per cell; a cell whose components differ (labels built from swept
// parameters) ends its row with its own.
template <typename Config, typename Components, typename Sizes>
std::string describe_cells(const Config& config, const std::string& heading,
                           Components components_of, Sizes sizes_of) {
  const std::string first = config.cells.empty() ? "" : components_of(config.cells.front());
  std::vector<std::vector<std::string>> rows;
  for (const auto& cell : config.cells) {
    auto row = describe_cell(cell, sizes_of(cell));
    if (const std::string own = components_of(cell); own != first)
      row.push_back(heading + " " + own);
    rows.push_back(std::move(row));
  }
  return describe_experiment(config, {heading, first}, rows);
}

}  // namespace calbench
