#include "recalibrators/isotonic.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace calbench {
namespace {

class IsotonicMap : public BinaryMap {
 public:
  IsotonicMap(std::vector<double> x, std::vector<double> y) : x_(std::move(x)), y_(std::move(y)) {}

  double operator()(double s) const override {
    if (s <= x_.front()) return y_.front();
    if (s >= x_.back()) return y_.back();
    const auto it = std::upper_bound(x_.begin(), x_.end(), s);  // x_[j-1] <= s < x_[j]
    const std::size_t j = static_cast<std::size_t>(it - x_.begin());
    const double x0 = x_[j - 1], x1 = x_[j], y0 = y_[j - 1], y1 = y_[j];
    if (s == x0) return y0;
    // numpy.interp's formula: slope * (x - x0) + y0.
    return (y1 - y0) / (x1 - x0) * (s - x0) + y0;
  }

  std::vector<FittedValue> parameters() const override {
    std::size_t steps = 1;
    for (std::size_t j = 1; j < y_.size(); ++j)
      if (y_[j] != y_[j - 1]) ++steps;
    return {{"levels", static_cast<double>(steps)}};
  }
  FittedState state() const override {
    return {.kind = "isotonic", .arrays = {{"x", x_}, {"y", y_}}};
  }

 private:
  std::vector<double> x_, y_;  // distinct scores and fitted values
};

}  // namespace

std::unique_ptr<const BinaryMap> isotonic_map(std::vector<double> x, std::vector<double> y) {
  return std::make_unique<IsotonicMap>(std::move(x), std::move(y));
}

IsotonicFit pool_adjacent_violators(std::span<const double> scores,
                                    std::span<const double> outcomes) {
  const std::size_t n = scores.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  // Distinct scores with their pooled outcome sums and counts.
  // scikit-learn's _make_unique: a score less than 1e-15 (float64 resolution) above the
  // first score of the current group joins the group, which keeps that first score.
  constexpr double resolution = 1e-15;
  std::vector<double> x, sum, weight;
  for (std::size_t idx : order) {
    if (x.empty() || scores[idx] - x.back() >= resolution) {
      x.push_back(scores[idx]);
      sum.push_back(0.0);
      weight.push_back(0.0);
    }
    sum.back() += outcomes[idx];
    weight.back() += 1.0;
  }
  // PAV over blocks [start, end) of distinct scores, each with its weighted mean.
  const std::size_t m = x.size();
  std::vector<double> value(m), block_weight(m);
  std::vector<std::size_t> start(m);
  std::size_t blocks = 0;
  for (std::size_t j = 0; j < m; ++j) {
    value[blocks] = sum[j] / weight[j];
    block_weight[blocks] = weight[j];
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
  std::vector<double> y(m);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t end = b + 1 < blocks ? start[b + 1] : m;
    for (std::size_t j = start[b]; j < end; ++j) y[j] = value[b];
  }
  return {.x = std::move(x), .weight = std::move(weight), .y = std::move(y)};
}

std::unique_ptr<const BinaryMap> IsotonicCalibrator::fit(std::span<const double> scores,
                                                         std::span<const double> outcomes,
                                                         const std::string& what) const {
  if (scores.empty()) throw DomainError(what + ": the fit sample is empty");
  auto fitted = pool_adjacent_violators(scores, outcomes);
  return std::make_unique<IsotonicMap>(std::move(fitted.x), std::move(fitted.y));
}

}  // namespace calbench
