#include "estimators/binning.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace calbench {

std::string_view to_string(Binning binning) {
  return binning == Binning::equal_width ? "equal_width" : "equal_mass";
}

void equal_width_edges(std::size_t bins, std::vector<double>& edges) {
  edges.resize(bins + 1);
  const double B = static_cast<double>(bins);
  for (std::size_t i = 0; i <= bins; ++i) edges[i] = static_cast<double>(i) / B;
}

std::size_t equal_width_bin(double score, std::size_t bins) {
  std::vector<double> edges;
  equal_width_edges(bins, edges);
  return equal_width_bin(score, edges);
}

void equal_width_table(std::span<const double> edges, std::vector<std::uint32_t>& table) {
  const std::size_t bins = edges.size() - 1;
  // F: a power of two with 64 cells a bin, so that about 1 score in 64 needs the comparisons;
  // at most 2^16 cells (more bins than 1024 find more cells holding an edge, still exactly).
  std::size_t F = 64;
  while (F < 64 * bins && F < (std::size_t{1} << 16)) F *= 2;
  const double Fd = static_cast<double>(F);
  table.assign(F, 0);
  // Right-closed bins: the bin of a score is the number of inner edges e_1..e_B-1 below it. In
  // a cell holding no edge every inner edge is below all of its scores or above them all.
  std::size_t filled = 0;  // cells before it are set
  for (std::size_t i = 1; i < bins; ++i) {
    const auto cell = std::min(static_cast<std::size_t>(edges[i] * Fd), F - 1);
    for (; filled < cell; ++filled) table[filled] = static_cast<std::uint32_t>(i - 1);
    table[cell] = kCellHoldsEdge;
    filled = std::max(filled, cell + 1);
  }
  for (; filled < F; ++filled) table[filled] = static_cast<std::uint32_t>(bins - 1);
}

double combine_bins_unrooted(std::span<const double> sum_gap, std::span<const double> count,
                             double n, Norm norm, double power) {
  double out = 0.0;
  std::size_t nonempty = 0;
  for (std::size_t b = 0; b < count.size(); ++b) {
    if (count[b] == 0.0) continue;
    add_bin_gap(out, norm, count[b] / n, std::abs(sum_gap[b]) / count[b], power);
    ++nonempty;
  }
  if (norm == Norm::average) return nonempty > 0 ? out / static_cast<double>(nonempty) : 0.0;
  return out;
}

namespace {

double combine(std::span<const double> sum_gap, std::span<const double> count, double n,
               Norm norm) {
  const double out = combine_bins_unrooted(sum_gap, count, n, norm);
  return norm == Norm::l2 ? std::sqrt(out) : out;
}

constexpr std::uint32_t kNotGathered = std::numeric_limits<std::uint32_t>::max();

// This file's own scratch (EstimatorWorkspace::scratch): the counting pass's fine buckets, the
// order statistics it selects, and the per-bin gap sums of binned_calibration_error.
struct BinningScratch {
  std::vector<std::uint32_t> bucket, bucket_start, fill;  // each score's bucket; prefix counts
  std::vector<std::uint32_t> bucket_bin, edge_bucket;     // each bucket's bin; edges' buckets
  std::vector<std::uint32_t> gathered, bin_of;            // rank_floor: the order, each row's bin
  std::vector<double> slots;            // the scores of the buckets holding wanted ranks
  std::vector<std::size_t> split;       // equal-mass split ranks
  std::vector<std::size_t> ranks;       // ranks whose order statistics are wanted
  std::vector<std::size_t> rank_order;  // their indices in ascending order of rank
  std::vector<double> rank_values;      // and their values
  std::vector<double> bin_sum;          // per bin, sum of score - outcome
};

// The fine buckets of a sample's scores: bucket(s) in [0, M), non-decreasing in s, which is all
// the selection and placement below rely on (a score in a lower bucket than another is the
// smaller of the two). Which function only decides the speed, never a result. Equal-width
// buckets floor(s M) suit top-label confidences, spread over [1/K, 1]; classwise scores pile up
// near 0 (W1: median 0.03, a tenth below 3e-4, a hundredth below 1e-6), where buckets of width
// 1/M would hold hundreds of scores each, whose selection and placement need comparisons
// (ACE spent a third of its time there). For those the buckets are logarithmic: P per octave
// over [2^-64, 1], from the bits of the double (ordered as the values are, for s >= 0). A
// network's softmax puts many scores far below 2^-32 (fmnist_cnn: 30-40 % of each class's),
// which with a floor of 2^-32 shared one bucket and took two thirds of ACE's time there.
struct Buckets {
  std::size_t M;
  bool logarithmic;
  int shift;  // logarithmic: drops the mantissa bits below the P = 2^(52 - shift) per octave

