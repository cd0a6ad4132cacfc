#include "report/listing.hpp"

#include <algorithm>
#include <functional>

#include "config/registry.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "decisions/decision_tasks_json.hpp"
#include "estimators/estimators_json.hpp"
#include "generators/generators_json.hpp"
#include "recalibrators/recalibrators_json.hpp"

namespace calbench {
namespace {

// "LABEL  first line" with the continuation lines indented under the first.
std::string labelled(std::string_view indent, std::string_view label, std::string_view text) {
  const std::string head = std::string(indent) + std::string(label) + "  ";
  const std::string pad(head.size(), ' ');
  std::string out;
  std::size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += (first ? head : pad) + std::string(text.substr(start, end - start)) + '\n';
    first = false;
    start = end + 1;
  }
  return out;
}

// The one format of a row of every kind: summary, parameters, example, notes.
std::string format_row(std::string_view name_key, std::string_view name, std::string_view summary,
                       const std::vector<Param>& params, std::string_view example,
                       const std::vector<Note>& notes) {
  std::string out = "\n";
  out += labelled("  ", name, summary);
  if (params.empty()) {
    out += "    parameters:  none\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : params)
      rows.push_back({p.key, p.type,
                      p.fallback == "required" ? std::string("required") : "default " + p.fallback,
                      p.rule, p.doc});
    out += "    parameters:\n" + aligned_columns(rows, "      ");
  }
  const auto note = [&](std::string label, std::string_view text) {
    label += ':';
    label.resize(std::max<std::size_t>(label.size(), 11), ' ');
    out += labelled("    ", label, text);
  };
  note("example", example_object(name_key, name, example));
  for (const auto& n : notes) note(n.label, n.text);
  return out;
}

template <typename R>
std::string format_rows(std::string header, std::string_view name_key, const std::vector<R>& rows,
                        std::string_view footer = {}) {
  std::string out = header + "\n";
  for (const auto& r : rows)
    out += format_row(name_key, r.name, r.summary, r.params, r.example, r.notes);
  return out + std::string(footer);
}

std::string format_estimators() {
  return format_rows(
      "ESTIMATORS  (\"estimators\": [{\"name\": NAME, \"label\": LABEL, PARAMS...}])", "name",
      estimator_registry());
}

std::string format_maps() {
  return format_rows(
      "MISCALIBRATION MAPS  (\"generator\": {\"miscalibration\": {\"map\": NAME, PARAMS...}})",
      "map", map_registry());
}

std::string format_families() {
  return format_rows("FAMILIES  (\"generator\": {\"family\": NAME, PARAMS...})", "family",
                     family_registry());
}

std::string format_scenarios(const std::vector<ScenarioEntry>& scenarios) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : scenarios) rows.push_back({s.name, s.summary});
  return "SCENARIOS  (\"scenario\": NAME)\n\n" + aligned_columns(rows, "  ");
}

std::string format_quantities() {
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : quantity_registry())
    rows.push_back({std::string(to_string(q.quantity)), q.definition});
  return "QUANTITIES  (ground truth; an estimator's target)\n\n" + aligned_columns(rows, "  ");
}

}  // namespace

std::string format_decisions() {
  return format_rows(
      "DECISION TASKS  (scenario decision: \"decision\": {\"task\": NAME, PARAMS...})", "task",
      decision_registry(),
      "\n  every task also reports " + join(common_decision_metric_names(), ", ") +
          "\n  (miscalibration_cost = oracle - policy); any of them can be a requirement's "
          "metric\n");
}

std::string format_recalibrators() {
  return format_rows(
      "RECALIBRATORS  (\"methods\": [{\"name\": NAME, \"label\": LABEL, PARAMS...}]; scenario "
      "recalibration)",
      "name", recalibrator_registry());
}

std::string format_registry(std::string_view kind, const std::vector<ScenarioEntry>& scenarios) {
  using Formatter = std::function<std::string()>;
  const std::vector<std::pair<std::string, Formatter>> sections = {
      {"estimators", format_estimators},
      {"maps", format_maps},
      {"families", format_families},
      {"scenarios", [&scenarios] { return format_scenarios(scenarios); }},
      {"quantities", format_quantities},
      {"decisions", format_decisions},
      {"recalibrators", format_recalibrators}};
  std::string out;
  for (const auto& [name, format] : sections) {
    if (kind.empty()) {
      if (!out.empty()) out += '\n';
      out += format();
    } else if (kind == name) {
      return format();
    }
  }
  if (!kind.empty()) {
    std::vector<std::string> valid;
    for (const auto& section : sections) valid.push_back(section.first);
    throw ConfigError(
        {"calbench list: unknown kind " + quote(kind) + "; valid: " + join(valid, ", ")});
  }
  return out;
}

}  // namespace calbench
