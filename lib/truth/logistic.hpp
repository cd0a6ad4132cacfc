#pragma once
// The logistic functions the one- and two-dimensional quadratures integrate over logits with.
#include <cmath>

namespace calbench {

// log(1 + e^v), without overflow for large v.
inline double softplus(double v) {
  return v > 0.0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
}

inline double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

}  // namespace calbench
