#include "estimators/kde_canonical.hpp"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>

#include "core/error.hpp"
#include "core/fast_math.hpp"
#include "core/stop_request.hpp"

namespace calbench {

namespace {

// GCC's vector extension: 4 doubles (one AVX2 register, two SSE2 ones) and 8 (one AVX-512).
using Lanes4 = double __attribute__((vector_size(32)));
using Lanes8 = double __attribute__((vector_size(64)));

// log B(p_j / b + 1) = sum_k lgamma(p_jk / b + 1) - lgamma(1 / b + K): the Dirichlet kernel's
// normaliser for each row j (sum_k p_jk = 1).
void log_normalisers(const Sample& s, double b, double* out) {
  const double total = std::lgamma(1.0 / b + static_cast<double>(s.classes));
  for (std::size_t j = 0; j < s.size; ++j) {
    const double* p = s.p.data() + j * s.classes;
    double sum = 0.0;
    for (std::size_t k = 0; k < s.classes; ++k) sum += std::lgamma(p[k] / b + 1.0);
    out[j] = sum - total;
  }
}

// g_j = sum_k p_jk log p_ik for every row j, p stored by class (K x n, by_class[k n + j]): the
// loop over j is innermost and vectorised, and each g_j adds its terms in the order
// k = 0, 1, ..., as a loop over k per j would, so every width gives the same bits. Compiled for
// SSE2 and AVX2 (GCC's target_clones, chosen at load time, as core/fast_math's bulk functions):
// four doubles per instruction instead of two; calbench_lib has -ffp-contract=off, so neither
// clone fuses a multiply-add.
__attribute__((target_clones("avx2", "default"))) void inner_products(const double* by_class,
                                                                      std::size_t n, std::size_t K,
                                                                      const double* log_pi,
                                                                      double* g) {
  // Blocks of 16 rows held in registers across the K classes (loaded and stored once, not K
  // times), written with GCC's vector extension: the plain loop over a 16-double array was
  // compiled to shuffles of single lanes.
  using Lanes = Lanes4;
  constexpr std::size_t lanes = 4, blocks = 4, width = lanes * blocks;
  std::size_t j0 = 0;
  for (; j0 + width <= n; j0 += width) {
    Lanes sum[blocks] = {};
    for (std::size_t k = 0; k < K; ++k) {
      const double* pk = by_class + k * n + j0;
      const double l = log_pi[k];
      for (std::size_t b = 0; b < blocks; ++b) {
        Lanes x;
        std::memcpy(&x, pk + b * lanes, sizeof x);
        sum[b] += x * l;
      }
    }
    std::memcpy(g + j0, sum, sizeof sum);
  }
  for (std::size_t j = j0; j < n; ++j) {
    double sum = 0.0;
    for (std::size_t k = 0; k < K; ++k) sum += by_class[k * n + j] * log_pi[k];
    g[j] = sum;
  }
}

// inner_products for four rows i at once (log_p: their K log probabilities each, g: four
// arrays of n): each p_jk is loaded once for the four, which quarters the reads of the K x n
// table (160 kB at n = 2000, K = 10: read from L2 once per row otherwise). Each g_j adds the
// same terms in the same order as inner_products: the same bits, for any vector width (Lanes:
// 4 doubles for SSE2 and AVX2, 8 for AVX-512).
template <typename Lanes>
[[gnu::always_inline]] inline void inner_products4_lanes(const double* by_class, std::size_t n,
                                                         std::size_t K,
                                                         const double* const (&log_p)[4],
                                                         double* const (&g)[4]) {
  constexpr std::size_t lanes = sizeof(Lanes) / sizeof(double), width = 2 * lanes, rows = 4;
  std::size_t j0 = 0;
  // Eight named accumulators (four rows x two blocks of four): as an array GCC kept them on
  // the stack.
  for (; j0 + width <= n; j0 += width) {
    Lanes a0 = {}, a1 = {}, b0 = {}, b1 = {}, c0 = {}, c1 = {}, d0 = {}, d1 = {};
    for (std::size_t k = 0; k < K; ++k) {
      const double* pk = by_class + k * n + j0;
      Lanes x0, x1;
      std::memcpy(&x0, pk, sizeof x0);
      std::memcpy(&x1, pk + lanes, sizeof x1);
      const double la = log_p[0][k], lb = log_p[1][k], lc = log_p[2][k], ld = log_p[3][k];
      a0 += x0 * la;
      a1 += x1 * la;
      b0 += x0 * lb;
      b1 += x1 * lb;
      c0 += x0 * lc;
      c1 += x1 * lc;
      d0 += x0 * ld;
      d1 += x1 * ld;
    }
    std::memcpy(g[0] + j0, &a0, sizeof a0);
    std::memcpy(g[0] + j0 + lanes, &a1, sizeof a1);
    std::memcpy(g[1] + j0, &b0, sizeof b0);
    std::memcpy(g[1] + j0 + lanes, &b1, sizeof b1);
    std::memcpy(g[2] + j0, &c0, sizeof c0);
    std::memcpy(g[2] + j0 + lanes, &c1, sizeof c1);
    std::memcpy(g[3] + j0, &d0, sizeof d0);
    std::memcpy(g[3] + j0 + lanes, &d1, sizeof d1);
  }
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = j0; j < n; ++j) {
      double total = 0.0;
      for (std::size_t k = 0; k < K; ++k) total += by_class[k * n + j] * log_p[r][k];
      g[r][j] = total;
    }
}

// Compiled for each instruction set, chosen in kernel_pass (KdeCanonicalIsa); calbench_lib has
// -ffp-contract=off, so no version fuses a multiply-add.
void inner_products4_sse2(const double* by_class, std::size_t n, std::size_t K,
                          const double* const (&log_p)[4], double* const (&g)[4]) {
  inner_products4_lanes<Lanes4>(by_class, n, K, log_p, g);
}

__attribute__((target("avx2"))) void inner_products4_avx2(const double* by_class, std::size_t n,
                                                          std::size_t K,
                                                          const double* const (&log_p)[4],
                                                          double* const (&g)[4]) {
  inner_products4_lanes<Lanes4>(by_class, n, K, log_p, g);
}

__attribute__((target("avx512f"))) void inner_products4_avx512(const double* by_class,
                                                               std::size_t n, std::size_t K,
                                                               const double* const (&log_p)[4],
                                                               double* const (&g)[4]) {
  inner_products4_lanes<Lanes8>(by_class, n, K, log_p, g);
}

// For each 4-bit mask of four lanes to keep, the permutation that moves the kept lanes to the
// front, for permutations that address a lane as Units consecutive elements of type T (doubles
// as pairs of 32-bit lanes: <int32_t, 2>; 32-bit integers as bytes: <int8_t, 4>). The entries
// past the kept lanes are 0: what they move is written past the count and overwritten.
template <typename T, std::size_t Units>
std::array<std::array<T, 4 * Units>, 16> compress_table() {
  std::array<std::array<T, 4 * Units>, 16> t{};
  for (std::size_t mask = 0; mask < 16; ++mask) {
    std::size_t at = 0;
    for (std::size_t lane = 0; lane < 4; ++lane)
      if (mask & (std::size_t{1} << lane)) {
        for (std::size_t u = 0; u < Units; ++u)
          t[mask][Units * at + u] = static_cast<T>(Units * lane + u);
        ++at;
      }
  }
  return t;
}

// The terms of v[begin, end) within `cutoff` of `top`, as v_j - top, written in order from
// out[0]; returns their count. out must have room for end - begin values (the vector versions
// store whole vectors, never past that). The AVX2 version compresses four at a time (a
// comparison's 4-bit mask picks a lane permutation from a table), the AVX-512 one eight at a
// time (vcompresspd); the scalar one is the reference (all give the same values in the same
// order).
std::size_t kept_terms_scalar(const double* v, std::size_t begin, std::size_t end, double top,
                              double cutoff, double* out) {
  std::size_t m = 0;
  for (std::size_t q = begin; q < end; ++q) {
    const double log_weight = v[q] - top;
    out[m] = log_weight;
    m += log_weight >= cutoff ? 1 : 0;
  }
  return m;
}

__attribute__((target("avx2"))) std::size_t kept_terms_avx2(const double* v, std::size_t begin,
                                                            std::size_t end, double top,
                                                            double cutoff, double* out) {
  // The 32-bit lanes that move the kept doubles to the front.
  static const auto table = compress_table<std::int32_t, 2>();
  const __m256d top4 = _mm256_set1_pd(top), cutoff4 = _mm256_set1_pd(cutoff);
  std::size_t m = 0, q = begin;
  for (; q + 4 <= end; q += 4) {
    const __m256d x = _mm256_sub_pd(_mm256_loadu_pd(v + q), top4);
    const int mask = _mm256_movemask_pd(_mm256_cmp_pd(x, cutoff4, _CMP_GE_OQ));
    const __m256i lanes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table[mask].data()));
    _mm256_storeu_pd(out + m,
                     _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(x), lanes)));
    m += static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(mask)));
  }
  return m + kept_terms_scalar(v, q, end, top, cutoff, out + m);
}