  static constexpr int kOctaves = 64;
  static constexpr double kFloor = 0x1p-64;  // scores at or below it share bucket 0

  std::uint32_t operator()(double v) const {
    return logarithmic ? log_bucket(v) : linear_bucket(v);
  }
  // floor(s M) clamped into [0, M), 0 for s <= 0 (and NaN).
  std::uint32_t linear_bucket(double v) const {
    return v > 0.0
               ? static_cast<std::uint32_t>(std::min(
                     static_cast<std::size_t>(std::min(v, 1.0) * static_cast<double>(M)), M - 1))
               : 0u;
  }
  std::uint32_t log_bucket(double v) const {
    if (!(v > kFloor)) return 0u;
    const std::uint64_t above =
        std::bit_cast<std::uint64_t>(v) - std::bit_cast<std::uint64_t>(kFloor);
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(above >> shift, M - 1));
  }
};

// Chooses the buckets for n >= 1 scores: logarithmic when a quarter of 32 evenly spaced
// scores lie below 1/16 (at W1 about 60 % of the classwise scores, 55 % of TACE's).
// Equal-width: n buckets (at least 64, at most 2^20). Logarithmic: P per octave, the least
// power of 2 with 64 P >= n / 2 (at least 128 buckets, at most 2^20): n rather than n / 2 cost
// 8 % more at W1, n / 4 no less.
Buckets choose_buckets(std::span<const double> scores) {
  const std::size_t n = scores.size();
  std::size_t small = 0;
  for (std::size_t q = 0; q < 32; ++q) small += scores[q * n / 32] < 1.0 / 16.0 ? 1 : 0;
  if (small < 8) return {std::clamp<std::size_t>(n, 64, std::size_t{1} << 20), false, 0};
  int p = 1;
  while (p < 14 && (std::size_t{Buckets::kOctaves} << p) < n / 2) ++p;
  return {std::size_t{Buckets::kOctaves} << p, true, 52 - p};
}

// Order statistics without a sort. A counting pass over M fine buckets tells which bucket
// holds each wanted rank; only those buckets are gathered and searched exactly, by selection.
// O(n + M) with well-predicted branches, against O(n log n) for a sort, and exact: the value
// of rank r is the sorted sample's.
// count_buckets fills ws.bucket (each score's bucket) and ws.bucket_start (prefix counts) of
// n >= 1 scores; bucket_order_statistics then writes the scores of the given ranks into `out`.
Buckets count_buckets(std::span<const double> scores, BinningScratch& ws) {
  const std::size_t n = scores.size();
  const Buckets buckets = choose_buckets(scores);
  ws.bucket.resize(n);
  ws.bucket_start.assign(buckets.M + 1, 0);
  // One loop per kind of bucket, so neither tests the kind per score.
  const auto count = [&](auto bucket_of) {
    for (std::size_t i = 0; i < n; ++i) {
      ws.bucket[i] = bucket_of(scores[i]);
      ++ws.bucket_start[ws.bucket[i] + 1];
    }
  };
  if (buckets.logarithmic)
    count([&](double v) { return buckets.log_bucket(v); });
  else
    count([&](double v) { return buckets.linear_bucket(v); });
  for (std::size_t j = 0; j < buckets.M; ++j) ws.bucket_start[j + 1] += ws.bucket_start[j];
  return buckets;
}

}  // namespace

