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
  using Lanes = double __attribute__((vector_size(32)));  // 4 doubles (2 SSE2 registers)
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
// same terms in the same order as inner_products: the same bits.
__attribute__((target_clones("avx2", "default"))) void inner_products4(
    const double* by_class, std::size_t n, std::size_t K, const double* const (&log_p)[4],
    double* const (&g)[4]) {
  using Lanes = double __attribute__((vector_size(32)));
  constexpr std::size_t lanes = 4, width = 2 * lanes, rows = 4;
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

// The terms of v[begin, end) within `cutoff` of `top`, as v_j - top, written in order from
// out[0]; returns their count. out must have room for end - begin + 4 values. The AVX2 version
// compresses four at a time (a comparison's 4-bit mask picks a lane permutation from a table);
// the scalar one is the reference (both give the same values in the same order).
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
  // For each 4-bit mask, the 32-bit lanes that move the kept doubles to the front.
  static const auto table = [] {
    std::array<std::array<std::int32_t, 8>, 16> t{};
    for (int mask = 0; mask < 16; ++mask) {
      int at = 0;
      for (int lane = 0; lane < 4; ++lane)
        if (mask & (1 << lane)) {
          t[mask][2 * at] = 2 * lane;
          t[mask][2 * at + 1] = 2 * lane + 1;
          ++at;
        }
    }
    return t;
  }();
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

// v_j = g_j / b - log B_j (as g_j * (1/b) - log_norm_j) for every row, v_skip set to -inf, and
// the largest v_j (the maximum does not depend on the order: the same value as a sequential
// scan).
// Cloned for AVX2 as inner_products.
__attribute__((target_clones("avx2", "default"))) double log_weights(const double* g,
                                                                     const double* log_norm,
                                                                     double inv_b, std::size_t n,
                                                                     std::size_t skip, double* v) {
  for (std::size_t j = 0; j < n; ++j) v[j] = g[j] * inv_b - log_norm[j];
  v[skip] = -std::numeric_limits<double>::infinity();
  // Two vectors of running maxima (GCC's vector extension: std::max over an array stayed
  // scalar).
  using Lanes = double __attribute__((vector_size(32)));
  constexpr double lowest = -std::numeric_limits<double>::infinity();
  Lanes top0 = {lowest, lowest, lowest, lowest}, top1 = top0;
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    Lanes x0, x1;
    std::memcpy(&x0, v + j, sizeof x0);
    std::memcpy(&x1, v + j + 4, sizeof x1);
    top0 = x0 > top0 ? x0 : top0;
    top1 = x1 > top1 ? x1 : top1;
  }
  top0 = top1 > top0 ? top1 : top0;
  double top = std::max(std::max(top0[0], top0[1]), std::max(top0[2], top0[3]));
  for (; j < n; ++j) top = std::max(top, v[j]);
  return top;
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

PassResult kernel_pass(const Sample& s, std::span<const double> bandwidths, int power,
                       EstimatorWorkspace& w) {
  const std::size_t n = s.size, K = s.classes, nb = bandwidths.size();
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
  w.values.resize(n * K);  // log p, floored
  for (std::size_t i = 0; i < n * K; ++i) w.values[i] = std::log(std::max(s.p[i], DBL_MIN));
  std::vector<double> normalisers(n);
  w.sorted.resize(n * nb);  // log normaliser of the q-th row in label order under bandwidth t
  for (std::size_t t = 0; t < nb; ++t) {
    log_normalisers(s, bandwidths[t], normalisers.data());
    for (std::size_t q = 0; q < n; ++q) w.sorted[t * n + q] = normalisers[order[q]];
  }
  w.scores.resize(4 * n);  // g_j for the current four rows, label order
  w.bin_score.resize(n);   // log kernel weights of the current row and bandwidth
  w.bin_hits.resize(K);    // per-class kernel sums of the current row
  PassResult out{std::vector<double>(nb, 0.0), std::vector<double>(nb, 0.0)};
  const double log_neighbours = std::log(static_cast<double>(n - 1));
  // p by class (K x n), rows in label order: the inner products run over j innermost.
  std::vector<double> by_class(n * K);
  for (std::size_t q = 0; q < n; ++q)
    for (std::size_t k = 0; k < K; ++k) by_class[k * n + q] = s.p[order[q] * K + k];
  std::vector<double> weights(n + 4);  // kept_terms writes up to 4 past its count
  const auto kept_terms = __builtin_cpu_supports("avx2") ? kept_terms_avx2 : kept_terms_scalar;
  std::vector<std::size_t> kept_end(K);
  for (std::size_t i = 0; i < n; ++i) {
    // O(n K) work per row, O(n^2 K) in all (minutes at n = 10^5): a stop request (SIGINT,
    // Python's Ctrl-C) is honoured between rows, within a second (issue #28).
    throw_if_stop_requested();
    // The inner products of rows i to i + 3 together (inner_products4), of the last n mod 4
    // rows one by one.
    const std::size_t slot = i % 4;
    if (slot == 0 && i + 4 <= n) {
      const double* const log_p[4] = {&w.values[i * K], &w.values[(i + 1) * K],
                                      &w.values[(i + 2) * K], &w.values[(i + 3) * K]};
      double* const g4[4] = {w.scores.data(), w.scores.data() + n, w.scores.data() + 2 * n,
                             w.scores.data() + 3 * n};
      inner_products4(by_class.data(), n, K, log_p, g4);
    } else if (i + 4 > n - n % 4 && i >= n - n % 4) {
      inner_products(by_class.data(), n, K, &w.values[i * K], w.scores.data() + slot * n);
    }
    const double* g = w.scores.data() + slot * n;
    const double* pi = s.p.data() + i * K;
    const std::size_t own = position[i];
    for (std::size_t t = 0; t < nb; ++t) {
      const double inv_b = 1.0 / bandwidths[t];
      const double* log_norm = &w.sorted[t * n];
      double* v = w.bin_score.data();
      const double top = log_weights(g, log_norm, inv_b, n, own, v);
      v[own] = -std::numeric_limits<double>::infinity();
      // The terms within e^-50 of the row's largest, gathered class by class; the others add
      // less than n e^-50 (2e-22 n) of the largest term to sums that hold it, far below their
      // resolution.
      std::size_t m = 0;
      for (std::size_t k = 0; k < K; ++k) {
        m += kept_terms(v, class_begin[k], class_begin[k + 1], top, -50.0, weights.data() + m);
        kept_end[k] = m;
      }
      fast::exp_bulk(weights.data(), weights.data(), m);
      double den = 0.0;
      std::size_t r = 0;
      for (std::size_t k = 0; k < K; ++k) {
        double partial[4] = {0.0, 0.0, 0.0, 0.0};
        for (; r + 4 <= kept_end[k]; r += 4)
          for (std::size_t l = 0; l < 4; ++l) partial[l] += weights[r + l];
        for (; r < kept_end[k]; ++r) partial[0] += weights[r];
        w.bin_hits[k] = (partial[0] + partial[1]) + (partial[2] + partial[3]);
        den += w.bin_hits[k];
      }
      out.log_likelihood[t] += top + std::log(den) - log_neighbours;
      double err = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        const double gap = std::abs(w.bin_hits[k] / den - pi[k]);
        err += power == 1 ? gap : gap * gap;
      }
      out.error[t] += err;
    }
  }
  return out;
}

}  // namespace

