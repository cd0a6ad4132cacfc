#pragma once
// The registry mechanism: one explicit table per kind (estimators, recalibration methods,
// decision tasks, miscalibration maps, generator families), the only place that knows both the
// names a config uses and the domain types they stand for. No static self-registration: the
// linker silently drops it from static libraries.
//
// Every row has the same shape, Row<Config>: a summary, typed parameter declarations, a
// documented example, notes, and a build function. A parameter declaration (Param) both reads
// its value (type, range, default filled into the resolved config, problems at the JSON
// pointer) and documents it in `calbench list`, so each default is written once.
//
// This header knows no domain type: each kind's config type, rows, table and section parser
// live beside its concept in lib/<kind>/<kind>_json.{hpp,cpp} (estimators_json,
// recalibrators_json, decision_tasks_json, generators_json for families and maps), which
// include this one. docs/extending.md shows how to add a row.
#include <any>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/value.hpp"

namespace calbench {

// ---- parameter declarations ------------------------------------------------------------------

// The parameters of one object read so far, with what a row's build function needs besides
// them: the reader (for problems at a pointer) and the context the object is read in.
class Args {
 public:
  Args(ObjectReader& reader, std::string name, std::optional<std::size_t> classes, int depth)
      : reader_(&reader), name_(std::move(name)), classes_(classes), depth_(depth) {}

  ObjectReader& reader() const { return *reader_; }
  const std::string& name() const { return name_; }                // the row's name
  std::optional<std::size_t> classes() const { return classes_; }  // K, when known
  void set_classes(std::size_t classes) { classes_ = classes; }    // a family read its K
  int depth() const { return depth_; }                             // wrappers around it

  // `shown` is the value as results report it (a choice by its name); none: not reported.
  void set(std::string_view key, std::any value, std::optional<Value> shown = {});
  bool has(std::string_view key) const { return find(key) != nullptr; }
  template <typename T>
  T get(std::string_view key) const {
    return std::any_cast<T>(find(key)->value);
  }
  // The reported value of a parameter (a choice's name, ...).
  const Value& shown(std::string_view key) const { return *find(key)->shown; }
  // Every reported parameter, in the order read: the `params` of a result.
  std::vector<NamedParam> shown() const;

  // The row's typed parameters: a struct the parameters declared with param::into fill as
  // they are read, value-initialised (its own defaults) before the first, so a build function
  // takes one struct instead of reading each parameter by its key.
  template <typename T>
  T& typed() {
    if (!typed_.has_value()) typed_ = T{};
    return std::any_cast<T&>(typed_);
  }

 private:
  struct Entry {
    std::string key;
    std::any value;
    std::optional<Value> shown;
  };
  const Entry* find(std::string_view key) const;

