#pragma once
// Scenario recalibration's config (docs/recalibration.md): per cell `fit_size`, `test_size`,
// `truth_samples`, `methods`, `estimators` and optionally `decision`; output.timings.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "estimators/estimators_json.hpp"
#include "experiment/experiment.hpp"
#include "experiment/preflight.hpp"
#include "recalibrators/recalibrators_json.hpp"
#include "scenarios/decision/config.hpp"
#include "truth/reliability_curve.hpp"

namespace calbench {

// The ranking keys a decision task adds (docs/recalibration.md §4b): every model's true regret
// on the task, and its realised utility on the test sample.
inline constexpr std::string_view decision_regret_key = "decision_regret";
inline constexpr std::string_view realised_utility_key = "realised_utility";

struct RecalibrationCell : CellBase {
  std::size_t fit_size = 0;               // rows the methods are fitted on, per replicate
  std::size_t test_size = 0;              // rows the estimators are computed on, per replicate
  std::uint64_t truth_samples = 200'000;  // Monte Carlo rows of the composed truth
  std::vector<MethodConfig> methods;
  std::vector<EstimatorConfig> estimators;
  // `decision` (optional, docs/recalibration.md §4b): the decision task of scenario decision,
  // parsed by the same code; every model's true regret on it becomes a ranking key.
  std::optional<DecisionTaskConfig> decision;
};

// `leaderboard` {block, generator_boards} (docs/recalibration.md §4a): the pooled board's
// bootstrap blocks — each cell (CalArena's datasets), or each distinct generator, all its cells
// one block, since cells of one model at several fit sizes are not independent — and whether
// each generator also gets a board of its own cells.
enum class BoardBlock { cell, generator };
struct BoardSettings {
  BoardBlock block = BoardBlock::cell;
  bool generator_boards = false;
};

struct RecalibrationConfig : ExperimentBase {
  // output.timings: also write each method's fit time into summary.json (it is always in
  // run.json). Off by default: timings would break the byte-identical contract.
  bool timings = false;
  // `reliability` {points, samples}: per cell, the true top-label curve of the uncalibrated model
  // and of each method as fitted in replicate 0 (truth/reliability_curve.hpp), into
  // reliability.csv. Absent: no reliability.csv, every output as before.
  std::optional<ReliabilitySettings> reliability;
  BoardSettings boards;
  std::vector<RecalibrationCell> cells;
};

std::unique_ptr<ScenarioSections> recalibration_sections();
// Per cell, what the pre-flight bounds (experiment/preflight.hpp).
std::vector<CellDemand> recalibration_demand(const RecalibrationConfig& config);

}  // namespace calbench
