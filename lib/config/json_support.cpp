#include "config/json_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_set>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/read_file.hpp"

namespace calbench {
namespace {

// The rule an integer reader states: "an integer >= MIN", or its whole range when MIN is the
// type's least value.
template <typename T>
std::string integer_rule(T min) {
  if (min != std::numeric_limits<T>::min()) return "an integer >= " + std::to_string(min);
  if constexpr (std::is_signed_v<T>) return "an integer";
  return "an integer in [0, " + std::to_string(std::numeric_limits<T>::max()) + "]";
}

// An integer of type T >= min; a JSON float counts when integral and in range (2^63 and 2^64
// are exact as doubles: the first values out of range of int64 and uint64).
template <typename T>
std::optional<T> read_whole(const Json& value, const std::string& pointer, T min,
                            Problems& problems) {
  constexpr double lowest = std::is_signed_v<T> ? -9223372036854775808.0 : 0.0;
  constexpr double limit = std::is_signed_v<T> ? 9223372036854775808.0 : 18446744073709551616.0;
  std::optional<T> result;
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) result = T(u);
  } else if (value.is_number_integer()) {
    const auto i = value.get<std::int64_t>();
    if (std::is_signed_v<T> || i >= 0) result = T(i);
  } else if (value.is_number_float()) {
    const double x = value.get<double>();
    if (std::isfinite(x) && std::floor(x) == x && x >= lowest && x < limit) result = T(x);
  }
  if (!result || *result < min) {
    problems.add(pointer, "expected " + integer_rule(min) + ", found " + describe(value));
    return std::nullopt;
  }
  return result;
}

// A finite number with in_range(x): "expected a finite number RULE, found X" for a value that
// is not one, "NAME = X: must be RULE" for one out of range.
std::optional<double> read_ranged(const Json& value, const std::string& pointer,
                                  std::string_view name, bool (*in_range)(double),
                                  std::string_view rule, Problems& problems) {
  if (!value.is_number() || !std::isfinite(value.get<double>())) {
    problems.add(pointer, "expected a finite number" + std::string(rule.empty() ? "" : " ") +
                              std::string(rule) + ", found " + describe(value));
    return std::nullopt;
  }
  const double x = value.get<double>();
  if (in_range != nullptr && !in_range(x)) {
    problems.add(pointer,
                 std::string(name) + " = " + format_double(x) + ": must be " + std::string(rule));
    return std::nullopt;
  }
  return x;
}

bool is_positive(double x) {
  return x > 0.0;
}

}  // namespace

bool spreadsheet_formula(std::string_view text) {
  return !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
}

std::string pointer_join(std::string_view pointer, std::string_view key) {
  std::string out(pointer);
  out += '/';
  for (char ch : key) {
    if (ch == '~')
      out += "~0";
    else if (ch == '/')
      out += "~1";
    else
      out += ch;
  }
  return out;
}

std::string pointer_join(std::string_view pointer, std::size_t index) {
  return std::string(pointer) + '/' + std::to_string(index);
}

void Problems::add(std::string pointer, std::string message) {
  items_.push_back({std::move(pointer), std::move(message)});
}

void Problems::add_unique(const Problem& problem) {
  if (std::find(items_.begin(), items_.end(), problem) == items_.end()) items_.push_back(problem);
}

std::vector<std::string> Problems::render(std::string_view source) const {
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& p : items_)
    out.push_back(std::string(source) + ": " + (p.pointer.empty() ? "/" : p.pointer) + ": " +
                  p.message);
  return out;
}

std::string quote(std::string_view text) {
  return Json(std::string(text)).dump();
}

std::string describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string:
      return "a string (" + value.dump() + ")";
    case Json::value_t::number_float:
      return format_double(value.get<double>());
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return value.dump();
    case Json::value_t::boolean:
      return std::string("a boolean (") + (value.get<bool>() ? "true" : "false") + ")";
    case Json::value_t::null:
      return "null";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "a binary value";
  }
}

std::string unknown_name(std::string_view what, std::string_view name,
                         std::vector<std::string> valid) {
  std::sort(valid.begin(), valid.end());
  return "unknown " + std::string(what) + " " + quote(name) + "; valid: " + join(valid, ", ");
}

