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
#include "report/text_report.hpp"

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

// A parameter's line of a row's listing: key, type, default, rule, doc.
const std::vector<ColumnSpec<Param>> param_columns = {
    text_column<Param>([](const Param& p) { return p.key; }),
    text_column<Param>([](const Param& p) { return p.type; }),
    text_column<Param>([](const Param& p) {
      return p.fallback == "required" ? std::string("required") : "default " + p.fallback;
    }),
    text_column<Param>([](const Param& p) { return p.rule; }),
    text_column<Param>([](const Param& p) { return p.doc; })};

const std::vector<ColumnSpec<ScenarioEntry>> scenario_columns = {
    text_column<ScenarioEntry>([](const ScenarioEntry& s) { return s.name; }),
    text_column<ScenarioEntry>([](const ScenarioEntry& s) { return s.summary; })};

const std::vector<ColumnSpec<QuantityEntry>> quantity_columns = {
    text_column<QuantityEntry>([](const QuantityEntry& q) { return to_string(q.quantity); }),
    text_column<QuantityEntry>([](const QuantityEntry& q) { return q.definition; })};

// The one format of a row of every kind: summary, parameters, example, notes.
std::string format_row(std::string_view name_key, std::string_view name, std::string_view summary,
                       const std::vector<Param>& params, std::string_view example,
                       const std::vector<Note>& notes) {
  std::string out = "\n";
  out += labelled("  ", name, summary);
  if (params.empty())
    out += "    parameters:  none\n";
  else
    out += "    parameters:\n" + terminal_text(param_columns, params, {.indent = "      "});
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
  return "SCENARIOS  (\"scenario\": NAME)\n\n" + terminal_text(scenario_columns, scenarios, {});
}

std::string format_quantities() {
  return "QUANTITIES  (ground truth; an estimator's target)\n\n" +
         terminal_text(quantity_columns, quantity_registry(), {});
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

namespace {

// One kind of the registry: its name, its rows' names and its full listing. `detail(name)` is
// one row's listing, or empty when the kind has no row of that name.
struct Section {
  std::string kind;
  std::vector<std::string> names;
  std::function<std::string()> format;
  std::function<std::string(std::string_view)> detail;
};

template <typename R>
std::function<std::string(std::string_view)> detail_of(std::string_view name_key,
                                                       const std::vector<R>& rows) {
  return [name_key, &rows](std::string_view name) -> std::string {
    for (const auto& r : rows)
      if (r.name == name)
        return format_row(name_key, r.name, r.summary, r.params, r.example, r.notes).substr(1);
    return {};
  };
}

std::vector<Section> sections(const std::vector<ScenarioEntry>& scenarios) {
  std::vector<std::string> scenario_names, quantity_names;
  for (const auto& s : scenarios) scenario_names.push_back(s.name);
  for (const auto& q : quantity_registry()) quantity_names.emplace_back(to_string(q.quantity));
  const auto no_detail = [](std::string_view) { return std::string(); };
  return {{"estimators", names_of(estimator_registry()), format_estimators,
           detail_of("name", estimator_registry())},
          {"maps", names_of(map_registry()), format_maps, detail_of("map", map_registry())},
          {"families", names_of(family_registry()), format_families,
           detail_of("family", family_registry())},
          {"scenarios", scenario_names, [&scenarios] { return format_scenarios(scenarios); },
           no_detail},
          {"quantities", quantity_names, format_quantities, no_detail},
          {"decisions", names_of(decision_registry()), format_decisions,
           detail_of("task", decision_registry())},
          {"recalibrators", names_of(recalibrator_registry()), format_recalibrators,
           detail_of("name", recalibrator_registry())}};
}

// "KIND (N)  name, name, ..." with the names wrapped under the first within `width` columns.
std::string summary_line(const Section& s, std::size_t label_width, std::size_t width) {
  std::string label = s.kind + " (" + std::to_string(s.names.size()) + ")";
  label.resize(std::max(label.size() + 2, label_width), ' ');
  const std::string pad(2 + label.size(), ' ');
  std::string out, line = "  " + label;
  for (std::size_t i = 0; i < s.names.size(); ++i) {
    const std::string word = s.names[i] + (i + 1 < s.names.size() ? "," : "");
    const bool first = line.size() == pad.size();
    if (!first && line.size() + 1 + word.size() > width) {
      out += line + '\n';
      line = pad;
    }
    line += (line.size() == pad.size() ? "" : " ") + word;
  }
  return out + line + '\n';
}

}  // namespace

std::string format_registry(std::string_view kind, const std::vector<ScenarioEntry>& scenarios) {
  const std::vector<Section> all = sections(scenarios);
  if (kind.empty()) {
    // One screen: each kind's names; the details are one `calbench list KIND` away.
    std::string out =
        "The registry: what a config can name. `calbench list KIND` shows a kind with every\n"
        "parameter, default, rule and example; `calbench list NAME` shows one entry.\n\n";
    for (const auto& s : all) out += summary_line(s, 20, 100);
    return out;
  }
  for (const auto& s : all)
    if (kind == s.kind) return s.format();
  // A row's name: its listing, under its kind's heading.
  std::string found;
  for (const auto& s : all) {
    const std::string row = s.detail(kind);
    if (!row.empty()) found += (found.empty() ? "" : "\n") + s.kind + ":\n" + row;
  }
  if (!found.empty()) return found;
  std::vector<std::string> valid;
  for (const auto& s : all) valid.push_back(s.kind);
  throw ConfigError({"calbench list: unknown kind or name " + quote(kind) +
                     "; kinds: " + join(valid, ", ") + " (`calbench list` names every entry)"});
}

}  // namespace calbench