// kept_terms_avx2 eight at a time with AVX-512's compress.
__attribute__((target("avx512f"))) std::size_t kept_terms_avx512(const double* v, std::size_t begin,
                                                                 std::size_t end, double top,
                                                                 double cutoff, double* out) {
  const __m512d top8 = _mm512_set1_pd(top), cutoff8 = _mm512_set1_pd(cutoff);
  std::size_t m = 0, q = begin;
  for (; q + 8 <= end; q += 8) {
    const __m512d x = _mm512_sub_pd(_mm512_loadu_pd(v + q), top8);
    const __mmask8 mask = _mm512_cmp_pd_mask(x, cutoff8, _CMP_GE_OQ);
    _mm512_storeu_pd(out + m, _mm512_maskz_compress_pd(mask, x));
    m += static_cast<std::size_t>(__builtin_popcount(mask));
  }
  return m + kept_terms_scalar(v, q, end, top, cutoff, out + m);
}

// v_j = g_j / b - log B_j (as g_j * (1/b) - log_norm_j) for j in [begin, end), and the largest
// of them and `top`, in one pass with two vectors of running maxima (the maximum does not
// depend on the order: the same value as a sequential scan).
template <typename Lanes>
[[gnu::always_inline]] inline double log_weights_lanes(const double* g, const double* log_norm,
                                                       double inv_b, std::size_t begin,
                                                       std::size_t end, double* v, double top) {
  constexpr std::size_t lanes = sizeof(Lanes) / sizeof(double);
  Lanes top0, top1;
  for (std::size_t l = 0; l < lanes; ++l) top0[l] = top;
  top1 = top0;
  std::size_t j = begin;
  for (; j + 2 * lanes <= end; j += 2 * lanes) {
    Lanes g0, g1, n0, n1;
    std::memcpy(&g0, g + j, sizeof g0);
    std::memcpy(&g1, g + j + lanes, sizeof g1);
    std::memcpy(&n0, log_norm + j, sizeof n0);
    std::memcpy(&n1, log_norm + j + lanes, sizeof n1);
    const Lanes x0 = g0 * inv_b - n0, x1 = g1 * inv_b - n1;
    std::memcpy(v + j, &x0, sizeof x0);
    std::memcpy(v + j + lanes, &x1, sizeof x1);
    top0 = x0 > top0 ? x0 : top0;
    top1 = x1 > top1 ? x1 : top1;
  }
  top0 = top1 > top0 ? top1 : top0;
  for (std::size_t l = 0; l < lanes; ++l) top = std::max(top, top0[l]);
  for (; j < end; ++j) {
    v[j] = g[j] * inv_b - log_norm[j];
    top = std::max(top, v[j]);
  }
  return top;
}

