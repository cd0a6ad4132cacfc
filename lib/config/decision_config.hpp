#pragma once
// What the decision-task registry (config/decision_registry.hpp) shares with scenario
// decision's sections (scenarios/decision/config.cpp): the metrics every task reports.
#include <optional>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "config/recalibration_config.hpp"
#include "decisions/decision_spec.hpp"
#include "decisions/requirement.hpp"

namespace calbench {

// The metrics every task has, besides its own figures.
const std::vector<std::string>& common_decision_metrics();

}  // namespace calbench
