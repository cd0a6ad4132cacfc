#include <algorithm>
#include <sstream>

#include "core/format.hpp"
#include "report/columns.hpp"
#include "report/leaderboard_record.hpp"
#include "report/reliability_record.hpp"
#include "report/value_format.hpp"
#include "scenarios/common.hpp"
#include "scenarios/recalibration/run.hpp"

namespace calbench {
namespace {

const std::vector<std::string> own_columns = {"fit_size", "test_size", "replicates"};
using Cell = RecalibrationCellRecord;

// summary.json's entry of a quantity over replicates (a method's "truth", its "decision"'s regret
// and realised utility): mean, sd, the Monte Carlo error when known, the improvement.
template <typename Stat>
const std::vector<ColumnSpec<Stat>> stat_columns = {
    {"mean", field(&Stat::mean), show::json},
    {"sd", field(&Stat::sd), show::json},
    {"error", field(&Stat::error), show::json_set},
    {"improvement", field(&Stat::improvement), show::json}};
// summary.json's entries of a method's "estimates".
const std::vector<ColumnSpec<MethodStat>> method_stat_columns = {
    {"mean", field(&MethodStat::mean), show::json},
    {"sd", field(&MethodStat::sd), show::json},
    {"target", field(&MethodStat::target), show::json_set},
    {"improvement", field(&MethodStat::improvement), show::json},
    {"rank_disagreement", field(&MethodStat::rank_disagreement), show::json_set}};

template <typename Stat>
Value stats_object(const std::vector<Stat>& stats, const std::vector<ColumnSpec<Stat>>& columns,
                   std::string (*key)(const Stat&)) {
  Value::Object out;
  for (const auto& s : stats) out.emplace_back(key(s), TableView(columns).object(s));
  return out;
}
std::string truth_key(const TruthStat& s) {
  return std::string(to_string(s.quantity));
}
std::string stat_key(const MethodStat& s) {
  return s.key;
}

// summary.json's "decision" of a method: its true regret and realised utility.
Value decision_object(const MethodRecord& m) {
  const TableView view(stat_columns<DecisionStat>);
  const auto stat = [&](const std::optional<DecisionStat>& s) {
    return s ? view.object(*s) : Value();
  };
  return Value::Object{{std::string(decision_regret_key), stat(m.regret)},
                       {std::string(realised_utility_key), stat(m.utility)}};
}

// A method in a cell: an entry of summary.json's "methods" and a row of the terminal's table
// (its mean truth per quantity, those of each cell's first method, and with a decision task its
// mean true regret).
std::vector<ColumnSpec<MethodRecord>> method_columns(const std::vector<Quantity>& quantities,
                                                     bool decision, bool timings) {
  using M = MethodRecord;
  std::vector<ColumnSpec<M>> out = {
      {"method", field(&M::label), show::terminal, {.width = 30, .align = Align::left}},
      {"name", field(&M::name), show::json},
      {"params", field(&M::params), show::json},
      {"truth",
       [](const M& m) { return stats_object(m.truth, stat_columns<TruthStat>, truth_key); },
       show::json},
      {"estimates",
       [](const M& m) { return stats_object(m.estimates, method_stat_columns, stat_key); },
       show::json},
      {"parameters",
       [](const M& m) {
         Value::Object values;
         for (const auto& p : m.parameters) values.emplace_back(p.key, p.mean);
         return Value(std::move(values));
       },
       show::json}};
  for (const Quantity q : quantities)
    out.push_back({std::string(to_string(q)),
                   [q](const M& m) {
                     const auto it =
                         std::find_if(m.truth.begin(), m.truth.end(),
                                      [&](const TruthStat& s) { return s.quantity == q; });
                     return it == m.truth.end() ? Value() : Value(it->mean);
                   },
                   show::terminal,
                   {.width = 16}});
  if (decision)
    append<M>(out, std::vector<ColumnSpec<M>>{
                       {std::string(decision_regret_key),
                        [](const M& m) { return m.regret ? Value(m.regret->mean) : Value(); },
                        show::terminal,
                        {.width = 16}},
                       {"decision", decision_object, show::json}});
  append<M>(out, std::vector<ColumnSpec<M>>{
                     {"fits", field(&M::fits), show::json},
                     {"failed_fits",
                      field(&M::failed_fits),
                      show::json | show::terminal,
                      {.heading = "failed", .align = Align::left}},
                     {"failure",
                      [](const M& m) { return m.failure.empty() ? Value() : Value(m.failure); },
                      show::json}});
  if (timings) out.push_back({"fit_seconds", field(&M::fit_seconds), show::json});
  return out;
}

// A row of cells.csv: a method's truth quantity, estimate or fitted parameter (column `kind`).
struct QuantityRow {
  const Cell& c;
  const MethodRecord& m;
  const char* kind;
  std::string quantity;
  std::optional<Quantity> target;
  std::optional<double> mean, sd;  // none on a failure row
  std::optional<double> error, improvement, rank;
};
const std::vector<ColumnSpec<QuantityRow>> quantity_columns = {
    {"fit_size", [](const QuantityRow& r) { return count_value(r.c.fit_size); }, show::csv},
    {"test_size", [](const QuantityRow& r) { return count_value(r.c.test_size); }, show::csv},
    {"replicates", [](const QuantityRow& r) { return count_value(r.c.cell.replicates); },
     show::csv},
    {"method", [](const QuantityRow& r) { return Value(r.m.label); }, show::csv},
    {"name", [](const QuantityRow& r) { return Value(r.m.name); }, show::csv},
    {"kind", [](const QuantityRow& r) { return Value(r.kind); }, show::csv},
    {"quantity", field(&QuantityRow::quantity), show::csv},
    {"target", field(&QuantityRow::target), show::csv},
    {"mean", field(&QuantityRow::mean), show::csv},
    {"sd", field(&QuantityRow::sd), show::csv},
    {"truth_error", field(&QuantityRow::error), show::csv},
    {"improvement", field(&QuantityRow::improvement), show::csv},
    {"rank_disagreement", field(&QuantityRow::rank), show::csv},
    {"fits", [](const QuantityRow& r) { return count_value(r.m.fits); }, show::csv},
    {"failed_fits", [](const QuantityRow& r) { return count_value(r.m.failed_fits); }, show::csv}};

std::vector<QuantityRow> quantity_rows(const Cell& c, const MethodRecord& m) {
  std::vector<QuantityRow> out;
  // A method whose fits failed, in some replicates or all: a row of kind "failure" whose
  // quantity is the first failure's message, so that a method with no result is visible.
  if (m.failed_fits > 0)
    out.push_back({c, m, "failure", m.failure, std::nullopt, std::nullopt, std::nullopt,
                   std::nullopt, std::nullopt, std::nullopt});
  for (const auto& s : m.truth)
    out.push_back({c, m, "truth", std::string(to_string(s.quantity)), std::nullopt, s.mean, s.sd,
                   s.error, s.improvement, std::nullopt});
  for (const auto& s : m.estimates)
    out.push_back({c, m, "estimate", s.key, s.target, s.mean, s.sd, std::nullopt, s.improvement,
                   s.rank_disagreement});
  for (const auto& s : m.parameters)
    out.push_back({c, m, "parameter", s.key, std::nullopt, s.mean, s.sd, std::nullopt,
                   s.improvement, s.rank_disagreement});
  // With a decision task: the true regret (a truth) and the realised utility (an estimate).
  if (m.regret)
    out.push_back({c, m, "truth", std::string(decision_regret_key), std::nullopt, m.regret->mean,
                   m.regret->sd, m.regret->error, m.regret->improvement, std::nullopt});
  if (m.utility)
    out.push_back({c, m, "estimate", std::string(realised_utility_key), std::nullopt,
                   m.utility->mean, m.utility->sd, std::nullopt, m.utility->improvement,
                   std::nullopt});
  return out;
}

Value rankings_summary(const RecalibrationCellRecord& c) {
  Value::Object out;
  for (const auto& r : c.rankings)
    out.emplace_back(r.estimator, Value::Object{{"target", std::string(to_string(r.target))},
                                                {"disagreement", r.disagreement},
                                                {"best_disagreement", r.best_disagreement},
                                                {"replicates", count_value(r.replicates)}});
  return out;
}

// The terminal's summary: the methods' mean truth per quantity (those of each cell's first
// method), one row per method.
std::vector<Quantity> display_quantities(const RecalibrationResults& r) {
  std::vector<Quantity> out;
  for (const auto& c : r.records)
    for (const auto& t : c.methods.front().truth)
      if (std::find(out.begin(), out.end(), t.quantity) == out.end()) out.push_back(t.quantity);
  return out;
}

std::string caption(const RecalibrationCellRecord& c) {
  std::ostringstream out;
  out << caption_head(c.cell) << "  (";
  const auto swept = [&](const char* key) {
    return std::any_of(c.cell.swept.begin(), c.cell.swept.end(),
                       [&](const SweptValue& s) { return s.key == key; });
  };
  if (!swept("fit_size")) out << "fit_size = " << c.fit_size << ", ";
  if (!swept("test_size")) out << "test_size = " << c.test_size << ", ";
  out << c.cell.replicates << " replicates; true values, mean over replicates)\n";
  return out.str();
}

// A cell's leaderboard key columns: the cell's keys, fit_size, test_size.
std::vector<Value> board_key(const Cell& c, bool targets) {
  std::vector<Value> key = key_fields(c.cell, targets, own_columns);
  key.insert(key.end(), {count_value(c.fit_size), count_value(c.test_size)});
  return key;
}

// The board key columns that every one of `cells` shares; empty where they differ.
std::vector<Value> generator_key(const RecalibrationResults& r,
                                 const std::vector<std::size_t>& cells, bool targets) {
  std::vector<Value> out = board_key(r.records[cells.front()], targets);
  for (std::size_t c : cells) {
    const std::vector<Value> other = board_key(r.records[c], targets);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!(other[i] == out[i])) out[i] = Value();
  }
  return out;
}

}  // namespace

