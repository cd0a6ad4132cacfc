#pragma once
// A small typed value: what a swept config value or a component's parameter is once the config
// is read, and what result records carry where a number alone will not do (a cost matrix, an
// array of exponents). Numbers keep their kind (an integer stays an integer), so the result
// files show them as the config gave them. No JSON: lib/config converts from it and lib/report
// to it.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace calbench {

struct Value {
  using Array = std::vector<Value>;
  using Object = std::vector<std::pair<std::string, Value>>;  // in the order given
  using Data = std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string,
                            Array, Object>;
  Data data;

  Value() = default;
  Value(bool b) : data(b) {}
  Value(std::int64_t i) : data(i) {}
  Value(std::uint64_t u) : data(u) {}
  Value(double d) : data(d) {}
  Value(std::string s) : data(std::move(s)) {}
  Value(const char* s) : data(std::string(s)) {}
  Value(Array a) : data(std::move(a)) {}
  Value(Object o) : data(std::move(o)) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(data); }
  friend bool operator==(const Value& a, const Value& b) { return a.data == b.data; }
};

// A size as a Value (unsigned, as the result files have always shown counts).
inline Value count_value(std::size_t n) {
  return Value(static_cast<std::uint64_t>(n));
}

// One parameter of a component (an estimator's `bins`, a method's `method`) as results show it.
struct NamedParam {
  std::string key;
  Value value;
};

// One swept parameter of a cell: the dotted sweep key and the cell's value.
struct SweptValue {
  std::string key;
  Value value;
  friend bool operator==(const SweptValue& a, const SweptValue& b) {
    return a.key == b.key && a.value == b.value;
  }
};

}  // namespace calbench
