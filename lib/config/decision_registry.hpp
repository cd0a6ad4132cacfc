#pragma once
// The registry of decision tasks: names, parameters with defaults and rules, figures, and the
// parse function of each row. `calbench list decisions` prints it.
#include <optional>
#include <string>
#include <vector>

#include "config/registry.hpp"
#include "decisions/decision_spec.hpp"

namespace calbench {

// Reads a task's parameters (the reader has checked the keys); `classes` is the generator's K
// when known. Returns nullopt after reporting problems.
using DecisionParse = std::optional<DecisionSpec> (*)(ObjectReader& object,
                                                      std::optional<std::size_t> classes);

struct DecisionEntry {
  std::string name;
  std::string summary;
  std::vector<ParamDoc> params;
  std::string figures;  // the task's own figures, documented
  std::string example;  // a valid `decision` object for K = 2 (shown, and tested)
  DecisionParse parse;
};

const std::vector<DecisionEntry>& decision_registry();
std::vector<std::string> decision_names();
std::string format_decisions();

}  // namespace calbench
