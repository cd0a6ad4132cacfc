#pragma once
// The typed parameters of every decision task, and the one factory that builds a task from
// them. The rows of decisions/decision_tasks_json.cpp make these from JSON.
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "decisions/betting.hpp"
#include "decisions/cost_matrix.hpp"
#include "decisions/requirement.hpp"
#include "decisions/selective.hpp"
#include "decisions/triage.hpp"

namespace calbench {

using DecisionSpec = std::variant<CostMatrixSpec, SelectiveSpec, TriageSpec, BettingSpec>;

// Validates (throws DomainError naming the parameter) and builds the task.
std::unique_ptr<DecisionTask> make_task(const DecisionSpec& spec);

// The metrics every task reports besides its own figures (any of them can be a requirement's),
// in the order `calbench list` shows them, and their names.
inline constexpr DecisionMetric common_decision_metrics[] = {
    DecisionMetric::expected_utility, DecisionMetric::oracle_expected_utility,
    DecisionMetric::miscalibration_cost};
const std::vector<std::string>& common_decision_metric_names();

}  // namespace calbench
