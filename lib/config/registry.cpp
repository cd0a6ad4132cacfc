#include "config/registry.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

// ---- parameters ---------------------------------------------------------------------------

void Args::set(std::string_view key, std::any value, std::optional<Value> shown) {
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

// A value outside the rule of `in_range`, when one of these is, and 1e300 when the rule has an
// upper bound (so the rig checks both ends); after `first`.
std::vector<Json> bad_values(std::vector<Json> first, bool (*in_range)(double)) {
  for (double x : {-1.0, 0.0, 1.0, 2.0, 1e300})
    if (!in_range(x)) {
      first.push_back(Json(x));
      break;
    }
  if (!in_range(1e300) && first.back() != Json(1e300)) first.push_back(Json(1e300));
  return first;
}

std::string shown_fallback(std::optional<double> fallback) {
  return fallback ? format_double(*fallback) : "required";
}

// A declaration whose value read_value(args) -> std::optional<T> reads (reporting its
// problems) and which results report as it is read.
template <typename T, typename ReadValue>
Param typed(Param p, ReadValue read_value) {
  p.read = [key = p.key, read_value](Args& args) {
    const std::optional<T> value = read_value(args);
    if (value) args.set(key, *value, Value(*value));
    return value.has_value();
  };
  return p;
}

}  // namespace

Param integer(std::string key, std::int64_t min, std::optional<std::int64_t> fallback,
              std::string doc) {
  return typed<std::int64_t>(
      {key,
       "integer",
       fallback ? std::to_string(*fallback) : "required",
       ">= " + std::to_string(min),
       std::move(doc),
       {},
       {},
       {Json(true), Json(min - 1)},
       {}},
      [key, min, fallback](Args& args) { return args.reader().integer(key, min, fallback); });
}

Param integer_after(std::string key, std::int64_t min, std::string after,
                    std::function<std::int64_t(const Args&)> fallback, std::string fallback_doc,
                    std::string doc) {
  return typed<std::int64_t>(
      {key,
       "integer",
       std::move(fallback_doc),
       ">= " + std::to_string(min),
       std::move(doc),
       std::move(after),
       {},
       {Json(true), Json(min - 1)},
       {}},
      [key, min, fallback](Args& args) { return args.reader().integer(key, min, fallback(args)); });
}

Param at_most(Param p, std::int64_t max) {
  p.rule += " and <= " + std::to_string(max);
  p.bad.push_back(Json(max + 1));
  p.read = [inner = std::move(p.read), key = p.key, max](Args& args) {
    if (!inner(args)) return false;
    const std::int64_t value = args.get<std::int64_t>(key);
    if (value <= max) return true;
    args.reader().problems().add(
        args.reader().pointer_to(key),
        key + " = " + std::to_string(value) + ": must be <= " + std::to_string(max));
    return false;
  };
  return p;
}

Param number(std::string key, std::optional<double> fallback, bool (*in_range)(double),
             std::string rule, std::string doc) {
  return number_after(
      key, {}, [fallback](const Args&) { return fallback; }, shown_fallback(fallback), in_range,
      std::move(rule), std::move(doc));
}

Param number_after(std::string key, std::string after,
                   std::function<std::optional<double>(const Args&)> fallback,
                   std::string fallback_doc, bool (*in_range)(double), std::string rule,
                   std::string doc) {
  return typed<double>({key,
                        "number",
                        std::move(fallback_doc),
                        rule,
                        std::move(doc),
                        std::move(after),
                        {},
                        bad_values({Json(true)}, in_range),
                        {}},
                       [key, fallback, in_range, rule](Args& args) {
                         return args.reader().number(key, fallback(args), in_range, rule);
                       });
}

Param positive(std::string key, std::optional<double> fallback, std::string doc) {
  return number(
      std::move(key), fallback, [](double x) { return x > 0.0; }, "> 0", std::move(doc));
}

Param boolean(std::string key, bool fallback, std::string doc) {
  return typed<bool>({key,
                      "boolean",
                      fallback ? "true" : "false",
                      "true | false",
                      std::move(doc),
                      {},
                      {},
                      {Json("yes")},
                      {}},
                     [key, fallback](Args& args) { return args.reader().boolean(key, fallback); });
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
          bad_values({Json(true)}, in_range),
          {}};
  p.read = [key, literal, in_range, rule](Args& args) {
    ObjectReader& reader = args.reader();
    const Json* value = reader.find(key);
    if (value == nullptr) reader.add_default(key, literal);
    if (value == nullptr || (value->is_string() && value->get<std::string>() == literal)) {
      args.set(key, std::optional<double>(), Value(literal));
      return true;
    }
    if (value->is_number() && std::isfinite(value->get<double>()) &&
        in_range(value->get<double>())) {
      const double x = value->get<double>();
      args.set(key, std::optional<double>(x), Value(x));
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
  // Appended piece by piece: GCC 12 gives a false -Wrestrict on `"{" + std::string`.
  std::string out = "{";
  out += quote(name_key);
  out += ": ";
  out += quote(name);
  out += empty ? "}" : ", " + members;
  return out;
}

}  // namespace calbench
