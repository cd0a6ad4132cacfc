#pragma once
// The estimator interface: a finite sample -> one number, and the ground-truth quantity whose
// population value the number estimates (its target). Bias = E[estimate] - truth[target].
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "estimators/quantity.hpp"
#include "generators/sample.hpp"

namespace calbench {

// Per-thread scratch space for estimators, reused across replicates (no allocation per row).
struct EstimatorWorkspace {
  struct ScoredGap {
    double score, gap;
  };
  std::vector<ScoredGap> sorted;
  std::vector<double> values;
  std::vector<double> bin_sum, bin_count;
};

class Estimator {
 public:
  virtual ~Estimator() = default;
  virtual double estimate(const Sample& sample, EstimatorWorkspace& workspace) const = 0;
  // The quantity this estimator is consistent for; empty when it has none among the nine
  // (then its bias is not reported until the truth engine computes its own population value).
  virtual std::optional<Quantity> target() const = 0;
};

}  // namespace calbench