// v_j for every row j, v_skip = -inf, and the largest v_j. The rows before and after `skip`
// are two passes (v_skip would be the largest). Compiled for SSE2, AVX2 and AVX-512: the same
// operations per row, so the same bits.
template <typename Lanes>
[[gnu::always_inline]] inline double log_weights_except(const double* g, const double* log_norm,
                                                        double inv_b, std::size_t n,
                                                        std::size_t skip, double* v) {
  constexpr double lowest = -std::numeric_limits<double>::infinity();
  const double top = log_weights_lanes<Lanes>(g, log_norm, inv_b, 0, skip, v, lowest);
  v[skip] = lowest;
  return log_weights_lanes<Lanes>(g, log_norm, inv_b, skip + 1, n, v, top);
}

double log_weights_sse2(const double* g, const double* log_norm, double inv_b, std::size_t n,
                        std::size_t skip, double* v) {
  return log_weights_except<Lanes4>(g, log_norm, inv_b, n, skip, v);
}

__attribute__((target("avx2"))) double log_weights_avx2(const double* g, const double* log_norm,
                                                        double inv_b, std::size_t n,
                                                        std::size_t skip, double* v) {
  return log_weights_except<Lanes4>(g, log_norm, inv_b, n, skip, v);
}

__attribute__((target("avx512f"))) double log_weights_avx512(const double* g,
                                                             const double* log_norm, double inv_b,
                                                             std::size_t n, std::size_t skip,
                                                             double* v) {
  return log_weights_except<Lanes8>(g, log_norm, inv_b, n, skip, v);
}

