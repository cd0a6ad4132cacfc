#include "estimators/kde_canonical.hpp"

#include <algorithm>
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

// v_j = g_j / b - log B_j (as g_j * (1/b) - log_norm_j) for every row, and the largest v_j over
// j != skip (the maximum does not depend on the order: the same value as a sequential scan).
// Cloned for AVX2 as inner_products.
__attribute__((target_clones("avx2", "default"))) double log_weights(const double* g,
                                                                     const double* log_norm,
                                                                     double inv_b, std::size_t n,
                                                                     std::size_t skip, double* v) {
  for (std::size_t j = 0; j < n; ++j) v[j] = g[j] * inv_b - log_norm[j];
  const double own = v[skip];
  v[skip] = -std::numeric_limits<double>::infinity();
  constexpr std::size_t lanes = 8;
  double top[lanes];
  std::fill_n(top, lanes, -std::numeric_limits<double>::infinity());
  std::size_t j = 0;
  for (; j + lanes <= n; j += lanes)
    for (std::size_t l = 0; l < lanes; ++l) top[l] = std::max(top[l], v[j + l]);
  for (; j < n; ++j) top[0] = std::max(top[0], v[j]);
  v[skip] = own;
  return *std::max_element(top, top + lanes);
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
  w.values.resize(n * K);  // log p, floored
  for (std::size_t i = 0; i < n * K; ++i) w.values[i] = std::log(std::max(s.p[i], DBL_MIN));
  w.sorted.resize(n * nb);  // log normaliser of row j under bandwidth t, at t * n + j
  for (std::size_t t = 0; t < nb; ++t) log_normalisers(s, bandwidths[t], &w.sorted[t * n]);
  w.scores.resize(n);     // g_j for the current row
  w.bin_score.resize(n);  // log kernel weights of the current row and bandwidth
  w.bin_hits.resize(K);   // per-class kernel sums of the current row
  PassResult out{std::vector<double>(nb, 0.0), std::vector<double>(nb, 0.0)};
  const double log_neighbours = std::log(static_cast<double>(n - 1));
  // p by class (K x n): the inner products below then run over j in the innermost loop, which
  // the compiler vectorises, adding each g_j's terms in the same order (k = 0, 1, ...) as a
  // loop over k per j would: the same bits. Allocated per call (n K doubles), which is small
  // against the O(n^2 K) pass.
  std::vector<double> by_class(n * K);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t k = 0; k < K; ++k) by_class[k * n + j] = s.p[j * K + k];
  std::vector<double> weights(n);
  std::vector<std::uint32_t> kept(n);
  for (std::size_t i = 0; i < n; ++i) {
    // O(n K) work per row, O(n^2 K) in all (minutes at n = 10^5): a stop request (SIGINT,
    // Python's Ctrl-C) is honoured between rows, within a second (issue #28).
    throw_if_stop_requested();
    const double* log_pi = &w.values[i * K];
    double* g = w.scores.data();
    inner_products(by_class.data(), n, K, log_pi, g);
    const double* pi = s.p.data() + i * K;
    for (std::size_t t = 0; t < nb; ++t) {
      const double inv_b = 1.0 / bandwidths[t];
      const double* log_norm = &w.sorted[t * n];
      double* v = w.bin_score.data();
      const double top = log_weights(g, log_norm, inv_b, n, i, v);
      std::fill(w.bin_hits.begin(), w.bin_hits.end(), 0.0);
      // The exponentials in bulk (core/fast_math: vectorised, within 1 ulp of std::exp) of the
      // terms kept, gathered in row order: the row's own term and those below -746 (where exp
      // underflows to exactly 0) are left out, which at small bandwidths is almost every row.
      std::size_t m = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const double log_weight = v[j] - top;
        kept[m] = static_cast<std::uint32_t>(j);
        weights[m] = log_weight;
        m += (j != i && !(log_weight < -746.0)) ? 1 : 0;
      }
      fast::exp_bulk(weights.data(), weights.data(), m);
      double den = 0.0;
      double* hits = w.bin_hits.data();
      const std::uint32_t* label = s.label.data();
      for (std::size_t r = 0; r < m; ++r) {
        den += weights[r];
        hits[label[kept[r]]] += weights[r];
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
