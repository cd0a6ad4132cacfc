#include "truth/reliability_curve.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/rng.hpp"
#include "truth/monte_carlo_sampler.hpp"

namespace calbench {

void FineAccumulator::resize(std::size_t size) {
  for (auto* sums : {&n, &v, &vv, &c, &cc, &vc}) sums->assign(size, 0.0);
  lo.assign(size, std::numeric_limits<double>::infinity());
  hi.assign(size, -std::numeric_limits<double>::infinity());
}

void FineAccumulator::add(std::size_t bin, double statistic, double outcome) {
  n[bin] += 1.0;
  v[bin] += statistic;
  vv[bin] += statistic * statistic;
  c[bin] += outcome;
  cc[bin] += outcome * outcome;
  vc[bin] += statistic * outcome;
  lo[bin] = std::min(lo[bin], statistic);
  hi[bin] = std::max(hi[bin], statistic);
}

void FineAccumulator::merge(const FineAccumulator& o) {
  for (std::size_t i = 0; i < n.size(); ++i) {
    n[i] += o.n[i];
    v[i] += o.v[i];
    vv[i] += o.vv[i];
    c[i] += o.c[i];
    cc[i] += o.cc[i];
    vc[i] += o.vc[i];
    lo[i] = std::min(lo[i], o.lo[i]);
    hi[i] = std::max(hi[i], o.hi[i]);
  }
}

namespace {

// The sums of one point while it is being merged.
struct Sums {
  double n = 0.0, v = 0.0, vv = 0.0, c = 0.0, cc = 0.0, vc = 0.0;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(const FineAccumulator& b, std::size_t i) {
    n += b.n[i];
    v += b.v[i];
    vv += b.vv[i];
    c += b.c[i];
    cc += b.cc[i];
    vc += b.vc[i];
    lo = std::min(lo, b.lo[i]);
    hi = std::max(hi, b.hi[i]);
  }
  void add(const Sums& o) {
    n += o.n;
    v += o.v;
    vv += o.vv;
    c += o.c;
    cc += o.cc;
    vc += o.vc;
    lo = std::min(lo, o.lo);
    hi = std::max(hi, o.hi);
  }
  // Within-point variance of the statistic and of c's residual about its line in v.
  double var_v() const { return std::max(0.0, vv / n - (v / n) * (v / n)); }
  double resid_var() const {
    const double mv = v / n, mc = c / n;
    const double var_c = std::max(0.0, cc / n - mc * mc);
    const double cov = vc / n - mv * mc;
    const double var = var_v();
    return var > 0.0 ? std::max(0.0, var_c - cov * cov / var) : var_c;
  }
};

// One group's accumulators: the top label and one channel per class (one when pooled).
struct Group {
  FineAccumulator top;
  std::vector<FineAccumulator> classes;
};

}  // namespace

std::vector<CurvePoint> curve_points(const FineAccumulator& bins, std::size_t points) {
  double total = 0.0;
  for (double x : bins.n) total += x;
  std::vector<Sums> merged;
  if (total == 0.0) return {};
  const double P = static_cast<double>(std::max<std::size_t>(points, 1));
  const double mass = total / P, span = 1.0 / P;
  const double min_count = static_cast<double>(ReliabilitySettings::min_count);
  Sums open;
  for (std::size_t i = 0; i < bins.n.size(); ++i) {
    if (bins.n[i] == 0.0) continue;
    open.add(bins, i);
    if (open.n >= min_count && (open.n >= mass || open.hi - open.lo >= span)) {
      merged.push_back(open);
      open = Sums{};
    }
  }
  if (open.n > 0.0) {
    if (merged.empty() || open.n >= min_count)
      merged.push_back(open);
    else
      merged.back().add(open);  // too few draws for a point of its own
  }
  std::vector<CurvePoint> out(merged.size());
  for (std::size_t j = 0; j < merged.size(); ++j) {
    const Sums& s = merged[j];
    CurvePoint& p = out[j];
    p.lower = s.lo;
    p.upper = s.hi;
    p.score = s.v / s.n;
    p.frequency = s.c / s.n;
    p.count = static_cast<std::uint64_t>(s.n);
    p.weight = s.n / total;
    p.error = std::sqrt(s.resid_var() / s.n);
  }
  // Curvature bias |r''| var(V | point) / 2, r'' from the second divided difference through the
  // point and its neighbours. At either end r'' cannot be estimated around the point, and curves
  // are often steepest there (r(z) ~ 1 - (1 - z)^T near 1 under temperature T): the end point's
  // term is instead its distance from the line through its two neighbours, which bounds the
  // curvature's effect over the whole span and is 0 where r is linear.
  const std::size_t m = out.size();
  if (m >= 3) {
    for (std::size_t j = 1; j + 1 < m; ++j) {
      const CurvePoint &a = out[j - 1], &b = out[j], &c = out[j + 1];
      const double h1 = b.score - a.score, h2 = c.score - b.score;
      if (!(h1 > 0.0 && h2 > 0.0)) continue;
      const double second =
          2.0 * ((c.frequency - b.frequency) / h2 - (b.frequency - a.frequency) / h1) / (h1 + h2);
      out[j].error += 0.5 * std::abs(second) * merged[j].var_v();
    }
    const auto off_line = [&](std::size_t j, std::size_t a, std::size_t b) {
      const double h = out[b].score - out[a].score;
      if (!(std::abs(h) > 0.0)) return 0.0;
      const double slope = (out[b].frequency - out[a].frequency) / h;
      return std::abs(out[j].frequency -
                      (out[a].frequency + slope * (out[j].score - out[a].score)));
    };
    out[0].error += off_line(0, 1, 2);
    out[m - 1].error += off_line(m - 1, m - 2, m - 3);
  }
  return out;
}

ReliabilityCurves true_reliability_curves(const Generator& gen,
                                          const ReliabilitySettings& settings) {
  const std::size_t K = gen.classes();
  const bool pooled = gen.exchangeable_classes();
  const std::size_t channels = pooled ? 1 : K;
  const mc::KeyedBatches streams{hash64(gen.canonical_text() + "|reliability"), Purpose::truth,
                                 mc::groups};
  const std::uint64_t per_group = (settings.samples + mc::groups - 1) / mc::groups;
  struct Scratch {
    GeneratorScratch generator;
    std::vector<double> c, p, log_p;
  };
  std::vector<Group> groups(mc::groups);
  mc::for_each_batch<Scratch>(streams, [&](std::size_t g, Engine& engine, Scratch& s) {
    Group& out = groups[g];
    out.top.resize(mc::fine_bins);
    out.classes.resize(channels);
    for (auto& ch : out.classes) ch.resize(mc::fine_bins);
    s.generator.reserve(K);
    s.c.resize(K);
    s.p.resize(K);
    s.log_p.resize(K);
    for (std::uint64_t i = 0; i < per_group; ++i) {
      gen.draw(engine, s.c, s.p, s.log_p, s.generator);
      std::size_t top = 0;  // the lowest index on ties, as Sample::predicted
      for (std::size_t k = 1; k < K; ++k)
        if (s.p[k] > s.p[top]) top = k;
      out.top.add(mc::fine_bin(s.p[top]), s.p[top], s.c[top]);
      for (std::size_t k = 0; k < K; ++k)
        out.classes[pooled ? 0 : k].add(mc::fine_bin(s.p[k]), s.p[k], s.c[k]);
    }
  });
  // Groups merged in order: the same bits for any thread count.
  for (std::size_t g = 1; g < groups.size(); ++g) {
    groups[0].top.merge(groups[g].top);
    for (std::size_t ch = 0; ch < channels; ++ch)
      groups[0].classes[ch].merge(groups[g].classes[ch]);
  }
  ReliabilityCurves out;
  out.pooled = pooled;
  out.samples = per_group * mc::groups;
  out.top = curve_points(groups[0].top, settings.points);
  for (std::size_t ch = 0; ch < channels; ++ch)
    out.classes.push_back(curve_points(groups[0].classes[ch], settings.points));
  return out;
}

std::vector<CurvePoint> true_top_reliability_curve(const Generator& gen,
                                                   const CalibrationModel* model,
                                                   const ReliabilitySettings& settings) {
  const std::size_t K = gen.classes();
  constexpr std::size_t block = 256;  // rows per apply()
  const mc::KeyedBatches streams{hash64(gen.canonical_text() + "|reliability"), Purpose::truth,
                                 mc::groups};
  const std::uint64_t per_group = (settings.samples + mc::groups - 1) / mc::groups;
  struct Scratch {
    GeneratorScratch generator;
    std::vector<double> c, p, q, log_p;
  };
  std::vector<FineAccumulator> groups(mc::groups);
  mc::for_each_batch<Scratch>(streams, [&](std::size_t g, Engine& engine, Scratch& s) {
    FineAccumulator& out = groups[g];
    out.resize(mc::fine_bins);
    s.generator.reserve(K);
    s.c.resize(block * K);
    s.p.resize(block * K);
    s.q.resize(block * K);
    s.log_p.resize(K);
    for (std::uint64_t done = 0; done < per_group;) {
      const std::size_t rows =
          static_cast<std::size_t>(std::min<std::uint64_t>(block, per_group - done));
      for (std::size_t i = 0; i < rows; ++i)
        gen.draw(engine, std::span<double>(s.c).subspan(i * K, K),
                 std::span<double>(s.p).subspan(i * K, K), s.log_p, s.generator);
      const std::span<const double> p(s.p.data(), rows * K);
      std::span<double> q(s.q.data(), rows * K);
      if (model != nullptr)
        apply(*model, p, K, q);
      else
        std::copy(p.begin(), p.end(), q.begin());
      for (std::size_t i = 0; i < rows; ++i) {
        const double* qi = s.q.data() + i * K;
        std::size_t top = 0;  // the lowest index on ties, as Sample::predicted
        for (std::size_t k = 1; k < K; ++k)
          if (qi[k] > qi[top]) top = k;
        out.add(mc::fine_bin(qi[top]), qi[top], s.c[i * K + top]);
      }
      done += rows;
    }
  });
  for (std::size_t g = 1; g < groups.size(); ++g) groups[0].merge(groups[g]);
  return curve_points(groups[0], settings.points);
}

}  // namespace calbench
