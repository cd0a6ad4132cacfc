#pragma once
// Ensemble temperature scaling (Zhang, Kailkhura & Han 2020, "Mix-n-Match"):
//   q = w_1 softmax(z / T) + w_2 p + w_3 (1/K),  w on the 3-simplex.
// T is fitted first by temperature scaling; the weights then maximise the likelihood of the
// mixture with its three components fixed, which is concave in w and solved by the EM
// iteration for mixture proportions (w_j <- mean_i w_j f_ij / sum_l w_l f_il, f_ij the
// components' probabilities of the label), from w = (1/3, 1/3, 1/3) until no weight moves by
// more than 1e-12 (at most 10,000 iterations). The paper fits the weights by a squared-error
// loss in its experiments; NLL is used here like everywhere else (docs/recalibration.md).
#include <array>

#include "recalibrators/recalibrator.hpp"

namespace calbench {

class EnsembleTemperature : public Recalibrator {
 public:
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return "ensemble_temperature"; }
  bool gives(const FittedState& state, std::size_t) const override {
    return has_kind(state, "ensemble_temperature");
  }
};

// The fitted model: weights (scaled, uncalibrated, uniform) on the simplex;
// recalibrators/restore_model.hpp.
std::unique_ptr<const CalibrationModel> ensemble_temperature_model(double temperature,
                                                                   std::array<double, 3> weights);

}  // namespace calbench
