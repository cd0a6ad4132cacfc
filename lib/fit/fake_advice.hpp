#pragma once
// What a fake fitted to a model's rows predicts of each estimator on those rows (calbench eval's
// fake-calibrated intervals and its advice; docs/intervals.md, "Fake-calibrated intervals", and
// docs/eval.md, "Advice").
//
// F is the fake `calbench fit` fits to the same rows. theta_F is each estimator's reference under
// F, as fit's predictions measure bias against (fit/fit_predictions.hpp): the truth of its target
// (ece_top_l1 for a binned top-label ECE), or, for an estimator without a target, its own
// population value on `population_samples` rows of F. R samples of the data's n rows from F give
// the estimates T_r (stream {seed, 1, r, Purpose::sample}) and the deviations d_r = T_r - theta_F:
// - deviations: the d_r, ascending (IntervalMethod::fake takes their quantiles);
// - bias = mean(d_r), sd = sd(T_r) (divisor R - 1), rmse = sqrt(bias^2 + sd^2): the predicted
//   error of T as an estimate of its reference on data like these, at their n;
// - the recommendation: for each target that two or more estimators share, the one of least
//   predicted rmse. An estimator without a target estimates its own quantity, so it is compared
//   with none.
// Deterministic for any thread count (predict_estimators' keyed streams and slots).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/quantity.hpp"
#include "core/sample.hpp"
#include "core/task_kernel.hpp"
#include "fit/fit_predictions.hpp"
#include "fit/fit_verdict.hpp"
#include "generators/generator.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

struct FakeAdviceSettings {
  std::size_t replicates = 200;  // R samples of n rows from the fake
  std::uint64_t seed = 0;
  std::uint64_t population_samples = 200'000;  // theta_F of an estimator without a target
};

struct EstimatorAdvice {
  BiasReference reference;  // theta_F
  double bias = 0.0, bias_se = 0.0, sd = 0.0, rmse = 0.0;
  std::vector<double> deviations;  // d_r = T_r - theta_F, ascending
};

struct Recommendation {
  Quantity target{};
  std::size_t estimator = 0;  // the least rmse among those of this target
  std::size_t compared = 0;   // estimators of this target
};

struct FakeAdvice {
  std::size_t n = 0, replicates = 0;
  std::vector<EstimatorAdvice> estimators;      // in the order asked
  std::vector<Recommendation> recommendations;  // in the order of the targets' first estimator
};

// `progress` (optional) is told how many of the R fake samples are done.
FakeAdvice advise_on_fake(const Generator& fake, const GroundTruth& truth, const Sample& data,
                          std::span<const LabelledEstimator> estimators,
                          const FakeAdviceSettings& settings, const ProgressFn& progress = {});

// For each target held by two or more estimators, the index of the least rmse (the first of equal
// ones); targets[e] empty: estimator e has none.
std::vector<Recommendation> recommend(std::span<const std::optional<Quantity>> targets,
                                      std::span<const double> rmse);

}  // namespace calbench
