#pragma once
// Reading typed values out of JSON while collecting every problem at its JSON pointer
// (RFC 6901), so that one `calbench validate` shows every mistake in a file, not the first.
// The readers are strict: a wrong type, an unknown key, a non-finite number, a fractional
// integer or a value out of range is a problem, never a silent conversion.
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/format.hpp"

namespace calbench {

// ordered_json keeps the file's key order: it decides the order of the sweep cells and keeps
// config.resolved.json in the order the user wrote it.
using Json = nlohmann::ordered_json;

// RFC 6901 escaping: '~' -> "~0", '/' -> "~1".
std::string pointer_join(std::string_view pointer, std::string_view key);
std::string pointer_join(std::string_view pointer, std::size_t index);

struct Problem {
  std::string pointer;  // "" is the whole document (shown as "/")
  std::string message;  // what was expected and what was found
  friend bool operator==(const Problem&, const Problem&) = default;
};

class Problems {
 public:
  void add(std::string pointer, std::string message);
  // Adds the problem unless an equal one (same pointer and message) is already present.
  void add_unique(const Problem& problem);
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  const std::vector<Problem>& items() const { return items_; }
  // "SOURCE: /json/pointer: message", one per problem, in the order found.
  std::vector<std::string> render(std::string_view source) const;

  // The folder that a file named in the document (the `empirical` family's rows) is read
  // from: the config file's. Empty: the working directory.
  std::filesystem::path base_directory;

 private:
  std::vector<Problem> items_;
};

// What a value is, for "found ..." in messages: `a string ("many")`, `2.5`, `an array`.
std::string describe(const Json& value);
// A JSON string literal: "foo" with quotes and escapes.
std::string quote(std::string_view text);
// `unknown estimator "foo"; valid: accuracy, brier, ece, nll` (names sorted).
std::string unknown_name(std::string_view what, std::string_view name,
                         std::vector<std::string> valid);

// Parses JSON text, keeping key order. Syntax errors throw nlohmann's exceptions, and so do a
// document nested deeper than 100 levels and an object with more than 10,000 keys (limits that
// keep parsing linear and the stack bounded; docs/config.md); a key that appears twice in one
// object (the parser would silently keep the last) is reported here.
Json parse_json_text(const std::string& text, Problems& problems);
// The same, a syntax error or limit thrown as ConfigError "SOURCE: not valid JSON: ...".
Json parse_json_source(const std::string& text, const std::string& source, Problems& problems);
// A file's text parsed so; a missing, unreadable or directory file is a ConfigError too.
Json read_json_file(const std::filesystem::path& file, Problems& problems);

// Value readers: each returns the value, or reports a problem at `pointer` and returns nullopt.
// Integers accept a JSON float whose value is integral (1e4 is 10000, 2.5 is an error).
std::optional<std::int64_t> read_integer(const Json& value, const std::string& pointer,
                                         std::int64_t min, Problems& problems);
// Any finite number.
std::optional<double> read_number(const Json& value, const std::string& pointer,
                                  Problems& problems);
// A finite number > 0; `name` ("alpha[3]") names it in "alpha[3] = -0.5: must be > 0".
std::optional<double> read_positive(const Json& value, const std::string& pointer,
                                    std::string_view name, Problems& problems);
// A non-empty string.
std::optional<std::string> read_string(const Json& value, const std::string& pointer,
                                       Problems& problems);
std::optional<bool> read_bool(const Json& value, const std::string& pointer, Problems& problems);

// One accepted spelling of an enumerated value.
template <typename E>
struct Choice {
  std::string_view name;
  E value;
};

template <typename E>
std::optional<E> read_choice(const Json& value, const std::string& pointer, std::string_view what,
                             const std::vector<Choice<E>>& choices, Problems& problems) {
  const auto text = read_string(value, pointer, problems);
  if (!text) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& choice : choices) {
    if (choice.name == *text) return choice.value;
    names.emplace_back(choice.name);
  }
  problems.add(pointer, unknown_name(what, *text, std::move(names)));
  return std::nullopt;
}

// One JSON object of a config: reads its keys with the readers above, reports missing required
// keys and unknown keys, and builds its resolved copy — the file's keys in the file's order,
// then each default appended as it is used, integers normalised (1e4 is written 10000).
class ObjectReader {
 public:
  // Reports "expected an object" when `value` is not one; every read then finds nothing.
  ObjectReader(const Json& value, std::string pointer, Problems& problems);

  bool is_object() const { return object_ != nullptr; }
  const std::string& pointer() const { return pointer_; }
  std::string pointer_to(std::string_view key) const { return pointer_join(pointer_, key); }
  Problems& problems() const { return *problems_; }

  // The value of `key`, or null when the key is absent (or this is not an object).
  const Json* find(std::string_view key) const;
  // The same, reporting "required key is missing; expected EXPECTED" when absent.
  const Json* require(std::string_view key, std::string_view expected) const;
  // Reports each key of the object that is not in `allowed`, listing the allowed keys.
  void allow_only(const std::vector<std::string>& allowed) const;

