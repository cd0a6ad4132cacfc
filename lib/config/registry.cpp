#include "config/registry.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

// ---- parameters ---------------------------------------------------------------------------

void Args::set(std::string_view key, std::any value, std::optional<ParamValue> shown) {
  entries_.push_back({std::string(key), std::move(value), std::move(shown)});
}

const Args::Entry* Args::find(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

std::vector<NamedParam> Args::shown() const {
  std::vector<NamedParam> out;
  for (const auto& e : entries_)
    if (e.shown) out.push_back({e.key, *e.shown});
  return out;
}

bool read_params(const std::vector<Param>& params, Args& args) {
  std::vector<bool> done(params.size(), false);
  bool ok = true;
  const auto read = [&](std::size_t i) {
    done[i] = true;
    if (params[i].read && !params[i].read(args)) ok = false;
  };
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (done[i]) continue;
    if (!params[i].after.empty()) {
      for (std::size_t j = 0; j < params.size(); ++j)
        if (params[j].key == params[i].after && !done[j]) read(j);
      // Without the value its default depends on there is nothing sensible to read against.
      if (!args.has(params[i].after)) {
        done[i] = true;
        continue;
      }
    }
    read(i);
  }
  return ok;
}

namespace param {
namespace {

// A value outside the rule of `in_range`, when one of these is.
std::vector<Json> outside(bool (*in_range)(double)) {
  for (double x : {-1.0, 0.0, 1.0, 2.0, 1e300})
    if (!in_range(x)) return {Json(x)};
  return {};
}

std::vector<Json> with(std::vector<Json> first, std::vector<Json> more) {
  first.insert(first.end(), more.begin(), more.end());
  return first;
}

}  // namespace

Param integer(std::string key, std::int64_t min, std::optional<std::int64_t> fallback,
              std::string doc) {
  Param p{key,
          "integer",
          fallback ? std::to_string(*fallback) : "required",
          ">= " + std::to_string(min),
          std::move(doc),
          {},
          {},
          {Json(true), Json(min - 1)},
          {}};
  p.read = [key, min, fallback](Args& args) {
    const auto value = args.reader().integer(key, min, fallback);
    if (value) args.set(key, *value, ParamValue(*value));
    return value.has_value();
  };
  return p;
}

Param integer_after(std::string key, std::int64_t min, std::string after,
                    std::function<std::int64_t(const Args&)> fallback, std::string fallback_doc,
                    std::string doc) {
  Param p{key,
          "integer",
          std::move(fallback_doc),
          ">= " + std::to_string(min),
          std::move(doc),
          after,
          {},
          {Json(true), Json(min - 1)},
          {}};
  p.read = [key, min, fallback](Args& args) {
    const auto value = args.reader().integer(key, min, fallback(args));
    if (value) args.set(key, *value, ParamValue(*value));
    return value.has_value();
  };
  return p;
}

Param number(std::string key, std::optional<double> fallback, bool (*in_range)(double),
             std::string rule, std::string doc) {
  Param p{key,
          "number",
          fallback ? format_double(*fallback) : "required",
          rule,
          std::move(doc),
          {},
          {},
          with({Json(true)}, outside(in_range)),
          {}};
  p.read = [key, fallback, in_range, rule](Args& args) {
    const auto value = args.reader().number(key, fallback, in_range, rule);
    if (value) args.set(key, *value, ParamValue(*value));
    return value.has_value();
  };
  return p;
}

Param number_after(std::string key, std::string after,
                   std::function<std::optional<double>(const Args&)> fallback,
                   std::string fallback_doc, bool (*in_range)(double), std::string rule,
                   std::string doc) {
  Param p{key,
          "number",
          std::move(fallback_doc),
          rule,
          std::move(doc),
          after,
          {},
          with({Json(true)}, outside(in_range)),
          {}};
  p.read = [key, fallback, in_range, rule](Args& args) {
    const auto value = args.reader().number(key, fallback(args), in_range, rule);
    if (value) args.set(key, *value, ParamValue(*value));
    return value.has_value();
  };
  return p;
}

Param positive(std::string key, std::optional<double> fallback, std::string doc) {
  Param p{key,
          "number",
          fallback ? format_double(*fallback) : "required",
          "> 0",
          std::move(doc),
          {},
          {},
          {Json(true), Json(0.0)},
          {}};
  p.read = [key, fallback](Args& args) {
    const auto value = args.reader().positive(key, fallback);
    if (value) args.set(key, *value, ParamValue(*value));
    return value.has_value();
  };
  return p;
}

Param boolean(std::string key, bool fallback, std::string doc) {
  Param p{
      key,           "boolean", fallback ? "true" : "false", "true | false", std::move(doc), {}, {},
      {Json("yes")}, {}};
  p.read = [key, fallback](Args& args) {
    const auto value = args.reader().boolean(key, fallback);
    if (value) args.set(key, *value, ParamValue(*value));
    return value.has_value();
  };
  return p;
}

Param literal_or_number(std::string key, std::string literal, bool (*in_range)(double),
                        std::string rule, std::string doc) {
  Param p{key,
          "string|number",
          quote(literal),
          literal + " | " + rule,
          std::move(doc),
          {},
          {},
          with({Json(true)}, outside(in_range)),
          {}};
  p.read = [key, literal, in_range, rule](Args& args) {
    ObjectReader& reader = args.reader();
    const Json* value = reader.find(key);
    if (value == nullptr) {
      reader.add_default(key, literal);
      args.set(key, std::optional<double>(), ParamValue(literal));
      return true;
    }
    if (value->is_string() && value->get<std::string>() == literal) {
      args.set(key, std::optional<double>(), ParamValue(literal));
      return true;
    }
    if (value->is_number() && std::isfinite(value->get<double>()) &&
        in_range(value->get<double>())) {
      const double x = value->get<double>();
      args.set(key, std::optional<double>(x), ParamValue(x));
      return true;
    }
    reader.problems().add(reader.pointer_to(key), "expected " + quote(literal) + " or a number " +
                                                      rule + ", found " + describe(*value));
    return false;
  };
  return p;
}

Param custom(std::string key, std::string type, std::string fallback, std::string rule,
             std::string doc, std::function<bool(Args&)> read, std::vector<Json> bad) {
  return Param{std::move(key),  std::move(type), std::move(fallback),
               std::move(rule), std::move(doc),  {},
               std::move(read), std::move(bad),  {}};
}

}  // namespace param

