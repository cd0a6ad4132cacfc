#include "estimators/ece_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace calbench {

EceSweep::EceSweep(EceSweepSpec spec) : spec_(spec) {
  if (spec_.norm != Norm::l1 && spec_.norm != Norm::l2)
    throw DomainError("ece_sweep norm: must be l1 or l2");
}

std::size_t EceSweep::last_bins(const EstimatorWorkspace& ws) {
  return ws.split.empty() ? 0 : ws.split.front();
}

double EceSweep::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  const std::size_t n = s.size;
  ws.split.assign(1, 0);
  if (n == 0) return 0.0;
  // Sort once: row order by confidence, then prefix sums (ws.bin_score / bin_hits, n + 1).
  ws.bin_of.resize(n);
  std::iota(ws.bin_of.begin(), ws.bin_of.end(), 0u);
  std::sort(ws.bin_of.begin(), ws.bin_of.end(),
            [&](std::uint32_t a, std::uint32_t b) { return s.confidence[a] < s.confidence[b]; });
  ws.sorted.resize(n);
  ws.bin_score.assign(n + 1, 0.0);
  ws.bin_hits.assign(n + 1, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint32_t i = ws.bin_of[r];
    ws.sorted[r] = s.confidence[i];
    ws.bin_score[r + 1] = ws.bin_score[r] + s.confidence[i];
    ws.bin_hits[r + 1] = ws.bin_hits[r] + (s.correct(i) ? 1.0 : 0.0);
  }
  // Boundaries of b bins as ranks, into ws.edges (b + 1 values).
  const auto bounds = [&](std::size_t b) {
    ws.edges.resize(b + 1);
    if (spec_.binning == Binning::equal_mass) {
      const std::size_t base = n / b, extra = n % b;
      for (std::size_t j = 0; j <= b; ++j)
        ws.edges[j] = static_cast<double>(j * base + std::min(j, extra));
    } else {
      ws.edges[0] = 0.0;
      for (std::size_t j = 1; j < b; ++j) {
        const double e = static_cast<double>(j) / static_cast<double>(b);  // (e_j-1, e_j]
        ws.edges[j] = static_cast<double>(std::upper_bound(ws.sorted.begin(), ws.sorted.end(), e) -
                                          ws.sorted.begin());
      }
      ws.edges[b] = static_cast<double>(n);
    }
  };
  const auto monotone = [&](std::size_t b) {
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
  const double nd = static_cast<double>(n);
  const auto cap = static_cast<std::size_t>(std::ceil(std::sqrt(nd * std::log2(nd + 1.0))));
  const std::size_t b_max = std::max<std::size_t>(1, std::min(n, cap));
  std::size_t best = 1;
  for (std::size_t b = 2; b <= b_max && monotone(b); ++b) best = b;
  ws.split.assign(1, best);

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