  ObjectReader* reader_;
  std::string name_;
  std::optional<std::size_t> classes_;
  int depth_;
  std::vector<Entry> entries_;
  std::any typed_;
};

// One parameter of a row: how it reads and how `calbench list` documents it.
struct Param {
  std::string key;
  std::string type;      // "integer", "number", "string", "array of numbers", ...
  std::string fallback;  // the default as the listing shows it, "required" or "none"
  std::string rule;      // ">= 1", "equal_width | equal_mass", ...
  std::string doc;
  // The key this one is read after (its default depends on that value); empty: in order.
  std::string after;
  // Reads the key from args.reader(), records it in args (with its default when absent) and
  // returns false after reporting a problem. Null: the row's build function reads it itself.
  std::function<bool(Args&)> read;
  // Values the contract rig (tests/unit/test_registry_contract.cpp) expects to be rejected: one of
  // a wrong type and, where the parameter has a range, one outside it.
  std::vector<Json> bad;
  // Keys that cannot be given together with this one (the rig leaves them out when it tests
  // this one's bad values).
  std::vector<std::string> excludes;
};

namespace param {

// An integer >= min; without a fallback the key is required.
Param integer(std::string key, std::int64_t min, std::optional<std::int64_t> fallback,
              std::string doc);
// An integer >= min whose default is computed from the parameter `after`, documented as
// `fallback_doc`.
Param integer_after(std::string key, std::int64_t min, std::string after,
                    std::function<std::int64_t(const Args&)> fallback, std::string fallback_doc,
                    std::string doc);
// A finite number with in_range(x), else "KEY = X: must be RULE".
Param number(std::string key, std::optional<double> fallback, bool (*in_range)(double),
             std::string rule, std::string doc);
Param number_after(std::string key, std::string after,
                   std::function<std::optional<double>(const Args&)> fallback,
                   std::string fallback_doc, bool (*in_range)(double), std::string rule,
                   std::string doc);
// A finite number > 0 ("KEY = X: must be > 0").
Param positive(std::string key, std::optional<double> fallback, std::string doc);
Param boolean(std::string key, bool fallback, std::string doc);
// A string naming one value of `choices`; the value read is an E, shown by its name.
template <typename E>
Param choice(std::string key, const std::vector<Choice<E>>& choices, E fallback, std::string doc);
// `literal` (the default, value std::nullopt) or a number with in_range(x) (value the number):
// smooth_ece's bandwidth "fixed_point" | (0, 1]. Rejects others with
// "expected \"LITERAL\" or a number RULE, found X".
Param literal_or_number(std::string key, std::string literal, bool (*in_range)(double),
                        std::string rule, std::string doc);
// `p`, an integer parameter (integer, integer_after), with an upper bound too:
// "KEY = X: must be <= MAX" (docs/config.md, "Parameter bounds").
Param at_most(Param p, std::int64_t max);
// Anything else (arrays, objects, values whose rule needs the context): `read` does the work.
Param custom(std::string key, std::string type, std::string fallback, std::string rule,
             std::string doc, std::function<bool(Args&)> read, std::vector<Json> bad);
// `p`, its value also written into `member` of the row's typed parameters (Args::typed<T>())
// once read: an integer parameter into any integer member (std::size_t bins), any other into
// a member of the type it reads (a choice's enum, a number's double).
template <typename T, typename Member>
Param into(Param p, Member T::*member);

}  // namespace param

// ---- rows ------------------------------------------------------------------------------------

// A labelled text the listing prints after a row's parameters ("target", "convention", ...).
struct Note {
  std::string label;
  std::string text;
};

// Reads each parameter in order (one with `after` once that key is read; skipped when that
// key failed), reporting every problem; false when any failed.
bool read_params(const std::vector<Param>& params, Args& args);

template <typename ConfigT, typename Extra = std::monostate>
struct Row {
  using Config = ConfigT;
  // Every member has a default, so a row names only the fields it sets (designated
  // initialisers, docs/extending.md) and -Wmissing-field-initializers stays quiet.
  std::string name{};  // set by the registry table
  std::string summary{};
  std::vector<Param> params{};
  // The members of a valid object of this row besides its name, as JSON text ("{}" when it
  // takes none): shown by `calbench list` and built by the contract rig. Empty fails the rig.
  std::string example{};
  std::vector<Note> notes{};
  // Builds the value from the parameters read; returns nullopt after reporting a problem.
  // A DomainError it throws is reported at the object's pointer.
  std::optional<Config> (*build)(Args& args) = nullptr;
  Extra extra{};

  // Reads every parameter (reporting each problem), then builds. The reader has checked the
  // keys; `classes` is the generator's K when known, `depth` the wrappers around this object.
  std::optional<Config> parse(ObjectReader& reader, std::optional<std::size_t> classes = {},
                              int depth = 0) const {
    Args args(reader, name, classes, depth);
    if (!read_params(params, args)) return std::nullopt;
    return build(args);
  }
};

// The table's way of naming a row defined beside its concept.
template <typename R>
R named(std::string name, R row) {
  row.name = std::move(name);
  return row;
}

// ---- reading an object of a row ---------------------------------------------------------------

// `fixed` followed by the keys of `params`: the keys an object of a registry row may have.
std::vector<std::string> allowed_keys(std::vector<std::string> fixed,
                                      const std::vector<Param>& params);

// The names of a registry's rows, in table order.
template <typename R>
std::vector<std::string> names_of(const std::vector<R>& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows) out.push_back(row.name);
  return out;
}

