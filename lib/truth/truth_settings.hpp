#pragma once
#include <cstdint>

namespace calbench {

// Settings of the truth engine (config section `truth`).
struct TruthSettings {
  // The most Monte Carlo vectors drawn for the quantities that have no exact method.
  std::uint64_t samples = 2'000'000;
  // Sampling stops early, after a round of samples/8 vectors, once every quantity's error
  // (standard error plus bias bracket) is at most this. The default keeps the absolute error
  // of every quantity below 2e-4 with high probability (docs/truth.md). Stopping depends only
  // on the keyed streams, so it is deterministic; a tiny tolerance draws all `samples`.
  double tolerance = 7e-5;
  // Vectors (over 8 groups) on which an estimator's own population value is computed
  // (truth/population.hpp), for estimators without a target or with a binning bias.
  std::uint64_t population_samples = 1'000'000;
};

}  // namespace calbench
