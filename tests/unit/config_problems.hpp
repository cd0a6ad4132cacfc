#pragma once
// Test helper for config validation: the problems parse_experiment reports for a document, and
// whether one of them contains a phrase.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenarios/registry.hpp"

namespace calbench::testing {

// The problems of `doc` as read from `source` (none when it parses).
inline std::vector<std::string> problems_of(const nlohmann::ordered_json& doc,
                                            const std::string& source = "recal.json") {
  try {
    parse_experiment(doc, source);
  } catch (const ConfigError& e) {
    return e.problems();
  }
  return {};
}

inline bool has_problem(const std::vector<std::string>& problems, const std::string& text) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

}  // namespace calbench::testing