  // Typed reads. With a fallback the key is optional and the fallback goes into the resolved
  // copy when it is absent; without one the key is required.
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min,
                                      std::optional<std::int64_t> fallback = std::nullopt);
  std::optional<std::uint64_t> unsigned_integer(std::string_view key, std::uint64_t min,
                                                std::optional<std::uint64_t> fallback);
  std::optional<double> positive(std::string_view key,
                                 std::optional<double> fallback = std::nullopt);
  // A number with `in_range(x)` true, else "KEY = X: must be RULE" (a missing required key:
  // "expected a number RULE").
  std::optional<double> number(std::string_view key, std::optional<double> fallback,
                               bool (*in_range)(double), std::string_view rule);
  std::optional<std::string> string(std::string_view key,
                                    std::optional<std::string> fallback = std::nullopt);
  std::optional<bool> boolean(std::string_view key, std::optional<bool> fallback);
  template <typename E>
  std::optional<E> choice(std::string_view key, std::string_view what,
                          const std::vector<Choice<E>>& choices, E fallback) {
    const Json* value = find(key);
    if (value == nullptr) {
      for (const auto& c : choices)
        if (c.value == fallback) add_default(key, std::string(c.name));
      return fallback;
    }
    return read_choice(*value, pointer_to(key), what, choices, *problems_);
  }

  // Appends `key: value` to the resolved copy when the key is absent; replaces it otherwise.
  void add_default(std::string_view key, Json value);
  void set_resolved(std::string_view key, Json value);
  const Json& resolved() const { return resolved_; }
  Json take_resolved() { return std::move(resolved_); }

 private:
  // The value of `key` through read(value, pointer); absent, the fallback (into the resolved
  // copy) or, without one, "required key is missing; expected EXPECTED".
  template <typename T, typename Read>
  std::optional<T> read_key(std::string_view key, std::optional<T> fallback,
                            std::string_view expected, Read read);
  template <typename T>
  std::optional<T> whole(std::string_view key, T min, std::optional<T> fallback);

  const Json* object_ = nullptr;
  std::string pointer_;
  Problems* problems_;
  Json resolved_;
};

// True when a spreadsheet opening a CSV would read `text` as a formula: it starts with = + - @,
// a tab or a carriage return (OWASP, "CSV Injection"). Labels name results in cells.csv, so a
// config's labels may not (report/value_format.hpp escapes such fields anyway).
bool spreadsheet_formula(std::string_view text);

// The optional `label` of a labelled entry: the parsed config's default label unless one is
// given. Without a parsed config there is no default, but a given label is still checked.
template <typename T>
void read_label(ObjectReader& entry, std::optional<T>& config) {
  if (config) {
    if (const auto label = entry.string("label", config->label)) config->label = *label;
  } else if (const Json* label = entry.find("label")) {
    (void)read_string(*label, entry.pointer_to("label"), entry.problems());
  }
}

// A required, non-empty array of labelled entries (`estimators`, `methods`): each entry is
// parsed by parse_one(entry, pointer, problems, resolved) -> std::optional<T>, the resolved
// array is set on `top`, and labels must be unique and not `reserved`, a label kept for
// `reserved_for` (each problem names its entry). T has a `label`. Empty when any entry failed.
template <typename T, typename ParseOne>
std::optional<std::vector<T>> parse_labelled_array(ObjectReader& top, const std::string& key,
                                                   const std::string& what, ParseOne&& parse_one,
                                                   const std::string& reserved = {},
                                                   const std::string& reserved_for = {}) {
  const Json* value = top.require(key, "a non-empty array of " + what);
  if (value == nullptr) return std::nullopt;
  const std::string pointer = top.pointer_to(key);
  if (!value->is_array() || value->empty()) {
    top.problems().add(pointer,
                       "expected a non-empty array of " + what + ", found " +
                           (value->is_array() ? std::string("an empty array") : describe(*value)));
    return std::nullopt;
  }
  std::vector<std::optional<T>> parsed;
  Json resolved = Json::array();
  for (std::size_t i = 0; i < value->size(); ++i) {
    Json entry;
    parsed.push_back(parse_one((*value)[i], pointer_join(pointer, i), top.problems(), entry));
    resolved.push_back(std::move(entry));
  }
  top.set_resolved(key, std::move(resolved));
  std::map<std::string, std::size_t> first;
  bool ok = true;
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    if (!parsed[i]) {
      ok = false;
      continue;
    }
    const std::string& label = parsed[i]->label;
    if (spreadsheet_formula(label)) {
      top.problems().add(pointer_join(pointer_join(pointer, i), "label"),
                         "label " + quote(label) +
                             " starts with a character a spreadsheet reads as a formula (= + - "
                             "@, a tab or a carriage return); start it with a letter or a digit");
      ok = false;
      continue;
    }
    if (!reserved.empty() && label == reserved) {
      top.problems().add(pointer_join(pointer, i),
                         "label " + quote(label) + " is reserved for " + reserved_for);
      ok = false;
      continue;
    }
    const auto [it, inserted] = first.emplace(label, i);
    if (!inserted) {
      top.problems().add(pointer_join(pointer, i), "duplicate label " + quote(label) +
                                                       ", also the label of " +
                                                       pointer_join(pointer, it->second) +
                                                       "; give one of them a distinct \"label\"");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  std::vector<T> out;
  for (auto& p : parsed) out.push_back(std::move(*p));
  return out;
}

}  // namespace calbench
