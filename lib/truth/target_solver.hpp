#pragma once
// Targets for the `dirichlet` family: "accuracy A, ece_top_l1 E" solved for a symmetric alpha
// and the parameter of a temperature or top_label map (issue #5, docs/generators.md).
//
// Why it is exact and cheap: both maps keep the argmax (top_label for gamma <= 1, or K = 2), so
// accuracy = E[max c] depends on alpha alone and is exact by quadrature
// (truth/dirichlet_integrals.hpp) — alpha is solved first. Both maps give a top-label gap of
// one sign, so ece_top_l1 = |E[Z] - accuracy| with Z = max p: for K = 2 exact by quadrature; for
// K >= 3 E[Z] is estimated on one fixed set of draws of c (common random numbers, so the
// estimate is smooth and monotone in the parameter: Z is monotone in T and in gamma for every
// c) with max c as control variate, the parameter solved on it, and the result polished with
// a few Newton steps on the truth engine itself, whose values are what the run reports.
// Root finding is Boost.Math's TOMS 748.
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "generators/dirichlet.hpp"
#include "generators/dirichlet_target.hpp"
#include "truth/ground_truth.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

struct TargetSolution {
  DirichletSpec spec;      // symmetric alpha and the solved map
  double alpha = 0.0;      // the symmetric concentration
  double parameter = 1.0;  // temperature T or gamma
  TruthValue accuracy;     // achieved: the truth engine's values for `spec`
  TruthValue ece_top_l1;
  // The truth engine's result for `spec` under the settings solved with, when the solver
  // computed it (K >= 3): a run reuses it instead of computing it again.
  std::shared_ptr<const GroundTruth> truth;
};

// An unreachable or invalid target; `field` is the target key at fault ("accuracy" or
// "ece_top_l1"), the message says why and what is reachable.
class TargetError : public DomainError {
 public:
  TargetError(std::string field, const std::string& message)
      : DomainError(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// Solves targets, caching alpha per (K, accuracy), the common draws per (K, alpha) and each
// solution, so a grid of targets costs one solve per distinct value. Thread-safe.
class TargetSolver {
 public:
  TargetSolver();
  ~TargetSolver();
  // Throws TargetError when the target cannot be reached within 1e-3.
  TargetSolution solve(const DirichletTarget& target, const TruthSettings& settings);

  // Precision promised for the achieved accuracy and ece_top_l1.
  static constexpr double tolerance = 1e-3;

 private:
  struct Draws;
  std::mutex mutex_;
  std::map<std::pair<std::size_t, double>, double> alpha_;
  std::map<std::pair<std::size_t, double>, std::shared_ptr<const Draws>> draws_;
  std::map<std::string, TargetSolution> solutions_;
};

// The symmetric alpha with E[max c] = accuracy for K classes (TargetError if out of reach).
double solve_alpha_for_accuracy(std::size_t classes, double accuracy);

}  // namespace calbench
