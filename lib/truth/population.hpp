#pragma once
// Own population values of estimators: the limit of an estimator as the sample grows, for
// estimators whose limit is not one of the nine design quantities (smooth ECE, SKCE, TACE,
// ...) and for those whose limit differs from their target (a binned ECE converges to the
// binned quantity, not to ece_top_l1). With it every estimator in a sweep has a bias, and a
// binned estimator's bias splits into binning bias (population value - truth of the target)
// and finite-sample bias (mean - population value), the distinction of Roelofs et al. 2022.
//
// Method: the estimator (or its population_estimator(), a cheaper form with the same limit)
// is evaluated on `groups` independent samples of samples/groups vectors each; the value is
// the mean over groups and its error the standard error over groups. This is the population
// value *at that sample size*: what remains of the finite-sample bias there is reported in
// docs/truth.md (for a 15-bin ECE at 125,000 vectors, below 1e-4 unless a bin's gap is near 0).
// The samples keep their true class distributions, so estimators linear in the outcomes within
// their groups (binned ECEs) use c in place of the labels (core/sample.hpp): a calibrated
// generator then gives a binned ECE of exactly 0, where labels would leave |noise|.
// Streams are keyed by the generator's canonical parameters, not the run's seed, so the value
// is the same in every run; all estimators of one call share the samples (common random
// numbers).
#include <cstdint>
#include <span>
#include <vector>

#include "estimators/estimator.hpp"
#include "generators/dirichlet.hpp"
#include "generators/generator.hpp"

namespace calbench {

struct PopulationValue {
  double value = 0.0;
  double error = 0.0;         // standard error over the groups
  std::uint64_t samples = 0;  // vectors per group
};

inline constexpr std::size_t population_groups = 8;

// Deterministic for any thread count (parallel over groups, results in group order).
std::vector<PopulationValue> population_values(const Generator& generator,
                                               std::span<const Estimator* const> estimators,
                                               std::uint64_t samples);
std::vector<PopulationValue> population_values(const DirichletGenerator& generator,
                                               std::span<const Estimator* const> estimators,
                                               std::uint64_t samples);

}  // namespace calbench