double KdeCanonical::bandwidth(const Sample& s, EstimatorWorkspace& w) const {
  if (spec_.bandwidth) return *spec_.bandwidth;
  if (s.size < 2) return kde_canonical_bandwidth_grid().front();
  const auto& grid = kde_canonical_bandwidth_grid();
  const PassResult pass = kernel_pass(s, grid, spec_.power, w);
  const auto best = std::max_element(pass.log_likelihood.begin(), pass.log_likelihood.end());
  return grid[static_cast<std::size_t>(best - pass.log_likelihood.begin())];
}

double KdeCanonical::estimate(const Sample& s, EstimatorWorkspace& w) const {
  if (s.size < 2) return 0.0;
  const std::span<const double> candidates =
      spec_.bandwidth ? std::span<const double>(&*spec_.bandwidth, 1)
                      : std::span<const double>(kde_canonical_bandwidth_grid());
  const PassResult pass = kernel_pass(s, candidates, spec_.power, w);
  // max_element returns the first maximum: the smallest bandwidth on ties.
  const auto best = static_cast<std::size_t>(
      std::max_element(pass.log_likelihood.begin(), pass.log_likelihood.end()) -
      pass.log_likelihood.begin());
  const double mean = pass.error[best] / static_cast<double>(s.size);
  if (spec_.power == 1 || spec_.squared) return mean;
  return std::sqrt(mean);
}

}  // namespace calbench
