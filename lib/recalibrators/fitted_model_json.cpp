#include "recalibrators/fitted_model_json.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/version.hpp"
#include "recalibrators/recalibrators_json.hpp"
#include "recalibrators/restore_model.hpp"

namespace calbench {
namespace {

constexpr const char* format_name = "calbench.fitted_model";
constexpr std::int64_t format_version = 1;

// Nesting of states beyond this is surely not a fit's (wrappers nest at most 4 deep, plus
// a one-vs-rest model and its maps).
constexpr int max_state_depth = 8;

Json state_json(const FittedState& state) {
  Json out = {{"kind", state.kind}};
  for (const auto& [key, value] : state.scalars) out[key] = value;
  for (const auto& [key, values] : state.arrays) out[key] = values;
  if (!state.parts.empty()) {
    Json parts = Json::array();
    for (const auto& part : state.parts) parts.push_back(state_json(part));
    out["parts"] = std::move(parts);
  }
  return out;
}

// The state tree at `pointer`; each problem at its pointer. The state's own rules (shapes,
// order, ranges) are restore_model's.
std::optional<FittedState> read_state(const Json& value, const std::string& pointer,
                                      Problems& problems, int depth) {
  if (!value.is_object()) {
    problems.add(pointer,
                 "expected a model state object {\"kind\": ..., ...}, found " + describe(value));
    return std::nullopt;
  }
  if (depth > max_state_depth) {
    problems.add(pointer,
                 "model states nested more than " + std::to_string(max_state_depth) + " deep");
    return std::nullopt;
  }
  FittedState out;
  const std::size_t before = problems.size();
  const auto kind = value.find("kind");
  if (kind == value.end()) {
    problems.add(pointer, "required key \"kind\" is missing; expected the model's kind");
  } else if (const auto text = read_string(*kind, pointer_join(pointer, "kind"), problems)) {
    out.kind = *text;
  }
  for (const auto& [key, item] : value.items()) {
    const std::string at = pointer_join(pointer, key);
    if (key == "kind") continue;
    if (key == "parts") {
      if (!item.is_array()) {
        problems.add(at, "expected an array of model states, found " + describe(item));
        continue;
      }
      for (std::size_t j = 0; j < item.size(); ++j)
        if (auto part = read_state(item[j], pointer_join(at, j), problems, depth + 1))
          out.parts.push_back(std::move(*part));
    } else if (item.is_array()) {
      std::vector<double> values;
      for (std::size_t j = 0; j < item.size(); ++j)
        if (const auto x = read_number(item[j], pointer_join(at, j), problems))
          values.push_back(*x);
      out.arrays.emplace_back(key, std::move(values));
    } else if (const auto x = read_number(item, at, problems)) {
      out.scalars.emplace_back(key, *x);
    }
  }
  if (problems.size() != before) return std::nullopt;
  return out;
}

}  // namespace

Json method_spec(const std::string& spec, const std::string& source) {
  const auto first = spec.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && spec[first] == '{') {
    Problems problems;
    Json out = parse_json_source(spec, source, problems);
    if (!problems.empty()) throw ConfigError(problems.render(source));
    return out;
  }
  return Json{{"name", spec}};
}

FittedModel fit_model(const Json& method, const std::string& source, const Sample& sample) {
  Problems problems;
  Json resolved;
  auto config = parse_recalibration_method(method, "", problems, resolved);
  if (!problems.empty() || !config) throw ConfigError(problems.render(source));
  FittedModel out;
  out.method = std::move(resolved);
  out.label = config->label;
  out.classes = sample.classes;
  out.fit_rows = sample.size;
  out.zeros_raised = static_cast<std::size_t>(std::count(sample.p.begin(), sample.p.end(), 0.0));
  // The registry method's own fit, as the recalibration scenario calls it (shared verb).
  if (out.zeros_raised == 0) {
    out.model = fit(*config->method, sample);
    return out;
  }
  Sample raised = sample;
  std::replace(raised.p.begin(), raised.p.end(), 0.0, zero_floor);
  raised.summarise();
  out.model = fit(*config->method, raised);
  return out;
}

Json fitted_model_json(const FittedModel& fitted) {
  Json parameters = Json::object();
  for (const auto& v : fitted.model->parameters()) parameters[v.name] = v.value;
  return {{"format", format_name},
          {"format_version", format_version},
          {"calbench_version", version},
          {"method", fitted.method},
          {"label", fitted.label},
          {"classes", fitted.classes},
          {"fit_rows", fitted.fit_rows},
          {"parameters", std::move(parameters)},
          {"model", state_json(fitted.model->state())}};
}