// Screening's distances (kernel_pass): d_q = g_q - centre_q for every row, d_own = -inf, and the
// largest and smallest d_q over q != own. Cloned for AVX2 as inner_products.
__attribute__((target_clones("avx2", "default"))) void distances(const double* g,
                                                                 const double* centre,
                                                                 std::size_t n, std::size_t own,
                                                                 double* d, double& lowest,
                                                                 double& highest) {
  for (std::size_t q = 0; q < n; ++q) d[q] = g[q] - centre[q];
  d[own] = d[own == 0 ? 1 : 0];  // a copy of another row's: the extremes over q != own
  using Lanes = Lanes4;
  Lanes low = {d[0], d[0], d[0], d[0]}, high = low;
  std::size_t q = 0;
  for (; q + 4 <= n; q += 4) {
    Lanes x;
    std::memcpy(&x, d + q, sizeof x);
    low = x < low ? x : low;
    high = x > high ? x : high;
  }
  lowest = std::min(std::min(low[0], low[1]), std::min(low[2], low[3]));
  highest = std::max(std::max(high[0], high[1]), std::max(high[2], high[3]));
  for (; q < n; ++q) {
    lowest = std::min(lowest, d[q]);
    highest = std::max(highest, d[q]);
  }
  d[own] = -std::numeric_limits<double>::infinity();
}

// The rows q (in order) with d_q >= threshold, written from out[0] (room for n); returns their
// count. The AVX2 and AVX-512 versions compress as kept_terms_avx2 and kept_terms_avx512 do;
// all give the same list.
std::size_t screened_from(const double* d, std::size_t begin, std::size_t end, double threshold,
                          std::uint32_t* out) {
  std::size_t m = 0;
  for (std::size_t q = begin; q < end; ++q) {
    out[m] = static_cast<std::uint32_t>(q);
    m += d[q] >= threshold ? 1 : 0;
  }
  return m;
}

// The rows of rows[0, count) with d_q >= threshold, kept in place and in order; returns their
// count (for a short list, where gathering from all n rows would cost more).
std::size_t screened_list(const double* d, double threshold, std::uint32_t* rows,
                          std::size_t count) {
  std::size_t m = 0;
  for (std::size_t c = 0; c < count; ++c) {
    const std::uint32_t q = rows[c];
    rows[m] = q;
    m += d[q] >= threshold ? 1 : 0;
  }
  return m;
}

std::size_t screened_scalar(const double* d, std::size_t n, double threshold, std::uint32_t* out) {
  return screened_from(d, 0, n, threshold, out);
}

__attribute__((target("avx2"))) std::size_t screened_avx2(const double* d, std::size_t n,
                                                          double threshold, std::uint32_t* out) {
  // The bytes that move the kept 32-bit indices to the front.
  static const auto table = compress_table<std::int8_t, 4>();
  const __m256d threshold4 = _mm256_set1_pd(threshold);
  const __m128i step = _mm_setr_epi32(0, 1, 2, 3);
  std::size_t m = 0, q = 0;
  for (; q + 4 <= n; q += 4) {
    const int mask =
        _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(d + q), threshold4, _CMP_GE_OQ));
    const __m128i rows = _mm_add_epi32(_mm_set1_epi32(static_cast<int>(q)), step);
    const __m128i shuffle = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table[mask].data()));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + m), _mm_shuffle_epi8(rows, shuffle));
    m += static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(mask)));
  }
  return m + screened_from(d, q, n, threshold, out + m);
}

