#include "recalibrators/histogram_binning.hpp"

#include "core/error.hpp"

namespace calbench {

HistogramBinning::HistogramBinning(std::size_t bins, ScoreBinning binning)
    : bins_(bins), binning_(binning) {
  if (bins_ < 1) throw DomainError("histogram_binning: bins = 0: must be >= 1");
}

std::vector<double> bin_means(std::span<const double> keys, std::span<const double> values,
                              std::span<const double> edges) {
  const std::size_t B = edges.size() + 1;
  std::vector<double> sum(B, 0.0), count(B, 0.0);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t b = bin_of(keys[i], edges);
    sum[b] += values[i];
    count[b] += 1.0;
  }
  std::vector<double> out(B);
  for (std::size_t b = 0; b < B; ++b) {
    const double lo = b == 0 ? 0.0 : edges[b - 1], hi = b + 1 == B ? 1.0 : edges[b];
    out[b] = count[b] > 0.0 ? sum[b] / count[b] : 0.5 * (lo + hi);
  }
  return out;
}

std::unique_ptr<const BinaryMap> HistogramBinning::fit(std::span<const double> scores,
                                                       std::span<const double> outcomes,
                                                       const std::string& what) const {
  if (scores.empty()) throw DomainError(what + ": the fit sample is empty");
  auto edges = interior_edges(scores, bins_, binning_);
  auto values = bin_means(scores, outcomes, edges);
  return std::make_unique<StepMap>(std::move(edges), std::move(values));
}

}  // namespace calbench
