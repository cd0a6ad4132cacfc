#include "estimators/uncertainty.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/task_kernel.hpp"

namespace calbench {
namespace {

constexpr std::uint64_t two_32 = std::uint64_t{1} << 32;

// Shapes the workspace's sample like `sample` (allocates only when it grows).
void shape_like(const Sample& sample, Sample& out) {
  out.resize(sample.size, sample.classes);
}

void bootstrap_resample(const Sample& sample, Engine& engine, ResampleWorkspace& ws) {
  Sample& out = ws.sample;
  ws.rows_current = false;
  shape_like(sample, out);
  const std::size_t n = sample.size, K = sample.classes;
  const double scale = static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = std::min(n - 1, static_cast<std::size_t>(uniform_open01(engine) * scale));
    std::copy_n(sample.p.data() + j * K, K, out.p.data() + i * K);
    out.label[i] = sample.label[j];
    out.confidence[i] = sample.confidence[j];
    out.predicted[i] = sample.predicted[j];
  }
}

// y*_i = the first k with u < c_ik, c_ik = p_i0 + ... + p_ik summed left to right (the
// inverse-CDF draw of uncertainty.hpp), or the row's last class with p > 0 when rounding leaves
// c_i,K-1 <= u. The running sums are formed once per call, in that order, so each draw is the
// same class the walk over the row would find: most often the predicted one, found by one test
// of u against [c_i,pred-1, c_i,pred), else by counting the row's sums <= u.
void prepare_relabel(const Sample& sample, ResampleWorkspace& ws) {
  const std::size_t n = sample.size, K = sample.classes;
  Sample& out = ws.sample;
  shape_like(sample, out);
  std::copy(sample.p.begin(), sample.p.end(), out.p.begin());
  std::copy(sample.confidence.begin(), sample.confidence.end(), out.confidence.begin());
  std::copy(sample.predicted.begin(), sample.predicted.end(), out.predicted.begin());
  ws.cumulative.resize(n * K);
  ws.predicted_from.resize(n);
  ws.last_positive.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* row = sample.p.data() + i * K;
    double* sums = ws.cumulative.data() + i * K;
    double cumulative = 0.0;
    std::uint32_t last_positive = 0;
    for (std::size_t k = 0; k < K; ++k) {
      if (k == sample.predicted[i]) ws.predicted_from[i] = cumulative;
      if (row[k] > 0.0) last_positive = static_cast<std::uint32_t>(k);
      cumulative += row[k];
      sums[k] = cumulative;
    }
    ws.last_positive[i] = last_positive;
  }
  ws.rows_current = true;
}

void relabel(const Sample& sample, Engine& engine, ResampleWorkspace& ws) {
  if (!ws.rows_current) prepare_relabel(sample, ws);
  const std::size_t K = sample.classes;
  Sample& out = ws.sample;
  for (std::size_t i = 0; i < sample.size; ++i) {
    const double u = uniform_open01(engine);
    const double* sums = ws.cumulative.data() + i * K;
    const std::uint32_t predicted = sample.predicted[i];
    if (ws.predicted_from[i] <= u && u < sums[predicted]) {
      out.label[i] = predicted;
      continue;
    }
    // The first k with u < sums[k] is the number of sums <= u (they never decrease), counted
    // without a branch per class: a search's branches are mispredicted on random u.
    std::size_t y = 0;
    for (std::size_t k = 0; k < K; ++k) y += sums[k] <= u ? 1 : 0;
    out.label[i] = y < K ? static_cast<std::uint32_t>(y) : ws.last_positive[i];
  }
}

using Resampler = void (*)(const Sample&, Engine&, ResampleWorkspace&);

std::vector<double> resampled_values(const Sample& sample,
                                     std::span<const Estimator* const> estimators,
                                     const ResampleKey& key, std::size_t resamples,
                                     Execution execution, ResampleWorkspace& workspace,
                                     Purpose purpose, Resampler resample,
                                     const ResampleCounter& counter) {
  if (resamples == 0) throw DomainError("resamples = 0: must be >= 1");
  if (resamples >= two_32) throw DomainError("resamples must be < 2^32");
  if (key.replicate >= two_32) throw DomainError("replicate index must be < 2^32");
  const std::size_t E = estimators.size();
  std::vector<double> values(resamples * E);
  const auto one = [&](std::size_t b, ResampleWorkspace& ws) {
    Engine engine = make_engine(resample_key(key, b, purpose));
    resample(sample, engine, ws);
    for (std::size_t e = 0; e < E; ++e)
      values[b * E + e] = estimators[e]->estimate(ws.sample, ws.estimator);
  };
  // The caller's workspace may hold another sample's rows (parallel ones start empty).
  workspace.rows_current = false;
  if (execution == Execution::serial) {
    for (std::size_t b = 0; b < resamples; ++b) {
      one(b, workspace);
      if (counter) counter(b + 1, resamples);
    }
  } else {
    for_each_index<ResampleWorkspace>(resamples, one, counter);
  }
  return values;
}

}  // namespace

