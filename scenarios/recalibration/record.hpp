#pragma once
// Scenario recalibration's result records: per cell, every method (and the uncalibrated
// model) judged by the truth of the composed model and by estimators on the test sample, and
// how often the estimators rank the methods as the truth does.
#include <optional>
#include <string>
#include <vector>

#include "core/curve_point.hpp"
#include "core/quantity.hpp"
#include "core/value.hpp"
#include "report/cell_record.hpp"
#include "report/leaderboard_record.hpp"
#include "scenarios/scenario.hpp"
#include "truth/reliability_curve.hpp"

namespace calbench {

// A true quantity of a method over replicates.
struct TruthStat {
  Quantity quantity = Quantity::accuracy;
  double mean = 0.0, sd = 0.0;
  std::optional<double> error;        // the Monte Carlo error of one replicate's value
  std::optional<double> improvement;  // over the uncalibrated model (positive: better)
};

// An estimate (key: the estimator's label) or a fitted scalar (key: its name) over replicates.
struct MethodStat {
  std::string key;
  double mean = 0.0, sd = 0.0;
  std::optional<double> improvement;        // estimates: over the uncalibrated model
  std::optional<Quantity> target;           // estimates: the estimator's target, if any
  std::optional<double> rank_disagreement;  // estimates: see RankingRecord
};

// With a decision task (docs/recalibration.md §4b), a model's true regret on it or its realised
// utility on the test sample, over replicates.
struct DecisionStat {
  double mean = 0.0, sd = 0.0;
  std::optional<double> error;        // regret: the Monte Carlo error of one replicate's value
  std::optional<double> improvement;  // over the uncalibrated model (positive: better)
};

// A recalibration method in a cell (or the uncalibrated model).
struct MethodRecord {
  std::string label, name;
  Value params;
  std::vector<TruthStat> truth;
  std::vector<MethodStat> estimates, parameters;
  // With a decision task: the true regret and the realised utility on the test sample.
  std::optional<DecisionStat> regret, utility;
  std::size_t fits = 0, failed_fits = 0;  // replicates whose fit succeeded / threw
  std::string failure;                    // the first failure's message
  std::optional<double> fit_seconds;      // mean per fit; volatile (run.json, or on request)
};

// How often the ranking of the methods by an estimator on the test sample disagrees with the
// ranking by the truth of its target, over the replicates in which every method was fitted.
struct RankingRecord {
  std::string estimator;
  Quantity target = Quantity::accuracy;
  double disagreement = 0.0;       // the orders differ anywhere
  double best_disagreement = 0.0;  // the best method differs
  std::size_t replicates = 0;
};

struct RecalibrationCellRecord {
  CellHeader cell;
  std::size_t fit_size = 0, test_size = 0;
  // With a decision task: summary.json's {"task", "params"} of the cell (docs/recalibration.md
  // §4b); absent without one.
  std::optional<Value> decision;
  std::vector<MethodRecord> methods;  // the uncalibrated model first
  std::vector<RankingRecord> rankings;
  // With `reliability`: the true top-label curve of each model as fitted in replicate 0, in the
  // order of `methods` (the uncalibrated model first); empty for a method whose fit failed.
  std::vector<std::vector<CurvePoint>> curves;
  // Over the cell's replicates (a failed fit loses its case); always present after a run.
  std::optional<LeaderboardRecord> leaderboard;
};

struct RecalibrationResults : ScenarioResults {
  std::vector<std::string> sweep_keys;
  bool timings_in_summary = false;
  std::optional<ReliabilitySettings> reliability;
  std::vector<RecalibrationCellRecord> records;
  // Over every cell's replicates, each cell (or with leaderboard.block "generator", each
  // distinct generator) a bootstrap block; absent when the cells rank different methods or
  // keys, or there is one cell.
  std::optional<LeaderboardRecord> pooled_leaderboard;
  // With leaderboard.generator_boards: per distinct generator, in order of first appearance
  // among the cells, the board over its cells' replicates (each replicate a block).
  struct GeneratorBoard {
    std::size_t generator = 0;
    std::vector<std::size_t> cells;
    LeaderboardRecord board;
  };
  std::vector<GeneratorBoard> generator_leaderboards;
};

}  // namespace calbench