// Counting sort by bucket (stable, as the scatter runs in row order), then each bucket sorted
// by (score, row), which is the stable order within it: the same permutation as
// std::stable_sort by score, for any ties. Buckets hold about one score each, so the per-bucket
// sorts cost O(n) in all; a bucket of many tied scores costs O(m log m), as a sort would.
// At n = 10,000 (W1 confidences) 0.07 ms against 0.6 ms for std::stable_sort, a merge sort
// whose data-dependent comparisons the branch predictor cannot follow.
void stable_score_order(std::span<const double> scores, EstimatorWorkspace& workspace,
                        std::vector<std::uint32_t>& order) {
  BinningScratch& ws = workspace.scratch<BinningScratch>();
  const std::size_t n = scores.size();
  order.resize(n);
  if (n == 0) return;
  const std::size_t M = count_buckets(scores, ws).M;
  ws.fill.assign(ws.bucket_start.begin(), ws.bucket_start.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    order[ws.fill[ws.bucket[i]]++] = static_cast<std::uint32_t>(i);
  const auto by_score_then_row = [&](std::uint32_t a, std::uint32_t b) {
    return scores[a] < scores[b] || (!(scores[b] < scores[a]) && a < b);
  };
  for (std::size_t j = 0; j < M; ++j)
    if (ws.bucket_start[j + 1] - ws.bucket_start[j] > 1)
      std::sort(order.begin() + ws.bucket_start[j], order.begin() + ws.bucket_start[j + 1],
                by_score_then_row);
}

namespace {

std::uint32_t bucket_of_rank(const BinningScratch& ws, std::size_t r) {
  return static_cast<std::uint32_t>(
      std::upper_bound(ws.bucket_start.begin(), ws.bucket_start.end(), r) -
      ws.bucket_start.begin() - 1);
}

void bucket_order_statistics(std::span<const double> scores, std::size_t M,
                             std::span<const std::size_t> ranks, BinningScratch& ws,
                             std::span<double> out) {
  // ws.fill[j]: the next free place of bucket j's slot in ws.slots, kNotGathered for buckets
  // holding no wanted rank; after the gathering pass it is the end of the slot.
  ws.fill.assign(M, kNotGathered);
  std::size_t gathered_size = 0;
  for (std::size_t r : ranks) {
    const std::uint32_t j = bucket_of_rank(ws, r);
    if (ws.fill[j] != kNotGathered) continue;
    ws.fill[j] = static_cast<std::uint32_t>(gathered_size);
    gathered_size += ws.bucket_start[j + 1] - ws.bucket_start[j];
  }
  ws.slots.resize(gathered_size);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const std::uint32_t j = ws.bucket[i];
    if (ws.fill[j] != kNotGathered) ws.slots[ws.fill[j]++] = scores[i];
  }
  // The score of rank r in bucket j: the (r - start_j)-th smallest of the slot. The ranks in
  // ascending order, so that those of one bucket are consecutive and selected together.
  ws.rank_order.resize(ranks.size());
  for (std::size_t q = 0; q < ranks.size(); ++q) ws.rank_order[q] = q;
  std::sort(ws.rank_order.begin(), ws.rank_order.end(),
            [&](std::size_t a, std::size_t b) { return ranks[a] < ranks[b]; });
  for (std::size_t first = 0; first < ranks.size();) {
    const std::uint32_t j = bucket_of_rank(ws, ranks[ws.rank_order[first]]);
    std::size_t last = first + 1;
    while (last < ranks.size() && ranks[ws.rank_order[last]] < ws.bucket_start[j + 1]) ++last;
    const auto size = static_cast<std::ptrdiff_t>(ws.bucket_start[j + 1] - ws.bucket_start[j]);
    const auto slot = ws.slots.begin() + static_cast<std::ptrdiff_t>(ws.fill[j]) - size;
    const auto at = [&](std::size_t q) {
      return slot + static_cast<std::ptrdiff_t>(ranks[ws.rank_order[q]] - ws.bucket_start[j]);
    };
    // Several ranks in one bucket (classwise scores below the buckets' floor all share bucket
    // 0): the middle one is selected first, then those below it in the part before it and
    // those above in the part after; O(m log q) for q ranks among m scores, not O(m q).
    // A rank asked for twice is selected once.
    const auto select = [&](auto& self, std::size_t lo, std::size_t hi, auto begin, auto end) {
      if (lo == hi) return;
      const std::size_t mid = lo + (hi - lo) / 2;
      const auto nth = at(mid);
      std::nth_element(begin, nth, end);
      std::size_t below = mid, above = mid + 1;
      while (below > lo && at(below - 1) == nth) --below;
      while (above < hi && at(above) == nth) ++above;
      for (std::size_t q = below; q < above; ++q) out[ws.rank_order[q]] = *nth;
      self(self, lo, below, begin, nth);
      self(self, above, hi, nth + 1, end);
    };
    select(select, first, last, slot, slot + size);
    first = last;
  }
}

// Placing every score among sorted edges by a lookup of its bucket. As the buckets are
// monotone, an edge in a lower bucket than a score is below it and one in a higher bucket is
// above it, whichever side the bins close on; so all scores of a bucket holding no edge share
// one bin, the number of edges in lower buckets, and only scores in the few buckets holding
// an edge need comparisons. One table lookup per score, against a binary search or a count
// over the B - 1 edges.
constexpr std::uint32_t kHoldsEdge = std::numeric_limits<std::uint32_t>::max();

// ws.bucket_bin[j]: the bin of bucket j's scores among the edges (in any order), or
// kHoldsEdge. O(M + E log E) for E edges, no division per bucket.
void bucket_bins(std::span<const double> edges, const Buckets& buckets, BinningScratch& ws) {
  const std::size_t M = buckets.M;
  ws.edge_bucket.clear();
  for (double e : edges) ws.edge_bucket.push_back(buckets(e));
  std::sort(ws.edge_bucket.begin(), ws.edge_bucket.end());
  ws.bucket_bin.resize(M);
  const auto first = ws.bucket_bin.begin();
  std::uint32_t below = 0;  // edges in lower buckets
  std::size_t j = 0;        // first bucket not yet set
  for (std::size_t q = 0; q < ws.edge_bucket.size();) {
    const std::uint32_t held = ws.edge_bucket[q];
    std::fill(first + static_cast<std::ptrdiff_t>(j), first + held, below);
    ws.bucket_bin[held] = kHoldsEdge;
    for (; q < ws.edge_bucket.size() && ws.edge_bucket[q] == held; ++q) ++below;
    j = held + std::size_t{1};
  }
  std::fill(first + static_cast<std::ptrdiff_t>(j), ws.bucket_bin.end(), below);
}

// Calls sink(i, bin) for every row in order, the bin from bucket_bins or, in a bucket that
// holds an edge, from exact(score).
template <typename Exact, typename Sink>
void place_by_bucket(std::span<const double> scores, const BinningScratch& ws, Exact&& exact,
                     Sink&& sink) {
  for (std::size_t i = 0; i < scores.size(); ++i) {
    std::size_t bin = ws.bucket_bin[ws.bucket[i]];
    if (bin == kHoldsEdge) bin = exact(scores[i]);
    sink(i, bin);
  }
}

// Kumar's equal-mass partition (binning.hpp) of the n >= 1 scores; calls sink(i, bin) for
// every row. Returns the number of bins, min(B, n). The split ranks' order statistics come
// from the buckets above, and each score's bin from its bucket.
template <typename Sink>
std::size_t equal_mass_partition(std::span<const double> scores, std::size_t bins,
                                 EstimatorWorkspace& workspace, Sink&& sink) {
  BinningScratch& ws = workspace.scratch<BinningScratch>();
  std::vector<double>& edges = workspace.edges;
  const std::size_t n = scores.size();
  const std::size_t B = std::min(bins, n);
  const Buckets buckets = count_buckets(scores, ws);

  // Split rank r_b (first rank of part b + 1) and the rank r_b - 1 before it.
  ws.split.clear();
  const std::size_t base = n / B, extra = n % B;
  std::size_t nominal = 0;
  std::vector<std::size_t>& ranks = ws.ranks;
  ranks.clear();
  for (std::size_t b = 0; b + 1 < B; ++b) {
    nominal += base + (b < extra ? 1 : 0);
    ws.split.push_back(nominal);
    ranks.push_back(nominal - 1);
    ranks.push_back(nominal);
  }
  ws.rank_values.resize(ranks.size());
  bucket_order_statistics(scores, buckets.M, ranks, ws, ws.rank_values);
  // edge b = midpoint of the largest score of part b and the smallest of part b + 1.
  edges.resize(ws.split.size());
  for (std::size_t b = 0; b < ws.split.size(); ++b)
    edges[b] = (ws.rank_values[2 * b] + ws.rank_values[2 * b + 1]) / 2.0;

  bucket_bins(edges, buckets, ws);
  // Right-closed bins (edge[b-1], edge[b]]: the bin is the number of edges below the score.
  place_by_bucket(
      scores, ws,
      [&](double s) {
        return static_cast<std::size_t>(std::lower_bound(edges.begin(), edges.end(), s) -
                                        edges.begin());
      },
      sink);
  return B;
}

}  // namespace