std::vector<std::string> allowed_keys(std::vector<std::string> fixed,
                                      const std::vector<Param>& params) {
  for (const auto& p : params) fixed.push_back(p.key);
  return fixed;
}

std::string example_object(std::string_view name_key, std::string_view name,
                           std::string_view example) {
  std::string members(example.substr(std::min<std::size_t>(1, example.size())));
  const bool empty = members.find_first_not_of(" }") == std::string::npos;
  return "{" + quote(name_key) + ": " + quote(name) + (empty ? "}" : ", " + members);
}

// ---- the tables ---------------------------------------------------------------------------
// Each row is defined beside its concept (the file named in the comment); a new row is its
// declaration and its line in the table.

// lib/estimators/estimators_json.cpp and binned_ece_json.cpp
EstimatorEntry accuracy_estimator();
EstimatorEntry ace_estimator();
EstimatorEntry brier_estimator();
EstimatorEntry classwise_ece_estimator();
EstimatorEntry ece_estimator();
EstimatorEntry kde_ece_estimator();
EstimatorEntry kde_canonical_estimator();
EstimatorEntry ece_debiased_estimator();
EstimatorEntry ece_sweep_estimator();
EstimatorEntry nll_estimator();
EstimatorEntry skce_estimator();
EstimatorEntry smooth_ece_estimator();

