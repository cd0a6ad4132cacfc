#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/format.hpp"
#include "report/reliability_record.hpp"
#include "report/value_format.hpp"
#include "scenarios/common.hpp"
#include "scenarios/recalibration/run.hpp"

namespace calbench {
namespace {

const std::vector<std::string> own_columns = {"fit_size", "test_size", "replicates"};

Value target_value(const std::optional<Quantity>& target) {
  return target ? Value(std::string(to_string(*target))) : Value();
}

Value truth_summary(const TruthStat& s) {
  Value::Object out = {{"mean", s.mean}, {"sd", s.sd}};
  if (s.error) out.emplace_back("error", *s.error);
  out.emplace_back("improvement", optional_value(s.improvement));
  return out;
}

Value estimate_summary(const MethodStat& s) {
  Value::Object out = {{"mean", s.mean}, {"sd", s.sd}};
  if (s.target) out.emplace_back("target", std::string(to_string(*s.target)));
  out.emplace_back("improvement", optional_value(s.improvement));
  if (s.rank_disagreement) out.emplace_back("rank_disagreement", *s.rank_disagreement);
  return out;
}

Value methods_summary(const RecalibrationCellRecord& c, bool timings) {
  Value::Object methods;
  for (const auto& m : c.methods) {
    Value::Object truth, estimates, parameters;
    for (const auto& t : m.truth)
      truth.emplace_back(std::string(to_string(t.quantity)), truth_summary(t));
    for (const auto& e : m.estimates) estimates.emplace_back(e.key, estimate_summary(e));
    for (const auto& p : m.parameters) parameters.emplace_back(p.key, p.mean);
    Value::Object entry = {{"name", m.name},
                           {"params", m.params},
                           {"truth", std::move(truth)},
                           {"estimates", std::move(estimates)},
                           {"parameters", std::move(parameters)},
                           {"fits", count_value(m.fits)},
                           {"failed_fits", count_value(m.failed_fits)},
                           {"failure", m.failure.empty() ? Value() : Value(m.failure)}};
    if (timings) entry.emplace_back("fit_seconds", optional_value(m.fit_seconds));
    methods.emplace_back(m.label, std::move(entry));
  }
  return methods;
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

// leaderboard.csv and leaderboard_agreement.csv: after the cell's key columns (empty for the
// pooled board), the scope, its cases and bootstrap blocks, then per (key, model) the board and
// per (estimator, true quantity) their agreement (docs/recalibration.md, "Leaderboards").
const std::vector<std::string> leaderboard_columns = {
    "scope", "cases",     "blocks",         "kind",
    "key",   "target",    "better",         "method",
    "mean",  "win_rate",  "win_rate_lower", "win_rate_upper",
    "elo",   "elo_lower", "elo_upper",      "rank"};
const std::vector<std::string> agreement_columns = {"scope",
                                                    "cases",
                                                    "blocks",
                                                    "estimator",
                                                    "target",
                                                    "truth",
                                                    "tau_b",
                                                    "tau_b_lower",
                                                    "tau_b_upper",
                                                    "case_tau_b",
                                                    "case_tau_b_lower",
                                                    "case_tau_b_upper",
                                                    "tau_cases",
                                                    "winner_agreement",
                                                    "winner_agreement_lower",
                                                    "winner_agreement_upper"};

void leaderboard_rows(const LeaderboardRecord& lb, const std::vector<Value>& key,
                      const std::string& scope, std::vector<TableRow>& rows) {
  const Leaderboards& b = lb.boards;
  const auto head = [&] {
    std::vector<Value> fields = key;
    fields.insert(fields.end(), {scope, count_value(b.cases), count_value(b.clusters)});
    return fields;
  };
  for (const Board& board : b.boards) {
    const RankingKey& k = lb.table.keys[board.key];
    for (std::size_t m = 0; m < board.standings.size(); ++m) {
      const Standing& s = board.standings[m];
      std::vector<Value> fields = head();
      fields.insert(fields.end(),
                    {lb.estimate[board.key] ? "estimate" : "truth", k.name,
                     target_value(lb.target[board.key]), std::string(to_string(k.better)),
                     lb.table.methods[m], s.mean, s.win_rate.value, s.win_rate.lower,
                     s.win_rate.upper, s.elo.value, s.elo.lower, s.elo.upper, count_value(s.rank)});
      rows.push_back({"leaderboard", std::move(fields)});
    }
  }
  const auto number = [](double x) { return std::isnan(x) ? Value() : Value(x); };
  for (const RankAgreement& a : b.agreements) {
    std::vector<Value> fields = head();
    fields.insert(fields.end(),
                  {lb.table.keys[a.key].name, target_value(lb.target[a.key]),
                   lb.table.keys[a.reference].name, number(a.tau_b.value), number(a.tau_b.lower),
                   number(a.tau_b.upper), number(a.case_tau_b.value), number(a.case_tau_b.lower),
                   number(a.case_tau_b.upper), count_value(a.tau_cases), a.winner_agreement.value,
                   a.winner_agreement.lower, a.winner_agreement.upper});
    rows.push_back({"leaderboard_agreement", std::move(fields)});
  }
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

Table display_table(const std::vector<Quantity>& quantities) {
  Table out{.name = "methods", .use = TableUse::display, .indent = "  "};
  out.columns.push_back({.name = "method", .width = 30, .align = Align::left});
  for (const Quantity q : quantities)
    out.columns.push_back({.name = std::string(to_string(q)), .width = 16});
  out.columns.push_back({.name = "failed", .align = Align::left});
  return out;
}

void append_display_rows(const RecalibrationCellRecord& c, const std::vector<Quantity>& quantities,
                         std::vector<TableRow>& rows) {
  for (const auto& m : c.methods) {
    std::vector<Value> fields = {m.label};
    for (const Quantity q : quantities) {
      const auto it = std::find_if(m.truth.begin(), m.truth.end(),
                                   [&](const TruthStat& s) { return s.quantity == q; });
      if (it == m.truth.end())
        fields.emplace_back();
      else
        fields.emplace_back(it->mean);
    }
    fields.push_back(count_value(m.failed_fits));
    rows.push_back({"methods", std::move(fields)});
  }
}

std::string caption(const RecalibrationCellRecord& c) {
  std::ostringstream out;
  out << "cell " << c.cell.index << ":";
  for (const auto& s : c.cell.swept) out << "  " << s.key << " = " << to_text(s.value);
  out << "  (";
  const auto swept = [&](const char* key) {
    return std::any_of(c.cell.swept.begin(), c.cell.swept.end(),
                       [&](const SweptValue& s) { return s.key == key; });
  };
  if (!swept("fit_size")) out << "fit_size = " << c.fit_size << ", ";
  if (!swept("test_size")) out << "test_size = " << c.test_size << ", ";
  out << c.cell.replicates << " replicates; true values, mean over replicates)\n";
  return out.str();
}

}  // namespace

void report_recalibration(const RecalibrationResults& r, Reporter& reporter) {
  const bool targets = any_target(r.records);
  ReportHeader header = report_header(r.meta, r.sweep_keys);
  // One row per (cell, method, quantity), quantity being a truth quantity, an estimate or a
  // fitted parameter (column `kind`).
  std::vector<std::string> columns = key_columns(r.sweep_keys, targets, own_columns);
  columns.insert(columns.end(), {"fit_size", "test_size", "replicates", "method", "name", "kind",
                                 "quantity", "target", "mean", "sd", "truth_error", "improvement",
                                 "rank_disagreement", "fits", "failed_fits"});
  header.tables.push_back(data_table("cells", columns));
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
  for (const auto& [name, own] : {std::pair{"leaderboard", &leaderboard_columns},
                                  std::pair{"leaderboard_agreement", &agreement_columns}}) {
    std::vector<std::string> table = key_columns(r.sweep_keys, targets, own_columns);
    table.insert(table.end(), {"fit_size", "test_size"});
    table.insert(table.end(), own->begin(), own->end());
    header.tables.push_back(data_table(name, table));
  }
  const std::vector<Quantity> quantities = display_quantities(r);
  header.tables.push_back(display_table(quantities));
  reporter.begin(header);
  for (const auto& c : r.records) {
    Record record;
    Value::Object summary = cell_summary_head(
        c.cell, {{"fit_size", count_value(c.fit_size)}, {"test_size", count_value(c.test_size)}});
    summary.emplace_back("methods", methods_summary(c, r.timings_in_summary));
    summary.emplace_back("rankings", rankings_summary(c));
    record.document = std::move(summary);
    for (const auto& m : c.methods) {
      const auto row =
          [&](const char* kind, const std::string& quantity, const std::optional<Quantity>& target,
              double mean, double sd, const std::optional<double>& error,
              const std::optional<double>& improvement, const std::optional<double>& rank) {
            std::vector<Value> fields = key_fields(c.cell, targets, own_columns);
            const std::vector<Value> rest = {count_value(c.fit_size),
                                             count_value(c.test_size),
                                             count_value(c.cell.replicates),
                                             m.label,
                                             m.name,
                                             kind,
                                             quantity,
                                             target_value(target),
                                             mean,
                                             sd,
                                             optional_value(error),
                                             optional_value(improvement),
                                             optional_value(rank),
                                             count_value(m.fits),
                                             count_value(m.failed_fits)};
            fields.insert(fields.end(), rest.begin(), rest.end());
            record.rows.push_back({"cells", std::move(fields)});
          };
      // A method whose fits failed, in some replicates or all: a row of kind "failure" whose
      // quantity is the first failure's message, so that a method with no result is visible.
      if (m.failed_fits > 0) {
        std::vector<Value> fields = key_fields(c.cell, targets, own_columns);
        fields.insert(fields.end(), {count_value(c.fit_size), count_value(c.test_size),
                                     count_value(c.cell.replicates), m.label, m.name, "failure",
                                     m.failure, Value(), Value(), Value(), Value(), Value(),
                                     Value(), count_value(m.fits), count_value(m.failed_fits)});
        record.rows.push_back({"cells", std::move(fields)});
      }
      for (const auto& s : m.truth)
        row("truth", std::string(to_string(s.quantity)), std::nullopt, s.mean, s.sd, s.error,
            s.improvement, std::nullopt);
      for (const auto& s : m.estimates)
        row("estimate", s.key, s.target, s.mean, s.sd, std::nullopt, s.improvement,
            s.rank_disagreement);
      for (const auto& s : m.parameters)
        row("parameter", s.key, std::nullopt, s.mean, s.sd, std::nullopt, s.improvement,
            s.rank_disagreement);
    }
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
      leaderboard_rows(*c.leaderboard, key, "cell", record.rows);
    }
    append_display_rows(c, quantities, record.rows);
    record.caption = caption(c);
    reporter.record(record);
  }
  if (r.pooled_leaderboard) {
    // The run's board over every cell: no cell, so its key columns are empty; no document.
    Record record;
    const std::size_t width = key_columns(r.sweep_keys, targets, own_columns).size() + 2;
    leaderboard_rows(*r.pooled_leaderboard, std::vector<Value>(width), "all", record.rows);
    reporter.record(record);
  }
  reporter.end();
}

std::string describe_recalibration(const RecalibrationConfig& config) {
  const auto labels_of = [](const RecalibrationCell& cell) {
    std::vector<std::string> labels, methods;
    for (const auto& e : cell.estimators) labels.push_back(e.label);
    for (const auto& m : cell.methods) methods.push_back(m.label);
    return join(labels, ", ") + "; methods: " + join(methods, ", ");
  };
  const std::string labels = config.cells.empty() ? "" : labels_of(config.cells.front());
  std::vector<std::vector<std::string>> rows;
  for (const auto& cell : config.cells) {
    auto row = describe_cell(cell,
                             {"fit_size=" + std::to_string(cell.fit_size),
                              "test_size=" + std::to_string(cell.test_size)},
                             {"fit_size", "test_size"});
    if (labels_of(cell) != labels) row.push_back("estimators: " + labels_of(cell));
    rows.push_back(std::move(row));
  }
  return describe_experiment(config, {"estimators:", labels}, rows);
}

}  // namespace calbench
