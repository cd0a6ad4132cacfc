#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/format.hpp"
#include "report/columns.hpp"
#include "report/value_format.hpp"
#include "scenarios/common.hpp"
#include "scenarios/decision/run.hpp"

namespace calbench {
namespace {

const std::vector<std::string> own_columns = {"sample_size", "replicates"};
using Cell = DecisionCellRecord;

// The union of the cells' figure names, in order of first appearance.
std::vector<std::string> figure_columns(const DecisionResults& r) {
  std::vector<std::string> out;
  for (const auto& c : r.records)
    for (const auto& [name, value] : c.decision.figures)
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

using Figures = std::vector<std::pair<std::string, double>>;
Value figure_of(const Figures& figures, const std::string& name) {
  for (const auto& [n, v] : figures)
    if (n == name) return v;
  return {};
}
Value::Object figures_object(const Figures& figures) {
  Value::Object out;
  for (const auto& [name, value] : figures) out.emplace_back(name, value);
  return out;
}

template <auto member>
Value of(const Cell& c) {
  return field_value(c.decision.*member);
}
// A recalibrated figure: null without a recalibrator or a successful fit.
template <auto member>
Value recalibrated(const Cell& c) {
  const auto& q = c.decision.recalibrated;
  return q && q->fits > 0 ? Value(*q.*member) : Value();
}
template <auto member>
Value recalibrator(const Cell& c) {
  return c.decision.recalibrated ? field_value(*c.decision.recalibrated.*member) : Value();
}

// The terminal's `parameters`: the swept values by the last part of their key.
Value parameters(const Cell& c) {
  std::string out;
  for (const auto& s : c.cell.swept) {
    const auto dot = s.key.rfind('.');
    out += (out.empty() ? "" : " ") + (dot == std::string::npos ? s.key : s.key.substr(dot + 1)) +
           "=" + to_text(s.value);
  }
  return out.empty() ? Value() : Value(out);
}

// summary.json's "recalibrated": the method, its fits, and the policy's figures after it.
Value recalibrated_summary(const Cell& c) {
  if (!c.decision.recalibrated) return {};
  const RecalibratedRecord& r = *c.decision.recalibrated;
  const auto stat = [&](double mean, double sd, double error) -> Value {
    if (r.fits == 0) return Value();
    return Value::Object{{"mean", mean}, {"sd", sd}, {"error", error}};
  };
  return Value::Object{{"method", r.label},
                       {"name", r.name},
                       {"params", r.params},
                       {"fit_size", count_value(r.fit_size)},
                       {"samples", r.samples},
                       {"fits", count_value(r.fits)},
                       {"failed_fits", count_value(r.failed_fits)},
                       {"failure", r.failure.empty() ? Value() : Value(r.failure)},
                       {"expected_utility", stat(r.utility_mean, r.utility_sd, r.utility_error)},
                       {"miscalibration_cost", stat(r.cost_mean, r.cost_sd, r.cost_error)}};
}

// A cell: a row of cells.csv and of the terminal's table, summary.json's "decision", in one
// table (cell_columns); the figures' columns are the run's.
using D = DecisionRecord;
using R = RecalibratedRecord;
template <Quantity q>
Value truth(const Cell& c) {
  return c.cell.truth_value(q);
}
const std::vector<ColumnSpec<Cell>> terminal_lead = {
    {"cell",
     [](const Cell& c) { return count_value(c.cell.index); },
     show::terminal,
     {.width = 5, .align = Align::left}},
    {"parameters", parameters, show::terminal, {.width = 40, .align = Align::left}}};
const std::vector<ColumnSpec<Cell>> decision_columns = {
    {"sample_size", [](const Cell& c) { return count_value(c.sample_size); }, show::csv},
    {"replicates", [](const Cell& c) { return count_value(c.cell.replicates); }, show::csv},
    {"task", of<&D::task>},
    {"params", of<&D::params>, show::json},
    {"method", [](const Cell& c) { return Value(std::string(to_string(c.decision.method))); }},
    {"samples", of<&D::samples>},
    {"accuracy", truth<Quantity::accuracy>, show::csv | show::terminal, {.width = 9}},
    {"ece_top_l1",
     truth<Quantity::ece_top_l1>,
     show::csv | show::terminal,
     {.heading = "ece_top", .width = 9}},
    {"expected_utility",
     of<&D::expected_utility>,
     show::all,
     {.heading = "utility", .width = 11, .precision = 6}},
    {"expected_utility_error", of<&D::expected_utility_error>},
    {"oracle_expected_utility",
     of<&D::oracle_expected_utility>,
     show::all,
     {.heading = "oracle", .width = 11, .precision = 6}},
    {"oracle_expected_utility_error", of<&D::oracle_expected_utility_error>},
    {"miscalibration_cost",
     of<&D::miscalibration_cost>,
     show::all,
     {.heading = "cost", .width = 11, .precision = 3, .notation = Notation::scientific}},
    {"miscalibration_cost_error", of<&D::miscalibration_cost_error>},
    {"realised_utility",
     [](const Cell& c) {
       return Value::Object{{"mean", c.decision.realised_mean}, {"sd", c.decision.realised_sd}};
     },
     show::json},
    {"realised_mean",
     of<&D::realised_mean>,
     show::csv | show::terminal,
     {.heading = "realised", .width = 10}},
    {"realised_sd",
     of<&D::realised_sd>,
     show::csv | show::terminal,
     {.heading = "sd", .width = 10}},
    {"", [](const Cell& c) { return figures_object(c.decision.figures); }, show::json_members}};
const std::vector<ColumnSpec<Cell>> recalibrated_columns = {
    {"recalibrator", recalibrator<&R::label>, show::csv},
    {"recalibrator_fit_size", recalibrator<&R::fit_size>, show::csv},
    {"recalibrated_fits", recalibrator<&R::fits>, show::csv},
    {"recalibrated_failed_fits", recalibrator<&R::failed_fits>, show::csv},
    {"recalibrated_expected_utility_mean", recalibrated<&R::utility_mean>, show::csv},
    {"recalibrated_expected_utility_sd", recalibrated<&R::utility_sd>, show::csv},
    {"recalibrated_cost_mean", recalibrated<&R::cost_mean>, show::csv},
    {"recalibrated_cost_sd", recalibrated<&R::cost_sd>, show::csv},
    {"recalibrated_cost_error", recalibrated<&R::cost_error>, show::csv},
    {"recalibrated_cost",
     [](const Cell& c) {
       const auto& q = c.decision.recalibrated;
       return q && q->fits == 0 ? Value("no fit") : recalibrated<&R::cost_mean>(c);
     },
     show::terminal,
     {.precision = 3, .notation = Notation::scientific}},
    {"(sd)",
     recalibrated<&R::cost_sd>,
     show::terminal,
     {.precision = 1, .notation = Notation::scientific}}};

std::vector<ColumnSpec<Cell>> cell_columns(const DecisionResults& r, bool targets) {
  auto out = terminal_lead;
  append<Cell>(
      out, key_column_specs<Cell>(
               r.sweep_keys, targets, own_columns, [](const Cell& c) -> auto& { return c.cell; }));
  append<Cell>(out, decision_columns);
  const auto figures = figure_columns(r);
  for (const auto& f : figures)
    out.push_back({f, [f](const Cell& c) { return figure_of(c.decision.figures, f); },
                   show::csv | show::terminal});
  out.push_back(
      {"figures", [](const Cell& c) { return figures_object(c.decision.figures); }, show::json});
  out.push_back({"oracle_figures",
                 [](const Cell& c) { return figures_object(c.decision.oracle_figures); },
                 show::json});
  for (const auto& f : figures)
    out.push_back({"oracle_" + f,
                   [f](const Cell& c) { return figure_of(c.decision.oracle_figures, f); },
                   show::csv});
  out.push_back({"recalibrated", recalibrated_summary, show::json_set});
  // Recalibrated columns only when some cell has a recalibrator, so other runs keep their bytes.
  if (std::any_of(r.records.begin(), r.records.end(),
                  [](const auto& c) { return c.decision.recalibrated; }))
    append<Cell>(out, recalibrated_columns);
  return out;
}

std::string bound_name(const Requirement& q) {
  return q.regret ? "regret" : std::string(to_string(q.bound));
}

// A group of cells of the requirement frontier: a row of requirements.csv, an entry of
// summary.json's "frontier".
struct FrontierEntry {
  const RequirementsRecord& q;
  const FrontierRow& row;
};
template <auto point, auto member>
Value at(const FrontierEntry& e) {
  const std::optional<FrontierPoint>& p = e.row.*point;
  return p ? field_value(*p.*member) : Value();
}
template <auto member>
Value row_of(const FrontierEntry& e) {
  return field_value(e.row.*member);
}

std::vector<ColumnSpec<FrontierEntry>> frontier_columns(const RequirementsRecord& q) {
  std::vector<ColumnSpec<FrontierEntry>> out;
  for (std::size_t g = 0; g < q.group_keys.size(); ++g)
    out.push_back(
        {q.group_keys[g], [g](const auto& e) { return e.row.group[g].value; }, show::csv});
  using P = FrontierPoint;
  using F = FrontierRow;
  append<FrontierEntry>(out, std::vector<ColumnSpec<FrontierEntry>>{
      {"group",
       [](const auto& e) {
         Value::Object group;
         for (const auto& s : e.row.group) group.emplace_back(s.key, s.value);
         return Value(std::move(group));
       },
       show::json},
      {"cells",
       [](const auto& e) {
         Value::Array cells;
         for (std::size_t c : e.row.cells) cells.push_back(count_value(c));
         return Value(std::move(cells));
       },
       show::json},
      {"metric", [](const auto& e) { return Value(metric_name(e.q.requirement)); }, show::csv},
      {"bound", [](const auto& e) { return Value(bound_name(e.q.requirement)); }, show::csv},
      {"value", [](const auto& e) { return Value(e.q.requirement.value); }, show::csv},
      {"status", [](const auto& e) { return Value(std::string(to_string(e.row.status))); }},
      {"minimal_accuracy", row_of<&F::minimal_accuracy>},
      {"ece_top_l1", row_of<&F::ece_top_l1>},
      {"lower_cell", at<&F::lower, &P::cell>},
      {"lower_accuracy", at<&F::lower, &P::accuracy>},
      {"lower_value", at<&F::lower, &P::value>},
      {"upper_cell", at<&F::upper, &P::cell>},
      {"upper_accuracy", at<&F::upper, &P::accuracy>},
      {"upper_value", at<&F::upper, &P::value>},
      {"monotone", row_of<&F::monotone>},
      {"cells",
       [](const auto& e) {
         std::string cells;
         for (std::size_t c : e.row.cells) cells += (cells.empty() ? "" : " ") + std::to_string(c);
         return Value(cells);
       },
       show::csv}});
  return out;
}

Value requirements_summary(const RequirementsRecord& q, const TableView<FrontierEntry>& view) {
  Value::Array rows;
  for (const auto& row : q.rows) rows.push_back(view.object({q, row}));
  Value::Array group_keys;
  for (const auto& k : q.group_keys) group_keys.emplace_back(k);
  return Value::Object{{"metric", metric_name(q.requirement)},
                       {"bound", bound_name(q.requirement)},
                       {"value", q.requirement.value},
                       {"accuracy_key", q.accuracy_key.empty() ? Value() : Value(q.accuracy_key)},
                       {"group_keys", std::move(group_keys)},
                       {"frontier", std::move(rows)},
                       {"verdict", q.verdict}};
}

std::string frontier_note(const RequirementsRecord& q) {
  std::ostringstream out;
  char line[512];
  out << "\nrequirement frontier (" << metric_name(q.requirement) << ' '
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
                    row.lower ? row.lower->cell : 0, metric_name(q.requirement).c_str(),
                    row.lower ? row.lower->value : 0.0);
      out << line;
    }
    out << '\n';
  }
  out << "\n" << q.verdict << "\n";
  return out.str();
}

}  // namespace

