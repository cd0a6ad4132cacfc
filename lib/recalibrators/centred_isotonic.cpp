#include "recalibrators/centred_isotonic.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace calbench {

std::pair<std::vector<double>, std::vector<double>> centred_points(const IsotonicFit& fit) {
  std::vector<double> x, y;
  auto add = [&](double at, double value) {
    if (x.empty() || at > x.back()) {  // points arrive in order; an equal score is the same point
      x.push_back(at);
      y.push_back(value);
    }
  };
  const std::size_t m = fit.x.size();
  for (std::size_t begin = 0; begin < m;) {
    std::size_t end = begin + 1;
    while (end < m && fit.y[end] == fit.y[begin]) ++end;
    const double value = fit.y[begin], first = fit.x[begin], last = fit.x[end - 1];
    double sum = 0.0, weight = 0.0;
    for (std::size_t j = begin; j < end; ++j) {
      sum += fit.weight[j] * fit.x[j];
      weight += fit.weight[j];
    }
    // Rounding must not move the mean out of its step's range.
    const double mean = std::clamp(sum / weight, first, last);
    if (value == 0.0 || value == 1.0) {
      add(first, value);
      add(last, value);
    } else if (begin == 0) {
      add(first, value);
      add(mean, value);
    } else if (end == m) {
      add(mean, value);
      add(last, value);
    } else {
      add(mean, value);
    }
    begin = end;
  }
  return {std::move(x), std::move(y)};
}

std::unique_ptr<const BinaryMap> CentredIsotonicCalibrator::fit(std::span<const double> scores,
                                                                std::span<const double> outcomes,
                                                                const std::string& what) const {
  if (scores.empty()) throw DomainError(what + ": the fit sample is empty");
  auto [x, y] = centred_points(isotonic_fit(scores, outcomes, 1e-15));
  return isotonic_map(std::move(x), std::move(y));
}

}  // namespace calbench
