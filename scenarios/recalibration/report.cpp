#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/format.hpp"
#include "report/columns.hpp"
#include "report/reliability_record.hpp"
#include "report/value_format.hpp"
#include "scenarios/common.hpp"
#include "scenarios/recalibration/run.hpp"

namespace calbench {
namespace {

const std::vector<std::string> own_columns = {"fit_size", "test_size", "replicates"};
using Cell = RecalibrationCellRecord;

Value target_value(const std::optional<Quantity>& target) {
  return target ? Value(std::string(to_string(*target))) : Value();
}

// summary.json's entries of a method's "truth" and "estimates".
const std::vector<ColumnSpec<TruthStat>> truth_stat_columns = {
    {"mean", field(&TruthStat::mean), show::json},
    {"sd", field(&TruthStat::sd), show::json},
    {"error", field(&TruthStat::error), show::json_set},
    {"improvement", field(&TruthStat::improvement), show::json}};
const std::vector<ColumnSpec<MethodStat>> method_stat_columns = {
    {"mean", field(&MethodStat::mean), show::json},
    {"sd", field(&MethodStat::sd), show::json},
    {"target", [](const MethodStat& s) { return target_value(s.target); }, show::json_set},
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
const std::vector<ColumnSpec<DecisionStat>> decision_stat_columns = {
    {"mean", field(&DecisionStat::mean), show::json},
    {"sd", field(&DecisionStat::sd), show::json},
    {"error", field(&DecisionStat::error), show::json_set},
    {"improvement", field(&DecisionStat::improvement), show::json}};

Value decision_object(const MethodRecord& m) {
  const TableView view(decision_stat_columns);
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
      {"truth", [](const M& m) { return stats_object(m.truth, truth_stat_columns, truth_key); },
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
template <auto member>
Value of(const QuantityRow& r) {
  return field_value(r.*member);
}
const std::vector<ColumnSpec<QuantityRow>> quantity_columns = {
    {"fit_size", [](const QuantityRow& r) { return count_value(r.c.fit_size); }, show::csv},
    {"test_size", [](const QuantityRow& r) { return count_value(r.c.test_size); }, show::csv},
    {"replicates", [](const QuantityRow& r) { return count_value(r.c.cell.replicates); },
     show::csv},
    {"method", [](const QuantityRow& r) { return Value(r.m.label); }, show::csv},
    {"name", [](const QuantityRow& r) { return Value(r.m.name); }, show::csv},
    {"kind", [](const QuantityRow& r) { return Value(r.kind); }, show::csv},
    {"quantity", of<&QuantityRow::quantity>, show::csv},
    {"target", [](const QuantityRow& r) { return target_value(r.target); }, show::csv},
    {"mean", of<&QuantityRow::mean>, show::csv},
    {"sd", of<&QuantityRow::sd>, show::csv},
    {"truth_error", of<&QuantityRow::error>, show::csv},
    {"improvement", of<&QuantityRow::improvement>, show::csv},
    {"rank_disagreement", of<&QuantityRow::rank>, show::csv},
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

// leaderboard.csv, leaderboard_agreement.csv and leaderboard_contrast.csv: after the cell's key
// columns (empty for the pooled board; for a generator's board those its cells share), the
// scope, its cases and bootstrap blocks, then per (key, model) the board, per (estimator, true
// quantity) their agreement and per (estimator, other estimator, true quantity) the difference
// of their agreements (docs/recalibration.md, "Leaderboards").
struct Scope {
  const std::vector<Value>& key;
  std::string scope;
  const LeaderboardRecord& lb;
};
struct StandingRow : Scope {
  const Board& board;
  std::size_t m;
  const Standing& standing() const { return board.standings[m]; }
};
struct AgreementRow : Scope {
  const RankAgreement& a;
};
struct ContrastRow : Scope {
  const RankContrast& x;
};

template <typename Row>
std::vector<ColumnSpec<Row>> scope_columns(const std::vector<std::string>& key_names) {
  std::vector<ColumnSpec<Row>> out;
  for (std::size_t i = 0; i < key_names.size(); ++i)
    out.push_back({key_names[i], [i](const Row& r) { return r.key[i]; }});
  append<Row>(out, std::vector<ColumnSpec<Row>>{
                       {"scope", [](const Row& r) { return Value(r.scope); }},
                       {"cases", [](const Row& r) { return count_value(r.lb.boards.cases); }},
                       {"blocks", [](const Row& r) { return count_value(r.lb.boards.clusters); }}});
  return out;
}

template <Estimate Standing::*estimate, double Estimate::*part>
Value standing(const StandingRow& r) {
  return r.standing().*estimate.*part;
}
const std::vector<ColumnSpec<StandingRow>> standing_columns = {
    {"kind",
     [](const auto& r) { return Value(r.lb.estimate[r.board.key] ? "estimate" : "truth"); }},
    {"key", [](const auto& r) { return Value(r.lb.table.keys[r.board.key].name); }},
    {"target", [](const auto& r) { return target_value(r.lb.target[r.board.key]); }},
    {"better",
     [](const auto& r) {
       return Value(std::string(to_string(r.lb.table.keys[r.board.key].better)));
     }},
    {"method", [](const auto& r) { return Value(r.lb.table.methods[r.m]); }},
    {"mean",
     [](const auto& r) {
       const double x = r.standing().mean;  // NaN: the method failed in every case
       return std::isnan(x) ? Value() : Value(x);
     }},
    {"win_rate", standing<&Standing::win_rate, &Estimate::value>},
    {"win_rate_lower", standing<&Standing::win_rate, &Estimate::lower>},
    {"win_rate_upper", standing<&Standing::win_rate, &Estimate::upper>},
    {"elo", standing<&Standing::elo, &Estimate::value>},
    {"elo_lower", standing<&Standing::elo, &Estimate::lower>},
    {"elo_upper", standing<&Standing::elo, &Estimate::upper>},
    {"rank", [](const auto& r) { return count_value(r.standing().rank); }},
    {"failed", [](const auto& r) { return count_value(r.standing().failed); }}};

// Kendall's tau-b is NaN where it is undefined: an empty field.
template <Estimate RankAgreement::*estimate, double Estimate::*part>
Value agreement(const AgreementRow& r) {
  const double x = r.a.*estimate.*part;
  return std::isnan(x) ? Value() : Value(x);
}
template <double Estimate::*part>
Value winners(const AgreementRow& r) {
  return r.a.winner_agreement.*part;
}
const std::vector<ColumnSpec<AgreementRow>> agreement_columns = {
    {"estimator", [](const auto& r) { return Value(r.lb.table.keys[r.a.key].name); }},
    {"target", [](const auto& r) { return target_value(r.lb.target[r.a.key]); }},
    {"truth", [](const auto& r) { return Value(r.lb.table.keys[r.a.reference].name); }},
    {"tau_b", agreement<&RankAgreement::tau_b, &Estimate::value>},
    {"tau_b_lower", agreement<&RankAgreement::tau_b, &Estimate::lower>},
    {"tau_b_upper", agreement<&RankAgreement::tau_b, &Estimate::upper>},
    {"case_tau_b", agreement<&RankAgreement::case_tau_b, &Estimate::value>},
    {"case_tau_b_lower", agreement<&RankAgreement::case_tau_b, &Estimate::lower>},
    {"case_tau_b_upper", agreement<&RankAgreement::case_tau_b, &Estimate::upper>},
    {"tau_cases", [](const auto& r) { return count_value(r.a.tau_cases); }},
    {"winner_agreement", winners<&Estimate::value>},
    {"winner_agreement_lower", winners<&Estimate::lower>},
    {"winner_agreement_upper", winners<&Estimate::upper>}};

// A difference of two agreements; NaN (undefined in every resample) an empty field.
template <Estimate RankContrast::*estimate, double Estimate::*part>
Value contrast(const ContrastRow& r) {
  const double x = r.x.*estimate.*part;
  return std::isnan(x) ? Value() : Value(x);
}
const std::vector<ColumnSpec<ContrastRow>> contrast_columns = {
    {"estimator", [](const auto& r) { return Value(r.lb.table.keys[r.x.key].name); }},
    {"other", [](const auto& r) { return Value(r.lb.table.keys[r.x.other].name); }},
    {"truth", [](const auto& r) { return Value(r.lb.table.keys[r.x.reference].name); }},
    {"tau_b_difference", contrast<&RankContrast::tau_b, &Estimate::value>},
    {"tau_b_difference_lower", contrast<&RankContrast::tau_b, &Estimate::lower>},
    {"tau_b_difference_upper", contrast<&RankContrast::tau_b, &Estimate::upper>},
    {"case_tau_b_difference", contrast<&RankContrast::case_tau_b, &Estimate::value>},
    {"case_tau_b_difference_lower", contrast<&RankContrast::case_tau_b, &Estimate::lower>},
    {"case_tau_b_difference_upper", contrast<&RankContrast::case_tau_b, &Estimate::upper>},
    {"winner_agreement_difference", contrast<&RankContrast::winner_agreement, &Estimate::value>},
    {"winner_agreement_difference_lower",
     contrast<&RankContrast::winner_agreement, &Estimate::lower>},
    {"winner_agreement_difference_upper",
     contrast<&RankContrast::winner_agreement, &Estimate::upper>}};

struct LeaderboardTables {
  std::vector<ColumnSpec<StandingRow>> standings;
  std::vector<ColumnSpec<AgreementRow>> agreements;
  std::vector<ColumnSpec<ContrastRow>> contrasts;

  explicit LeaderboardTables(const std::vector<std::string>& key_names)
      : standings(scope_columns<StandingRow>(key_names)),
        agreements(scope_columns<AgreementRow>(key_names)),
        contrasts(scope_columns<ContrastRow>(key_names)) {
    append<StandingRow>(standings, standing_columns);
    append<AgreementRow>(agreements, agreement_columns);
    append<ContrastRow>(contrasts, contrast_columns);
  }

  void rows(const Scope& scope, std::vector<TableRow>& out) const {
    for (const Board& board : scope.lb.boards.boards)
      for (std::size_t m = 0; m < board.standings.size(); ++m)
        out.push_back(TableView(standings).row("leaderboard", {scope, board, m}, show::csv));
    for (const RankAgreement& a : scope.lb.boards.agreements)
      out.push_back(TableView(agreements).row("leaderboard_agreement", {scope, a}, show::csv));
    for (const RankContrast& x : scope.lb.boards.contrasts)
      out.push_back(TableView(contrasts).row("leaderboard_contrast", {scope, x}, show::csv));
  }
};

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

// The board key columns (the cell's, fit_size, test_size) that every one of `cells` shares;
// empty where they differ.
std::vector<Value> generator_key(const RecalibrationResults& r,
                                 const std::vector<std::size_t>& cells, bool targets) {
  const auto key_of = [&](std::size_t c) {
    const Cell& cell = r.records[c];
    std::vector<Value> key = key_fields(cell.cell, targets, own_columns);
    key.insert(key.end(), {count_value(cell.fit_size), count_value(cell.test_size)});
    return key;
  };
  std::vector<Value> out = key_of(cells.front());
  for (std::size_t c : cells) {
    const std::vector<Value> other = key_of(c);
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
    std::vector<std::string> curve_table = key_columns(r.sweep_keys, targets, own_columns);
    curve_table.insert(curve_table.end(), {"fit_size", "method"});
    curve_table.insert(curve_table.end(), curve_columns().begin(), curve_columns().end());
    header.tables.push_back(data_table("reliability", curve_table));
  }
  header.tables.push_back(TableView(boards.standings).table("leaderboard", show::csv));
  header.tables.push_back(TableView(boards.agreements).table("leaderboard_agreement", show::csv));
  header.tables.push_back(TableView(boards.contrasts).table("leaderboard_contrast", show::csv));
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
        append_curve_rows("reliability", key, {CurveRecord{.points = c.curves[m]}}, record.rows);
      }
    if (c.leaderboard) {
      std::vector<Value> key = key_fields(c.cell, targets, own_columns);
      key.insert(key.end(), {count_value(c.fit_size), count_value(c.test_size)});
      boards.rows({key, "cell", *c.leaderboard}, record.rows);
    }
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
