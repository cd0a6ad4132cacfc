#pragma once
// Scenario estimator_bias's config: per cell `sample_size` and `estimators`; for the whole
// experiment `intervals` and output.replicate_values.
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "estimators/estimators_json.hpp"
#include "experiment/experiment.hpp"
#include "experiment/preflight.hpp"
#include "truth/reliability_curve.hpp"

namespace calbench {

// `intervals`: per replicate, a bootstrap percentile interval of every estimator and the
// consistency-resampling test of calibration (estimators/uncertainty.hpp).
struct IntervalSettings {
  std::size_t resamples = 200;  // bootstrap and consistency resamples, each
  double level = 0.9;           // the intervals' nominal coverage
  double test_level = 0.05;     // reject calibration when p <= test_level
  // The methods measured; nullopt: each estimator's default. The first gives cells.csv's
  // coverage column; every one gets a row of intervals.csv.
  std::vector<std::optional<IntervalMethod>> methods = {std::nullopt};
  std::size_t jackknife_groups = 100;  // BCa's grouped jackknife (interval_methods.hpp)
};

// `reliability`: per cell, the generator's true reliability curves (truth/reliability_curve.hpp)
// and the curves estimated from replicate 0's sample, into reliability.csv.
struct ReliabilityOutput {
  ReliabilitySettings truth;  // points, samples
  std::size_t bins = 15;      // the estimated curves' bins (equal-width and equal-mass)
};

struct EstimatorBiasCell : CellBase {
  std::size_t sample_size = 0;
  std::vector<EstimatorConfig> estimators;
};

struct EstimatorBiasConfig : ExperimentBase {
  std::optional<IntervalSettings> intervals;     // absent: no intervals, outputs as before
  std::optional<ReliabilityOutput> reliability;  // absent: no reliability.csv
  bool replicate_values = false;                 // output.replicate_values: write replicates.csv
  std::vector<EstimatorBiasCell> cells;          // Cartesian product, last key varying fastest
};

std::unique_ptr<ScenarioSections> estimator_bias_sections();
// Per cell, what the pre-flight bounds (experiment/preflight.hpp).
std::vector<CellDemand> estimator_bias_demand(const EstimatorBiasConfig& config);

}  // namespace calbench