__attribute__((target("avx512f,avx512vl"))) std::size_t screened_avx512(const double* d,
                                                                        std::size_t n,
                                                                        double threshold,
                                                                        std::uint32_t* out) {
  const __m512d threshold8 = _mm512_set1_pd(threshold);
  const __m256i step = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  std::size_t m = 0, q = 0;
  for (; q + 8 <= n; q += 8) {
    const __mmask8 mask = _mm512_cmp_pd_mask(_mm512_loadu_pd(d + q), threshold8, _CMP_GE_OQ);
    const __m256i rows = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(q)), step);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + m),
                        _mm256_maskz_compress_epi32(mask, rows));
    m += static_cast<std::size_t>(__builtin_popcount(mask));
  }
  return m + screened_from(d, q, n, threshold, out + m);
}

// x[0] + ... + x[count - 1] in four partial sums (x[r] to sum r mod 4, the last count mod 4 to
// the first), combined as (s0 + s1) + (s2 + s3): a fixed order. Cloned for AVX2 (one vector of
// four sums; GCC kept an array of four scalar). Not core/fast_math's fast::sum, which adds the
// last count mod 4 to sums 0, 1, 2 in turn: that order would move the last bits of every
// kde_canonical value (and its golden files).
__attribute__((target_clones("avx2", "default"))) double partial_sums(const double* x,
                                                                      std::size_t count) {
  using Lanes = Lanes4;
  Lanes sum = {0.0, 0.0, 0.0, 0.0};
  std::size_t r = 0;
  for (; r + 4 <= count; r += 4) {
    Lanes v;
    std::memcpy(&v, x + r, sizeof v);
    sum += v;
  }
  double first = sum[0];
  for (; r < count; ++r) first += x[r];
  return (first + sum[1]) + (sum[2] + sum[3]);
}

}  // namespace

const std::vector<double>& kde_canonical_bandwidth_grid() {
  static const std::vector<double> grid = [] {
    std::vector<double> g;
    for (int i = 0; i < 15; ++i) g.push_back(std::pow(10.0, -5.0 + 4.0 * i / 14.0));
    for (int i = 0; i < 5; ++i) g.push_back(0.2 + 0.2 * i);
    return g;
  }();
  return grid;
}

KdeCanonical::KdeCanonical(KdeCanonicalSpec spec) : spec_(spec) {
  if (spec_.power != 1 && spec_.power != 2)
    throw DomainError("kde_canonical power is " + std::to_string(spec_.power) +
                      ", but must be 1 or 2");
  if (spec_.bandwidth && (!(*spec_.bandwidth > 0.0) || !std::isfinite(*spec_.bandwidth)))
    throw DomainError("kde_canonical bandwidth is " + std::to_string(*spec_.bandwidth) +
                      ", but must be > 0 and finite");
}

std::optional<Quantity> KdeCanonical::target() const {
  if (spec_.power == 1) return Quantity::canonical_l1;
  if (spec_.squared) return std::nullopt;  // an estimate of canonical_l2 squared
  return Quantity::canonical_l2;
}

