#pragma once
// Scenario estimator_bias's result records: per cell, per estimator, the mean, spread, bias and
// RMSE against the truth of its target (or its own population value).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/quantity.hpp"
#include "core/value.hpp"
#include "report/cell_record.hpp"
#include "report/reliability_record.hpp"
#include "scenarios/estimator_bias/config.hpp"
#include "scenarios/scenario.hpp"

namespace calbench {

// One interval method's record for one estimator in one cell (with `intervals`).
struct IntervalRecord {
  std::optional<IntervalMethod> requested;  // as listed in intervals.methods (nullopt: default)
  IntervalMethod method = IntervalMethod::basic;  // what it resolved to for this estimator
  bool applies = false;  // false: the method gives no interval for this estimator
  std::optional<double> mean_width;
  // With a reference value: the fraction of replicates whose interval holds it, its binomial
  // SE, and the fractions whose interval lies wholly above it (truth_below) or below it.
  std::optional<double> coverage, coverage_se, truth_below, truth_above;
};

struct EstimatorRecord {
  std::string label, name;
  Value params;  // the estimator's parameters, defaults filled
  // What the bias is measured against: the truth of `target`, or with own_target the
  // estimator's own population value (estimators without a target); neither: no bias.
  std::optional<Quantity> target;
  bool own_target = false;
  std::optional<double> truth;  // the reference value
  double mean = 0.0, sd = 0.0;
  std::optional<double> bias, rmse, se_bias;
  // The estimator's own population value (truth/population.hpp), when computed: for
  // estimators without a target and for those that do not converge to their target (then
  // bias = binning_bias + finite_sample_bias).
  std::optional<double> population, population_error;
  std::uint64_t population_samples = 0;
  std::optional<double> binning_bias, finite_sample_bias;
  std::size_t replicates = 0;
  // With `intervals`: the coverage of the first listed method's interval (that of
  // intervals[0]) and the fraction of replicates whose consistency test rejected calibration,
  // each with its binomial standard error sqrt(f (1 - f) / R); every method's record.
  std::optional<double> coverage, coverage_se, rejection_rate, rejection_se;
  std::vector<IntervalRecord> intervals;
};

// "ece_top_l1", "own" or "" (the results' spelling of the reference).
std::string target_name(const EstimatorRecord& e);

struct EstimatorBiasCellRecord {
  CellHeader cell;
  std::size_t sample_size = 0;
  std::vector<EstimatorRecord> estimators;
  // replicate_values[r][e]: estimator e on replicate r (kept only on request).
  std::vector<std::vector<double>> replicate_values;
  // With `reliability`: the generator's true curves and replicate 0's binned curves.
  std::vector<CurveRecord> reliability;
};

struct EstimatorBiasResults : ScenarioResults {
  std::vector<std::string> sweep_keys;
  std::optional<IntervalSettings> intervals;
  std::optional<ReliabilityOutput> reliability;
  bool replicate_values = false;
  std::vector<EstimatorBiasCellRecord> records;
};

}  // namespace calbench
