#pragma once
// The registry: the one table that knows both the names a config uses and the domain types
// they stand for. Each row carries its documentation (summary, parameters with type, default
// and rule, target, conventions) and a parse function that turns the row's JSON object into a
// typed value. Rows are listed explicitly here — no static self-registration, which the linker
// silently drops from static libraries. `calbench list` prints this table.
//
// Adding an estimator, a map or a family is one row in registry.cpp plus its domain file.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/experiment.hpp"
#include "config/generator_config.hpp"
#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/quantity.hpp"
#include "generators/dirichlet.hpp"
#include "generators/miscalibration.hpp"

namespace calbench {

// One parameter of a registry row, as documented and as accepted in a config.
struct ParamDoc {
  std::string key;
  std::string type;      // "integer", "number", "string", "array of numbers", ...
  std::string fallback;  // the default as written in a config, or "required"
  std::string rule;      // ">= 1", "equal_width | equal_mass", ...
  std::string doc;
};

// `fixed` followed by the keys of `params`: the keys an entry of a registry row may have.
std::vector<std::string> allowed_keys(std::vector<std::string> fixed,
                                      const std::vector<ParamDoc>& params);

// The names of a registry's rows, in table order.
template <typename Row>
std::vector<std::string> names_of(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows) out.push_back(row.name);
  return out;
}

// Reads the required name key (`name`, `map`, `family`, `task`) of an object and finds its
// row; reports a missing key or an unknown name (listing the valid ones) and returns null.
template <typename Row>
const Row* lookup(const ObjectReader& object, std::string_view key, std::string_view what,
                  const std::vector<Row>& rows) {
  const Json* value = object.require(key, "one of: " + join(names_of(rows), ", "));
  if (value == nullptr) return nullptr;
  const auto name = read_string(*value, object.pointer_to(key), object.problems());
  if (!name) return nullptr;
  for (const auto& row : rows)
    if (row.name == *name) return &row;
  object.problems().add(object.pointer_to(key), unknown_name(what, *name, names_of(rows)));
  return nullptr;
}

// One registry-backed entry, {"name": ..., "label": ..., the row's parameters}: an unknown
// name, a key the row does not take and a DomainError from `parse(row, reader)` are reported
// under `pointer`; `resolved` receives the entry with its defaults. Empty after any problem.
// Estimators and recalibration methods are read this way.
template <typename Config, typename Row, typename Parse>
std::optional<Config> parse_registry_entry(const Json& entry, const std::string& pointer,
                                           Problems& problems, Json& resolved,
                                           std::string_view what, const std::vector<Row>& rows,
                                           Parse parse) {
  ObjectReader e(entry, pointer, problems);
  std::optional<Config> config;
  const std::size_t before = problems.size();
  if (e.is_object()) {
    if (const Row* row = lookup(e, "name", what, rows)) {
      e.allow_only(allowed_keys({"name", "label"}, row->params));
      try {
        config = parse(*row, e);
      } catch (const DomainError& error) {
        problems.add(pointer, error.what());
      }
    }
    read_label(e, config);
  }
  resolved = e.take_resolved();
  if (problems.size() != before) return std::nullopt;
  return config;
}

// Reads the parameters of one estimator entry (the reader has checked the keys), fills their
// defaults into the reader's resolved copy, builds the estimator and its default label.
// Returns nullopt after reporting problems.
using EstimatorParse = std::optional<EstimatorConfig> (*)(ObjectReader& entry);

// How an estimator's cost grows with n at its defaults. `calbench eval` runs the quadratic
// ones only when asked for, since it evaluates every estimator on hundreds of resamples.
enum class Cost { n_log_n, quadratic };

struct EstimatorEntry {
  std::string name;
  std::string summary;
  std::vector<ParamDoc> params;
  std::string target;      // the quantity it estimates, and when
  std::string convention;  // conventions a reader needs to reproduce its value
  EstimatorParse parse;
  Cost cost;
};

// Reads a miscalibration map's parameters; `classes` is the family's K when it is known
// (valid), to check lengths against.
using MapParse = std::optional<MiscalibrationMap> (*)(ObjectReader& object,
                                                      std::optional<std::size_t> classes);

struct MapEntry {
  std::string name;
  std::string summary;
  std::vector<ParamDoc> params;
  MapParse parse;
};

// Reads a generator family's parameters (including its `miscalibration` object or `target`).
using FamilyParse = std::optional<ParsedGenerator> (*)(ObjectReader& object);

struct FamilyEntry {
  std::string name;
  std::string summary;
  std::vector<ParamDoc> params;
  FamilyParse parse;
};

struct ScenarioEntry {
  std::string name;
  std::string summary;
};

struct QuantityEntry {
  Quantity quantity;
  std::string definition;
};

const std::vector<EstimatorEntry>& estimator_registry();
const std::vector<MapEntry>& map_registry();
const std::vector<FamilyEntry>& family_registry();
const std::vector<ScenarioEntry>& scenario_registry();
const std::vector<QuantityEntry>& quantity_registry();

// The valid names of a kind, in registry order.
std::vector<std::string> estimator_names();
std::vector<std::string> scenario_names();

// Section parsers built on the rows. Each reports every problem at its JSON pointer, writes the
// section with its defaults filled into `resolved`, and returns nullopt when it found problems.
//   estimator entry: {"name": ..., "label": ..., params...}
//   generator: {"family": ..., params..., "miscalibration": {"map": ..., params...}}
std::optional<EstimatorConfig> parse_estimator(const Json& entry, const std::string& pointer,
                                               Problems& problems, Json& resolved);
// A generator given by `target` comes back unsolved (ParsedGenerator::target set, the spec
// a placeholder); config/experiment.cpp solves it per cell.
std::optional<ParsedGenerator> parse_generator(const Json& generator, const std::string& pointer,
                                               Problems& problems, Json& resolved);

// The registry as text for `calbench list [KIND]`: KIND is "" (everything), "estimators",
// "maps", "families", "scenarios", "quantities" or "decisions"; another KIND throws ConfigError
// listing the valid ones.
std::string format_registry(std::string_view kind);

}  // namespace calbench