// One pass over the rows serves every candidate bandwidth: for row i the inner products
// g_j = sum_k p_jk log p_ik (j != i) are computed once, and for each bandwidth the row's
// leave-one-out log density and its error term are accumulated. The selected bandwidth's
// error sum is the estimate, so "loo" costs one O(n^2 K) pass, not two.
namespace {

struct PassResult {
  std::vector<double> log_likelihood, error;  // per bandwidth, summed over rows
};

// The vector code kernel_pass runs: the widest the processor has among those `isa` allows.
// Every choice gives the same values (tests/unit/test_kernel.cpp).
struct Kernels {
  decltype(&inner_products4_sse2) products4;
  decltype(&log_weights_sse2) log_weights;
  decltype(&kept_terms_scalar) kept_terms;
  decltype(&screened_scalar) screened;
};

Kernels kernels_for(KdeCanonicalIsa isa) {
  if (isa == KdeCanonicalIsa::widest && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512vl"))
    return {inner_products4_avx512, log_weights_avx512, kept_terms_avx512, screened_avx512};
  if (isa != KdeCanonicalIsa::sse2 && __builtin_cpu_supports("avx2"))
    return {inner_products4_avx2, log_weights_avx2, kept_terms_avx2, screened_avx2};
  return {inner_products4_sse2, log_weights_sse2, kept_terms_scalar, screened_scalar};
}

// Terms within e^cutoff of the row's largest are kept; the others add less than n e^-50
// (2e-22 n) of the largest term to sums that hold it, far below their resolution.
constexpr double cutoff = -50.0;

// The kept log weights of one row and bandwidth, relative to the row's largest (`top`), class by
// class in label order from weights[0]; kept_end[k] is the end of class k's run.
struct KeptTerms {
  double top;
  std::size_t count;
};

// From every row j != own (v: room for n values).
KeptTerms kept_from_all(const Kernels& kernels, const double* g, const double* log_norm,
                        double inv_b, std::size_t own, std::span<const std::size_t> class_begin,
                        double* v, double* weights, std::span<std::size_t> kept_end) {
  const std::size_t n = class_begin.back();
  const double top = kernels.log_weights(g, log_norm, inv_b, n, own, v);
  std::size_t m = 0;
  for (std::size_t k = 0; k + 1 < class_begin.size(); ++k) {
    m += kernels.kept_terms(v, class_begin[k], class_begin[k + 1], top, cutoff, weights + m);
    kept_end[k] = m;
  }
  return {top, m};
}

// From the candidate rows only (ascending, so in label order): the same top and the same kept
// terms as kept_from_all when the candidates hold every row within e^cutoff of the largest.
KeptTerms kept_from_candidates(const double* g, const double* log_norm, double inv_b,
                               std::span<const std::uint32_t> candidates,
                               std::span<const std::size_t> class_begin, double* v, double* weights,
                               std::span<std::size_t> kept_end) {
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const std::uint32_t q = candidates[c];
    v[c] = g[q] * inv_b - log_norm[q];
    top = v[c] > top ? v[c] : top;
  }
  std::size_t m = 0, k = 0;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    while (candidates[c] >= class_begin[k + 1]) kept_end[k++] = m;
    const double log_weight = v[c] - top;
    weights[m] = log_weight;
    m += log_weight >= cutoff ? 1 : 0;
  }
  while (k < kept_end.size()) kept_end[k++] = m;
  return {top, m};
}

// The kept terms of one row and bandwidth (log weights relative to the row's largest, class by
// class in label order, ends of each class's run in kept_end) summed into the per-class kernel
// sums and the row's contributions to the leave-one-out log-likelihood and the error.
void add_row(double top, std::size_t m, std::span<double> weights,
             std::span<const std::size_t> kept_end, const double* pi, double log_neighbours,
             int power, std::span<double> class_sums, double& log_likelihood, double& error) {
  const std::size_t K = class_sums.size();
  fast::exp_bulk_in_range(weights.data(), weights.data(), m);  // kept terms: in [-50, 0]
  double den = 0.0;
  for (std::size_t k = 0, r = 0; k < K; r = kept_end[k], ++k) {
    class_sums[k] = partial_sums(weights.data() + r, kept_end[k] - r);
    den += class_sums[k];
  }
  log_likelihood += top + std::log(den) - log_neighbours;
  double err = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    const double gap = std::abs(class_sums[k] / den - pi[k]);
    err += power == 1 ? gap : gap * gap;
  }
  error += err;
}

// kernel_pass's own scratch (EstimatorWorkspace::scratch).
struct KernelPassScratch {
  std::vector<double> log_p;        // n x K: log p, floored
  std::vector<double> log_norm;     // nb x n: the q-th row's log normaliser (label order), per b
  std::vector<double> inner;        // 4 x n: g_j for the current four rows, label order
  std::vector<double> log_weights;  // n: log kernel weights of the current row and bandwidth
  std::vector<double> class_sums;   // K: per-class kernel sums of the current row
};

