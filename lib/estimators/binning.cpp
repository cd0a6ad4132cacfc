#include "estimators/binning.hpp"

#include <algorithm>
#include <cmath>

namespace calbench {

std::size_t equal_width_bin(double score, std::size_t bins) {
  if (!(score > 0.0)) return 0;  // 0, negatives (and NaN) go to the first bin
  if (score >= 1.0) return bins - 1;
  const double B = static_cast<double>(bins);
  // Candidate from the product, then corrected against the exact edges i/B, so a value on an
  // edge lands in the bin below it whatever the rounding of score * B.
  auto b = static_cast<std::size_t>(std::ceil(score * B));
  b = std::clamp<std::size_t>(b, 1, bins) - 1;
  while (b + 1 < bins && score > static_cast<double>(b + 1) / B) ++b;
  while (b > 0 && score <= static_cast<double>(b) / B) --b;
  return b;
}

namespace {

double combine(std::span<const double> sum_gap, std::span<const double> count, double n,
               Norm norm) {
  double out = 0.0;
  for (std::size_t b = 0; b < count.size(); ++b) {
    if (count[b] == 0.0) continue;
    const double gap = std::abs(sum_gap[b]) / count[b];
    switch (norm) {
      case Norm::l1:
        out += count[b] / n * gap;
        break;
      case Norm::l2:
        out += count[b] / n * gap * gap;
        break;
      case Norm::max:
        out = std::max(out, gap);
        break;
    }
  }
  return norm == Norm::l2 ? std::sqrt(out) : out;
}

}  // namespace

double binned_calibration_error(std::span<const double> scores, std::span<const double> outcomes,
                                Binning binning, std::size_t bins, Norm norm,
                                EstimatorWorkspace& ws) {
  const std::size_t n = scores.size();
  if (n == 0) return 0.0;
  const double nd = static_cast<double>(n);
  if (binning == Binning::equal_width) {
    ws.bin_sum.assign(bins, 0.0);
    ws.bin_count.assign(bins, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t b = equal_width_bin(scores[i], bins);
      ws.bin_sum[b] += scores[i] - outcomes[i];
      ws.bin_count[b] += 1.0;
    }
    return combine(ws.bin_sum, ws.bin_count, nd, norm);
  }

  // equal_mass: sort (score, gap) pairs by score; contiguous pairs sort several times faster
  // than indices compared through the scores. Equal scores may come in any order: they always
  // share a bin, so the sums do not depend on it.
  const std::size_t B = std::min(bins, n);
  ws.sorted.resize(n);
  for (std::size_t i = 0; i < n; ++i) ws.sorted[i] = {scores[i], scores[i] - outcomes[i]};
  std::sort(ws.sorted.begin(), ws.sorted.end(),
            [](const auto& a, const auto& b) { return a.score < b.score; });
  ws.bin_sum.assign(B, 0.0);
  ws.bin_count.assign(B, 0.0);
  const std::size_t base = n / B, extra = n % B;
  std::size_t begin = 0;    // first sorted index of the current bin
  std::size_t nominal = 0;  // nominal end of the current part
  for (std::size_t b = 0; b < B; ++b) {
    nominal += base + (b < extra ? 1 : 0);
    std::size_t end = n;
    if (b + 1 < B) {
      const double edge = (ws.sorted[nominal - 1].score + ws.sorted[nominal].score) / 2.0;
      // Right-closed: every score <= edge belongs to this bin or an earlier one.
      end = static_cast<std::size_t>(
          std::upper_bound(ws.sorted.begin() + static_cast<std::ptrdiff_t>(begin), ws.sorted.end(),
                           edge, [](double v, const auto& e) { return v < e.score; }) -
          ws.sorted.begin());
    }
    for (std::size_t i = begin; i < end; ++i) ws.bin_sum[b] += ws.sorted[i].gap;
    ws.bin_count[b] = static_cast<double>(end > begin ? end - begin : 0);
    begin = std::max(begin, end);
  }
  return combine(ws.bin_sum, ws.bin_count, nd, norm);
}

}  // namespace calbench