StreamKey resample_key(const ResampleKey& key, std::size_t resample, Purpose purpose) {
  if (key.replicate >= two_32 || resample >= two_32)
    throw DomainError("replicate " + std::to_string(key.replicate) + ", resample " +
                      std::to_string(resample) + ": both must be < 2^32");
  return {key.seed, key.cell, key.replicate * two_32 + resample, purpose};
}

std::vector<double> bootstrap_values(const Sample& sample,
                                     std::span<const Estimator* const> estimators,
                                     const ResampleKey& key, std::size_t resamples,
                                     Execution execution, ResampleWorkspace& workspace,
                                     const ResampleCounter& counter) {
  return resampled_values(sample, estimators, key, resamples, execution, workspace,
                          Purpose::bootstrap, bootstrap_resample, counter);
}

std::vector<double> consistency_values(const Sample& sample,
                                       std::span<const Estimator* const> estimators,
                                       const ResampleKey& key, std::size_t resamples,
                                       Execution execution, ResampleWorkspace& workspace,
                                       const ResampleCounter& counter) {
  return resampled_values(sample, estimators, key, resamples, execution, workspace, Purpose::labels,
                          relabel, counter);
}

std::vector<double> jackknife_values(const Sample& sample,
                                     std::span<const Estimator* const> estimators,
                                     std::size_t groups, Execution execution,
                                     ResampleWorkspace& workspace, const ResampleCounter& counter) {
  const std::size_t n = sample.size, K = sample.classes, E = estimators.size();
  if (n < 2) throw DomainError("the jackknife needs n >= 2 rows, found " + std::to_string(n));
  if (groups < 2)
    throw DomainError("jackknife groups = " + std::to_string(groups) + ": must be >= 2");
  const std::size_t G = std::min(groups, n);
  std::vector<double> values(G * E);
  const auto one = [&](std::size_t g, ResampleWorkspace& ws) {
    // Rows g, g + G, g + 2G, ... left out.
    const std::size_t left_out = (n - g + G - 1) / G;
    ws.rows_current = false;
    ws.sample.resize(n - left_out, K);
    const bool truth = !sample.truth.empty();
    if (truth)
      ws.sample.truth.resize((n - left_out) * K);
    else
      ws.sample.truth.clear();
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % G == g) continue;
      std::copy_n(sample.p.data() + i * K, K, ws.sample.p.data() + at * K);
      if (truth) std::copy_n(sample.truth.data() + i * K, K, ws.sample.truth.data() + at * K);
      ws.sample.label[at] = sample.label[i];
      ws.sample.confidence[at] = sample.confidence[i];
      ws.sample.predicted[at] = sample.predicted[i];
      ++at;
    }
    for (std::size_t e = 0; e < E; ++e)
      values[g * E + e] = estimators[e]->estimate(ws.sample, ws.estimator);
  };
  if (execution == Execution::serial) {
    for (std::size_t g = 0; g < G; ++g) {
      one(g, workspace);
      if (counter) counter(g + 1, G);
    }
  } else {
    for_each_index<ResampleWorkspace>(G, one, counter);
  }
  return values;
}

double quantile_type7(std::vector<double>& values, double a) {
  std::sort(values.begin(), values.end());
  return quantile_type7_sorted(values, a);
}

double quantile_type7_sorted(std::span<const double> sorted, double a) {
  if (sorted.empty()) throw DomainError("quantile of no values");
  const double h = a * static_cast<double>(sorted.size() - 1);
  const auto j = static_cast<std::size_t>(std::floor(h));
  if (j + 1 >= sorted.size()) return sorted.back();
  return sorted[j] + (h - static_cast<double>(j)) * (sorted[j + 1] - sorted[j]);
}

std::vector<Interval> percentile_intervals(const std::vector<double>& values,
                                           std::size_t estimators, double level) {
  if (!(level > 0.0 && level < 1.0)) throw DomainError("level must be in (0, 1)");
  const std::size_t R = estimators == 0 ? 0 : values.size() / estimators;
  std::vector<Interval> out(estimators);
  std::vector<double> column(R);
  for (std::size_t e = 0; e < estimators; ++e) {
    for (std::size_t b = 0; b < R; ++b) column[b] = values[b * estimators + e];
    std::sort(column.begin(), column.end());
    out[e].lo = quantile_type7_sorted(column, (1.0 - level) / 2.0);
    out[e].hi = quantile_type7_sorted(column, (1.0 + level) / 2.0);
  }
  return out;
}

std::vector<double> consistency_p_values(const std::vector<double>& values,
                                         std::span<const double> observed) {
  const std::size_t E = observed.size();
  const std::size_t R = E == 0 ? 0 : values.size() / E;
  std::vector<double> out(E);
  for (std::size_t e = 0; e < E; ++e) {
    std::size_t exceed = 0;
    for (std::size_t b = 0; b < R; ++b)
      if (values[b * E + e] >= observed[e]) ++exceed;
    out[e] = static_cast<double>(1 + exceed) / static_cast<double>(1 + R);
  }
  return out;
}

}  // namespace calbench