PassResult kernel_pass(const Sample& s, std::span<const double> bandwidths, int power,
                       KdeCanonicalIsa isa, EstimatorWorkspace& workspace) {
  const std::size_t n = s.size, K = s.classes, nb = bandwidths.size();
  KernelPassScratch& w = workspace.scratch<KernelPassScratch>();
  // The rows j in label order (stable): each class's kernel sum is then one contiguous run.
  std::vector<std::uint32_t> order(n), position(n);
  std::vector<std::size_t> class_begin(K + 1, 0);
  for (std::size_t j = 0; j < n; ++j) ++class_begin[s.label[j] + 1];
  for (std::size_t k = 0; k < K; ++k) class_begin[k + 1] += class_begin[k];
  {
    std::vector<std::size_t> next(class_begin.begin(), class_begin.end() - 1);
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t q = next[s.label[j]]++;
      order[q] = static_cast<std::uint32_t>(j);
      position[j] = static_cast<std::uint32_t>(q);
    }
  }
  w.log_p.resize(n * K);
  for (std::size_t i = 0; i < n * K; ++i) w.log_p[i] = std::log(std::max(s.p[i], DBL_MIN));
  // Screening (see the row loop): h_q = sum_k p_qk log p_qk of the q-th row in label order, and
  // per bandwidth the largest h_q / b - log B_q, which does not depend on the row i.
  std::vector<double> centre(n);
  for (std::size_t q = 0; q < n; ++q) {
    const double* p = s.p.data() + order[q] * K;
    const double* log_p = w.log_p.data() + order[q] * K;
    double h = 0.0;
    for (std::size_t k = 0; k < K; ++k) h += p[k] * log_p[k];
    centre[q] = h;
  }
  std::vector<double> normalisers(n), spread_max(nb);
  w.log_norm.resize(n * nb);
  for (std::size_t t = 0; t < nb; ++t) {
    log_normalisers(s, bandwidths[t], normalisers.data());
    const double inv_b = 1.0 / bandwidths[t];
    double largest = -std::numeric_limits<double>::infinity();
    for (std::size_t q = 0; q < n; ++q) {
      w.log_norm[t * n + q] = normalisers[order[q]];
      largest = std::max(largest, centre[q] * inv_b - normalisers[order[q]]);
    }
    spread_max[t] = largest;
  }
  w.inner.resize(4 * n);
  w.log_weights.resize(n);
  w.class_sums.resize(K);
  PassResult out{std::vector<double>(nb, 0.0), std::vector<double>(nb, 0.0)};
  const double log_neighbours = std::log(static_cast<double>(n - 1));
  // p by class (K x n), rows in label order: the inner products run over j innermost.
  std::vector<double> by_class(n * K);
  for (std::size_t q = 0; q < n; ++q)
    for (std::size_t k = 0; k < K; ++k) by_class[k * n + q] = s.p[order[q] * K + k];
  std::vector<double> weights(n);  // the kept terms of the current row and bandwidth
  const Kernels kernels = kernels_for(isa);
  std::vector<std::size_t> kept_end(K);
  std::vector<double> distance(n), threshold(nb);
  std::vector<std::uint32_t> candidates(n), by_threshold(nb);
  bool screen_next = true;
  for (std::size_t i = 0; i < n; ++i) {
    // O(n K) work per row, O(n^2 K) in all (minutes at n = 10^5): a stop request (SIGINT,
    // Python's Ctrl-C) is honoured between rows, within a second (issue #28).
    throw_if_stop_requested();
    // The inner products of rows i to i + 3 together (inner_products4), of the last n mod 4
    // rows one by one.
    const std::size_t slot = i % 4;
    if (slot == 0 && i + 4 <= n) {
      const double* const log_p[4] = {&w.log_p[i * K], &w.log_p[(i + 1) * K], &w.log_p[(i + 2) * K],
                                      &w.log_p[(i + 3) * K]};
      double* const g4[4] = {w.inner.data(), w.inner.data() + n, w.inner.data() + 2 * n,
                             w.inner.data() + 3 * n};
      kernels.products4(by_class.data(), n, K, log_p, g4);
    } else if (i + 4 > n - n % 4 && i >= n - n % 4) {
      inner_products(by_class.data(), n, K, &w.log_p[i * K], w.inner.data() + slot * n);
    }
    const double* g = w.inner.data() + slot * n;
    const double* pi = s.p.data() + i * K;
    const std::size_t own = position[i];

    // Screening, which leaves every result's bits as they are: the log weight of row j is
    //   v_j = g_j / b - log B_j = d_j / b + (h_j / b - log B_j),  d_j = g_j - h_j (= -KL(p_j,
    //   p_i)),
    // and the second term is at most spread_max[t]. Any v_j is a lower bound of the row's
    // largest, so only rows with d_j / b + spread_max >= v_best - 50 can be kept; with 1 more
    // for rounding (errors about 1e-8 at the smallest b), that is d_j >= threshold. At small
    // bandwidths few rows pass (at b = 1e-5 only the rows next to p_i): the log weights are then
    // computed for those only, in the same label order, with the same top and the same kept
    // terms as the full pass. Where it left most rows in on the last row screened (a fixed wide
    // bandwidth), it is tried again only every 16th row: it changes the time, not the values.
    const bool screen = screen_next || i % 16 == 0;
    double lowest = std::numeric_limits<double>::infinity();  // no bandwidth screened
    if (screen) {
      double highest;
      distances(g, centre.data(), n, own, distance.data(), lowest, highest);
      const std::size_t best = static_cast<std::size_t>(
          std::find(distance.begin(), distance.end(), highest) - distance.begin());
      for (std::size_t t = 0; t < nb; ++t) {
        const double inv_b = 1.0 / bandwidths[t];
        const double known = g[best] * inv_b - w.log_norm[t * n + best];
        threshold[t] = (known + (cutoff - 1.0) - spread_max[t]) * bandwidths[t];
      }
    } else {
      std::fill(threshold.begin(), threshold.end(), -std::numeric_limits<double>::infinity());
    }
    // The lowest threshold first: each bandwidth's candidates are a subset of the previous'.
    for (std::size_t t = 0; t < nb; ++t) by_threshold[t] = static_cast<std::uint32_t>(t);
    std::sort(by_threshold.begin(), by_threshold.end(),
              [&](std::uint32_t a, std::uint32_t b) { return threshold[a] < threshold[b]; });
    std::size_t count = n;  // candidates; n: every row j != i (the list is not built)
    bool screened_out = false;
    for (const std::uint32_t t : by_threshold) {
      if (threshold[t] > lowest) {
        count = 4 * count > n
                    ? kernels.screened(distance.data(), n, threshold[t], candidates.data())
                    : screened_list(distance.data(), threshold[t], candidates.data(), count);
      }
      const double inv_b = 1.0 / bandwidths[t];
      const double* log_norm = &w.log_norm[t * n];
      // Most rows: the full vectorised pass; few: the candidates only.
      const bool few = 4 * count <= n;
      const KeptTerms kept =
          few ? kept_from_candidates(g, log_norm, inv_b, {candidates.data(), count}, class_begin,
                                     w.log_weights.data(), weights.data(), kept_end)
              : kept_from_all(kernels, g, log_norm, inv_b, own, class_begin, w.log_weights.data(),
                              weights.data(), kept_end);
      screened_out = screened_out || few;
      add_row(kept.top, kept.count, weights, kept_end, pi, log_neighbours, power, w.class_sums,
              out.log_likelihood[t], out.error[t]);
    }
    if (screen) screen_next = screened_out;
  }
  return out;
}

}  // namespace

