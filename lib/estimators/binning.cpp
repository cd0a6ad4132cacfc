#include "estimators/binning.hpp"

#include <algorithm>
#include <cmath>

namespace calbench {

void equal_width_edges(std::size_t bins, std::vector<double>& edges) {
  edges.resize(bins + 1);
  const double B = static_cast<double>(bins);
  for (std::size_t i = 0; i <= bins; ++i) edges[i] = static_cast<double>(i) / B;
}

std::size_t equal_width_bin(double score, std::span<const double> edges) {
  const std::size_t bins = edges.size() - 1;
  if (!(score > 0.0)) return 0;  // 0, negatives (and NaN) go to the first bin
  if (score >= 1.0) return bins - 1;
  // Candidate from the product, then corrected against the exact edges i/B, so a value on an
  // edge lands in the bin below it whatever the rounding of score * B. The edges come from a
  // table: two divisions per score would cost more than the rest of the binning.
  auto b = static_cast<std::size_t>(std::ceil(score * static_cast<double>(bins)));
  b = std::clamp<std::size_t>(b, 1, bins) - 1;
  while (b + 1 < bins && score > edges[b + 1]) ++b;
  while (b > 0 && score <= edges[b]) --b;
  return b;
}

std::size_t equal_width_bin(double score, std::size_t bins) {
  std::vector<double> edges;
  equal_width_edges(bins, edges);
  return equal_width_bin(score, edges);
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

// Rearranges values[lo, hi) so that for every rank r in ranks (sorted, within [lo, hi)) the
// pair at r is the one a sort would put there, with nothing larger before it
// and nothing smaller after it: std::nth_element at the middle rank, then each side on its
// own ranks.
void select_order_statistics(std::vector<EstimatorWorkspace::ScoredGap>& values, std::size_t lo,
                             std::size_t hi, std::span<const std::size_t> ranks) {
  if (ranks.empty()) return;
  const std::size_t mid = ranks.size() / 2;
  const std::size_t r = ranks[mid];
  const auto at = [&](std::size_t i) { return values.begin() + static_cast<std::ptrdiff_t>(i); };
  std::nth_element(at(lo), at(r), at(hi),
                   [](const auto& a, const auto& b) { return a.score < b.score; });
  select_order_statistics(values, lo, r, ranks.first(mid));
  select_order_statistics(values, r + 1, hi, ranks.subspan(mid + 1));
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
    equal_width_edges(bins, ws.edges);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t b = equal_width_bin(scores[i], ws.edges);
      ws.bin_sum[b] += scores[i] - outcomes[i];
      ws.bin_count[b] += 1.0;
    }
    return combine(ws.bin_sum, ws.bin_count, nd, norm);
  }

  // equal_mass. The partition needs only the order statistics at the B - 1 split points,
  // not a sorted sample: a multi-way selection on (score, gap) pairs finds them in
  // O(n log B) instead of the O(n log n) of a sort, leaving part b in its own range.
  const std::size_t B = std::min(bins, n);
  ws.pairs.resize(n);
  for (std::size_t i = 0; i < n; ++i) ws.pairs[i] = {scores[i], scores[i] - outcomes[i]};
  ws.split.clear();
  const std::size_t base = n / B, extra = n % B;
  std::size_t nominal = 0;
  for (std::size_t b = 0; b < B; ++b) {
    nominal += base + (b < extra ? 1 : 0);
    ws.split.push_back(nominal);  // end rank of part b (n for the last)
  }
  select_order_statistics(ws.pairs, 0, n, std::span(ws.split).first(B - 1));
  // edge b = midpoint of the largest score of part b and the smallest of part b + 1.
  ws.edges.resize(B - 1);
  std::size_t begin = 0;
  for (std::size_t b = 0; b + 1 < B; ++b) {
    const std::size_t end = ws.split[b];
    double below = ws.pairs[begin].score;
    for (std::size_t i = begin + 1; i < end; ++i) below = std::max(below, ws.pairs[i].score);
    ws.edges[b] = (below + ws.pairs[end].score) / 2.0;
    begin = end;
  }
  ws.bin_sum.assign(B, 0.0);
  ws.bin_count.assign(B, 0.0);
  begin = 0;
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t end = ws.split[b];
    // Every score of part b is <= edge b; it is above edge b - 1 unless it equals that edge,
    // which happens only for a run of ties straddling the split: right-closed bins send such
    // a score down to the first bin whose edge is not below it.
    const double lower = b > 0 ? ws.edges[b - 1] : -INFINITY;
    for (std::size_t i = begin; i < end; ++i) {
      std::size_t bin = b;
      if (!(ws.pairs[i].score > lower))
        bin = static_cast<std::size_t>(
            std::lower_bound(ws.edges.begin(), ws.edges.end(), ws.pairs[i].score) -
            ws.edges.begin());
      ws.bin_sum[bin] += ws.pairs[i].gap;
      ws.bin_count[bin] += 1.0;
    }
    begin = end;
  }
  return combine(ws.bin_sum, ws.bin_count, nd, norm);
}

}  // namespace calbench
