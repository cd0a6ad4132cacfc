#include "report/decision_results.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/format.hpp"

namespace calbench {
namespace {

using ojson = nlohmann::ordered_json;

template <typename T>
std::string csv_optional(const std::optional<T>& v) {
  if (!v) return "";
  if constexpr (std::is_floating_point_v<T>)
    return format_double(*v);
  else
    return std::to_string(*v);
}

ojson optional_json(const std::optional<double>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}
ojson optional_json(const std::optional<std::size_t>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

double truth_of(const CellRecord& c, const std::string& quantity) {
  for (const auto& t : c.truth)
    if (t.quantity == quantity) return t.value;
  return 0.0;
}

// The union of the cells' figure names, in order of first appearance.
std::vector<std::string> figure_columns(const ResultSet& r) {
  std::vector<std::string> out;
  for (const auto& c : r.cells)
    if (c.decision)
      for (const auto& [name, value] : c.decision->figures)
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

std::optional<double> figure_of(const std::vector<std::pair<std::string, double>>& figures,
                                const std::string& name) {
  for (const auto& [n, v] : figures)
    if (n == name) return v;
  return std::nullopt;
}

}  // namespace

ojson decision_json(const DecisionRecord& d) {
  ojson figures = ojson::object(), oracle = ojson::object();
  for (const auto& [name, value] : d.figures) figures[name] = value;
  for (const auto& [name, value] : d.oracle_figures) oracle[name] = value;
  ojson out = {{"task", d.task},
               {"params", d.params},
               {"method", d.method},
               {"samples", d.samples},
               {"expected_utility", d.expected_utility},
               {"expected_utility_error", d.expected_utility_error},
               {"oracle_expected_utility", d.oracle_expected_utility},
               {"oracle_expected_utility_error", d.oracle_expected_utility_error},
               {"miscalibration_cost", d.miscalibration_cost},
               {"miscalibration_cost_error", d.miscalibration_cost_error},
               {"realised_utility", {{"mean", d.realised_mean}, {"sd", d.realised_sd}}}};
  for (const auto& [name, value] : d.figures) out[name] = value;
  out["figures"] = figures;
  out["oracle_figures"] = oracle;
  if (d.recalibrated) {
    const RecalibratedRecord& r = *d.recalibrated;
    const auto stat = [&](double mean, double sd, double error) -> ojson {
      if (r.fits == 0) return nullptr;
      return {{"mean", mean}, {"sd", sd}, {"error", error}};
    };
    out["recalibrated"] = {
        {"method", r.label},
        {"name", r.name},
        {"params", r.params},
        {"fit_size", r.fit_size},
        {"samples", r.samples},
        {"fits", r.fits},
        {"failed_fits", r.failed_fits},
        {"failure", r.failure.empty() ? ojson(nullptr) : ojson(r.failure)},
        {"expected_utility", stat(r.utility_mean, r.utility_sd, r.utility_error)},
        {"miscalibration_cost", stat(r.cost_mean, r.cost_sd, r.cost_error)}};
  }
  return out;
}

ojson requirements_json(const RequirementsRecord& r) {
  ojson rows = ojson::array();
  for (const auto& row : r.rows) {
    ojson group = ojson::object();
    for (const auto& [k, v] : row.group) group[k] = v;
    rows.push_back({{"group", group},
                    {"cells", row.cells},
                    {"status", row.status},
                    {"minimal_accuracy", optional_json(row.minimal_accuracy)},
                    {"ece_top_l1", optional_json(row.ece_top_l1)},
                    {"lower_cell", optional_json(row.lower_cell)},
                    {"lower_accuracy", optional_json(row.lower_accuracy)},
                    {"lower_value", optional_json(row.lower_value)},
                    {"upper_cell", optional_json(row.upper_cell)},
                    {"upper_accuracy", optional_json(row.upper_accuracy)},
                    {"upper_value", optional_json(row.upper_value)},
                    {"monotone", row.monotone}});
  }
  return {{"metric", r.metric},
          {"bound", r.bound},
          {"value", r.value},
          {"accuracy_key", r.accuracy_key.empty() ? ojson(nullptr) : ojson(r.accuracy_key)},
          {"group_keys", r.group_keys},
          {"frontier", rows},
          {"verdict", r.verdict}};
}

std::string decision_cells_csv(const ResultSet& r) {
  const auto figures = figure_columns(r);
  const bool targets = has_solved_targets(r);
  std::ostringstream out;
  out << key_columns_header(r, targets);
  out << ",sample_size,replicates,task,method,samples,accuracy,ece_top_l1,expected_utility,"
         "expected_utility_error,oracle_expected_utility,oracle_expected_utility_error,"
         "miscalibration_cost,miscalibration_cost_error,realised_mean,realised_sd";
  for (const auto& f : figures) out << ',' << f;
  for (const auto& f : figures) out << ",oracle_" << f;
  // Recalibrated columns only when some cell has a recalibrator, so other runs keep their bytes.
  const bool recalibrated = std::any_of(r.cells.begin(), r.cells.end(), [](const CellRecord& c) {
    return c.decision && c.decision->recalibrated;
  });
  if (recalibrated)
    out << ",recalibrator,recalibrator_fit_size,recalibrated_fits,recalibrated_failed_fits,"
           "recalibrated_expected_utility_mean,recalibrated_expected_utility_sd,"
           "recalibrated_cost_mean,recalibrated_cost_sd,recalibrated_cost_error";
  out << '\n';
  for (const auto& c : r.cells) {
    if (!c.decision) continue;
    const DecisionRecord& d = *c.decision;
    out << key_columns(c, targets);
    out << ',' << c.sample_size << ',' << c.replicates << ',' << d.task << ',' << d.method << ','
        << d.samples << ',' << format_double(truth_of(c, "accuracy")) << ','
        << format_double(truth_of(c, "ece_top_l1")) << ',' << format_double(d.expected_utility)
        << ',' << format_double(d.expected_utility_error) << ','
        << format_double(d.oracle_expected_utility) << ','
        << format_double(d.oracle_expected_utility_error) << ','
        << format_double(d.miscalibration_cost) << ',' << format_double(d.miscalibration_cost_error)
        << ',' << format_double(d.realised_mean) << ',' << format_double(d.realised_sd);
    for (const auto& f : figures) out << ',' << csv_optional(figure_of(d.figures, f));
    for (const auto& f : figures) out << ',' << csv_optional(figure_of(d.oracle_figures, f));
    if (recalibrated) {
      if (d.recalibrated) {
        const RecalibratedRecord& q = *d.recalibrated;
        const auto num = [&](double x) { return q.fits > 0 ? format_double(x) : std::string(); };
        out << ',' << csv_escape(q.label) << ',' << q.fit_size << ',' << q.fits << ','
            << q.failed_fits << ',' << num(q.utility_mean) << ',' << num(q.utility_sd) << ','
            << num(q.cost_mean) << ',' << num(q.cost_sd) << ',' << num(q.cost_error);
      } else {
        out << ",,,,,,,,,";
      }
    }
    out << '\n';
  }
  return out.str();
}

std::string requirements_csv(const ResultSet& r) {
  std::ostringstream out;
  if (!r.requirements) return {};
  const RequirementsRecord& q = *r.requirements;
  for (const auto& k : q.group_keys) out << csv_escape(k) << ',';
  out << "metric,bound,value,status,minimal_accuracy,ece_top_l1,lower_cell,lower_accuracy,"
         "lower_value,upper_cell,upper_accuracy,upper_value,monotone,cells\n";
  for (const auto& row : q.rows) {
    for (const auto& [k, v] : row.group) out << csv_value(v) << ',';
    std::string cells;
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      if (i > 0) cells.append(1, ' ');
      cells += std::to_string(row.cells[i]);
    }
    out << q.metric << ',' << q.bound << ',' << format_double(q.value) << ',' << row.status << ','
        << csv_optional(row.minimal_accuracy) << ',' << csv_optional(row.ece_top_l1) << ','
        << csv_optional(row.lower_cell) << ',' << csv_optional(row.lower_accuracy) << ','
        << csv_optional(row.lower_value) << ',' << csv_optional(row.upper_cell) << ','
        << csv_optional(row.upper_accuracy) << ',' << csv_optional(row.upper_value) << ','
        << (row.monotone ? "true" : "false") << ',' << cells << '\n';
  }
  return out.str();
}

std::string format_decision_table(const ResultSet& r) {
  std::ostringstream out;
  char line[512];
  const auto figures = figure_columns(r);
  std::snprintf(line, sizeof line, "%-5s %-40s %9s %9s %11s %11s %11s %10s %10s", "cell",
                "parameters", "accuracy", "ece_top", "utility", "oracle", "cost", "realised", "sd");
  out << line;
  for (const auto& f : figures) out << ' ' << f;
  const bool recalibrated = std::any_of(r.cells.begin(), r.cells.end(), [](const CellRecord& c) {
    return c.decision && c.decision->recalibrated;
  });
  if (recalibrated) out << " recalibrated_cost(sd)";
  out << '\n';
  for (const auto& c : r.cells) {
    if (!c.decision) continue;
    const DecisionRecord& d = *c.decision;
    std::string params;
    for (const auto& [k, v] : c.swept) {
      const auto dot = k.rfind('.');
      params += (params.empty() ? "" : " ") + (dot == std::string::npos ? k : k.substr(dot + 1)) +
                "=" + v.dump();
    }
    if (params.empty()) params = "-";
    std::snprintf(line, sizeof line, "%-5zu %-40s %9.5f %9.5f %11.6f %11.6f %11.3e %10.5f %10.5f",
                  c.index, params.c_str(), truth_of(c, "accuracy"), truth_of(c, "ece_top_l1"),
                  d.expected_utility, d.oracle_expected_utility, d.miscalibration_cost,
                  d.realised_mean, d.realised_sd);
    out << line;
    for (const auto& f : figures) {
      const auto v = figure_of(d.figures, f);
      std::snprintf(line, sizeof line, " %*.5f", static_cast<int>(f.size()), v ? *v : 0.0);
      out << line;
    }
    if (d.recalibrated && d.recalibrated->fits > 0) {
      std::snprintf(line, sizeof line, " %.3e (%.1e)", d.recalibrated->cost_mean,
                    d.recalibrated->cost_sd);
      out << line;
    } else if (d.recalibrated) {
      out << " no fit";
    }
    out << '\n';
  }
  if (r.requirements) {
    const RequirementsRecord& q = *r.requirements;
    out << "\nrequirement frontier (" << q.metric << ' ' << (q.bound == "at_least" ? ">=" : "<=")
        << ' ' << format_double(q.value) << "):\n";
    for (const auto& row : q.rows) {
      std::string group;
      for (const auto& [k, v] : row.group)
        group += (group.empty() ? "" : ", ") + k + " = " + v.dump();
      if (group.empty()) group = "all cells";
      out << "  " << group << ": ";
      if (row.status == "reached") {
        std::snprintf(line, sizeof line,
                      "minimal accuracy %.4f (ece_top_l1 %.4f), between cell %zu (accuracy %.4f) "
                      "and cell %zu (accuracy %.4f)%s",
                      *row.minimal_accuracy, row.ece_top_l1.value_or(0.0), *row.lower_cell,
                      *row.lower_accuracy, *row.upper_cell, *row.upper_accuracy,
                      row.monotone ? "" : " [not monotone in accuracy]");
        out << line;
      } else if (row.status == "met_everywhere") {
        std::snprintf(line, sizeof line, "met everywhere (from accuracy %.4f, the lowest swept)",
                      *row.minimal_accuracy);
        out << line;
      } else {
        std::snprintf(line, sizeof line,
                      "unreachable within the swept accuracies (closest: cell %zu, %s = %.6g)",
                      row.lower_cell.value_or(0), q.metric.c_str(), row.lower_value.value_or(0.0));
        out << line;
      }
      out << '\n';
    }
    out << "\n" << q.verdict << "\n";
  }
  return out.str();
}

}  // namespace calbench
