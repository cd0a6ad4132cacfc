#pragma once
// Gamma(alpha, 1) variates by Marsaglia & Tsang (2000), "A simple method for generating gamma
// variables", ACM TOMS 26(3):363-372, with their boost for alpha < 1:
// Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha).
//
// Written here rather than taken from Boost.Random because boost::random::gamma_distribution
// draws 12-52 M/s for alpha != 1 on our machines against 60-160 M/s for this sampler, and
// sampling is most of a run's time (shared/bench/README.md). Normals are Boost.Random's
// ziggurat, uniforms uniform_open01 (core/rng.hpp): every algorithm is fixed across platforms.
//
// For alpha << 1, U^(1/alpha) underflows (alpha = 0.01: for U < 8e-4). The sampler therefore
// also returns the variate's logarithm on request, exact where the variate itself is 0.
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <cmath>

#include "core/fast_math.hpp"
#include "core/rng.hpp"

namespace calbench {

class GammaSampler {
 public:
  explicit GammaSampler(double alpha);

  double alpha() const { return alpha_; }

  // One draw: the variate G (possibly 0 after underflow for tiny alpha) and log G.
  struct Draw {
    double value;
    double log_value;
  };

  Draw draw(Engine& engine) const {
    double exact_log = 0.0;
    const double value = draw_value(engine, exact_log);
    return {value, value > kTiny ? std::log(value) : exact_log};
  }

  // Below this the boosted variate may have lost precision or underflowed, and its logarithm
  // must come from logs.
  static constexpr double kTiny = 1e-280;

  // One draw without its logarithm, for callers that take logarithms in bulk (a tight loop of
  // logs runs several times faster than logs interleaved with the rejection sampler). Where
  // the value is <= kTiny, exact_log receives log G; otherwise it is left alone.
  double draw_value(Engine& engine, double& exact_log) const {
    if (exponential_) {
      // Gamma(1) is Exp(1): Boost's ziggurat draws it in a third of a Marsaglia-Tsang draw.
      boost::random::exponential_distribution<double> exponential;
      double e;
      do {
        e = exponential(engine);
      } while (e == 0.0);  // the grid's exact 0 (probability ~2^-53) would make log G -inf
      return e;
    }
    if (half_) {
      // Gamma(1/2) = Z^2 / 2 exactly (chi-square with one degree of freedom over 2): one
      // normal instead of a Marsaglia-Tsang draw and a boost. alpha = 1/2 is the Jeffreys
      // prior and a common benchmark setting. The ziggurat's smallest non-zero |Z| is about
      // 1e-16, so the value stays far above kTiny; Z = 0 exactly (probability ~2^-53, an
      // artefact of the discrete grid) is redrawn so that log G stays finite.
      boost::random::normal_distribution<double> normal;
      double z;
      do {
        z = normal(engine);
      } while (z == 0.0);
      return 0.5 * z * z;
    }
    const double g = marsaglia_tsang(engine);  // Gamma(shape_), shape_ >= 1
    if (!boosted_) return g;
    const double u = uniform_open01(engine);
    // U^(1/alpha): by repeated multiplication when 1/alpha is a small integer (alpha = 0.5,
    // 0.25, 0.1, ...), which is several times cheaper than exp(log(u)/alpha).
    double w;
    if (integer_power_ > 0) {
      w = 1.0;
      double base = u;
      for (unsigned e = integer_power_; e != 0; e >>= 1) {
        if (e & 1u) w *= base;
        base *= base;
      }
    } else {
      w = std::exp(std::log(u) * inv_alpha_);
    }
    const double value = g * w;
    if (value > kTiny) return value;
    exact_log = std::log(g) + std::log(u) * inv_alpha_;
    return std::exp(exact_log);
  }

 private:
  double marsaglia_tsang(Engine& engine) const {
    // Boost's ziggurat normal is stateless in 1.74, so a local copy costs nothing and keeps
    // the sampler const and shareable between threads.
    boost::random::normal_distribution<double> normal;
    for (;;) {
      double x, v;
      do {
        x = normal(engine);
        v = 1.0 + c_ * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = uniform_open01(engine);
      const double x2 = x * x;
      if (u < 1.0 - 0.0331 * x2 * x2) return d_ * v;  // squeeze: accepts about 98%
      // The squeeze fails for about 8 % of tries at shape 1.1 (alpha = 0.1 boosted): two
      // inline logarithms (core/fast_math.hpp, within 1 ulp) instead of two libm calls.
      if (fast::log(u) < 0.5 * x2 + d_ * (1.0 - v + fast::log(v))) return d_ * v;
    }
  }

  double alpha_;
  double shape_;  // alpha, or alpha + 1 when boosted
  bool boosted_;
  double d_, c_;
  double inv_alpha_;
  bool half_ = false;           // alpha == 1/2
  bool exponential_ = false;    // alpha == 1
  unsigned integer_power_ = 0;  // 1/alpha when it is an integer <= 64, else 0
};

}  // namespace calbench
