#pragma once
// Gamma(alpha, 1) variates by Marsaglia & Tsang (2000), "A simple method for generating gamma
// variables", ACM TOMS 26(3):363-372, with their boost for alpha < 1:
// Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha).
//
// Written here rather than taken from Boost.Random because boost::random::gamma_distribution
// draws 12-52 M/s for alpha != 1 on our machines against 60-160 M/s for this sampler, and
// sampling is most of a run's time (shared/bench/README.md). Normals and exponentials are
// ziggurat draws on Boost.Random's tables (generators/ziggurat.hpp), uniforms uniform_open01
// (core/rng.hpp): every algorithm is fixed across platforms.
//
// For alpha << 1, U^(1/alpha) underflows (alpha = 0.01: for U < 8e-4). The sampler therefore
// also returns the variate's logarithm on request, exact where the variate itself is 0.
#include <cmath>
#include <span>

#include "core/fast_math.hpp"
#include "core/rng.hpp"
#include "generators/ziggurat.hpp"

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
      // Gamma(1) is Exp(1): the ziggurat draws it in a fifth of a Marsaglia-Tsang draw.
      double e;
      do {
        e = standard_exponential(engine);
      } while (e == 0.0);  // the grid's exact 0 (probability ~2^-53) would make log G -inf
      return e;
    }
    if (half_) {
      // Gamma(1/2) = Z^2 / 2 exactly (chi-square with one degree of freedom over 2): one
      // normal instead of a Marsaglia-Tsang draw and a boost. alpha = 1/2 is the Jeffreys
      // prior and a common benchmark setting. The ziggurat's smallest non-zero |Z| is about
      // 1e-16, so the value stays far above kTiny; Z = 0 exactly (probability ~2^-53, an
      // artefact of the discrete grid) is redrawn so that log G stays finite.
      double z;
      do {
        z = standard_normal(engine);
      } while (z == 0.0);
      return 0.5 * z * z;
    }
    const double g = marsaglia_tsang(engine);  // Gamma(shape_), shape_ >= 1
    if (!boosted_) return g;
    return boosted_value(g, uniform_open01(engine), exact_log);
  }

  // Fills values with independent draws, as draw_value would one by one (exact_log likewise:
  // written only where a value is <= kTiny) but consuming the engine in another order, and
  // returns whether any value is <= kTiny. Several times faster per draw for alpha != 1/2, 1
  // (docs/performance.md): Marsaglia-Tsang's candidates are made and tested in passes over a
  // block, so the squeeze test runs without a branch per draw and only the ~8 % of candidates
  // it cannot accept (shape 1.1) take the slow test.
  // Most of the random words come from `lanes` (core/rng.hpp) when given, the rest from
  // `engine`.
  bool draw_values(Engine& engine, EngineLanes* lanes, std::span<double> values,
                   std::span<double> exact_log) const;

 private:
  // draw_values works in blocks of this many variates.
  static constexpr std::size_t kBlock = 128;
  // Gamma(shape_) variates into out (at most kBlock), the first candidates from words.
  void marsaglia_tsang_block(Engine& engine, const std::uint64_t* words,
                             std::span<double> out) const;
  // out[j] *= b[j]^(1/alpha), exact_log[j] = log of the result where it is tiny; returns
  // whether any is.
  bool boost_block(std::span<double> out, const double* b, std::span<double> exact_log) const;

  // U^(1/alpha): by repeated multiplication when 1/alpha is a small integer (alpha = 0.5,
  // 0.25, 0.1, ...), which is several times cheaper than exp(log(u)/alpha).
  double boosted_value(double g, double u, double& exact_log) const {
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

  // Marsaglia and Tsang's acceptance test of a candidate x (a normal) with v = (1 + c x)^3 > 0
  // and uniform u after the squeeze u < 1 - 0.0331 x^4 has failed, given log u and log v.
  bool accept_logs(double x, double v, double log_u, double log_v) const {
    return log_u < 0.5 * (x * x) + d_ * (1.0 - v + log_v);
  }
  bool accept_slow(double x, double v, double u) const {
    // The squeeze fails for about 8 % of tries at shape 1.1 (alpha = 0.1 boosted): two
    // inline logarithms (core/fast_math.hpp, within 1 ulp) instead of two libm calls.
    return accept_logs(x, v, fast::log(u), fast::log(v));
  }

  double marsaglia_tsang(Engine& engine) const {
    for (;;) {
      double x, v;
      do {
        x = standard_normal(engine);
        v = 1.0 + c_ * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = uniform_open01(engine);
      const double x2 = x * x;
      if (u < 1.0 - 0.0331 * x2 * x2) return d_ * v;  // the squeeze
      if (accept_slow(x, v, u)) return d_ * v;
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
