#pragma once
// A parameter value as shown in results (estimator and method parameters, swept values).
#include <cstdint>
#include <string>
#include <variant>

namespace calbench {

using ParamValue = std::variant<std::int64_t, double, std::string, bool>;
struct NamedParam {
  std::string key;
  ParamValue value;
};

}  // namespace calbench
