#include "fit/fake_advice.hpp"

#include <algorithm>
#include <cmath>

namespace calbench {

FakeAdvice advise_on_fake(const Generator& fake, const GroundTruth& truth, const Sample& data,
                          std::span<const LabelledEstimator> estimators,
                          const FakeAdviceSettings& settings, const ProgressFn& progress) {
  PredictionSettings prediction;
  prediction.sizes = {data.size};
  prediction.replicates = settings.replicates;
  prediction.seed = settings.seed;
  prediction.population_samples = settings.population_samples;
  prediction.bootstrap = false;
  prediction.keep_values = true;
  const FitPredictions predicted =
      predict_estimators(fake, truth, data, estimators, prediction, progress);
  FakeAdvice out;
  out.n = data.size;
  out.replicates = predicted.replicates;
  std::vector<std::optional<Quantity>> targets;
  std::vector<double> rmse;
  for (const Prediction& cell : predicted.cells) {
    EstimatorAdvice a;
    a.reference = predicted.references[cell.estimator];
    a.bias = cell.fake.bias;
    a.bias_se = cell.fake.bias_se;
    a.sd = cell.fake.sd;
    a.rmse = std::hypot(a.bias, a.sd);
    for (const double t : cell.fake_values) a.deviations.push_back(t - a.reference.value);
    std::sort(a.deviations.begin(), a.deviations.end());
    targets.push_back(estimators[cell.estimator].estimator->target());
    rmse.push_back(a.rmse);
    out.estimators.push_back(std::move(a));
  }
  out.recommendations = recommend(targets, rmse);
  return out;
}

std::vector<Recommendation> recommend(std::span<const std::optional<Quantity>> targets,
                                      std::span<const double> rmse) {
  std::vector<Recommendation> out;
  for (std::size_t e = 0; e < targets.size(); ++e) {
    if (!targets[e]) continue;
    const auto seen = std::find_if(
        out.begin(), out.end(), [&](const Recommendation& r) { return r.target == *targets[e]; });
    if (seen == out.end()) {
      out.push_back({.target = *targets[e], .estimator = e, .compared = 1});
      continue;
    }
    ++seen->compared;
    if (rmse[e] < rmse[seen->estimator]) seen->estimator = e;
  }
  std::erase_if(out, [](const Recommendation& r) { return r.compared < 2; });
  return out;
}

}  // namespace calbench
