#pragma once
#include <cstdint>

namespace calbench {

// Settings of the truth engine (config section `truth`).
struct TruthSettings {
  // The most Monte Carlo vectors drawn for the quantities that have no exact method (and the
  // vectors of other simulated values, such as decision values). The truth engine draws them in
  // rounds of min(samples, 2,000,000)/8 vectors (monte_carlo_sampler.hpp, draw_in_rounds).
  std::uint64_t samples = 16'000'000;
  // Sampling stops after a round once every quantity's error (standard error plus bias
  // bracket) is at most this. The defaults keep the absolute error of every quantity below
  // 2e-4 by a wide margin (docs/truth.md, "Precision and stopping"). Stopping depends only on
  // the keyed streams, so it is deterministic; a tiny tolerance draws all `samples`.
  double tolerance = 5e-5;
  // Vectors (over 8 groups) on which an estimator's own population value is computed
  // (truth/population.hpp), for estimators without a target or with a binning bias.
  std::uint64_t population_samples = 1'000'000;
  // 0: the truth engine's Monte Carlo draws from the streams keyed by the generator alone (every
  // run). Any other value draws an independent replica (key hash of the key and `stream`): not a
  // config key, for precision checks that compare the default truth against an independent
  // long run (scripts/truth-precision.py, calbench.truth(..., stream=N)).
  std::uint64_t stream = 0;
};

}  // namespace calbench