namespace {

// Limits on the shape of a JSON document, checked while it is parsed. A config is a few levels
// deep with tens of keys per object; without limits, a file nested ~87,000 levels deep
// overflowed the stack, and an object with 100,000 keys took 41 s (ordered_json inserts by a
// linear search, so building an object is quadratic in its size).
constexpr std::size_t max_depth = 100;
constexpr std::size_t max_keys = 10'000;

// Thrown when a limit is exceeded or the text is not JSON; nlohmann's exception constructor is
// protected, and deriving from it lets every caller report it as it reports a syntax error.
class LimitExceeded : public Json::exception {
 public:
  explicit LimitExceeded(const std::string& what) : Json::exception(0, what.c_str()) {}
};

// Builds the document from nlohmann's SAX events, as its DOM parser does, checking the limits
// and finding duplicate keys on the way. Not the callback parser: at every object's end it
// scans the parent for discarded values, which made an array of n objects cost O(n^2)
// (100,000 objects 3.3 s, 200,000 21.6 s); here every event costs O(1) but a key, which costs
// the ordered object's linear insert (bounded by max_keys).
class LimitedDomBuilder {
 public:
  explicit LimitedDomBuilder(Problems& problems) : problems_(&problems) {}

  bool null() { return scalar(nullptr); }
  bool boolean(bool value) { return scalar(value); }
  bool number_integer(Json::number_integer_t value) { return scalar(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return scalar(value); }
  bool number_float(Json::number_float_t value, const Json::string_t&) { return scalar(value); }
  bool string(Json::string_t& value) { return scalar(std::move(value)); }
  bool binary(Json::binary_t& value) { return scalar(std::move(value)); }

  bool start_object(std::size_t) { return open(Json::object(), true); }
  bool start_array(std::size_t) { return open(Json::array(), false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(Json::string_t& key) {
    Frame& top = frames_.back();
    top.key = key;
    if (!top.keys.insert(key).second)
      problems_->add(pointer(), "duplicate key; each key may appear once in an object");
    else if (top.keys.size() > max_keys)
      throw LimitExceeded("at " + pointer() + ": an object with more than " +
                          std::to_string(max_keys) + " keys (calbench's limit)");
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) {
    throw LimitExceeded(error.what());
  }

  Json take() { return std::move(root_); }

 private:
  struct Frame {
    Json* value;
    bool object;
    std::unordered_set<std::string> keys;
    std::string key;        // the current key of an object
    std::size_t index = 0;  // the current element of an array
  };

  // Places `value` where the parser is: the root, the current key or the array's end.
  Json* place(Json&& value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& top = frames_.back();
    if (top.object) {
      Json& slot = (*top.value)[top.key];
      slot = std::move(value);
      return &slot;
    }
    top.value->push_back(std::move(value));
    return &top.value->back();
  }

  template <typename T>
  bool scalar(T&& value) {
    place(Json(std::forward<T>(value)));
    element_done();
    return true;
  }

  bool open(Json&& empty, bool object) {
    if (frames_.size() == max_depth)
      throw LimitExceeded("at " + pointer() + ": nested deeper than " + std::to_string(max_depth) +
                          " levels (calbench's limit)");
    Json* value = place(std::move(empty));
    frames_.push_back({value, object, {}, {}, 0});
    return true;
  }

  bool close() {
    frames_.pop_back();
    element_done();
    return true;
  }

  void element_done() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }

  std::string pointer() const {
    std::string out;
    for (const auto& f : frames_)
      out = f.object ? pointer_join(out, f.key) : pointer_join(out, f.index);
    return out;
  }

  Problems* problems_;
  Json root_;
  std::vector<Frame> frames_;
};

}  // namespace

Json parse_json_text(const std::string& text, Problems& problems) {
  LimitedDomBuilder builder(problems);
  Json::sax_parse(text, &builder);
  return builder.take();
}

Json parse_json_source(const std::string& text, const std::string& source, Problems& problems) {
  try {
    return parse_json_text(text, problems);
  } catch (const Json::exception& error) {
    // nlohmann's messages start with "[json.exception.parse_error.101] "; the id helps nobody.
    std::string what = error.what();
    if (const auto end = what.find("] ");
        what.rfind("[json.exception.", 0) == 0 && end != what.npos)
      what.erase(0, end + 2);
    throw ConfigError({source + ": not valid JSON: " + what});
  } catch (const std::bad_alloc&) {
    // A document takes about 25 times its text in memory; one that does not fit is a bad
    // input (exit 2), not a crash.
    throw ConfigError({source + ": not enough memory to parse " + std::to_string(text.size()) +
                       " bytes of JSON"});
  }
}

Json read_json_file(const std::filesystem::path& file, Problems& problems) {
  const std::string name = file.string();
  const FileBytes read = read_file(file, kMaxJsonFileBytes);
  if (read.failure == FileBytes::Failure::open || read.failure == FileBytes::Failure::not_regular)
    throw ConfigError({name + ": cannot open the file (" + read.reason() + ")"});
  if (!read) throw ConfigError({name + ": cannot read the file (" + read.reason() + ")"});
  return parse_json_source(read.bytes, name, problems);
}

std::optional<std::int64_t> read_integer(const Json& value, const std::string& pointer,
                                         std::int64_t min, Problems& problems) {
  return read_whole(value, pointer, min, problems);
}

std::optional<double> read_number(const Json& value, const std::string& pointer,
                                  Problems& problems) {
  return read_ranged(value, pointer, "", nullptr, "", problems);
}

std::optional<double> read_positive(const Json& value, const std::string& pointer,
                                    std::string_view name, Problems& problems) {
  return read_ranged(value, pointer, name, is_positive, "> 0", problems);
}

std::optional<std::string> read_string(const Json& value, const std::string& pointer,
                                       Problems& problems) {
  if (!value.is_string()) {
    problems.add(pointer, "expected a string, found " + describe(value));
    return std::nullopt;
  }
  auto text = value.get<std::string>();
  if (text.empty()) {
    problems.add(pointer, "expected a non-empty string, found \"\"");
    return std::nullopt;
  }
  return text;
}

std::optional<bool> read_bool(const Json& value, const std::string& pointer, Problems& problems) {
  if (!value.is_boolean()) {
    problems.add(pointer, "expected true or false, found " + describe(value));
    return std::nullopt;
  }
  return value.get<bool>();
}

ObjectReader::ObjectReader(const Json& value, std::string pointer, Problems& problems)
    : pointer_(std::move(pointer)), problems_(&problems) {
  if (value.is_object()) {
    object_ = &value;
    resolved_ = value;
  } else {
    problems.add(pointer_, "expected an object, found " + describe(value));
    resolved_ = Json::object();
  }
}

const Json* ObjectReader::find(std::string_view key) const {
  if (object_ == nullptr) return nullptr;
  const auto it = object_->find(std::string(key));
  return it == object_->end() ? nullptr : &*it;
}

const Json* ObjectReader::require(std::string_view key, std::string_view expected) const {
  const Json* value = find(key);
  if (value == nullptr && object_ != nullptr)
    problems_->add(pointer_to(key), "required key is missing; expected " + std::string(expected));
  return value;
}

void ObjectReader::allow_only(const std::vector<std::string>& allowed) const {
  if (object_ == nullptr) return;
  std::vector<std::string> sorted = allowed;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& item : object_->items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end())
      problems_->add(pointer_to(item.key()), "unknown key; valid keys: " + join(sorted, ", "));
  }
}