double binned_calibration_error(std::span<const double> scores, std::span<const double> outcomes,
                                Binning binning, std::size_t bins, Norm norm,
                                EstimatorWorkspace& ws) {
  const std::size_t n = scores.size();
  if (n == 0) return 0.0;
  const double nd = static_cast<double>(n);
  std::vector<double>& bin_sum = ws.scratch<BinningScratch>().bin_sum;
  if (binning == Binning::equal_width) {
    bin_sum.assign(bins, 0.0);
    ws.bin_count.assign(bins, 0.0);
    equal_width_edges(bins, ws.edges);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t b = equal_width_bin(scores[i], ws.edges);
      bin_sum[b] += scores[i] - outcomes[i];
      ws.bin_count[b] += 1.0;
    }
    return combine(bin_sum, ws.bin_count, nd, norm);
  }

  bin_sum.assign(std::min(bins, n), 0.0);
  ws.bin_count.assign(std::min(bins, n), 0.0);
  equal_mass_partition(scores, bins, ws, [&](std::size_t i, std::size_t bin) {
    bin_sum[bin] += scores[i] - outcomes[i];
    ws.bin_count[bin] += 1.0;
  });
  return combine(bin_sum, ws.bin_count, nd, norm);
}

void library_edges(EdgeRule rule, std::size_t bins, bool float32, std::vector<double>& edges) {
  edges.resize(bins + 1);
  const double B = static_cast<double>(bins);
  switch (rule) {
    case EdgeRule::division:
    case EdgeRule::truncation:
    case EdgeRule::floor_product:
      for (std::size_t i = 0; i <= bins; ++i) edges[i] = static_cast<double>(i) / B;
      break;
    case EdgeRule::linspace: {  // numpy: i * step, the last set to stop
      const double step = 1.0 / B;
      for (std::size_t i = 0; i <= bins; ++i) edges[i] = static_cast<double>(i) * step;
      edges[bins] = 1.0;
      break;
    }
    case EdgeRule::zero_bin: {  // edges[1..B-1] = linspace(0, 1, B)[0..B-2]; B >= 2
      const double step = 1.0 / (B - 1.0);
      edges[0] = 0.0;
      for (std::size_t i = 1; i < bins; ++i) edges[i] = static_cast<double>(i - 1) * step;
      edges[bins] = 1.0;
      break;
    }
    case EdgeRule::stretched: {
      const double step = (1.0 + 1e-8) / B;
      for (std::size_t i = 0; i <= bins; ++i) edges[i] = static_cast<double>(i) * step;
      edges[bins] = 1.0 + 1e-8;
      break;
    }
    case EdgeRule::torch_linspace: {
      // ATen RangeFactoriesKernel: the first half from the start, the second from the end.
      const std::size_t steps = bins + 1, halfway = steps / 2;
      if (float32) {
        const float step = 1.0f / static_cast<float>(bins);
        for (std::size_t i = 0; i < steps; ++i)
          edges[i] = i < halfway ? step * static_cast<float>(i)
                                 : 1.0f - step * static_cast<float>(steps - i - 1);
      } else {
        const double step = 1.0 / B;
        for (std::size_t i = 0; i < steps; ++i)
          edges[i] = i < halfway ? step * static_cast<double>(i)
                                 : 1.0 - step * static_cast<double>(steps - i - 1);
      }
      break;
    }
  }
}