const std::vector<EstimatorEntry>& estimator_registry() {
  static const std::vector<EstimatorEntry> rows = [] {
    std::vector<EstimatorEntry> out = {
        named("accuracy", accuracy_estimator()),
        named("ace", ace_estimator()),
        named("brier", brier_estimator()),
        named("classwise_ece", classwise_ece_estimator()),
        named("ece", ece_estimator()),
        named("kde_ece", kde_ece_estimator()),
        named("kde_canonical", kde_canonical_estimator()),
        named("ece_debiased", ece_debiased_estimator()),
        named("ece_sweep", ece_sweep_estimator()),
        named("nll", nll_estimator()),
        named("skce", skce_estimator()),
        named("smooth_ece", smooth_ece_estimator()),
    };
    for (auto& row : out) {
      row.notes.push_back({"cost", row.extra.cost == Cost::quadratic
                                       ? "O(n^2) per evaluation: calbench eval runs it only "
                                         "when asked for"
                                       : "O(n log n) per evaluation at its defaults"});
      row.notes.push_back({"interval", "default method " +
                                           std::string(to_string(row.extra.interval)) +
                                           " (docs/intervals.md: measured coverage)"});
    }
    return out;
  }();
  return rows;
}

// lib/recalibrators/recalibrators_json.cpp
RecalibratorEntry temperature_recalibrator();
RecalibratorEntry vector_recalibrator();
RecalibratorEntry matrix_recalibrator();
RecalibratorEntry dirichlet_recalibrator();
RecalibratorEntry platt_recalibrator();
RecalibratorEntry logistic_recalibrator();
RecalibratorEntry beta_recalibrator();
RecalibratorEntry isotonic_recalibrator();
RecalibratorEntry histogram_binning_recalibrator();
RecalibratorEntry bbq_recalibrator();
RecalibratorEntry ensemble_temperature_recalibrator();
RecalibratorEntry scaling_binning_recalibrator();
RecalibratorEntry classwise_recalibrator();
RecalibratorEntry top_label_reduced_recalibrator();

const std::vector<RecalibratorEntry>& recalibrator_registry() {
  static const std::vector<RecalibratorEntry> rows = {
      named("temperature", temperature_recalibrator()),
      named("vector", vector_recalibrator()),
      named("matrix", matrix_recalibrator()),
      named("dirichlet", dirichlet_recalibrator()),
      named("platt", platt_recalibrator()),
      named("logistic", logistic_recalibrator()),
      named("beta", beta_recalibrator()),
      named("isotonic", isotonic_recalibrator()),
      named("histogram_binning", histogram_binning_recalibrator()),
      named("bbq", bbq_recalibrator()),
      named("ensemble_temperature", ensemble_temperature_recalibrator()),
      named("scaling_binning", scaling_binning_recalibrator()),
      named("classwise", classwise_recalibrator()),
      named("top_label_reduced", top_label_reduced_recalibrator()),
  };
  return rows;
}

// lib/decisions/decision_tasks_json.cpp
DecisionEntry cost_matrix_task();
DecisionEntry selective_task();
DecisionEntry triage_task();
DecisionEntry betting_task();

const std::vector<DecisionEntry>& decision_registry() {
  static const std::vector<DecisionEntry> rows = {
      named("cost_matrix", cost_matrix_task()),
      named("selective", selective_task()),
      named("triage", triage_task()),
      named("betting", betting_task()),
  };
  return rows;
}

// lib/generators/generators_json.cpp
MapEntry identity_map();
MapEntry temperature_map();
MapEntry power_map();
MapEntry top_label_map();
MapEntry affine_logit_map();
FamilyEntry dirichlet_family();
FamilyEntry class_conditional_family();
FamilyEntry label_noise_family();
FamilyEntry beta_binary_family();

const std::vector<MapEntry>& map_registry() {
  static const std::vector<MapEntry> rows = {
      named("identity", identity_map()),
      named("temperature", temperature_map()),
      named("power", power_map()),
      named("top_label", top_label_map()),
      named("affine_logit", affine_logit_map()),
  };
  return rows;
}