void ObjectReader::add_default(std::string_view key, Json value) {
  resolved_[std::string(key)] = std::move(value);
}

void ObjectReader::set_resolved(std::string_view key, Json value) {
  resolved_[std::string(key)] = std::move(value);
}

template <typename T, typename Read>
std::optional<T> ObjectReader::read_key(std::string_view key, std::optional<T> fallback,
                                        std::string_view expected, Read read) {
  const Json* value = fallback ? find(key) : require(key, expected);
  if (value == nullptr) {
    if (fallback) add_default(key, *fallback);
    return fallback;
  }
  return read(*value, pointer_to(key));
}

template <typename T>
std::optional<T> ObjectReader::whole(std::string_view key, T min, std::optional<T> fallback) {
  return read_key<T>(key, fallback, integer_rule(min), [&](const Json& v, const std::string& at) {
    const auto result = read_whole(v, at, min, *problems_);
    if (result) set_resolved(key, *result);  // normalised: 1e4 is written 10000
    return result;
  });
}

std::optional<std::int64_t> ObjectReader::integer(std::string_view key, std::int64_t min,
                                                  std::optional<std::int64_t> fallback) {
  return whole(key, min, fallback);
}

std::optional<std::uint64_t> ObjectReader::unsigned_integer(std::string_view key, std::uint64_t min,
                                                            std::optional<std::uint64_t> fallback) {
  return whole(key, min, fallback);
}

std::optional<double> ObjectReader::positive(std::string_view key, std::optional<double> fallback) {
  return number(key, fallback, is_positive, "> 0");
}

std::optional<double> ObjectReader::number(std::string_view key, std::optional<double> fallback,
                                           bool (*in_range)(double), std::string_view rule) {
  return read_key<double>(key, fallback, "a number " + std::string(rule),
                          [&](const Json& v, const std::string& at) {
                            return read_ranged(v, at, key, in_range, rule, *problems_);
                          });
}

std::optional<std::string> ObjectReader::string(std::string_view key,
                                                std::optional<std::string> fallback) {
  return read_key<std::string>(
      key, fallback, "a non-empty string",
      [&](const Json& v, const std::string& at) { return read_string(v, at, *problems_); });
}

std::optional<bool> ObjectReader::boolean(std::string_view key, std::optional<bool> fallback) {
  return read_key<bool>(key, fallback, "true or false", [&](const Json& v, const std::string& at) {
    return read_bool(v, at, *problems_);
  });
}

}  // namespace calbench
