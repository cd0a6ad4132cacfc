#pragma once
// The parts of the result files that decision records add (summary.json's "decision" and
// "requirements" blocks, cells.csv for decisions, requirements.csv, the terminal table).
// Used by results.cpp only.
#include <nlohmann/json.hpp>
#include <string>

#include "report/results.hpp"

namespace calbench {

nlohmann::ordered_json decision_json(const DecisionRecord& d);
nlohmann::ordered_json requirements_json(const RequirementsRecord& r);
// One row per cell: swept values, solved target parameters (when any), the generator's accuracy and
// ece_top_l1, every decision value, then the task's figures (policy, then oracle_ prefixed).
std::string decision_cells_csv(const ResultSet& r);
// One row per group of cells (requirements.csv).
std::string requirements_csv(const ResultSet& r);
std::string format_decision_table(const ResultSet& r);

}  // namespace calbench
