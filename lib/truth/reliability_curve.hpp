#pragma once
// The true reliability curves of a generator (docs/truth.md, "Reliability curves"):
//   top label:  r_top(z)  = P(y = argmax p | max p = z)  = E[c_{argmax p} | Z = z]
//   class k:    r_k(s)    = P(y = k | p_k = s)           = E[c_k | p_k = s]
// Both by Rao-Blackwellisation (DESIGN.md §1): the outcome is replaced by its conditional
// probability c, which the generator draws with p, so the curves carry no label noise, for every
// family and every map (a non-injective one included: only c is needed, never r(p)).
//
// Method: Monte Carlo over keyed streams, conditional means on a fine grid. The draws are
// accumulated on the truth engine's fine bins of the statistic (32 per octave, log-scale
// towards 0 and 1; truth/monte_carlo_core.hpp), and consecutive fine bins are merged into a
// point once it holds at least `min_count` draws and either 1/points of the draws or a score
// range of 1/points: so points are at most 1/points apart where the statistic has mass, and
// denser where it has much. A point reports the mean statistic `score` and mean c, `frequency`,
// over its draws: E[c | V in bin] against E[V | V in bin], which is r(E[V | bin]) up to the
// curvature of r. Its `error` adds
//   - the standard error of the within-point residual of c about its least-squares line in V,
//     sqrt(var_resid / n) (the frequency's noise at the point's own mean score: the line's slope
//     carries the noise of the mean score), and
//   - the curvature bias |r''| var(V | bin) / 2 (Jensen), r'' from the second divided
//     difference of the neighbouring points.
// A calibrated generator (p = c) has frequency == score exactly and error 0.
// In a CurvePoint: lower and upper are the smallest and largest statistic among the point's
// draws, count its draws (class-pooled curves: draws times K), error as above.
// Streams: batch g of make_engine({H(canonical + "|reliability"), g, 0, Purpose::truth}), groups
// merged in order, so the curves have the same bits for any thread count and in every run.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/curve_point.hpp"
#include "generators/generator.hpp"
#include "recalibrators/recalibrator.hpp"

namespace calbench {

struct ReliabilitySettings {
  std::size_t points = 100;           // resolution: at most 1/points between points with mass
  std::uint64_t samples = 2'000'000;  // Monte Carlo draws (p, c)
  static constexpr std::uint64_t min_count = 100;  // draws in a point at least
};

struct ReliabilityCurves {
  std::vector<CurvePoint> top;
  // One curve per class, or one curve of all classes when they are exchangeable (symmetric
  // alpha and a class-symmetric map, or the families' symmetric forms): `pooled`.
  bool pooled = false;
  std::vector<std::vector<CurvePoint>> classes;
  std::uint64_t samples = 0;
};

// Deterministic for any thread count; parallel over the groups.
ReliabilityCurves true_reliability_curves(const Generator& generator,
                                          const ReliabilitySettings& settings);

// The true top-label curve of a recalibrated model q = g(p), P(y = argmax q | max q = z) =
// E[c_{argmax q} | max q = z] (the composed model of truth/composed_truth.hpp): the draws of the
// generator's own curves (the same streams: common random numbers), q in place of p, applied in
// blocks of rows so that matrix methods use matrix products. model == nullptr gives the
// generator's top curve bit for bit.
std::vector<CurvePoint> true_top_reliability_curve(const Generator& generator,
                                                   const CalibrationModel* model,
                                                   const ReliabilitySettings& settings);

// Merges a fine-bin accumulation into curve points (exposed for tests). Per fine bin i (in
// increasing order of the statistic): n, sums of v, v^2, c, c^2, v c, min v and max v.
struct FineAccumulator {
  std::vector<double> n, v, vv, c, cc, vc, lo, hi;
  void resize(std::size_t size);
  void add(std::size_t bin, double statistic, double outcome);
  void merge(const FineAccumulator& other);
};
std::vector<CurvePoint> curve_points(const FineAccumulator& bins, std::size_t points);

}  // namespace calbench
