#pragma once
// `calbench list`: the registries (config/registry.hpp) as text, each row with its summary, its
// parameters (type, default, rule, doc), its documented example and its notes.
#include <string>
#include <string_view>
#include <vector>

namespace calbench {

// A scenario as `calbench list scenarios` shows it; the rows come from the scenario table
// (scenarios/registry.cpp), the one place that knows them.
struct ScenarioEntry {
  std::string name;
  std::string summary;
};

// KIND is "" (a one-screen summary: each kind's names), "estimators", "maps", "families",
// "scenarios", "quantities", "decisions" or "recalibrators" (that kind in full), or the name of
// an entry (its listing); anything else throws ConfigError listing the valid kinds.
std::string format_registry(std::string_view kind, const std::vector<ScenarioEntry>& scenarios);
std::string format_decisions();
std::string format_recalibrators();

}  // namespace calbench