void report_decision(const DecisionResults& r, Reporter& reporter) {
  const auto columns = cell_columns(r, any_target(r.records));
  const TableView cells(columns);
  const auto frontier =
      r.requirements ? frontier_columns(*r.requirements) : std::vector<ColumnSpec<FrontierEntry>>{};
  const TableView requirements(frontier);
  ReportHeader header = report_header(r.meta, r.sweep_keys);
  header.tables.push_back(cells.table("cells", show::csv));
  if (r.requirements) header.tables.push_back(requirements.table("requirements", show::csv));
  header.tables.push_back(cells.table("decisions", show::terminal));
  reporter.begin(header);
  for (const auto& c : r.records) {
    Value::Object summary =
        cell_summary_head(c.cell, {{"sample_size", count_value(c.sample_size)}});
    Value::Object decision = cells.object(c);
    summary.emplace_back("decision", std::move(decision));
    reporter.record(
        {.document = std::move(summary),
         .rows = {cells.row("cells", c, show::csv), cells.row("decisions", c, show::terminal)}});
  }
  if (r.requirements) {
    Record record{.block = "requirements",
                  .document = requirements_summary(*r.requirements, requirements),
                  .note = frontier_note(*r.requirements)};
    for (const auto& row : r.requirements->rows)
      record.rows.push_back(requirements.row("requirements", {*r.requirements, row}, show::csv));
    reporter.record(record);
  }
  reporter.end();
}

std::string describe_decision(const DecisionConfig& config) {
  const auto task = [](const DecisionCell& cell) {
    return cell.decision.task + " " + to_text(cell.decision.params) +
           (cell.recalibrator ? "; recalibrator: " + cell.recalibrator->method.label +
                                    " fit_size=" + std::to_string(cell.recalibrator->fit_size)
                              : std::string());
  };
  return describe_cells(config, "decision:", task, [](const DecisionCell& cell) {
    return CellSizes{{"sample_size", cell.sample_size}};
  });
}

}  // namespace calbench
