#pragma once
// Standard normal and standard exponential variates by the ziggurat method (Marsaglia & Tsang
// 2000, "The ziggurat method for generating random variables", J. Stat. Softw. 5(8)), on
// Boost.Random's tables and with Boost.Random's tests: the 128 layers of
// boost/random/normal_distribution.hpp and the 256 of exponential_distribution.hpp, the same
// bounds on each wedge (a tangent and a chord, so that the density itself is evaluated only
// between them) and the same tails. Only how one engine output becomes a layer and a uniform
// differs, so the variates are exact draws of the same distributions but not the same numbers
// as Boost's for a given stream.
//
// Why not boost::random::normal_distribution and exponential_distribution themselves: they
// pull their words from an engine, and the gamma sampler's hot loop hands them words drawn in
// bulk from vector lanes (core/rng.hpp's EngineLanes; the overloads taking `bits` below),
// which cut the cost of the words by two thirds. Boost's generic split of a word
// (detail::generate_int_float_pair) also converts a 56-bit unsigned integer to double, a
// branchy sequence before AVX-512; here the layer comes from the low 8 bits and the uniform
// from the top 53 (disjoint bits, so independent), converted as a signed integer in one
// instruction. In a tight loop on this project's machine: normal 2.64 ns against Boost's 2.78,
// exponential 1.87 against 1.88 (docs/performance.md, session 4).
#include <bit>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <cstdint>

#include "core/rng.hpp"

namespace calbench {

namespace ziggurat_detail {

// The top 53 bits of an engine output as a double in [0, 1): k 2^-53, k < 2^53.
inline double top53(std::uint64_t bits) {
  return static_cast<double>(static_cast<std::int64_t>(bits >> 11)) * 0x1.0p-53;
}

double exponential_slow(Engine& engine, std::uint64_t bits);
double normal_slow(Engine& engine, std::uint64_t bits);

}  // namespace ziggurat_detail

// Exp(1) from one engine output `bits` (and more from the engine in the ~1 % of cases the
// fast path, the point lying inside its layer's rectangle, does not take).
inline double standard_exponential(std::uint64_t bits, Engine& engine) {
  const double* x = boost::random::detail::exponential_table<double>::table_x;
  const std::uint64_t i = bits & 0xff;
  const double v = ziggurat_detail::top53(bits) * x[i];
  if (v < x[i + 1]) return v;
  return ziggurat_detail::exponential_slow(engine, bits);
}
inline double standard_exponential(Engine& engine) {
  return standard_exponential(engine(), engine);
}

// N(0, 1) from one engine output `bits` (and more from the engine where the fast path does
// not decide, ~1 %). Bit 0 gives the sign, bits 1-7 the layer.
inline double standard_normal(std::uint64_t bits, Engine& engine) {
  const double* x = boost::random::detail::normal_table<double>::table_x;
  const std::uint64_t i = (bits >> 1) & 0x7f;
  const double v = ziggurat_detail::top53(bits) * x[i];
  // The sign without a branch (it would be mispredicted half the time): bit 0 clear flips it.
  if (v < x[i + 1]) return std::bit_cast<double>(std::bit_cast<std::uint64_t>(v) ^ (~bits << 63));
  return ziggurat_detail::normal_slow(engine, bits);
}
inline double standard_normal(Engine& engine) {
  return standard_normal(engine(), engine);
}

}  // namespace calbench
