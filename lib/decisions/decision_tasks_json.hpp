#pragma once
// Decision tasks as a config names them: the table of rows (decision_tasks_json.cpp), each
// building a DecisionSpec; the mechanism in config/registry.hpp. Scenario decision reads its
// `task` object by lookup(reader, "task", "decision task", decision_registry()).
#include <vector>

#include "config/registry.hpp"
#include "decisions/decision_spec.hpp"

namespace calbench {

using DecisionEntry = Row<DecisionSpec>;

// The table, in listing order.
const std::vector<DecisionEntry>& decision_registry();

}  // namespace calbench
