#pragma once
// Predictions beside the bootstrap (`calbench fit`, docs/fit.md): for each requested estimator
// and sample size n, what the fitted fake says the estimate's mean, sd and bias will be, next
// to what a bootstrap of the model's own rows says.
//
// - The fake: R samples of n rows (stream {seed, 1 + s, r, Purpose::sample} for size index s,
//   sample r). mean and sd over the R estimates; bias = mean - reference, the reference being
//   the truth of the estimator's target (ece_top_l1 for a binned ECE, as a run reports bias)
//   or, for an estimator without a target, its own population value (truth/population.hpp);
//   bias_se = sqrt(sd^2 / R + reference error^2).
// - The bootstrap, for n <= N (the data's rows): B resamples of n rows drawn with replacement
//   from the N (the n-out-of-N bootstrap; stream resample_key({seed, 1 + s, 0}, b,
//   Purpose::bootstrap)); its "bias" is mean - the estimate on all N rows (Efron & Tibshirani
//   1993, eq. 10.2), its sd the resamples' sd, bias_se = sd / sqrt(B). For n > N a bootstrap
//   has nothing to resample from, and only the fake answers.
// - Disagreement beyond Monte Carlo error: bias when |bias_fake - bias_boot| > z sqrt(se_f^2 +
//   se_b^2); sd when |log(sd_fake / sd_boot)| > z sqrt(1/(2(R - 1)) + 1/(2(B - 1))), the
//   large-sample standard error of a log sample sd (normal data; a guide, not an exact test).
// - keep_values: each cell also holds the fake's R estimates themselves, in sample order (eval's
//   fake-calibrated intervals take quantiles of T_r - reference, fit/fake_advice.hpp);
//   bootstrap = false leaves the model's rows unresampled (no Prediction::bootstrap).
// Deterministic for any thread count: each (size, sample) is keyed and written to its slot.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/sample.hpp"
#include "core/task_kernel.hpp"
#include "fit/fit_verdict.hpp"
#include "generators/generator.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

struct PredictionSettings {
  std::vector<std::size_t> sizes;  // each >= 2
  std::size_t replicates = 200;    // R fake samples per size
  std::size_t resamples = 200;     // B bootstrap resamples per size <= N
  double z = 3.0;                  // disagreement threshold in Monte Carlo standard errors
  std::uint64_t seed = 0;
  std::uint64_t population_samples = 1'000'000;  // for estimators without a target
  bool bootstrap = true;                         // false: the fake alone (`resamples` unused)
  bool keep_values = false;                      // Prediction::fake_values
};

// What a fake estimator's bias is measured against.
struct BiasReference {
  double value = 0.0, error = 0.0;
  bool own_population = false;  // the estimator's own population value (no target)
};

struct Spread {
  double mean = 0.0, sd = 0.0, bias = 0.0, bias_se = 0.0;
};

struct Prediction {
  std::size_t estimator = 0;  // index into the estimators asked
  std::size_t n = 0;
  Spread fake;
  std::optional<Spread> bootstrap;  // empty when n > the data's rows (or bootstrap = false)
  std::vector<double> fake_values;  // the R estimates, with PredictionSettings::keep_values
  bool sd_disagrees = false, bias_disagrees = false;
};

struct FitPredictions {
  std::vector<BiasReference> references;  // per estimator
  std::vector<double> data_estimates;     // per estimator, on all the data's rows
  std::vector<Prediction> cells;          // size-major: every estimator at sizes[0], ...
  std::size_t replicates = 0, resamples = 0;
};

// `progress` (optional) is told how many of the fake samples and resamples are done.
FitPredictions predict_estimators(const Generator& fake, const GroundTruth& truth,
                                  const Sample& data, std::span<const LabelledEstimator> estimators,
                                  const PredictionSettings& settings,
                                  const ProgressFn& progress = {});

}  // namespace calbench
