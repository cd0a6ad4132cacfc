#include "estimators/mce.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace calbench {

Mce::Mce(std::size_t bins) : bins_(bins) {
  if (bins == 0) throw DomainError("mce: bins = 0: must be >= 1");
}

double Mce::estimate(const Sample& sample, EstimatorWorkspace& workspace) const {
  auto& hits = workspace.bin_hits;
  auto& scores = workspace.bin_score;
  auto& count = workspace.bin_count;
  hits.assign(bins_, 0.0);
  scores.assign(bins_, 0.0);
  count.assign(bins_, 0.0);
  const double B = static_cast<double>(bins_);
  for (std::size_t i = 0; i < sample.size; ++i) {
    const double s = sample.confidence[i];
    const auto b = std::min(bins_ - 1, static_cast<std::size_t>(B * s));
    hits[b] += sample.correct(i) ? 1.0 : 0.0;
    scores[b] += s;
    count[b] += 1.0;
  }
  double worst = 0.0;
  for (std::size_t b = 0; b < bins_; ++b)
    if (count[b] > 0.0) worst = std::max(worst, std::abs(hits[b] - scores[b]) / count[b]);
  return worst;
}

}  // namespace calbench
