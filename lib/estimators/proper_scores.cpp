#include "estimators/proper_scores.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace calbench {

double AccuracyEstimator::estimate(const Sample& s, EstimatorWorkspace&) const {
  if (s.size == 0) return 0.0;
  std::size_t hits = 0;
  for (std::size_t i = 0; i < s.size; ++i) hits += s.correct(i) ? 1 : 0;
  return static_cast<double>(hits) / static_cast<double>(s.size);
}

double BrierEstimator::estimate(const Sample& s, EstimatorWorkspace&) const {
  if (s.size == 0) return 0.0;
  double total = 0.0;
  for (std::size_t i = 0; i < s.size; ++i) {
    const double* r = s.p.data() + i * s.classes;
    double sq = 0.0;
    for (std::size_t k = 0; k < s.classes; ++k) sq += r[k] * r[k];
    total += sq - 2.0 * r[s.label[i]] + 1.0;
  }
  return total / static_cast<double>(s.size);
}

double NllEstimator::estimate(const Sample& s, EstimatorWorkspace&) const {
  if (s.size == 0) return 0.0;
  double total = 0.0;
  for (std::size_t i = 0; i < s.size; ++i)
    total -= std::log(std::max(s.p[i * s.classes + s.label[i]], DBL_MIN));
  return total / static_cast<double>(s.size);
}

}  // namespace calbench
