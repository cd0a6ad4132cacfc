#include "estimators/isotonic_fit.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace calbench {

namespace {

template <class Index>
IsotonicFit isotonic_fit_in_order(std::span<const double> scores, std::span<const double> outcomes,
                                  double resolution, std::span<const Index> order) {
  IsotonicFit out;
  // At most one distinct score per row: reserved once, not grown by doubling (CORP fits every
  // resample of eval's bootstrap).
  out.x.reserve(order.size());
  out.sum.reserve(order.size());
  out.weight.reserve(order.size());
  for (const std::size_t idx : order) {
    if (out.x.empty() ||
        !(scores[idx] - out.x.back() < resolution || scores[idx] == out.x.back())) {
      out.x.push_back(scores[idx]);
      out.sum.push_back(0.0);
      out.weight.push_back(0.0);
    }
    out.sum.back() += outcomes[idx];
    out.weight.back() += 1.0;
  }
  // PAV over blocks [start, end) of distinct scores, each with its weighted mean.
  const std::size_t m = out.x.size();
  std::vector<double> value(m), block_weight(m);
  std::vector<std::size_t> start(m);
  std::size_t blocks = 0;
  for (std::size_t j = 0; j < m; ++j) {
    value[blocks] = out.sum[j] / out.weight[j];
    block_weight[blocks] = out.weight[j];
    start[blocks] = j;
    ++blocks;
    while (blocks > 1 && value[blocks - 2] >= value[blocks - 1]) {
      const double w = block_weight[blocks - 2] + block_weight[blocks - 1];
      value[blocks - 2] = (value[blocks - 2] * block_weight[blocks - 2] +
                           value[blocks - 1] * block_weight[blocks - 1]) /
                          w;
      block_weight[blocks - 2] = w;
      --blocks;
    }
  }
  out.y.resize(m);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t end = b + 1 < blocks ? start[b + 1] : m;
    for (std::size_t j = start[b]; j < end; ++j) out.y[j] = value[b];
  }
  return out;
}

}  // namespace

IsotonicFit isotonic_fit(std::span<const double> scores, std::span<const double> outcomes,
                         double resolution, std::span<const std::uint32_t> order) {
  if (!order.empty()) {
    if (order.size() != scores.size()) throw DomainError("isotonic fit: order of the wrong size");
    return isotonic_fit_in_order(scores, outcomes, resolution, order);
  }
  std::vector<std::size_t> sorted(scores.size());
  std::iota(sorted.begin(), sorted.end(), std::size_t{0});
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  return isotonic_fit_in_order(scores, outcomes, resolution, std::span<const std::size_t>(sorted));
}

std::vector<CurvePoint> isotonic_reliability(std::span<const double> scores,
                                             std::span<const double> outcomes) {
  const IsotonicFit fit = isotonic_fit(scores, outcomes, 0.0);
  const double n = static_cast<double>(scores.size());
  std::vector<CurvePoint> out;
  for (std::size_t j = 0; j < fit.x.size(); ++j) {
    if (out.empty() || fit.y[j] != fit.y[j - 1]) {
      out.push_back({.lower = fit.x[j], .upper = fit.x[j], .frequency = fit.y[j]});
    }
    CurvePoint& point = out.back();
    point.upper = fit.x[j];
    point.score += fit.weight[j] * fit.x[j];  // a sum until the end
    point.count += static_cast<std::uint64_t>(fit.weight[j]);
  }
  for (CurvePoint& point : out) {
    const double count = static_cast<double>(point.count);
    point.score /= count;
    point.error = std::sqrt(point.frequency * (1.0 - point.frequency) / count);
    point.weight = count / n;
  }
  return out;
}

}  // namespace calbench
