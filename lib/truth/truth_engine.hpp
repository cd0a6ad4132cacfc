#pragma once
// The ground-truth engine: population values of the nine design quantities for a generator,
// each with its method and error (docs/truth.md).
//
// Strategy, exact first:
// - `identity`: closed forms, and E[max c] by one-dimensional quadrature.
// - K = 2 with symmetric alpha and an injective, class-symmetric map: 1-D quadrature;
//   every other K = 2 map and alpha: 1-D quadrature over logit p_1 (binary_quadrature.hpp).
// - otherwise Rao-Blackwellised Monte Carlo over c (never over sampled labels): unconditional
//   expectations with control variates of known mean (sum c^2, sum c log c, max c);
//   accuracy exact by quadrature where the map keeps the argmax; ece_top_l1 = |E[Z - c_top]|
//   where the top gap has one sign; conditional expectations given a 1-D statistic (Z = max p,
//   or p_k) on fine log-scale bins, with the noise bias of |.| bracketed by a cross-fitted
//   estimate and the binning bias of the L2 norm estimated from a coarser partition.
// Streams are keyed by the generator's canonical parameters, so truth is the same in every run.
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "generators/dirichlet.hpp"
#include "generators/generator.hpp"
#include "truth/ground_truth.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

// Computes the truth; uses TBB for the Monte Carlo part. Deterministic for any thread count.
GroundTruth compute_truth(const DirichletGenerator& generator, const TruthSettings& settings);
// The same for the quantities in `needed`; the others may be left unknown (NaN, infinite
// error). What is not asked for is not paid for: the Monte Carlo stops when the needed
// quantities reach the tolerance and keeps no per-class bins without classwise_ece_l1, and K = 3
// quadrature skips its classwise passes. With every quantity needed it is the call above.
GroundTruth compute_truth(const DirichletGenerator& generator, const TruthSettings& settings,
                          std::span<const Quantity> needed);
// The same for any family: `dirichlet` as above, the others by truth/family_truth.hpp.
GroundTruth compute_truth(const Generator& generator, const TruthSettings& settings);

// Whether compute_truth gives every quantity without Monte Carlo: a `dirichlet` family with the
// identity map (closed forms) or K <= 3 and a map other than quantize (quadrature, which falls
// back to Monte Carlo only when its mass check fails: alpha below about 0.03), and `beta_binary`.
// The pre-flight's time estimate counts no truth draws for these.
bool truth_without_monte_carlo(const Generator& generator);

// The Monte Carlo estimate of every quantity, ignoring exact shortcuts (for tests and for
// cross-checks against quadrature); with `needed`, drawn until those are within the tolerance
// (classwise_ece_l1 unknown when it is not needed).
GroundTruth monte_carlo_truth(const DirichletGenerator& generator, const TruthSettings& settings,
                              std::span<const Quantity> needed = all_quantities);

// Thread-safe cache: one computation per distinct (generator, settings).
class TruthCache {
 public:
  const GroundTruth& get(const Generator& generator, const TruthSettings& settings);
  const GroundTruth& get(const DirichletGenerator& generator, const TruthSettings& settings);

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<GroundTruth>> cache_;
};

}  // namespace calbench
