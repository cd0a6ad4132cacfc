#include "report/value_format.hpp"

#include <charconv>
#include <string_view>
#include <system_error>

#include "core/format.hpp"

namespace calbench {

nlohmann::ordered_json to_json(const Value& value) {
  using ojson = nlohmann::ordered_json;
  return std::visit(
      [](const auto& v) -> ojson {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, Value::Array>) {
          ojson out = ojson::array();
          for (const auto& item : v) out.push_back(to_json(item));
          return out;
        } else if constexpr (std::is_same_v<T, Value::Object>) {
          ojson out = ojson::object();
          for (const auto& [key, item] : v) out[key] = to_json(item);
          return out;
        } else {
          return ojson(v);
        }
      },
      value.data);
}

std::string to_text(const Value& value) {
  return to_json(value).dump();
}

namespace {

// A field a spreadsheet would evaluate: it starts with = + - @, a tab or a carriage return
// (OWASP, "CSV Injection"), and is not simply a number such as -0.5, which it reads as one.
bool formula_like(const std::string& s) {
  if (s.empty() || std::string_view("=+-@\t\r").find(s.front()) == std::string_view::npos)
    return false;
  double number = 0;
  const char* begin = s.data() + (s.front() == '+' ? 1 : 0);
  const auto [end, error] = std::from_chars(begin, s.data() + s.size(), number);
  return !(error == std::errc() && end == s.data() + s.size());
}

}  // namespace

std::string csv_escape(const std::string& s) {
  // OWASP's escape for a formula: a leading single quote, and the field quoted.
  const bool formula = formula_like(s);
  if (!formula && s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = formula ? "\"'" : "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_field(const Value& value) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "";
        else if constexpr (std::is_same_v<T, bool>)
          return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, double>)
          return format_double(v);
        else if constexpr (std::is_same_v<T, std::string>)
          return csv_escape(v);
        else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>)
          return std::to_string(v);
        else
          return csv_escape(to_text(value));
      },
      value.data);
}

}  // namespace calbench
