#include "estimators/skce.hpp"

#include <cmath>

#include "core/error.hpp"

namespace calbench {

Skce::Skce(SkceSpec spec) : spec_(spec) {
  if (!(spec_.bandwidth > 0.0) || !std::isfinite(spec_.bandwidth))
    throw DomainError("skce bandwidth is " + std::to_string(spec_.bandwidth) +
                      ", but must be > 0 and finite");
}

double Skce::h(const Sample& s, std::size_t i, std::size_t j) const {
  const double* p = s.p.data() + i * s.classes;
  const double* q = s.p.data() + j * s.classes;
  double dist2 = 0.0, dot = 0.0;
  for (std::size_t k = 0; k < s.classes; ++k) {
    const double d = p[k] - q[k];
    dist2 += d * d;
    dot += p[k] * q[k];
  }
  const double l = spec_.bandwidth;
  const double kern = spec_.kernel == SkceKernel::gaussian ? std::exp(-dist2 / (2.0 * l * l))
                                                           : std::exp(-std::sqrt(dist2) / l);
  if (!s.truth.empty()) {
    // Rao-Blackwellised (population samples keep c): with y ~ c and y' ~ c' independent,
    // E[h | c, c'] = k(p, p') (c - p).(c' - p'), the same mean with less noise, and exactly 0
    // for a calibrated generator (c = p).
    const double* c = s.truth.data() + i * s.classes;
    const double* cq = s.truth.data() + j * s.classes;
    double inner = 0.0;
    for (std::size_t k = 0; k < s.classes; ++k) inner += (c[k] - p[k]) * (cq[k] - q[k]);
    return kern * inner;
  }
  const std::uint32_t y = s.label[i], yq = s.label[j];
  return kern * ((y == yq ? 1.0 : 0.0) - q[y] - p[yq] + dot);
}

double Skce::estimate(const Sample& s, EstimatorWorkspace&) const {
  if (s.size < 2) return 0.0;
  if (spec_.form == SkceForm::linear) {
    const std::size_t pairs = s.size / 2;
    double total = 0.0;
    for (std::size_t i = 0; i < pairs; ++i) total += h(s, 2 * i, 2 * i + 1);
    return total / static_cast<double>(pairs);
  }
  double total = 0.0;
  for (std::size_t i = 0; i + 1 < s.size; ++i)
    for (std::size_t j = i + 1; j < s.size; ++j) total += h(s, i, j);
  const auto n = static_cast<double>(s.size);
  return total * 2.0 / (n * (n - 1.0));
}

std::shared_ptr<const Estimator> Skce::population_estimator() const {
  if (spec_.form == SkceForm::linear) return nullptr;
  SkceSpec linear = spec_;
  linear.form = SkceForm::linear;
  return std::make_shared<Skce>(linear);
}

}  // namespace calbench
