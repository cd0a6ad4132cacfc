#include "recalibrators/ensemble_temperature.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "recalibrators/temperature_scaling.hpp"

namespace calbench {
namespace {

class EnsembleModel : public CalibrationModel {
 public:
  EnsembleModel(double temperature, std::array<double, 3> w)
      : scaled_(temperature), temperature_(temperature), w_(w) {}

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    scaled_.apply(p, classes, q);
    const double uniform = w_[2] / static_cast<double>(classes);
    for (std::size_t j = 0; j < p.size(); ++j) q[j] = w_[0] * q[j] + w_[1] * p[j] + uniform;
    for (std::size_t i = 0; i < p.size() / classes; ++i)
      normalise_row(q.subspan(i * classes, classes));
  }
  std::vector<FittedValue> parameters() const override {
    return {{"temperature", temperature_},
            {"weight_scaled", w_[0]},
            {"weight_uncalibrated", w_[1]},
            {"weight_uniform", w_[2]}};
  }
  bool injective() const override { return w_[1] == 0.0 && w_[2] == 0.0; }
  FittedState state() const override {
    return {.kind = "ensemble_temperature",
            .scalars = {{"temperature", temperature_}},
            .arrays = {{"weights", {w_.begin(), w_.end()}}}};
  }

 private:
  TemperatureModel scaled_;
  double temperature_;
  std::array<double, 3> w_;
};

}  // namespace

std::unique_ptr<const CalibrationModel> ensemble_temperature_model(double temperature,
                                                                   std::array<double, 3> weights) {
  return std::make_unique<EnsembleModel>(temperature, weights);
}

std::unique_ptr<const CalibrationModel> EnsembleTemperature::fit(const Sample& sample) const {
  check_fit_sample(sample, "ensemble_temperature", 3, "T and two free weights");
  const std::size_t n = sample.size, K = sample.classes;
  std::vector<double> logits(sample.p.size());
  for (std::size_t j = 0; j < logits.size(); ++j) logits[j] = safe_log(sample.p[j]);
  const double T = fit_temperature(logits, sample.label, K).temperature;
  const TemperatureModel scaled(T);
  std::vector<double> q(sample.p.size());
  scaled.apply(sample.p, K, q);
  // f[i] = the three components' probabilities of the label of row i.
  std::vector<std::array<double, 3>> f(n);
  for (std::size_t i = 0; i < n; ++i)
    f[i] = {q[i * K + sample.label[i]], sample.p[i * K + sample.label[i]],
            1.0 / static_cast<double>(K)};
  std::array<double, 3> w = {1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0};
  for (int iteration = 0; iteration < 10'000; ++iteration) {
    std::array<double, 3> next = {0.0, 0.0, 0.0};
    for (std::size_t i = 0; i < n; ++i) {
      const double mix = w[0] * f[i][0] + w[1] * f[i][1] + w[2] * f[i][2];
      if (!(mix > 0.0)) continue;
      for (int j = 0; j < 3; ++j) next[j] += w[j] * f[i][j] / mix;
    }
    double total = next[0] + next[1] + next[2], change = 0.0;
    for (int j = 0; j < 3; ++j) {
      next[j] /= total;
      change = std::max(change, std::abs(next[j] - w[j]));
    }
    w = next;
    if (change < 1e-12) break;
  }
  return std::make_unique<EnsembleModel>(T, w);
}

}  // namespace calbench
