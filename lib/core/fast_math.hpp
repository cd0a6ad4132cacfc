#pragma once
// Natural logarithm and exponential in loops that the compiler vectorises.
//
// Why not std::log / std::exp: the sampler takes one logarithm and one exponential per vector
// component (K = 100: a million of each per 10,000-vector replicate), and glibc's scalar calls
// cost 3-4.5 ns each plus ~1 ns of wrapper, a third of the replicate loop
// (docs/performance.md). glibc's vector versions (libmvec) are only called under -ffast-math,
// which the project does not use because it would change results between compilers and
// machines. The functions below are plain double arithmetic (+, -, *, / and integer bit
// operations) that GCC turns into SSE2 code at -O3 without any -march flag, two lanes at a
// time, 1-2 ns per element.
//
// Exactness across machines: every operation is an IEEE-754 double operation with round to
// nearest, and CMakeLists.txt builds with -ffp-contract=off, so no multiply-add is fused even
// where the CPU has FMA (-DCALBENCH_NATIVE=ON): the results are the same bits on every x86-64
// machine, vectorised or not. They are not the bits of glibc (whose log and exp are correctly
// rounded in almost all cases); the maximum errors are stated below and tested in
// tests/unit/test_core.cpp against std::log / std::exp.
//
// log: the algorithm of fdlibm's e_log.c (Sun Microsystems, 1993; also musl's log.c before
// 2018): x = 2^k m with m in [sqrt(2)/2, sqrt(2)), f = m - 1, s = f / (2 + f),
// log(m) = f - f^2/2 + s (f^2/2 + R(s^2)), R a degree-7 minimax polynomial in s^2 (error below
// 2^-58.45), log x = k ln2_hi + (log(m) + k ln2_lo). fdlibm states an error below 1 ulp.
// Fast path for x normal, positive and finite; anything else (0, subnormals, negative, inf,
// NaN) is recomputed by std::log after the loop, so the bulk function is total.
//
// exp: the algorithm of fdlibm's e_exp.c: x = k ln2 + r, k = round(x / ln2), |r| <= ln2/2
// (Cody-Waite with a 32-bit ln2_hi so that k ln2_hi is exact), exp(r) = 1 + r + r c / (2 - c)
// with c = r - r^2 P(r^2), P of degree 5 (error below 2^-59), times 2^k built in the exponent
// bits. fdlibm states an error below 1 ulp. Fast path for -708 <= x <= 709 (2^k normal);
// anything else, NaN included, is recomputed by std::exp. exp(0) is exactly 1.
//
// Both bulk functions are compiled for SSE2 and for AVX2 (GCC's target_clones, chosen at
// load time): AVX2 does four lanes at once, 1 ns per element against 2 ns. The two give the
// same bits, because they execute the same IEEE operations in the same order (no FMA: the
// avx2 target does not enable it and contraction is off); tests/unit/test_core.cpp checks the bulk
// results against the scalar inline functions bit for bit.
//
// Measured maximum errors (tests/unit/test_core.cpp, dense grids and 10^6 random points against
// glibc, itself correctly rounded there): log 1 ulp, exp 1 ulp.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace calbench::fast {

namespace detail {
inline constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kLn2Hi
}  // namespace detail

// log x for x normal, positive and finite (0x1p-1022 <= x <= DBL_MAX); other x give garbage.
inline double log_normal(double x) {
  // fdlibm's minimax coefficients Lg1..Lg7 for R(z) ~ (log((1+s)/(1-s)) - 2s)/s - ..., z = s^2.
  constexpr double Lg1 = 6.666666666666735130e-01;
  constexpr double Lg2 = 3.999999999940941908e-01;
  constexpr double Lg3 = 2.857142874366239149e-01;
  constexpr double Lg4 = 2.222219843214978396e-01;
  constexpr double Lg5 = 1.818357216161805012e-01;
  constexpr double Lg6 = 1.531383769920937332e-01;
  constexpr double Lg7 = 1.479819860511658591e-01;
  // Shift the bits so that the exponent field of u counts from m = sqrt(2)/2 rather than 1:
  // k = exponent of u, m = x / 2^k in [0x3fe6a09e00000000, ...) i.e. [~0.7071, ~1.4142).
  // Only unsigned adds, masks and logical shifts: all exist in SSE2 for 64-bit lanes.
  constexpr std::uint64_t kOffset = (0x3ff00000ULL - 0x3fe6a09eULL) << 32;
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x) + kOffset;
  const std::uint64_t e = u >> 52;  // k + 1023, 1 .. 2047
  const double m = std::bit_cast<double>((u & 0x000fffffffffffffULL) + (0x3fe6a09eULL << 32));
  // (double)e without a 64-bit integer conversion (SSE2 has none): 2^52 + e has e in its
  // mantissa.
  const double dk = (std::bit_cast<double>(e | 0x4330000000000000ULL) - 0x1p52) - 1023.0;
  const double f = m - 1.0;
  const double hfsq = 0.5 * f * f;
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  const double R = t2 + t1;
  return dk * detail::kLn2Hi - ((hfsq - (s * (hfsq + R) + dk * detail::kLn2Lo)) - f);
}

