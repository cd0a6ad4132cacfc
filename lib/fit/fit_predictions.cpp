#include "fit/fit_predictions.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/task_kernel.hpp"
#include "estimators/uncertainty.hpp"
#include "truth/population.hpp"

namespace calbench {
namespace {

struct PredictionScratch {
  Sample sample;
  GeneratorScratch generator;
  EstimatorWorkspace workspace;
};

// Rows of `data` drawn uniformly with replacement, n of them: row floor(u N), as the bootstrap
// of estimators/uncertainty.hpp draws (which resamples N of N; here n of N).
void resample_rows(const Sample& data, std::size_t n, Engine& engine, Sample& out) {
  const std::size_t K = data.classes, N = data.size;
  out.resize(n, K);
  out.truth.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const auto j =
        std::min(N - 1, static_cast<std::size_t>(uniform_open01(engine) * static_cast<double>(N)));
    std::copy_n(data.p.begin() + static_cast<std::ptrdiff_t>(j * K), K,
                out.p.begin() + static_cast<std::ptrdiff_t>(i * K));
    out.label[i] = data.label[j];
    out.confidence[i] = data.confidence[j];
    out.predicted[i] = data.predicted[j];
  }
}

std::vector<double> estimates(const Sample& s, std::span<const LabelledEstimator> estimators,
                              EstimatorWorkspace& workspace) {
  std::vector<double> out;
  out.reserve(estimators.size());
  for (const auto& e : estimators) out.push_back(e.estimator->estimate(s, workspace));
  return out;
}

// Mean and sd of column e of values[r * E + e].
Spread spread(const std::vector<double>& values, std::size_t E, std::size_t e) {
  const std::size_t R = values.size() / E;
  double mean = 0.0, ss = 0.0;
  for (std::size_t r = 0; r < R; ++r) mean += values[r * E + e];
  mean /= static_cast<double>(R);
  for (std::size_t r = 0; r < R; ++r) ss += (values[r * E + e] - mean) * (values[r * E + e] - mean);
  Spread out;
  out.mean = mean;
  out.sd = R > 1 ? std::sqrt(ss / static_cast<double>(R - 1)) : 0.0;
  return out;
}

std::vector<BiasReference> bias_references(const Generator& fake, const GroundTruth& truth,
                                           std::span<const LabelledEstimator> estimators,
                                           std::uint64_t population_samples) {
  std::vector<BiasReference> out(estimators.size());
  std::vector<const Estimator*> own;
  std::vector<std::size_t> own_index;
  for (std::size_t e = 0; e < estimators.size(); ++e) {
    if (const auto target = estimators[e].estimator->target()) {
      out[e].value = truth[*target].value;
      out[e].error = truth[*target].error;
    } else {
      own.push_back(estimators[e].estimator);
      own_index.push_back(e);
    }
  }
  if (!own.empty()) {
    const auto values = population_values(fake, own, population_samples);
    for (std::size_t i = 0; i < own.size(); ++i)
      out[own_index[i]] = {values[i].value, values[i].error, true};
  }
  return out;
}

}  // namespace

FitPredictions predict_estimators(const Generator& fake, const GroundTruth& truth,
                                  const Sample& data, std::span<const LabelledEstimator> estimators,
                                  const PredictionSettings& settings, const ProgressFn& progress) {
  if (settings.replicates < 2 || (settings.bootstrap && settings.resamples < 2))
    throw DomainError("predictions need at least 2 fake samples and 2 bootstrap resamples");
  for (std::size_t n : settings.sizes)
    if (n < 2)
      throw DomainError("a predicted sample size must be >= 2, found " + std::to_string(n));
  const std::size_t E = estimators.size(), R = settings.replicates, B = settings.resamples;
  const std::size_t S = settings.sizes.size(), N = data.size;
  FitPredictions out;
  out.replicates = R;
  out.resamples = B;
  out.references = bias_references(fake, truth, estimators, settings.population_samples);
  EstimatorWorkspace workspace;
  out.data_estimates = estimates(data, estimators, workspace);

  // Every fake sample and bootstrap resample is one task writing its own slot.
  std::vector<std::size_t> boot_sizes;  // size indices the bootstrap answers
  for (std::size_t s = 0; s < S; ++s)
    if (settings.bootstrap && settings.sizes[s] <= N) boot_sizes.push_back(s);
  const std::size_t fake_tasks = S * R, tasks = fake_tasks + boot_sizes.size() * B;
  const std::vector<std::vector<double>> values =
      map_batches<std::vector<double>, PredictionScratch>(
          tasks,
          [&](std::size_t t, PredictionScratch& scratch) {
            if (t < fake_tasks) {
              const std::size_t s = t / R, r = t % R;
              Engine engine = make_engine({settings.seed, 1 + s, r, Purpose::sample});
              fake.sample(engine, settings.sizes[s], scratch.sample, scratch.generator);
            } else {
              const std::size_t s = boot_sizes[(t - fake_tasks) / B], b = (t - fake_tasks) % B;
              Engine engine =
                  make_engine(resample_key({settings.seed, 1 + s, 0}, b, Purpose::bootstrap));
              resample_rows(data, settings.sizes[s], engine, scratch.sample);
            }
            return estimates(scratch.sample, estimators, scratch.workspace);
          },
          progress);

  const auto flatten = [&](std::size_t first, std::size_t count) {
    std::vector<double> flat;
    flat.reserve(count * E);
    for (std::size_t i = 0; i < count; ++i)
      flat.insert(flat.end(), values[first + i].begin(), values[first + i].end());
    return flat;
  };
  const double sd_log_se = std::sqrt(1.0 / (2.0 * static_cast<double>(R - 1)) +
                                     1.0 / (2.0 * static_cast<double>(B - 1)));
  for (std::size_t s = 0; s < S; ++s) {
    const std::vector<double> fake_values = flatten(s * R, R);
    const auto boot = std::find(boot_sizes.begin(), boot_sizes.end(), s);
    std::vector<double> boot_values;
    if (boot != boot_sizes.end())
      boot_values =
          flatten(fake_tasks + static_cast<std::size_t>(boot - boot_sizes.begin()) * B, B);
    for (std::size_t e = 0; e < E; ++e) {
      Prediction p;
      p.estimator = e;
      p.n = settings.sizes[s];
      p.fake = spread(fake_values, E, e);
      if (settings.keep_values)
        for (std::size_t r = 0; r < R; ++r) p.fake_values.push_back(fake_values[r * E + e]);
      p.fake.bias = p.fake.mean - out.references[e].value;
      p.fake.bias_se =
          std::hypot(p.fake.sd / std::sqrt(static_cast<double>(R)), out.references[e].error);
      if (!boot_values.empty()) {
        Spread b = spread(boot_values, E, e);
        b.bias = b.mean - out.data_estimates[e];
        b.bias_se = b.sd / std::sqrt(static_cast<double>(B));
        p.bias_disagrees =
            std::abs(p.fake.bias - b.bias) > settings.z * std::hypot(p.fake.bias_se, b.bias_se);
        // Two zero sds agree; one zero against a positive one disagrees.
        p.sd_disagrees =
            (p.fake.sd > 0.0) != (b.sd > 0.0) ||
            (p.fake.sd > 0.0 && std::abs(std::log(p.fake.sd / b.sd)) > settings.z * sd_log_se);
        p.bootstrap = b;
      }
      out.cells.push_back(p);
    }
  }
  return out;
}

}  // namespace calbench
