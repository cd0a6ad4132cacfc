#pragma once
// y ~ Categorical(c) with one uniform, shared by every generator family.
#include <cstdint>
#include <span>

#include "core/rng.hpp"

namespace calbench {

// y ~ Categorical(w / total) for non-negative weights w with total = sum w as the caller
// computed it. Scaling u by the computed sum keeps the draw inside the support despite
// rounding; u == total can only land on a class with positive mass.
inline std::uint32_t draw_categorical_weights(Engine& engine, std::span<const double> w,
                                              double total) {
  const double u = uniform_open01(engine) * total;
  double acc = 0.0;
  const std::size_t K = w.size();
  for (std::size_t k = 0; k + 1 < K; ++k) {
    acc += w[k];
    if (u < acc) return static_cast<std::uint32_t>(k);
  }
  std::size_t k = K - 1;
  while (k > 0 && w[k] == 0.0) --k;
  return static_cast<std::uint32_t>(k);
}

// y ~ Categorical(c).
inline std::uint32_t draw_categorical(Engine& engine, std::span<const double> c) {
  double total = 0.0;
  for (double v : c) total += v;
  return draw_categorical_weights(engine, c, total);
}

}  // namespace calbench
