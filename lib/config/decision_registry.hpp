#pragma once
// The registry of decision tasks (DecisionEntry rows, decision_registry(), decision_names(),
// format_decisions()) is config/registry.hpp's; the rows are defined in
// decisions/decision_tasks_json.cpp.
#include "config/registry.hpp"
