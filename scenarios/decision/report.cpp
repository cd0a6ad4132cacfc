#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/format.hpp"
#include "report/value_format.hpp"
#include "scenarios/common.hpp"
#include "scenarios/decision/run.hpp"

namespace calbench {
namespace {

const std::vector<std::string> own_columns = {"sample_size", "replicates"};

// The union of the cells' figure names, in order of first appearance.
std::vector<std::string> figure_columns(const DecisionResults& r) {
  std::vector<std::string> out;
  for (const auto& c : r.records)
    for (const auto& [name, value] : c.decision.figures)
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

std::optional<double> figure_of(const std::vector<std::pair<std::string, double>>& figures,
                                const std::string& name) {
  for (const auto& [n, v] : figures)
    if (n == name) return v;
  return std::nullopt;
}

Value decision_summary(const DecisionRecord& d) {
  Value::Object figures, oracle;
  for (const auto& [name, value] : d.figures) figures.emplace_back(name, value);
  for (const auto& [name, value] : d.oracle_figures) oracle.emplace_back(name, value);
  Value::Object out = {
      {"task", d.task},
      {"params", d.params},
      {"method", std::string(to_string(d.method))},
      {"samples", d.samples},
      {"expected_utility", d.expected_utility},
      {"expected_utility_error", d.expected_utility_error},
      {"oracle_expected_utility", d.oracle_expected_utility},
      {"oracle_expected_utility_error", d.oracle_expected_utility_error},
      {"miscalibration_cost", d.miscalibration_cost},
      {"miscalibration_cost_error", d.miscalibration_cost_error},
      {"realised_utility", Value::Object{{"mean", d.realised_mean}, {"sd", d.realised_sd}}}};
  for (const auto& [name, value] : d.figures) out.emplace_back(name, value);
  out.emplace_back("figures", std::move(figures));
  out.emplace_back("oracle_figures", std::move(oracle));
  if (d.recalibrated) {
    const RecalibratedRecord& r = *d.recalibrated;
    const auto stat = [&](double mean, double sd, double error) -> Value {
      if (r.fits == 0) return Value();
      return Value::Object{{"mean", mean}, {"sd", sd}, {"error", error}};
    };
    out.emplace_back(
        "recalibrated",
        Value::Object{{"method", r.label},
                      {"name", r.name},
                      {"params", r.params},
                      {"fit_size", count_value(r.fit_size)},
                      {"samples", r.samples},
                      {"fits", count_value(r.fits)},
                      {"failed_fits", count_value(r.failed_fits)},
                      {"failure", r.failure.empty() ? Value() : Value(r.failure)},
                      {"expected_utility", stat(r.utility_mean, r.utility_sd, r.utility_error)},
                      {"miscalibration_cost", stat(r.cost_mean, r.cost_sd, r.cost_error)}});
  }
  return out;
}

std::string bound_name(const Requirement& q) {
  return q.regret ? "regret" : std::string(to_string(q.bound));
}

Value point_cell(const std::optional<FrontierPoint>& p) {
  return p ? count_value(p->cell) : Value();
}
Value point_accuracy(const std::optional<FrontierPoint>& p) {
  return p ? Value(p->accuracy) : Value();
}
Value point_value(const std::optional<FrontierPoint>& p) {
  return p ? Value(p->value) : Value();
}

Value requirements_summary(const RequirementsRecord& q) {
  Value::Array rows;
  for (const auto& row : q.rows) {
    Value::Object group;
    for (const auto& s : row.group) group.emplace_back(s.key, s.value);
    Value::Array cells;
    for (std::size_t c : row.cells) cells.push_back(count_value(c));
    rows.push_back(Value::Object{{"group", std::move(group)},
                                 {"cells", std::move(cells)},
                                 {"status", std::string(to_string(row.status))},
                                 {"minimal_accuracy", optional_value(row.minimal_accuracy)},
                                 {"ece_top_l1", optional_value(row.ece_top_l1)},
                                 {"lower_cell", point_cell(row.lower)},
                                 {"lower_accuracy", point_accuracy(row.lower)},
                                 {"lower_value", point_value(row.lower)},
                                 {"upper_cell", point_cell(row.upper)},
                                 {"upper_accuracy", point_accuracy(row.upper)},
                                 {"upper_value", point_value(row.upper)},
                                 {"monotone", row.monotone}});
  }
  Value::Array group_keys;
  for (const auto& k : q.group_keys) group_keys.emplace_back(k);
  return Value::Object{{"metric", q.requirement.metric},
                       {"bound", bound_name(q.requirement)},
                       {"value", q.requirement.value},
                       {"accuracy_key", q.accuracy_key.empty() ? Value() : Value(q.accuracy_key)},
                       {"group_keys", std::move(group_keys)},
                       {"frontier", std::move(rows)},
                       {"verdict", q.verdict}};
}

std::vector<TableRow> requirements_rows(const RequirementsRecord& q) {
  std::vector<TableRow> out;
  for (const auto& row : q.rows) {
    std::vector<Value> fields;
    for (const auto& s : row.group) fields.push_back(s.value);
    std::string cells;
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      if (i > 0) cells.push_back(' ');
      cells += std::to_string(row.cells[i]);
    }
    const std::vector<Value> rest = {q.requirement.metric,
                                     bound_name(q.requirement),
                                     q.requirement.value,
                                     std::string(to_string(row.status)),
                                     optional_value(row.minimal_accuracy),
                                     optional_value(row.ece_top_l1),
                                     point_cell(row.lower),
                                     point_accuracy(row.lower),
                                     point_value(row.lower),
                                     point_cell(row.upper),
                                     point_accuracy(row.upper),
                                     point_value(row.upper),
                                     row.monotone,
                                     cells};
    fields.insert(fields.end(), rest.begin(), rest.end());
    out.push_back({"requirements", std::move(fields)});
  }
  return out;
}

std::string frontier_note(const RequirementsRecord& q) {
  std::ostringstream out;
  char line[512];
  out << "\nrequirement frontier (" << q.requirement.metric << ' '
      << (!q.requirement.regret && q.requirement.bound == Bound::at_least ? ">=" : "<=") << ' '
      << format_double(q.requirement.value) << "):\n";
  for (const auto& row : q.rows) {
    std::string group;
    for (const auto& s : row.group)
      group += (group.empty() ? "" : ", ") + s.key + " = " + to_text(s.value);
    if (group.empty()) group = "all cells";
    out << "  " << group << ": ";
    if (row.status == FrontierStatus::reached) {
      std::snprintf(line, sizeof line,
                    "minimal accuracy %.4f (ece_top_l1 %.4f), between cell %zu (accuracy %.4f) "
                    "and cell %zu (accuracy %.4f)%s",
                    *row.minimal_accuracy, row.ece_top_l1.value_or(0.0), row.lower->cell,
                    row.lower->accuracy, row.upper->cell, row.upper->accuracy,
                    row.monotone ? "" : " [not monotone in accuracy]");
      out << line;
    } else if (row.status == FrontierStatus::met_everywhere) {
      std::snprintf(line, sizeof line, "met everywhere (from accuracy %.4f, the lowest swept)",
                    *row.minimal_accuracy);
      out << line;
    } else {
      std::snprintf(line, sizeof line,
                    "unreachable within the swept accuracies (closest: cell %zu, %s = %.6g)",
                    row.lower ? row.lower->cell : 0, q.requirement.metric.c_str(),
                    row.lower ? row.lower->value : 0.0);
      out << line;
    }
    out << '\n';
  }
  out << "\n" << q.verdict << "\n";
  return out.str();
}

// The terminal's summary: one row per cell, its swept values in `parameters`.
Table display_table(const std::vector<std::string>& figures, bool recalibrated) {
  Table out{.name = "decisions", .use = TableUse::display};
  out.columns = {{.name = "cell", .width = 5, .align = Align::left},
                 {.name = "parameters", .width = 40, .align = Align::left},
                 {.name = "accuracy", .width = 9},
                 {.name = "ece_top", .width = 9},
                 {.name = "utility", .width = 11, .precision = 6},
                 {.name = "oracle", .width = 11, .precision = 6},
                 {.name = "cost", .width = 11, .precision = 3, .notation = Notation::scientific},
                 {.name = "realised", .width = 10},
                 {.name = "sd", .width = 10}};
  for (const auto& f : figures) out.columns.push_back({.name = f});
  if (recalibrated)
    out.columns.insert(
        out.columns.end(),
        {{.name = "recalibrated_cost", .precision = 3, .notation = Notation::scientific},
         {.name = "(sd)", .precision = 1, .notation = Notation::scientific}});
  return out;
}

TableRow display_row(const DecisionCellRecord& c, const std::vector<std::string>& figures,
                     bool recalibrated) {
  const DecisionRecord& d = c.decision;
  std::string params;
  for (const auto& s : c.cell.swept) {
    const auto dot = s.key.rfind('.');
    params += (params.empty() ? "" : " ") +
              (dot == std::string::npos ? s.key : s.key.substr(dot + 1)) + "=" + to_text(s.value);
  }
  std::vector<Value> fields = {count_value(c.cell.index),
                               params.empty() ? Value() : Value(params),
                               c.cell.truth_value(Quantity::accuracy),
                               c.cell.truth_value(Quantity::ece_top_l1),
                               d.expected_utility,
                               d.oracle_expected_utility,
                               d.miscalibration_cost,
                               d.realised_mean,
                               d.realised_sd};
  for (const auto& f : figures) fields.push_back(optional_value(figure_of(d.figures, f)));
  if (recalibrated) {
    if (d.recalibrated && d.recalibrated->fits > 0)
      fields.insert(fields.end(), {d.recalibrated->cost_mean, d.recalibrated->cost_sd});
    else
      fields.insert(fields.end(), {d.recalibrated ? Value("no fit") : Value(), Value()});
  }
  return {"decisions", std::move(fields)};
}

}  // namespace

void report_decision(const DecisionResults& r, Reporter& reporter) {
  const auto figures = figure_columns(r);
  const bool targets = any_target(r.records);
  // Recalibrated columns only when some cell has a recalibrator, so other runs keep their bytes.
  const bool recalibrated = std::any_of(r.records.begin(), r.records.end(),
                                        [](const auto& c) { return c.decision.recalibrated; });
  ReportHeader header = report_header(r.meta, r.sweep_keys);
  // cells.csv: one row per cell: swept values, solved target parameters (when any), the
  // generator's accuracy and ece_top_l1, every decision value, then the task's figures
  // (policy, then oracle_ prefixed).
  std::vector<std::string> columns = key_columns(r.sweep_keys, targets, own_columns);
  columns.insert(columns.end(),
                 {"sample_size", "replicates", "task", "method", "samples", "accuracy",
                  "ece_top_l1", "expected_utility", "expected_utility_error",
                  "oracle_expected_utility", "oracle_expected_utility_error", "miscalibration_cost",
                  "miscalibration_cost_error", "realised_mean", "realised_sd"});
  columns.insert(columns.end(), figures.begin(), figures.end());
  for (const auto& f : figures) columns.push_back("oracle_" + f);
  if (recalibrated)
    columns.insert(columns.end(), {"recalibrator", "recalibrator_fit_size", "recalibrated_fits",
                                   "recalibrated_failed_fits", "recalibrated_expected_utility_mean",
                                   "recalibrated_expected_utility_sd", "recalibrated_cost_mean",
                                   "recalibrated_cost_sd", "recalibrated_cost_error"});
  header.tables.push_back(data_table("cells", columns));
  if (r.requirements) {
    std::vector<std::string> req = r.requirements->group_keys;
    req.insert(req.end(), {"metric", "bound", "value", "status", "minimal_accuracy", "ece_top_l1",
                           "lower_cell", "lower_accuracy", "lower_value", "upper_cell",
                           "upper_accuracy", "upper_value", "monotone", "cells"});
    header.tables.push_back(data_table("requirements", req));
  }
  header.tables.push_back(display_table(figures, recalibrated));
  reporter.begin(header);

  for (const auto& c : r.records) {
    const DecisionRecord& d = c.decision;
    Record record;
    Value::Object summary =
        cell_summary_head(c.cell, {{"sample_size", count_value(c.sample_size)}});
    summary.emplace_back("decision", decision_summary(d));
    record.document = std::move(summary);

    const double accuracy = c.cell.truth_value(Quantity::accuracy);
    const double ece = c.cell.truth_value(Quantity::ece_top_l1);
    std::vector<Value> row = key_fields(c.cell, targets, own_columns);
    const std::vector<Value> values = {count_value(c.sample_size),
                                       count_value(c.cell.replicates),
                                       d.task,
                                       std::string(to_string(d.method)),
                                       d.samples,
                                       accuracy,
                                       ece,
                                       d.expected_utility,
                                       d.expected_utility_error,
                                       d.oracle_expected_utility,
                                       d.oracle_expected_utility_error,
                                       d.miscalibration_cost,
                                       d.miscalibration_cost_error,
                                       d.realised_mean,
                                       d.realised_sd};
    row.insert(row.end(), values.begin(), values.end());
    for (const auto& f : figures) row.push_back(optional_value(figure_of(d.figures, f)));
    for (const auto& f : figures) row.push_back(optional_value(figure_of(d.oracle_figures, f)));
    if (recalibrated) {
      if (d.recalibrated) {
        const RecalibratedRecord& q = *d.recalibrated;
        const auto num = [&](double x) { return q.fits > 0 ? Value(x) : Value(); };
        row.insert(row.end(), {q.label, count_value(q.fit_size), count_value(q.fits),
                               count_value(q.failed_fits), num(q.utility_mean), num(q.utility_sd),
                               num(q.cost_mean), num(q.cost_sd), num(q.cost_error)});
      } else {
        row.insert(row.end(), 9, Value());
      }
    }
    record.rows.push_back({"cells", std::move(row)});

    record.rows.push_back(display_row(c, figures, recalibrated));
    reporter.record(record);
  }
  if (r.requirements) {
    Record record;
    record.block = "requirements";
    record.document = requirements_summary(*r.requirements);
    record.rows = requirements_rows(*r.requirements);
    record.note = frontier_note(*r.requirements);
    reporter.record(record);
  }
  reporter.end();
}

std::string describe_decision(const DecisionConfig& config) {
  const auto labels_of = [](const DecisionCell& cell) {
    return cell.decision.task + " " + to_text(cell.decision.params) +
           (cell.recalibrator ? "; recalibrator: " + cell.recalibrator->method.label +
                                    " fit_size=" + std::to_string(cell.recalibrator->fit_size)
                              : std::string());
  };
  const std::string labels = config.cells.empty() ? "" : labels_of(config.cells.front());
  std::vector<std::vector<std::string>> rows;
  for (const auto& cell : config.cells) {
    auto row =
        describe_cell(cell, {"sample_size=" + std::to_string(cell.sample_size)}, {"sample_size"});
    if (labels_of(cell) != labels) row.push_back("decision: " + labels_of(cell));
    rows.push_back(std::move(row));
  }
  return describe_experiment(config, {"decision:", labels}, rows);
}

}  // namespace calbench
