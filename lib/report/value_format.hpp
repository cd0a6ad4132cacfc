#pragma once
// How a Value appears in each result format.
#include <nlohmann/json.hpp>
#include <string>

#include "core/value.hpp"

namespace calbench {

nlohmann::ordered_json to_json(const Value& value);
// As JSON text ("0.7", "\"overconfident\"", "[1,2]"): the terminal and `calbench validate`.
std::string to_text(const Value& value);
// A CSV field: null empty, strings quoted when they hold a comma, quote or newline, doubles in
// shortest round-trip form, arrays and objects as quoted JSON. A string a spreadsheet would run
// as a formula (a leading = + - @, tab or carriage return, other than a plain number) is quoted
// with a single quote before it, as OWASP recommends ("CSV Injection").
std::string csv_field(const Value& value);
std::string csv_escape(const std::string& s);

}  // namespace calbench
