#include "scenarios/common.hpp"

#include <algorithm>
#include <cmath>
#include <new>
#include <stdexcept>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "report/text_report.hpp"
#include "report/value_format.hpp"

namespace calbench {
namespace {

// What config.resolved.json reports for a cell whose generator was given by a target:
// {"accuracy", "ece_top_l1", "direction", "map", "solved": {"alpha", "temperature"|"gamma"},
//  "achieved": {"accuracy": {value, method, error}, "ece_top_l1": {...}}}.
Json target_json(const DirichletTarget& target, const TargetSolution& solution) {
  auto truth = [](const TruthValue& v) {
    return Json{
        {"value", v.value}, {"method", std::string(to_string(v.method))}, {"error", v.error}};
  };
  Json solved = Json::object();
  solved["alpha"] = solution.alpha;
  solved[target.map == TargetMap::temperature ? "temperature" : "gamma"] = solution.parameter;
  return Json{
      {"accuracy", target.accuracy},
      {"ece_top_l1", target.ece_top_l1},
      {"direction", std::string(to_string(target.direction))},
      {"map", std::string(to_string(target.map))},
      {"solved", solved},
      {"achieved",
       {{"accuracy", truth(solution.accuracy)}, {"ece_top_l1", truth(solution.ece_top_l1)}}}};
}

}  // namespace

void solve_targets(ExperimentBase& config, const std::vector<CellBase*>& cells,
                   const TargetProgress& progress) {
  TargetSolver solver;
  Problems problems;
  Json targets = Json::array();
  const auto unsolved = [](const CellBase* cell) { return cell->target && !cell->solution; };
  const std::size_t total =
      static_cast<std::size_t>(std::count_if(cells.begin(), cells.end(), unsolved));
  std::size_t done = 0;
  if (progress && total > 0) progress(0, total);
  for (CellBase* cell : cells) {
    if (!unsolved(cell)) continue;
    try {
      TargetSolution solution = solver.solve(*cell->target, cell->truth);
      cell->generator = solution.spec;
      cell->solution = std::move(solution);
      if (progress) progress(++done, total);
    } catch (const TargetError& error) {
      const std::string at = pointer_join("/generator/target", error.field());
      const std::string where = cell_pointer(config, *cell, at);
      problems.add_unique({where, std::string(error.what()) +
                                      (where == at && !config.sweep_keys.empty()
                                           ? " (in sweep cell " + std::to_string(cell->index) + ")"
                                           : std::string())});
    }
  }
  if (!problems.empty()) throw ConfigError(problems.render(config.source));
  // Solved targets, one entry per cell that has one (after the config's own keys).
  for (const CellBase* cell : cells)
    if (cell->target && cell->solution) {
      Json entry = {{"cell", cell->index}};
      entry.update(target_json(*cell->target, *cell->solution));
      targets.push_back(std::move(entry));
    }
  if (!targets.empty()) config.resolved["solved_targets"] = std::move(targets);
}

Generators make_generators(const std::vector<const CellBase*>& cells) {
  Generators out;
  for (const CellBase* cell : cells) {
    if (cell->target && !cell->solution)
      throw std::logic_error("cell " + std::to_string(cell->index) +
                             ": its target is not solved (solve_targets comes first)");
    out.push_back(std::make_unique<Generator>(cell->generator));
  }
  return out;
}

void check_estimator_classes(ObjectReader& top, const ParsedGenerator& generator,
                             const std::vector<EstimatorConfig>& estimators) {
  const std::size_t classes = spec_classes(generator.spec);
  for (std::size_t i = 0; i < estimators.size(); ++i)
    if (const auto problem = estimators[i].estimator->classes_problem(classes))
      top.problems().add(pointer_join(top.pointer_to("estimators"), i), *problem);
}

std::vector<const GroundTruth*> cell_truths(const std::vector<const CellBase*>& cells,
                                            const Generators& generators, TruthCache& cache) {
  std::vector<const GroundTruth*> out(cells.size());
  for (std::size_t c = 0; c < out.size(); ++c) {
    const auto& solution = cells[c]->solution;
    // Built only for a message: canonical_text is not free and most cells do not fail.
    const auto where = [&] {
      return "cell " + std::to_string(cells[c]->index) + " (" + generators[c]->canonical_text() +
             ")";
    };
    try {
      out[c] = solution && solution->truth ? solution->truth.get()
                                           : &cache.get(*generators[c], cells[c]->truth);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const Interrupted&) {
      throw;  // a stop request (core/stop_request.hpp), not a numerical failure
    } catch (const std::exception& e) {
      // Boost.Math's overflow, domain and evaluation errors: the parameters are outside what
      // the truth engine evaluates (docs/config.md, "Parameter bounds").
      throw NumericalError(where() + ": the ground truth could not be computed: " + e.what());
    }
    // NaN with an infinite error is the documented "unknown" (canonical errors of a map with
    // a continuum of preimages, docs/truth.md); anything else non-finite is an error.
    for (Quantity q : all_quantities) {
      const TruthValue& v = (*out[c])[q];
      if (!std::isfinite(v.value) && !(std::isnan(v.value) && std::isinf(v.error)))
        throw NumericalError(where() + ": the ground truth " + std::string(to_string(q)) + " is " +
                             format_double(v.value) +
                             ", not a finite number; the generator's parameters are outside "
                             "what the truth engine computes");
    }
  }
  return out;
}

ResultMeta result_meta(const ExperimentBase& config) {
  return {config.name, config.scenario, config.seed, format_hash(hash64(config.resolved.dump()))};
}

CellHeader cell_header(const CellBase& cell, const Generator& generator, const GroundTruth& truth) {
  CellHeader out;
  out.index = cell.index;
  out.swept = cell.swept;
  out.replicates = cell.replicates;
  out.generator = generator.canonical_text();
  if (cell.target && cell.solution)
    out.target = TargetRecord{*cell.target, cell.solution->alpha, cell.solution->parameter,
                              cell.solution->accuracy, cell.solution->ece_top_l1};
  out.truth = truth_records(truth);
  return out;
}

Value params_value(const std::vector<NamedParam>& params) {
  Value::Object out;
  for (const auto& p : params) out.emplace_back(p.key, p.value);
  return out;
}

std::string describe_experiment(const ExperimentBase& config,
                                const std::vector<std::string>& components,
                                const std::vector<std::vector<std::string>>& cell_rows) {
  return aligned_text({{"experiment:", config.name},
                       {"scenario:", config.scenario},
                       {"seed:", std::to_string(config.seed)},
                       {"cells:", std::to_string(cell_rows.size())},
                       components,
                       {"output:", config.output.directory.string()}},
                      "") +
         "\n" + aligned_text(cell_rows, "  ");
}

std::vector<std::string> describe_cell(const CellBase& cell, const CellSizes& sizes) {
  std::vector<std::string> row = {"cell " + std::to_string(cell.index)};
  for (const auto& [key, size] : sizes) row.push_back(key + "=" + std::to_string(size));
  row.push_back("replicates=" + std::to_string(cell.replicates));
  const auto is_size = [&](const std::string& key) {
    return std::any_of(sizes.begin(), sizes.end(), [&](const auto& s) { return s.first == key; });
  };
  for (const auto& s : cell.swept)
    if (s.key != "replicates" && !is_size(s.key)) row.push_back(s.key + "=" + to_text(s.value));
  if (cell.target)
    row.push_back("target: accuracy=" + format_double(cell.target->accuracy) +
                  " ece_top_l1=" + format_double(cell.target->ece_top_l1) + " " +
                  std::string(to_string(cell.target->direction)) + " " +
                  std::string(to_string(cell.target->map)) + " (solved when the experiment runs)");
  return row;
}

}  // namespace calbench