void report_recalibration(const RecalibrationResults& r, Reporter& reporter) {
  const bool targets = any_target(r.records);
  auto cell_table = key_column_specs<QuantityRow>(
      r.sweep_keys, targets, own_columns, [](const QuantityRow& x) -> auto& { return x.c.cell; });
  append<QuantityRow>(cell_table, quantity_columns);
  const TableView cells(cell_table);
  const bool decision = std::any_of(r.records.begin(), r.records.end(), [](const Cell& c) {
    return !c.methods.empty() && c.methods.front().regret.has_value();
  });
  const auto by_method = method_columns(display_quantities(r), decision, r.timings_in_summary);
  const TableView methods(by_method);
  std::vector<std::string> board_keys = key_columns(r.sweep_keys, targets, own_columns);
  board_keys.insert(board_keys.end(), {"fit_size", "test_size"});
  const LeaderboardTables boards(board_keys);

  ReportHeader header = report_header(r.meta, r.sweep_keys);
  header.tables.push_back(cells.table("cells", show::csv));
  if (r.reliability) {
    // The true top-label curve of each model as fitted in replicate 0 (docs/recalibration.md).
    header.blocks.emplace_back("reliability",
                               Value::Object{{"points", count_value(r.reliability->points)},
                                             {"samples", r.reliability->samples}});
    std::vector<std::string> keys = key_columns(r.sweep_keys, targets, own_columns);
    keys.insert(keys.end(), {"fit_size", "method"});
    header.tables.push_back(curve_table(keys));
  }
  for (Table& table : boards.tables()) header.tables.push_back(std::move(table));
  header.tables.push_back(methods.table("methods", show::terminal, "  "));
  reporter.begin(header);
  for (const auto& c : r.records) {
    Record record;
    Value::Object summary = cell_summary_head(
        c.cell, {{"fit_size", count_value(c.fit_size)}, {"test_size", count_value(c.test_size)}});
    if (c.decision) summary.emplace_back("decision", *c.decision);
    Value::Object entries;
    for (const auto& m : c.methods) {
      entries.emplace_back(m.label, methods.object(m));
      for (const auto& row : quantity_rows(c, m))
        record.rows.push_back(cells.row("cells", row, show::csv));
    }
    summary.emplace_back("methods", std::move(entries));
    summary.emplace_back("rankings", rankings_summary(c));
    record.document = std::move(summary);
    if (r.reliability)
      for (std::size_t m = 0; m < c.methods.size() && m < c.curves.size(); ++m) {
        if (c.curves[m].empty()) continue;  // the fit failed in replicate 0
        std::vector<Value> key = key_fields(c.cell, targets, own_columns);
        key.insert(key.end(), {count_value(c.fit_size), c.methods[m].label});
        append_curve_rows(key, {CurveRecord{.points = c.curves[m]}}, record.rows);
      }
    if (c.leaderboard) boards.rows({board_key(c, targets), "cell", *c.leaderboard}, record.rows);
    for (const auto& m : c.methods)
      record.rows.push_back(methods.row("methods", m, show::terminal));
    record.caption = caption(c);
    reporter.record(record);
  }
  if (r.pooled_leaderboard) {
    // The run's board over every cell: no cell, so its key columns are empty; no document.
    Record record;
    const std::vector<Value> key(board_keys.size());
    boards.rows({key, "all", *r.pooled_leaderboard}, record.rows);
    reporter.record(record);
  }
  for (const auto& g : r.generator_leaderboards) {
    // A generator's board over its cells: the key columns its cells share, the others empty.
    Record record;
    const std::vector<Value> key = generator_key(r, g.cells, targets);
    boards.rows({key, "generator:" + std::to_string(g.generator), g.board}, record.rows);
    reporter.record(record);
  }
  reporter.end();
}

std::string describe_recalibration(const RecalibrationConfig& config) {
  const auto components = [](const RecalibrationCell& cell) {
    return joined_labels(cell.estimators) + "; methods: " + joined_labels(cell.methods) +
           (cell.decision ? "; decision task: " + cell.decision->task : "");
  };
  return describe_cells(config, "estimators:", components, [](const RecalibrationCell& cell) {
    return CellSizes{{"fit_size", cell.fit_size}, {"test_size", cell.test_size}};
  });
}

}  // namespace calbench