// Reads the required name key (`name`, `map`, `family`, `task`) of an object and finds its
// row; reports a missing key or an unknown name (listing the valid ones) and returns null.
template <typename R>
const R* lookup(const ObjectReader& object, std::string_view key, std::string_view what,
                const std::vector<R>& rows) {
  const Json* value = object.require(key, "one of: " + join(names_of(rows), ", "));
  if (value == nullptr) return nullptr;
  const auto name = read_string(*value, object.pointer_to(key), object.problems());
  if (!name) return nullptr;
  for (const auto& row : rows)
    if (row.name == *name) return &row;
  object.problems().add(object.pointer_to(key), unknown_name(what, *name, names_of(rows)));
  return nullptr;
}

// An object {NAME_KEY: NAME, the row's parameters} (a map, a family, a decision task): finds
// the row, rejects keys it does not take, reads and builds. Nullopt after reporting a problem.
template <typename R>
std::optional<typename R::Config> parse_object(ObjectReader& object, std::string_view name_key,
                                               std::string_view what, const std::vector<R>& rows,
                                               std::optional<std::size_t> classes = {}) {
  if (!object.is_object()) return std::nullopt;
  const R* row = lookup(object, name_key, what, rows);
  if (row == nullptr) return std::nullopt;
  object.allow_only(allowed_keys({std::string(name_key)}, row->params));
  return row->parse(object, classes);
}

// One labelled entry {"name": ..., "label": ..., the row's parameters} (estimators, methods):
// an unknown name, a key the row does not take and a DomainError of the build are reported
// under `pointer`; `resolved` receives the entry with its defaults. Empty after any problem.
template <typename R>
std::optional<typename R::Config> parse_registry_entry(const Json& entry,
                                                       const std::string& pointer,
                                                       Problems& problems, Json& resolved,
                                                       std::string_view what,
                                                       const std::vector<R>& rows, int depth = 0) {
  ObjectReader e(entry, pointer, problems);
  std::optional<typename R::Config> config;
  const std::size_t before = problems.size();
  if (e.is_object()) {
    if (const R* row = lookup(e, "name", what, rows)) {
      e.allow_only(allowed_keys({"name", "label"}, row->params));
      try {
        config = row->parse(e, std::nullopt, depth);
        if (config) config->name = row->name;
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

// `{"KEY": "NAME", MEMBERS...}`: a row's documented example as a complete object.
std::string example_object(std::string_view name_key, std::string_view name,
                           std::string_view example);

// ---- template definitions --------------------------------------------------------------------

template <typename E>
Param param::choice(std::string key, const std::vector<Choice<E>>& choices, E fallback,
                    std::string doc) {
  std::vector<std::string> names;
  std::string fallback_name;
  for (const auto& c : choices) {
    names.emplace_back(c.name);
    if (c.value == fallback) fallback_name = c.name;
  }
  Param p{key,
          "string",
          quote(fallback_name),
          join(names, " | "),
          std::move(doc),
          {},
          {},
          {Json(true), Json("no_such_" + key)},
          {}};
  p.read = [key, choices, fallback](Args& args) {
    const auto value = args.reader().choice(key, key, choices, fallback);
    if (!value) return false;
    for (const auto& c : choices)
      if (c.value == *value) args.set(key, *value, Value(std::string(c.name)));
    return true;
  };
  return p;
}

template <typename T, typename Member>
Param param::into(Param p, Member T::*member) {
  using Read = std::conditional_t<std::is_integral_v<Member> && !std::is_same_v<Member, bool>,
                                  std::int64_t, Member>;
  p.read = [read = std::move(p.read), key = p.key, member](Args& args) {
    if (!read(args)) return false;
    args.typed<T>().*member = static_cast<Member>(args.get<Read>(key));
    return true;
  };
  return p;
}

}  // namespace calbench
