#include "estimators/ece_sweep.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace calbench {
namespace {

// EceSweep's own scratch (EstimatorWorkspace::scratch): the confidences in sorted order, and
// what last_bins reports.
struct SweepScratch {
  std::vector<double> sorted;
  std::size_t last_bins = 0;
};

}  // namespace

EceSweep::EceSweep(EceSweepSpec spec) : spec_(spec) {
  if (spec_.norm != Norm::l1 && spec_.norm != Norm::l2)
    throw DomainError("ece_sweep norm: must be l1 or l2");
}

std::size_t EceSweep::last_bins(EstimatorWorkspace& ws) {
  return ws.scratch<SweepScratch>().last_bins;
}

double EceSweep::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  const std::size_t n = s.size;
  SweepScratch& sweep = ws.scratch<SweepScratch>();
  std::size_t& last_bins = sweep.last_bins;
  std::vector<double>& sorted = sweep.sorted;
  last_bins = 0;
  if (n == 0) return 0.0;
  // Sort once: row order by confidence, then prefix sums (ws.bin_score / bin_hits, n + 1).
  stable_score_order(s.confidence, ws, ws.bin_of);
  sorted.resize(n);
  ws.bin_score.assign(n + 1, 0.0);
  ws.bin_hits.assign(n + 1, 0.0);
  // The correct rows counted as an integer (the double sum of 0s and 1s, exactly): a select of
  // 1.0 or 0.0 compiles to a branch, which mispredicts on every row it cannot guess.
  std::size_t hits = 0;
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint32_t i = ws.bin_of[r];
    sorted[r] = s.confidence[i];
    ws.bin_score[r + 1] = ws.bin_score[r] + s.confidence[i];
    hits += static_cast<std::size_t>(s.correct(i));
    ws.bin_hits[r + 1] = static_cast<double>(hits);
  }
  // Boundaries of b bins as ranks, into ws.edges (b + 1 values): edges[j] is the first rank
  // in bin j under caltrain's rules (ece_sweep.hpp), found in O(log n) or O(1) per boundary
  // instead of binning all n rows per b.
  const double nd = static_cast<double>(n);
  const auto bounds = [&](std::size_t b) {
    ws.edges.resize(b + 1);
    const double bd = static_cast<double>(b);
    ws.edges[0] = 0.0;
    for (std::size_t j = 1; j < b; ++j) {
      const double jd = static_cast<double>(j);
      std::size_t first;
      if (spec_.binning == Binning::equal_mass) {
        // The first r with floor((r / n) * b) >= j is ceil(j n / b) in exact arithmetic; the
        // floating-point expression can differ by one rank, so step to where it switches.
        const auto in_bin = [&](std::size_t r) {
          return std::floor(static_cast<double>(r) / nd * bd) >= jd;
        };
        first = (j * n + b - 1) / b;
        while (first > 0 && in_bin(first - 1)) --first;
        while (first < n && !in_bin(first)) ++first;
      } else {  // bin = min(b - 1, floor(s * b)): [j / b, (j + 1) / b) in floating point
        first = static_cast<std::size_t>(
            std::partition_point(sorted.begin(), sorted.end(),
                                 [&](double v) { return std::floor(v * bd) < jd; }) -
            sorted.begin());
      }
      ws.edges[j] = static_cast<double>(first);
    }
    ws.edges[b] = nd;
  };
  // Equal width past b = n / log2(n): one pass over the sorted rows, grouped by their bin
  // min(b - 1, floor(s b)) (non-decreasing in s, so each bin is a run), costs O(n) instead of
  // the boundaries' O(b log n). Same bins, same verdict.
  const double row_pass_from = nd / std::max(1.0, std::log2(nd));
  const auto monotone_by_rows = [&](std::size_t b) {
    const double bd = static_cast<double>(b);
    const auto bin = [&](std::size_t r) { return std::min(bd - 1.0, std::floor(sorted[r] * bd)); };
    double previous = -1.0;
    for (std::size_t lo = 0, hi = 0; lo < n; lo = hi) {
      const double j = bin(lo);
      for (hi = lo + 1; hi < n && bin(hi) == j;) ++hi;
      const double acc = (ws.bin_hits[hi] - ws.bin_hits[lo]) / static_cast<double>(hi - lo);
      if (acc < previous) return false;
      previous = acc;
    }
    return true;
  };
  const auto monotone = [&](std::size_t b) {
    if (spec_.binning == Binning::equal_width && static_cast<double>(b) > row_pass_from)
      return monotone_by_rows(b);
    bounds(b);
    double previous = -1.0;
    for (std::size_t j = 0; j < b; ++j) {
      const auto lo = static_cast<std::size_t>(ws.edges[j]);
      const auto hi = static_cast<std::size_t>(ws.edges[j + 1]);
      if (hi == lo) continue;
      const double acc = (ws.bin_hits[hi] - ws.bin_hits[lo]) / static_cast<double>(hi - lo);
      if (acc < previous) return false;
      previous = acc;
    }
    return true;
  };
  // caltrain scans b = 2 .. n - 1 (none when n <= 2, leaving one bin).
  std::size_t best = 1;
  if (n > 2) {
    // Rows in sorted order with non-decreasing correctness: every b passes (ece_sweep.hpp).
    const auto correct = static_cast<std::size_t>(ws.bin_hits[n]);
    const bool separated = ws.bin_hits[n - correct] == 0.0;
    if (separated) {
      best = n - 1;
    } else {
      for (std::size_t b = 2; b < n && monotone(b); ++b) best = b;
    }
  }
  last_bins = best;

  bounds(best);
  double out = 0.0;
  for (std::size_t j = 0; j < best; ++j) {
    const auto lo = static_cast<std::size_t>(ws.edges[j]);
    const auto hi = static_cast<std::size_t>(ws.edges[j + 1]);
    if (hi == lo) continue;
    const double m = static_cast<double>(hi - lo);
    const double gap =
        std::abs((ws.bin_score[hi] - ws.bin_score[lo]) - (ws.bin_hits[hi] - ws.bin_hits[lo])) / m;
    out += m / nd * (spec_.norm == Norm::l2 ? gap * gap : gap);
  }
  return spec_.norm == Norm::l2 ? std::sqrt(out) : out;
}

std::optional<Quantity> EceSweep::target() const {
  return spec_.norm == Norm::l2 ? Quantity::ece_top_l2 : Quantity::ece_top_l1;
}

}  // namespace calbench