const std::vector<FamilyEntry>& family_registry() {
  static const std::vector<FamilyEntry> rows = {
      named("dirichlet", dirichlet_family()),
      named("class_conditional", class_conditional_family()),
      named("label_noise", label_noise_family()),
      named("beta_binary", beta_binary_family()),
  };
  return rows;
}

const std::vector<QuantityEntry>& quantity_registry() {
  // Definitions of DESIGN.md §1; Z = max_k p_k, c the true class distribution, r(p) = E[c | p].
  static const std::vector<QuantityEntry> rows = {
      {Quantity::accuracy, "P(y = argmax p) = E[c_{argmax p}]"},
      {Quantity::ece_top_l1, "E_Z |P(y = argmax p | Z) - Z|, Z = max p"},
      {Quantity::ece_top_l2, "sqrt(E_Z (P(y = argmax p | Z) - Z)^2)"},
      {Quantity::classwise_ece_l1, "(1/K) sum_k E |P(y = k | p_k) - p_k|"},
      {Quantity::canonical_l1, "E ||r(p) - p||_1"},
      {Quantity::canonical_l2, "sqrt(E ||r(p) - p||_2^2)"},
      {Quantity::brier, "E sum_k (p_k - 1{y=k})^2 = E[sum p_k^2 - 2 sum p_k c_k + 1]"},
      {Quantity::nll, "E[-log p_y] = E[-sum c_k log p_k]"},
      {Quantity::overconfidence, "E[Z] - accuracy"},
  };
  return rows;
}

const std::vector<Choice<IntervalChoice>>& interval_choices() {
  static const std::vector<Choice<IntervalChoice>> choices = [] {
    std::vector<Choice<IntervalChoice>> out = {{"default", std::nullopt}};
    for (IntervalMethod m : interval_methods()) out.push_back({to_string(m), m});
    return out;
  }();
  return choices;
}

std::vector<std::string> estimator_names() {
  return names_of(estimator_registry());
}
std::vector<std::string> decision_names() {
  return names_of(decision_registry());
}
std::vector<std::string> recalibrator_names() {
  return names_of(recalibrator_registry());
}

// ---- parsing ------------------------------------------------------------------------------

std::optional<EstimatorConfig> parse_estimator(const Json& entry, const std::string& pointer,
                                               Problems& problems, Json& resolved) {
  auto config =
      parse_registry_entry(entry, pointer, problems, resolved, "estimator", estimator_registry());
  if (config)
    for (const auto& row : estimator_registry())
      if (row.name == config->name) config->interval = row.extra.interval;
  return config;
}

const Json& default_miscalibration() {
  static const Json identity = {{"map", "identity"}};
  return identity;
}

std::optional<MiscalibrationMap> parse_miscalibration(ObjectReader& family,
                                                      std::optional<std::size_t> classes) {
  const Json* value = family.find("miscalibration");
  ObjectReader m(value != nullptr ? *value : default_miscalibration(),
                 family.pointer_to("miscalibration"), family.problems());
  auto map = parse_object(m, "map", "miscalibration map", map_registry(), classes);
  family.set_resolved("miscalibration", m.take_resolved());
  return map;
}

std::optional<ParsedGenerator> parse_generator(const Json& generator, const std::string& pointer,
                                               Problems& problems, Json& resolved) {
  ObjectReader g(generator, pointer, problems);
  const std::size_t before = problems.size();
  auto parsed = parse_object(g, "family", "family", family_registry());
  resolved = g.take_resolved();
  if (problems.size() != before || !parsed) return std::nullopt;
  // The generator's own checks are the authority; ours above only give precise pointers.
  try {
    Generator check(parsed->spec);
  } catch (const DomainError& error) {
    problems.add(pointer, error.what());
    return std::nullopt;
  }
  return parsed;
}

// ---- listing ------------------------------------------------------------------------------
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
      "\n  every task also reports expected_utility, oracle_expected_utility and\n"
      "  miscalibration_cost (= oracle - policy); any of them can be a requirement's metric\n");
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
