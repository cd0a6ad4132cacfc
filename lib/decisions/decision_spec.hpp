#pragma once
// The typed parameters of every decision task, and the one factory that builds a task from
// them. The config layer (config/decision_config.cpp) makes these from JSON.
#include <memory>
#include <variant>

#include "decisions/betting.hpp"
#include "decisions/cost_matrix.hpp"
#include "decisions/selective.hpp"
#include "decisions/triage.hpp"

namespace calbench {

using DecisionSpec = std::variant<CostMatrixSpec, SelectiveSpec, TriageSpec, BettingSpec>;

// Validates (throws DomainError naming the parameter) and builds the task.
std::unique_ptr<DecisionTask> make_task(const DecisionSpec& spec);

}  // namespace calbench
