#pragma once
// The part of a result record every scenario's cell has: its index and swept values, its
// replicates, the generator (canonical text), the solved target when the generator was given by
// one, and the generator's ground truth. Scenario records (scenarios/*/record.hpp) contain it.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/quantity.hpp"
#include "core/value.hpp"
#include "report/columns.hpp"
#include "report/reporter.hpp"
#include "truth/ground_truth.hpp"
#include "truth/target_solver.hpp"

namespace calbench {

struct TruthRecord {
  Quantity quantity = Quantity::accuracy;
  TruthValue value;
};

// A target request and what the solver made of it.
struct TargetRecord {
  DirichletTarget target;
  double alpha = 0.0, parameter = 0.0;  // solved: symmetric alpha and T or gamma
  TruthValue accuracy, ece_top_l1;      // achieved
};

struct CellHeader {
  std::size_t index = 0;
  std::vector<SweptValue> swept;
  std::size_t replicates = 0;
  std::string generator;  // canonical parameter text
  std::optional<TargetRecord> target;
  std::vector<TruthRecord> truth;  // every quantity, in all_quantities order

  double truth_value(Quantity q) const;
  const TruthValue* find_truth(Quantity q) const;
};

std::vector<TruthRecord> truth_records(const GroundTruth& truth);

// {"accuracy", "ece_top_l1", "direction", "map", "solved": {...}, "achieved": {...}}: how
// summary.json and config.resolved.json report a solved target.
Value target_value(const TargetRecord& target);

// summary.json's entry for a cell up to its truth: index, parameters, `sizes` (the scenario's
// sample sizes, e.g. {"sample_size": n}), replicates, generator, target (when any), truth.
Value::Object cell_summary_head(const CellHeader& cell, Value::Object sizes);

// "cell 3:  alpha = 0.5  sample_size = 100": how the terminal heads a cell (no newline).
std::string caption_head(const CellHeader& cell);

// The header every scenario's report starts from: the meta block and summary.json's
// "sweep_keys" block.
ReportHeader report_header(const ResultMeta& meta, const std::vector<std::string>& sweep_keys);

// The leading columns of every cells.csv: `cell`, the sweep keys that are not one of
// `own_columns` (columns the scenario writes anyway, such as sample_size), and with `targets`
// the solved parameters solved_alpha, solved_temperature, solved_gamma. Pass
// any_target(cells) as `targets`, so that results without targets keep their shape.
std::vector<std::string> key_columns(const std::vector<std::string>& sweep_keys, bool targets,
                                     const std::vector<std::string>& own_columns);
std::vector<Value> key_fields(const CellHeader& cell, bool targets,
                              const std::vector<std::string>& own_columns);

// key_columns as the CSV columns of a row type R whose cell is `cell(r)`.
template <typename R, typename Cell>
std::vector<ColumnSpec<R>> key_column_specs(const std::vector<std::string>& sweep_keys,
                                            bool targets, const std::vector<std::string>& own,
                                            Cell cell) {
  std::vector<ColumnSpec<R>> out;
  const std::vector<std::string> names = key_columns(sweep_keys, targets, own);
  for (std::size_t i = 0; i < names.size(); ++i)
    out.push_back(
        {names[i], [=](const R& r) { return key_fields(cell(r), targets, own)[i]; }, show::csv});
  return out;
}

template <typename Cells>
bool any_target(const Cells& cells) {
  for (const auto& c : cells)
    if (c.cell.target) return true;
  return false;
}

// Optional numbers as values: null when absent.
inline Value optional_value(const std::optional<double>& v) {
  return v ? Value(*v) : Value();
}
inline Value optional_value(const std::optional<std::size_t>& v) {
  return v ? count_value(*v) : Value();
}

}  // namespace calbench