FittedModel read_fitted_model(const Json& document, const std::string& source) {
  Problems problems;
  ObjectReader top(document, "", problems);
  if (!top.is_object()) throw ConfigError(problems.render(source));
  top.allow_only({"format", "format_version", "calbench_version", "method", "label", "classes",
                  "fit_rows", "parameters", "model"});
  const auto format = top.string("format");
  if (format && *format != format_name)
    problems.add("/format", "expected \"" + std::string(format_name) + "\", found " +
                                quote(*format) + ": not a fitted model of calbench recalibrate");
  const auto file_version = top.integer("format_version", 1);
  if (file_version && *file_version != format_version)
    problems.add("/format_version", "this calbench reads format_version " +
                                        std::to_string(format_version) + ", found " +
                                        std::to_string(*file_version));
  (void)top.string("calbench_version");
  const auto classes = top.integer("classes", 2);
  const auto fit_rows = top.integer("fit_rows", 1);
  const auto label = top.string("label");
  // The method object is checked by the registry, as in a config; it is not refitted.
  Json method_resolved;
  std::optional<MethodConfig> method;
  if (const Json* m = top.require("method", "the method object {\"name\": ..., ...}"))
    method = parse_recalibration_method(*m, "/method", problems, method_resolved);
  if (const Json* p = top.find("parameters"); p != nullptr && !p->is_object())
    problems.add("/parameters", "expected an object of numbers, found " + describe(*p));
  std::optional<FittedState> state;
  if (const Json* m = top.require("model", "the fitted model's state {\"kind\": ..., ...}"))
    state = read_state(*m, "/model", problems, 0);
  if (!problems.empty()) throw ConfigError(problems.render(source));

  FittedModel out;
  out.method = std::move(method_resolved);
  out.label = *label;
  out.classes = static_cast<std::size_t>(*classes);
  out.fit_rows = static_cast<std::size_t>(*fit_rows);
  try {
    out.model = restore_model(*state, "/model");
  } catch (const DomainError& error) {
    throw ConfigError({source + ": " + error.what()});
  }
  // A model's own size, where it has one, must be the file's K.
  const std::size_t parts = state->parts.size();
  const bool per_class = state->kind == "one_vs_rest" || state->kind == "classwise";
  const bool affine = state->kind == "logit_affine";
  const std::size_t own = per_class ? parts : affine ? state->array("bias").size() : out.classes;
  if (own != out.classes)
    throw ConfigError({source + ": /model: a model of " + std::to_string(own) +
                       " classes, but /classes is " + std::to_string(out.classes)});
  // apply uses the model alone; a method that cannot have fitted it would mislabel the result.
  if (!method->method->gives(*state, out.classes))
    throw ConfigError({source + ": /model: a \"" + state->kind + "\" model, but /method is " +
                       out.method.value("name", method->label) + ", whose fit on " +
                       std::to_string(out.classes) +
                       " classes gives no such model: the method and the model disagree (the "
                       "file was edited or put together from two files)"});
  return out;
}

FittedModel read_fitted_model_file(const std::filesystem::path& file) {
  Problems problems;
  const Json document = read_json_file(file, problems);
  if (!problems.empty()) throw ConfigError(problems.render(file.string()));
  return read_fitted_model(document, file.string());
}

std::vector<double> apply_fitted_model(const FittedModel& fitted, std::span<const double> p,
                                       std::size_t classes, const std::string& data) {
  if (classes != fitted.classes)
    throw InputError(data + ": " + std::to_string(classes) +
                     " classes, but the model was fitted on " + std::to_string(fitted.classes));
  std::vector<double> q(p.begin(), p.end());
  // Without exact zeros the rows are their own raised copy: no second copy of them (issue #38:
  // apply on 2 GB of rows held four copies).
  if (std::find(p.begin(), p.end(), 0.0) == p.end()) {
    apply(*fitted.model, p, classes, q);
    return q;
  }
  std::replace(q.begin(), q.end(), 0.0, zero_floor);  // as fit_model (zero_floor)
  const std::vector<double> raised = q;
  apply(*fitted.model, raised, classes, q);
  return q;
}

}  // namespace calbench