// exp x for -708 <= x <= 709; other x give garbage.
inline double exp_in_range(double x) {
  // fdlibm's e_exp.c coefficients: R(z) ~ r (exp(r) + 1) / (exp(r) - 1) - 2 on |r| <= ln2/2,
  // a degree-5 minimax polynomial in z = r^2 with error below 2^-59.
  constexpr double P1 = 1.66666666666666019037e-01;
  constexpr double P2 = -2.77777777770155933842e-03;
  constexpr double P3 = 6.61375632143793436117e-05;
  constexpr double P4 = -1.65339022054652515390e-06;
  constexpr double P5 = 4.13813679705723846039e-08;
  constexpr double kInvLn2 = 1.44269504088896338700e+00;
  constexpr double kShifter = 0x1.8p52;  // adding it rounds to an integer, kept in the low bits
  const double t = x * kInvLn2 + kShifter;
  const double kd = t - kShifter;  // round(x / ln2), exactly
  const std::uint64_t k_biased =
      std::bit_cast<std::uint64_t>(t) - std::bit_cast<std::uint64_t>(kShifter) + 1023;
  const double scale = std::bit_cast<double>(k_biased << 52);  // 2^k, normal for |x| <= 709
  const double hi = x - kd * detail::kLn2Hi;                   // exact
  const double lo = kd * detail::kLn2Lo;
  const double r = hi - lo;
  const double z = r * r;
  const double c = r - z * (P1 + z * (P2 + z * (P3 + z * (P4 + z * P5))));
  // exp(r) = 1 + 2r / (R - r) = 1 + r + r c / (2 - c), summed small to large as fdlibm does.
  return (1.0 - ((lo - (r * c) / (2.0 - c)) - hi)) * scale;
}

// out[i] = log(in[i]) for i < n, the same bits as log(in[i]) below; in and out may be the
// same array. Compiled twice (fast_math.cpp): SSE2 and AVX2, picked at run time.
void log_bulk(const double* in, double* out, std::size_t n);

// out[i] = exp(in[i]) for i < n, the same bits as exp(in[i]) below; in and out may be the
// same array.
void exp_bulk(const double* in, double* out, std::size_t n);

// exp_bulk for inputs the caller knows to lie in [-708, 709] (exp_in_range's domain): no test
// pass and no fallback, the same bits. Also compiled for AVX-512 (about 10 % faster per element
// than AVX2: the division in exp_in_range bounds both).
void exp_bulk_in_range(const double* in, double* out, std::size_t n);

// x[0] + ... + x[n - 1] with four accumulators (x[k] goes to accumulator k mod 4, and they
// are combined as (a0 + a1) + (a2 + a3)): a fixed order, so the same bits everywhere, but not
// the left-to-right sum's. A left-to-right sum is a chain of dependent additions, 3-4 cycles
// each, which made the samplers' sums over K = 100 classes the slowest of their passes.
inline double sum(const double* x, std::size_t n) {
  double a[4] = {0.0, 0.0, 0.0, 0.0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t j = 0; j < 4; ++j) a[j] += x[i + j];
  for (std::size_t j = 0; i < n; ++i, ++j) a[j] += x[i];
  return (a[0] + a[1]) + (a[2] + a[3]);
}

// The largest of x[0 .. n), n >= 1, for numbers (no NaN), with four running maxima: the same
// value as std::max_element's (the maximum does not depend on the order), without its chain
// of dependent comparisons.
inline double max(const double* x, std::size_t n) {
  double m[4] = {x[0], x[0], x[0], x[0]};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t j = 0; j < 4; ++j) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
  for (; i < n; ++i) m[0] = x[i] > m[0] ? x[i] : m[0];
  const double a = m[0] > m[1] ? m[0] : m[1];
  const double b = m[2] > m[3] ? m[2] : m[3];
  return a > b ? a : b;
}

// Scalar versions with the same results as the bulk ones, for loops that cannot be batched.
inline double log(double x) {
  return x >= 0x1p-1022 && x <= 0x1.fffffffffffffp1023 ? log_normal(x) : std::log(x);
}
inline double exp(double x) {
  return x >= -708.0 && x <= 709.0 ? exp_in_range(x) : std::exp(x);
}

}  // namespace calbench::fast
