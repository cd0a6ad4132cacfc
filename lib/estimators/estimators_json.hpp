#pragma once
// Estimators as a config names them: the labelled entry a row builds (EstimatorConfig), what an
// estimator row adds to the common Row (EstimatorTraits), the table and the section parser.
// The list of rows, each with the file that defines it, is estimator_rows.def; the mechanism
// is in config/registry.hpp.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "config/registry.hpp"
#include "core/value.hpp"
#include "estimators/estimator.hpp"
#include "estimators/interval_methods.hpp"

namespace calbench {

// A labelled entry of `estimators`: the row's name, the label results use (unique within the
// experiment), every parameter in row order with defaults filled, and the built estimator.
struct EstimatorConfig {
  std::string name{};
  std::string label{};
  std::vector<NamedParam> params{};
  std::shared_ptr<const Estimator> estimator{};
  IntervalMethod interval = IntervalMethod::basic;  // the row's default interval method
  bool logs_label_probability = false;              // EstimatorTraits::logs_label_probability
  bool may_be_negative = false;                     // EstimatorTraits::may_be_negative
  bool eval_fake = false;                           // EstimatorTraits::eval_fake
};

// How an estimator's cost grows with n at its defaults. `calbench eval` runs the quadratic
// ones only when asked for, since it evaluates every estimator on hundreds of resamples, and
// so the external ones, which start a program per evaluation there.
// What one evaluation costs; calbench eval runs the rows beyond n_log_n only when asked for.
// refit: k recalibrator fits per evaluation (cross_fitted_ce), several times an n log n row.
enum class Cost { n_log_n, quadratic, refit, external };

// What an estimator row adds: its cost, and the interval method used when none is asked for
// (`intervals` in estimator_bias, `calbench eval`), chosen by the coverage measured in
// configs/interval_coverage*.json (docs/intervals.md; where it was measured to miss:
// estimators/coverage_caveats.hpp).
struct EstimatorTraits {
  Cost cost = Cost::n_log_n;
  IntervalMethod interval = IntervalMethod::basic;
  // The default instead of `interval` for a configuration of the row that is an error measure
  // (Estimator::vanishes_when_calibrated): corp's mcb, whose bootstrap values can all lie above
  // the estimate (at n = 10,000), where BCa collapses onto the smallest of them.
  std::optional<IntervalMethod> interval_when_error{};
  // The value takes -log p_{i,y_i}: a row whose label has probability exactly 0 (rounded
  // input) makes the true value +inf, so `calbench eval` and calbench.estimate report it as not
  // estimable instead of the floored value (data/model_outputs.hpp, count_zeros).
  bool logs_label_probability = false;
  // The population value can be below 0 (spiegelhalter's z). Every other row without a target
  // estimates a non-negative value (an error, a test's distance, a squared kernel error), so
  // `calbench eval` raises an interval's bound below 0 to 0; a row with a target uses the
  // target's least value (core/quantity.hpp).
  bool may_be_negative = false;
  // `calbench eval`'s default is the fake interval (its hull with `interval`) where a fake can
  // be fitted to the rows, `interval` where not: measured on real models to cover where
  // `interval` misses (docs/intervals.md, "Defaults"). Every other command knows its
  // generator and uses `interval`.
  bool eval_fake = false;
};

using EstimatorEntry = Row<EstimatorConfig, EstimatorTraits>;

// The table, in listing order.
const std::vector<EstimatorEntry>& estimator_registry();

// The interval methods by their config names (`intervals.methods`, `calbench eval --interval`):
// "default" (nullopt: each estimator's own, EstimatorTraits::interval) and every method.
using IntervalChoice = std::optional<IntervalMethod>;
const std::vector<Choice<IntervalChoice>>& interval_choices();

// One entry {"name": ..., "label": ..., params...} of `estimators` at `pointer`: reports every
// problem at its JSON pointer, writes the entry with its defaults filled into `resolved`, and
// returns nullopt when it found problems.
std::optional<EstimatorConfig> parse_estimator(const Json& entry, const std::string& pointer,
                                               Problems& problems, Json& resolved);

}  // namespace calbench
