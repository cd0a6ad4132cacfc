#pragma once
// Temperature scaling (Guo et al. 2017): q = softmax(z / T) with logits z = log p, one scalar
// T fitted by minimising the mean negative log-likelihood on the fit sample.
//
// With beta = 1/T and d_ik = z_ik - max_j z_ij, NLL(beta) = (1/n) sum_i [-beta d_iy_i +
// log sum_k exp(beta d_ik)] is convex in beta: NLL' = (1/n) sum_i (E_w[d_i] - d_iy_i) and
// NLL'' = (1/n) sum_i Var_w[d_i] >= 0 under the weights w_k ∝ exp(beta d_ik). The fit is
// Newton's method on u = log beta, safeguarded by bisection on a bracket that NLL' has one
// sign on either side of (NLL' is increasing in u). It stops when the Newton step is below
// 1e-5 in u (the step is taken: the error after it is below 1e-10) or the bracket below
// 1e-13. Each step is one pass over the n K logits computing both derivatives, parallel over
// fixed blocks of rows summed in block order (the same bits for any thread count). T is
// confined to [1e-3, 1e3]: where NLL keeps decreasing towards a bound (data separable by the
// argmax gives T -> 0) the fit returns the bound, tried directly once Newton has taken 8
// passes.
#include <cstddef>
#include <span>

#include "recalibrators/recalibrator.hpp"

namespace calbench {

struct TemperatureFit {
  double temperature = 1.0;
  double nll = 0.0;  // the mean NLL at the fitted temperature
  int iterations = 0;
};

// The fit on raw logits (row-major n x K) and labels; the logits need not be normalised.
// Throws DomainError when fewer than two classes occur.
TemperatureFit fit_temperature(std::span<const double> logits,
                               std::span<const std::uint32_t> labels, std::size_t classes);

inline constexpr double min_temperature = 1e-3;
inline constexpr double max_temperature = 1e3;

class TemperatureScaling : public Recalibrator {
 public:
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return "temperature"; }
  bool gives(const FittedState& state, std::size_t) const override {
    return has_kind(state, "temperature");
  }
};

// The fitted model; exposed for ensemble_temperature.
class TemperatureModel : public CalibrationModel {
 public:
  explicit TemperatureModel(double temperature) : temperature_(temperature) {}
  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override;
  std::vector<FittedValue> parameters() const override { return {{"temperature", temperature_}}; }
  bool injective() const override { return true; }
  FittedState state() const override {
    return {.kind = "temperature", .scalars = {{"temperature", temperature_}}};
  }
  double temperature() const { return temperature_; }

 private:
  double temperature_;
};

}  // namespace calbench
