#include "estimators/isotonic_fit.hpp"

#include <algorithm>
#include <numeric>

namespace calbench {

IsotonicFit isotonic_fit(std::span<const double> scores, std::span<const double> outcomes,
                         double resolution) {
  const std::size_t n = scores.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  IsotonicFit out;
  for (std::size_t idx : order) {
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

}  // namespace calbench
