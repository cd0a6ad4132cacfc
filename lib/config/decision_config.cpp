#include "config/decision_config.hpp"

#include <algorithm>
#include <cmath>

#include "config/decision_registry.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

const std::vector<std::string>& common_decision_metrics() {
  static const std::vector<std::string> names = {"expected_utility", "oracle_expected_utility",
                                                 "miscalibration_cost"};
  return names;
}

std::optional<DecisionConfig> parse_decision_section(ObjectReader& top,
                                                     std::optional<std::size_t> classes) {
  const Json* value = top.require("decision", "an object {\"task\": ..., parameters...}");
  if (value == nullptr) return std::nullopt;
  const std::string pointer = top.pointer_to("decision");
  ObjectReader d(*value, pointer, top.problems());
  std::optional<DecisionConfig> out;
  const std::size_t before = top.problems().size();
  if (d.is_object()) {
    if (const DecisionEntry* row = lookup(d, "task", "decision task", decision_registry())) {
      d.allow_only(allowed_keys({"task"}, row->params));
      auto spec = row->parse(d, classes);
      if (spec && top.problems().size() == before) {
        try {
          const auto task = make_task(*spec);
          if (classes && task->classes() != *classes)
            d.problems().add(pointer, "the task has " + std::to_string(task->classes()) +
                                          " classes, the generator " + std::to_string(*classes));
          else
            out = DecisionConfig{row->name, std::move(*spec), Json::object(), task->figure_names()};
        } catch (const DomainError& error) {
          d.problems().add(pointer, error.what());
        }
      }
    }
  }
  Json resolved = d.take_resolved();
  if (out) {
    for (const auto& item : resolved.items())
      if (item.key() != "task") out->params[item.key()] = item.value();
  }
  top.set_resolved("decision", std::move(resolved));
  if (top.problems().size() != before) return std::nullopt;
  return out;
}

std::optional<DecisionRecalibratorConfig> parse_recalibrator_section(ObjectReader& top, bool& ok) {
  ok = true;
  const Json* value = top.find("recalibrator");
  if (value == nullptr) return std::nullopt;
  const std::size_t before = top.problems().size();
  ObjectReader r(*value, top.pointer_to("recalibrator"), top.problems());
  std::optional<MethodConfig> method;
  std::optional<std::int64_t> fit_size;
  std::optional<std::uint64_t> samples;
  if (r.is_object()) {
    r.allow_only({"method", "fit_size", "samples"});
    if (const Json* m = r.require("method",
                                  "a method object {\"name\": ..., ...} as in a "
                                  "recalibration config's \"methods\"")) {
      Json resolved;
      method = parse_recalibration_method(*m, r.pointer_to("method"), top.problems(), resolved);
      r.set_resolved("method", std::move(resolved));
      if (method && method->label == uncalibrated_label) {
        top.problems().add(r.pointer_to("method"),
                           "label \"uncalibrated\" is reserved for the uncalibrated model");
        method.reset();
      }
    }
    fit_size = r.integer("fit_size", 2);
    samples = r.unsigned_integer("samples", 1000, DecisionRecalibratorConfig{}.samples);
  }
  top.set_resolved("recalibrator", r.take_resolved());
  if (top.problems().size() != before || !method || !fit_size || !samples) {
    ok = false;
    return std::nullopt;
  }
  return DecisionRecalibratorConfig{std::move(*method), static_cast<std::size_t>(*fit_size),
                                    *samples};
}

std::optional<RequirementConfig> parse_requirement_section(
    ObjectReader& top, const std::vector<std::string>& sweep_keys,
    const std::vector<std::string>& figures) {
  const Json* value = top.find("requirement");
  if (value == nullptr) return std::nullopt;
  ObjectReader r(*value, top.pointer_to("requirement"), top.problems());
  if (!r.is_object()) return std::nullopt;
  const std::size_t before = top.problems().size();
  r.allow_only({"metric", "at_least", "at_most", "regret", "accuracy_key"});
  RequirementConfig out;
  // The bound: exactly one of at_least, at_most, regret.
  std::vector<std::string> given;
  for (const char* key : {"at_least", "at_most", "regret"})
    if (r.find(key) != nullptr) given.emplace_back(key);
  if (given.size() != 1) {
    top.problems().add(r.pointer(), given.empty()
                                        ? "expected one bound: \"at_least\": x, \"at_most\": x or "
                                          "\"regret\": x"
                                        : "give one bound, found " + join(given, " and "));
  } else {
    const std::string& key = given.front();
    const auto x = read_number(*r.find(key), r.pointer_to(key), top.problems());
    if (x) {
      out.requirement.value = *x;
      out.requirement.bound = key == "at_least" ? Bound::at_least : Bound::at_most;
      out.requirement.regret = key == "regret";
      if (out.requirement.regret && *x < 0.0)
        top.problems().add(r.pointer_to(key),
                           "regret = " + format_double(*x) + ": must be >= 0 (a cost bound)");
    }
  }
  std::vector<std::string> metrics = common_decision_metrics();
  metrics.insert(metrics.end(), figures.begin(), figures.end());
  const bool regret = given.size() == 1 && given.front() == "regret";
  if (const auto metric = r.string("metric", "expected_utility")) {
    if (std::find(metrics.begin(), metrics.end(), *metric) == metrics.end()) {
      top.problems().add(r.pointer_to("metric"), unknown_name("metric", *metric, metrics));
    } else if (regret && *metric != "expected_utility") {
      top.problems().add(r.pointer_to("metric"),
                         "a regret bound is on expected_utility (it bounds miscalibration_cost = "
                         "oracle - policy), found metric " +
                             quote(*metric));
    }
    out.requirement.metric = regret ? "miscalibration_cost" : *metric;
  }
  if (const Json* key = r.find("accuracy_key")) {
    if (const auto k = read_string(*key, r.pointer_to("accuracy_key"), top.problems())) {
      if (std::find(sweep_keys.begin(), sweep_keys.end(), *k) == sweep_keys.end())
        top.problems().add(r.pointer_to("accuracy_key"),
                           quote(*k) + " is not a sweep key; the sweep keys are: " +
                               (sweep_keys.empty() ? std::string("none") : join(sweep_keys, ", ")));
      else
        out.accuracy_key = *k;
    }
  } else {
    // The parameter that sets accuracy: a target accuracy when one is swept, else alpha.
    for (const char* k : {"generator.target.accuracy", "generator.alpha"})
      if (out.accuracy_key.empty() &&
          std::find(sweep_keys.begin(), sweep_keys.end(), k) != sweep_keys.end())
        out.accuracy_key = k;
    r.add_default("accuracy_key",
                  out.accuracy_key.empty() ? Json(nullptr) : Json(out.accuracy_key));
  }
  top.set_resolved("requirement", r.take_resolved());
  if (top.problems().size() != before) return std::nullopt;
  return out;
}

void reject_foreign_sections(const ObjectReader& top, const std::string& scenario) {
  const bool decision = scenario == "decision";
  const std::vector<std::string> own = {"decision", "requirement", "recalibrator"};
  const std::vector<std::string> others = {"estimators", "intervals"};
  for (const auto& key : decision ? others : own)
    if (top.find(key) != nullptr)
      top.problems().add(top.pointer_to(key),
                         decision
                             ? "key " + quote(key) + " is not used by scenario \"decision\""
                             : "key " + quote(key) + " belongs to scenario \"decision\", not " +
                                   quote(scenario.empty() ? "(none)" : scenario));
}

}  // namespace calbench
