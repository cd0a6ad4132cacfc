#pragma once
// Scenario decision's result records (docs/decisions.md): per cell, exact expected utilities
// with their errors (quadrature error estimate or Monte Carlo standard error), the task's
// figures, and the spread of the realised utility over test sets of sample_size; with a
// requirement, the frontier and the verdict.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/value.hpp"
#include "decisions/frontier.hpp"
#include "decisions/requirement.hpp"
#include "report/cell_record.hpp"
#include "scenarios/scenario.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

// The policy after a recalibrator: over the replicates whose fit succeeded, the mean and sd of
// its exact expected utility and of its cost relative to the oracle; `error` is the mean Monte
// Carlo standard error of one replicate's value.
struct RecalibratedRecord {
  std::string label, name;
  Value params;  // the method's parameters, defaults filled
  std::size_t fit_size = 0;
  std::uint64_t samples = 0;
  std::size_t fits = 0, failed_fits = 0;
  std::string failure;  // the first failed fit's message
  double utility_mean = 0.0, utility_sd = 0.0, utility_error = 0.0;
  double cost_mean = 0.0, cost_sd = 0.0, cost_error = 0.0;
};

struct DecisionRecord {
  std::string task;                              // registry name
  Value params;                                  // the task's parameters, defaults filled
  TruthMethod method = TruthMethod::quadrature;  // quadrature | monte_carlo
  std::uint64_t samples = 0;                     // Monte Carlo draws (0 for quadrature)
  double expected_utility = 0.0, expected_utility_error = 0.0;
  double oracle_expected_utility = 0.0, oracle_expected_utility_error = 0.0;
  double miscalibration_cost = 0.0, miscalibration_cost_error = 0.0;  // oracle - policy
  double realised_mean = 0.0, realised_sd = 0.0;
  std::vector<std::pair<std::string, double>> figures, oracle_figures;
  std::optional<RecalibratedRecord> recalibrated;
};

struct DecisionCellRecord {
  CellHeader cell;
  std::size_t sample_size = 0;
  DecisionRecord decision;
};

// requirements.csv and summary.json's "requirements": one row per group of cells that share
// every swept value but the accuracy key.
struct RequirementsRecord {
  Requirement requirement;
  std::string accuracy_key;  // empty when none is swept
  std::vector<std::string> group_keys;
  std::vector<FrontierRow> rows;
  std::string verdict;  // one paragraph
};

struct DecisionResults : ScenarioResults {
  std::vector<std::string> sweep_keys;
  std::vector<DecisionCellRecord> records;
  std::optional<RequirementsRecord> requirements;
};

}  // namespace calbench