double KdeCanonical::bandwidth(const Sample& s, EstimatorWorkspace& w) const {
  if (spec_.bandwidth) return *spec_.bandwidth;
  if (s.size < 2) return kde_canonical_bandwidth_grid().front();
  const auto& grid = kde_canonical_bandwidth_grid();
  const PassResult pass = kernel_pass(s, grid, spec_.power, spec_.isa, w);
  const auto best = std::max_element(pass.log_likelihood.begin(), pass.log_likelihood.end());
  return grid[static_cast<std::size_t>(best - pass.log_likelihood.begin())];
}

double KdeCanonical::estimate(const Sample& s, EstimatorWorkspace& w) const {
  if (s.size < 2) return 0.0;
  const std::span<const double> candidates =
      spec_.bandwidth ? std::span<const double>(&*spec_.bandwidth, 1)
                      : std::span<const double>(kde_canonical_bandwidth_grid());
  const PassResult pass = kernel_pass(s, candidates, spec_.power, spec_.isa, w);
  // max_element returns the first maximum: the smallest bandwidth on ties.
  const auto best = static_cast<std::size_t>(
      std::max_element(pass.log_likelihood.begin(), pass.log_likelihood.end()) -
      pass.log_likelihood.begin());
  const double mean = pass.error[best] / static_cast<double>(s.size);
  if (spec_.power == 1 || spec_.squared) return mean;
  return std::sqrt(mean);
}

}  // namespace calbench
