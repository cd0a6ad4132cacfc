#pragma once
// Binary calibrators: fitted on scores s_i in [0, 1] with outcomes o_i in {0, 1}, they map a
// score to a probability. Multiclass methods are built from them by composition:
// one_vs_rest (a map per class on (p_k, 1{y = k}), renormalised) and top_label (a map on
// (max p, 1{y = argmax p}), the other components rescaled). See recalibrators/one_vs_rest.hpp.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "recalibrators/recalibrator.hpp"

namespace calbench {

class BinaryMap {
 public:
  virtual ~BinaryMap() = default;
  virtual double operator()(double score) const = 0;
  virtual std::vector<FittedValue> parameters() const { return {}; }
  // Strictly increasing in the score (so that a one-vs-rest model may be injective).
  virtual bool strictly_increasing() const { return false; }
  // Everything operator() uses, for save and load (recalibrators/restore_model.hpp).
  virtual FittedState state() const = 0;
};

class BinaryCalibrator {
 public:
  virtual ~BinaryCalibrator() = default;
  // `what` names the problem in error messages ("platt, class 3").
  virtual std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                               std::span<const double> outcomes,
                                               const std::string& what) const = 0;
  virtual std::string name() const = 0;
  // The kind of its fitted maps' state (BinaryMap::state), for Recalibrator::gives.
  virtual std::string map_kind() const = 0;
};

}  // namespace calbench
