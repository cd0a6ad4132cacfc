#include "estimators/binning.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

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
  // (A truncating cast, not ceil: without SSE4.1 ceil is a library call.)
  auto b = std::min(static_cast<std::size_t>(score * static_cast<double>(bins)), bins - 1);
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

constexpr std::uint32_t kNotGathered = std::numeric_limits<std::uint32_t>::max();

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

  // equal_mass. The partition needs only the order statistics at the B - 1 split ranks, not
  // a sorted sample. A counting pass over M fine buckets (floor(score M), monotone in the
  // score) locates every split rank in its bucket; only those few buckets are searched
  // exactly, by selection. Each score then takes the bin of its bucket, looked up, unless an
  // edge lies near the bucket. O(n + M) with well-predicted branches, against O(n log n) for
  // a sort; the partition is exactly the sort's.
  const std::size_t B = std::min(bins, n);
  const std::size_t M = std::clamp<std::size_t>(n, 64, std::size_t{1} << 20);
  const double Md = static_cast<double>(M);
  const auto bucket_of = [&](double s) -> std::uint32_t {
    if (!(s > 0.0)) return 0;
    return static_cast<std::uint32_t>(std::min(static_cast<std::size_t>(s * Md), M - 1));
  };
  ws.bucket.resize(n);
  ws.bucket_start.assign(M + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    ws.bucket[i] = bucket_of(scores[i]);
    ++ws.bucket_start[ws.bucket[i] + 1];
  }
  for (std::size_t j = 0; j < M; ++j) ws.bucket_start[j + 1] += ws.bucket_start[j];

  // Split rank r_b (first rank of part b + 1) and the rank r_b - 1 before it: the buckets
  // holding them are gathered (slot per bucket) and searched.
  ws.split.clear();
  const std::size_t base = n / B, extra = n % B;
  std::size_t nominal = 0;
  for (std::size_t b = 0; b + 1 < B; ++b) {
    nominal += base + (b < extra ? 1 : 0);
    ws.split.push_back(nominal);
  }
  const auto bucket_of_rank = [&](std::size_t r) {
    return static_cast<std::uint32_t>(
        std::upper_bound(ws.bucket_start.begin(), ws.bucket_start.end(), r) -
        ws.bucket_start.begin() - 1);
  };
  ws.gathered.assign(M, kNotGathered);
  std::size_t gathered_size = 0;
  for (std::size_t r : ws.split) {
    for (std::uint32_t j : {bucket_of_rank(r - 1), bucket_of_rank(r)}) {
      if (ws.gathered[j] != kNotGathered) continue;
      ws.gathered[j] = static_cast<std::uint32_t>(gathered_size);  // offset of its slot
      gathered_size += ws.bucket_start[j + 1] - ws.bucket_start[j];
    }
  }
  ws.values.resize(gathered_size);
  ws.fill.assign(ws.gathered.begin(), ws.gathered.end());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t j = ws.bucket[i];
    if (ws.gathered[j] != kNotGathered) ws.values[ws.fill[j]++] = scores[i];
  }
  // The score of global rank r, r in bucket j: the (r - start_j)-th smallest of the slot.
  const auto order_statistic = [&](std::size_t r) {
    const std::uint32_t j = bucket_of_rank(r);
    const auto slot = ws.values.begin() + static_cast<std::ptrdiff_t>(ws.gathered[j]);
    const auto size = static_cast<std::ptrdiff_t>(ws.bucket_start[j + 1] - ws.bucket_start[j]);
    const auto nth = slot + static_cast<std::ptrdiff_t>(r - ws.bucket_start[j]);
    std::nth_element(slot, nth, slot + size);
    return *nth;
  };
  // edge b = midpoint of the largest score of part b and the smallest of part b + 1.
  ws.edges.resize(ws.split.size());
  for (std::size_t b = 0; b < ws.split.size(); ++b)
    ws.edges[b] = (order_statistic(ws.split[b] - 1) + order_statistic(ws.split[b])) / 2.0;

  // A bucket's bin is the number of edges below it, unless an edge lies within a bucket of it
  // (the margin absorbs the rounding of score * M): then each score is placed exactly.
  constexpr std::uint32_t kNear = std::numeric_limits<std::uint32_t>::max();
  ws.bucket_bin.assign(M, 0);
  {
    std::size_t e = 0;  // edges below bucket j's lower bound j / M
    for (std::size_t j = 0; j < M; ++j) {
      const double lo = static_cast<double>(j) / Md;
      while (e < ws.edges.size() && ws.edges[e] < lo) ++e;
      ws.bucket_bin[j] = static_cast<std::uint32_t>(e);
    }
    for (double edge : ws.edges) {
      const std::size_t j = std::min(static_cast<std::size_t>(std::max(edge, 0.0) * Md), M - 1);
      for (std::size_t k = j > 0 ? j - 1 : 0; k <= std::min(j + 1, M - 1); ++k)
        ws.bucket_bin[k] = kNear;
    }
  }
  ws.bin_sum.assign(B, 0.0);
  ws.bin_count.assign(B, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t bin = ws.bucket_bin[ws.bucket[i]];
    // Right-closed bins (edge[b-1], edge[b]]: the bin is the number of edges below the score.
    if (bin == kNear)
      bin = static_cast<std::size_t>(std::lower_bound(ws.edges.begin(), ws.edges.end(), scores[i]) -
                                     ws.edges.begin());
    ws.bin_sum[bin] += scores[i] - outcomes[i];
    ws.bin_count[bin] += 1.0;
  }
  return combine(ws.bin_sum, ws.bin_count, nd, norm);
}

}  // namespace calbench