namespace {

// The bin of s among B bins with inner edges e_1..e_{B-1} (non-decreasing): right-closed
// counts the inner edges below s, left-closed those at or below it. For the usual few edges a
// branch-free count beats a binary search, whose branches the data cannot predict.
std::uint32_t bin_by_edges(double s, std::span<const double> inner, Closed closed) {
  if (inner.size() <= 32) {
    std::uint32_t count = 0;
    if (closed == Closed::right)
      for (double e : inner) count += e < s ? 1u : 0u;
    else
      for (double e : inner) count += e <= s ? 1u : 0u;
    return count;
  }
  const auto it = closed == Closed::right ? std::lower_bound(inner.begin(), inner.end(), s)
                                          : std::upper_bound(inner.begin(), inner.end(), s);
  return static_cast<std::uint32_t>(it - inner.begin());
}

// numpy.quantile(sorted, q), method 'linear' (numpy 1.24 _quantile and _lerp): the two ranks
// it reads and its interpolation weight. The virtual index is (n - 1) q, as numpy's
// _QuantileMethods['linear'] computes it, not the equal-in-exact-arithmetic
// n q + (1 - q) - 1 of _compute_virtual_index(n, q, 1, 1): the two differ in the last bit
// for q = j (1/9) * 100 / 100, n = 1000, which moved a score lying on an edge to the next bin
// (MAPIE's "quantile" bins, tests/unit/test_conventions.cpp).
struct QuantileRanks {
  std::size_t below, above;
  double t;
};
QuantileRanks numpy_quantile_ranks(std::size_t size, double q) {
  const double n = static_cast<double>(size);
  const double h = (n - 1.0) * q;
  const double lo = std::floor(h);
  return {static_cast<std::size_t>(std::clamp(lo, 0.0, n - 1.0)),
          static_cast<std::size_t>(std::clamp(lo + 1.0, 0.0, n - 1.0)), h - lo};
}
// numpy's _lerp of the two order statistics a <= b with weight t.
double numpy_quantile(double a, double b, double t) {
  const double d = b - a;
  return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

// The bin of every row under a library convention: sink(i, bin) in row order. Returns the
// number of bins (number_of_bins).
template <typename Sink>
std::size_t for_each_bin(std::span<const double> scores, Binning binning, std::size_t bins,
                         const Convention& c, EstimatorWorkspace& workspace, Sink&& sink) {
  const std::size_t n = scores.size();
  if (binning == Binning::equal_mass && c.mass == MassRule::split_midpoint)
    return equal_mass_partition(scores, bins, workspace, sink);
  BinningScratch& ws = workspace.scratch<BinningScratch>();
  std::vector<double>& edges = workspace.edges;

  if (binning == Binning::equal_mass && c.mass == MassRule::rank_floor) {
    stable_score_order(scores, workspace, ws.gathered);  // row indices in stable score order
    const double nd = static_cast<double>(n), bd = static_cast<double>(bins);
    ws.bin_of.resize(n);
    for (std::size_t r = 0; r < n; ++r)
      ws.bin_of[ws.gathered[r]] = static_cast<std::uint32_t>(
          std::min(bd - 1.0, std::floor(static_cast<double>(r) / nd * bd)));
    for (std::size_t i = 0; i < n; ++i) sink(i, ws.bin_of[i]);
    return bins;
  }
  const std::size_t out_bins = c.own_bin_for_one ? bins + 1 : bins;
  if (binning == Binning::equal_width) {
    if (c.edges == EdgeRule::truncation) {  // relplot: int(s / (1/B)), 1.0 in bin B
      const double width = 1.0 / static_cast<double>(bins);
      for (std::size_t i = 0; i < n; ++i) {
        const double q = scores[i] > 0.0 ? scores[i] / width : 0.0;
        auto bin = static_cast<std::size_t>(std::min(q, static_cast<double>(bins)));
        if (!c.own_bin_for_one && bin == bins) --bin;
        sink(i, bin);
      }
      return out_bins;
    }
    if (c.edges == EdgeRule::floor_product) {  // TF: clip(floor(B s), 0, B - 1)
      const double bd = static_cast<double>(bins);
      for (std::size_t i = 0; i < n; ++i) {
        const double q = std::floor(bd * scores[i]);
        sink(i, q > 0.0 ? static_cast<std::size_t>(std::min(q, bd - 1.0)) : std::size_t{0});
      }
      return out_bins;
    }
    library_edges(c.edges, bins, c.float32, edges);
    const std::span<const double> inner(edges.data() + 1, bins - 1);
    const double top = edges.back();
    for (std::size_t i = 0; i < n; ++i) {
      const double s = scores[i];
      sink(i, c.own_bin_for_one && s >= top ? bins : bin_by_edges(s, inner, c.closed));
    }
    return out_bins;
  }

  edges.resize(bins + 1);
  const Buckets buckets = count_buckets(scores, ws);
  const std::size_t M = buckets.M;
  std::vector<std::size_t>& ranks = ws.ranks;
  ranks.clear();
  if (c.mass == MassRule::quantile) {
    const double step = 1.0 / static_cast<double>(bins);  // numpy.linspace(0, 1, B + 1)
    const auto q = [&](std::size_t i) { return i == bins ? 1.0 : static_cast<double>(i) * step; };
    for (std::size_t i = 0; i <= bins; ++i) {
      const QuantileRanks r = numpy_quantile_ranks(n, q(i));
      ranks.push_back(r.below);
      ranks.push_back(r.above);
    }
    ws.rank_values.resize(ranks.size());
    bucket_order_statistics(scores, M, ranks, ws, ws.rank_values);
    for (std::size_t i = 0; i <= bins; ++i)
      edges[i] = numpy_quantile(ws.rank_values[2 * i], ws.rank_values[2 * i + 1],
                                numpy_quantile_ranks(n, q(i)).t);
  } else if (c.mass == MassRule::percentile_digitize) {
    // numpy.percentile(s, q * 100) divides by 100 again (numpy 1.24 _quantile_unchecked), the
    // round trip kept; edges e_0..e_B-1 go to edges[1..B], so that the B - 1 inner edges
    // e_0..e_B-2 counted below s (right-closed) give digitize's bin (no score exceeds e_B-1,
    // the maximum).
    const double step = 1.0 / (static_cast<double>(bins) - 1.0);
    const auto q = [&](std::size_t j) {
      return j + 1 == bins ? 1.0 : static_cast<double>(j) * step * 100.0 / 100.0;
    };
    for (std::size_t j = 0; j < bins; ++j) {
      const QuantileRanks r = numpy_quantile_ranks(n, q(j));
      ranks.push_back(r.below);
      ranks.push_back(r.above);
    }
    ws.rank_values.resize(ranks.size());
    bucket_order_statistics(scores, M, ranks, ws, ws.rank_values);
    for (std::size_t j = 0; j < bins; ++j)
      edges[j + 1] = numpy_quantile(ws.rank_values[2 * j], ws.rank_values[2 * j + 1],
                                    numpy_quantile_ranks(n, q(j)).t);
    edges[0] = edges[1];
  } else if (c.mass == MassRule::nearest_rank) {
    // TFP: q_j = j * (100 / B) as tf.linspace (the last exactly 100), index
    // round_half_even((n - 1) q_j / 100) as tfp.stats.percentile 'nearest'.
    const double step = 100.0 / static_cast<double>(bins), last = static_cast<double>(n - 1);
    for (std::size_t j = 0; j <= bins; ++j) {
      const double q = j == bins ? 100.0 : static_cast<double>(j) * step;
      const double r = std::nearbyint(last * (q / 100.0));
      ranks.push_back(std::min(static_cast<std::size_t>(std::max(r, 0.0)), n - 1));
    }
    ws.rank_values.resize(ranks.size());
    bucket_order_statistics(scores, M, ranks, ws, ws.rank_values);
    for (std::size_t j = 0; j <= bins; ++j) edges[j] = ws.rank_values[j];
  } else {  // nixon: sort(s)[round(linspace(0, n, B, endpoint=False))], then 1.0
    const double step = static_cast<double>(n) / static_cast<double>(bins);
    for (std::size_t i = 0; i < bins; ++i) {
      const double r = std::nearbyint(static_cast<double>(i) * step);  // half to even
      ranks.push_back(std::min(static_cast<std::size_t>(r), n - 1));
    }
    ws.rank_values.resize(ranks.size());
    bucket_order_statistics(scores, M, ranks, ws, ws.rank_values);
    for (std::size_t i = 0; i < bins; ++i) edges[i] = ws.rank_values[i];
    edges[bins] = 1.0;
  }
  if (c.mass_outer_edges_01) {
    edges.front() = 0.0;
    edges.back() = 1.0;
  }
  const std::span<const double> inner(edges.data() + 1, bins - 1);
  const double top = edges.back();
  bucket_bins(inner, buckets, ws);
  if (c.own_bin_for_one) {
    // Scores >= top go to bin B: those of buckets above top's are, those of its bucket are
    // compared.
    const std::size_t held = buckets(top);
    std::fill(ws.bucket_bin.begin() + static_cast<std::ptrdiff_t>(held) + 1, ws.bucket_bin.end(),
              static_cast<std::uint32_t>(bins));
    ws.bucket_bin[held] = kHoldsEdge;
  }
  place_by_bucket(
      scores, ws,
      [&](double s) {
        return c.own_bin_for_one && s >= top ? bins : bin_by_edges(s, inner, c.mass_closed);
      },
      sink);
  return out_bins;
}

}  // namespace

std::size_t number_of_bins(std::size_t n, Binning binning, std::size_t bins, const Convention& c) {
  if (binning == Binning::equal_mass && c.mass == MassRule::split_midpoint)
    return std::min(bins, n);
  if (binning == Binning::equal_mass && c.mass == MassRule::rank_floor) return bins;
  return c.own_bin_for_one ? bins + 1 : bins;
}

namespace {

// The bins' counts, score sums and hit sums (and, with Squares, sums of squared row gaps) in one
// pass: each row's bin goes straight into the sums, which add up in row order.
template <bool Squares>
std::size_t accumulate_bins(std::span<const double> scores, std::span<const double> outcomes,
                            Binning binning, std::size_t bins, const Convention& c,
                            EstimatorWorkspace& ws) {
  const std::size_t nb = number_of_bins(scores.size(), binning, bins, c);
  ws.bin_count.assign(nb, 0.0);
  ws.bin_score.assign(nb, 0.0);
  ws.bin_hits.assign(nb, 0.0);
  if constexpr (Squares) ws.bin_gap_squares.assign(nb, 0.0);
  if (scores.empty()) return nb;
  double* count = ws.bin_count.data();
  double* score = ws.bin_score.data();
  double* hits = ws.bin_hits.data();
  [[maybe_unused]] double* squares = Squares ? ws.bin_gap_squares.data() : nullptr;
  for_each_bin(scores, binning, bins, c, ws, [&](std::size_t i, std::size_t b) {
    count[b] += 1.0;
    score[b] += scores[i];
    hits[b] += outcomes[i];
    if constexpr (Squares) {
      const double g = scores[i] - outcomes[i];
      squares[b] += g * g;
    }
  });
  return nb;
}

}  // namespace

std::size_t bin_statistics(std::span<const double> scores, std::span<const double> outcomes,
                           Binning binning, std::size_t bins, const Convention& c,
                           EstimatorWorkspace& ws) {
  return accumulate_bins<false>(scores, outcomes, binning, bins, c, ws);
}

std::size_t bin_statistics_with_squares(std::span<const double> scores,
                                        std::span<const double> outcomes, Binning binning,
                                        std::size_t bins, const Convention& c,
                                        EstimatorWorkspace& ws) {
  return accumulate_bins<true>(scores, outcomes, binning, bins, c, ws);
}

}  // namespace calbench
