#pragma once
// The posterior of c given p = h(c) for a `dirichlet` generator: the preimages of p under the
// miscalibration map, their weights, r(p) = E[c | p] and the density of p (docs/truth.md).
//
// In additive log-ratio coordinates x = alr(c) = (log(c_k/c_K))_{k<K} the Dirichlet density is
// prod_k c_k^(alpha_k) / B(alpha) (the Jacobian of alr^-1 is prod_k c_k), and the density of
// y = alr(p) is the sum over the preimages c_i of p of
//   omega_i = prod_k c_ik^(alpha_k) / B(alpha) / |det dy/dx (c_i)|.
// Their sum Phi(p) = q(p) prod_k p_k (q the density of p over (p_1, .., p_{K-1})) and
// r(p) = sum_i omega_i c_i / Phi(p).
//
// Log-affine maps (every map but top_label; miscalibration.hpp's log_affine_form): y = D l + d
// with l = log c, so the preimages are l = l0 + kappa v, l0 = D^+ (y - d) and v spanning
// ker D, at the roots of F(kappa) = logsumexp(l0 + kappa v) = 0. F is convex (F'' is the
// variance of v under softmax(l0 + kappa v)): one root when v has one sign, else none or two
// on either side of F's minimum (Newton from the outer side converges monotonically to each).
// dy/dx = D' - (D 1) c'^T (D' the first K - 1 columns of D, c' = c_{1..K-1}), whose
// determinant is affine in c' (matrix determinant lemma): det = beta_0 + sum_j beta_j c_j.
// top_label: one candidate per class j with p_j > 1/K, c_j = m = g^-1(p_j) and
// c_i = p_i (1 - m)/(1 - p_j), valid when m is its largest component, with
// omega_j = Dir(c; alpha) ((1 - m)/(1 - p_j))^(K-2) / g'(m) * prod_k p_k (the Jacobian of
// (m, v) -> (g(m), v) with c_{-j} = (1 - m) v).
#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "generators/dirichlet.hpp"

namespace calbench {

class MapPreimages {
 public:
  enum class Fibres {
    finite,     // every p has finitely many preimages: posterior() applies
    constant,   // p does not depend on c (affine_logit with W's columns in span(1)): r = E[c]
    continuum,  // preimage sets of positive dimension (a rank-deficient affine_logit): no r(p)
    segment,    // quantize: m = max c over a segment of its cell, r(p) by a truncated Beta
  };

  explicit MapPreimages(const DirichletSpec& spec);

  Fibres fibres() const { return fibres_; }
  // True when h is one-to-one (is_injective), so r(p) = c.
  bool injective() const { return injective_; }
  // E[c] = alpha / alpha_0 (r(p) of a constant map).
  const std::vector<double>& prior_mean() const { return mean_; }
  // det(d alr(p) / d alr(c)) = b[0] + sum_j b[j + 1] c_j for a log-affine map with
  // one-dimensional fibres (empty otherwise): zero on the fold of a two-preimage map.
  std::span<const double> fold_coefficients() const { return beta_; }

  // For p given by its logarithms (exact where p_k underflows), writes r(p) = E[c | p] into r
  // and returns Phi(p); 0 (and r = p) when p has no preimage. `scratch` holds 3K doubles.
  // Requires fibres() == finite. With `structure`, also writes a code naming which preimages
  // exist at p (top_label: a bit per valid candidate; log-affine: the number of roots): Phi
  // is smooth where it stays the same, and quadrature splits where it changes. With `work`,
  // adds the evaluation's cost to it: its evaluations of F (log-affine: bracketing, TOMS 748
  // and Newton steps, K exponentials each) or 1 (top_label), so that a caller can bound its
  // total work by counts (one evaluation near a vertex may take hundreds of steps).
  double posterior(std::span<const double> log_p, std::span<double> r, std::span<double> scratch,
                   unsigned* structure = nullptr, std::size_t* work = nullptr) const;

 private:
  double log_affine(std::span<const double> log_p, std::span<double> r, std::span<double> scratch,
                    unsigned* structure, std::size_t* work) const;
  double top_label(std::span<const double> log_p, std::span<double> r, std::span<double> scratch,
                   unsigned* structure) const;

 public:
  // quantize (Fibres::segment): the preimages of p are c = (m at the top class t, (1 - m) w)
  // with w = p_-t/(1 - l) fixed and m over the level l's cell where m >= max w (1 - m); along
  // them the Dirichlet density times the Jacobian (1 - m)^(K-2) is proportional to
  // m^(alpha_t - 1) (1 - m)^(alpha_0 - alpha_t - 1), so m | p is Beta(alpha_t, alpha_0 - alpha_t)
  // truncated to [max(lo, w_max/(1 + w_max)), hi], and r = (E[m | p], (1 - E[m | p]) w).
  void quantize_posterior(std::span<const double> log_p, std::span<double> r) const;

 private:
  std::size_t levels_ = 0;                   // quantize's L; 0 for other maps
  std::vector<QuantizeCell> cell_of_level_;  // quantize: the cell of level i at i (if any)
  // quantize: for class t and level i, at t * L + i, the upper tails P(X > lo), P(X > hi),
  // P(X' > lo), P(X' > hi) of X ~ Beta(alpha_t, alpha_0 - alpha_t), X' ~ Beta(alpha_t + 1, ..)
  // at the cell's ends, so that only draws whose bound w_max/(1 + w_max) cuts the cell compute
  // incomplete beta functions.
  std::vector<std::array<double, 4>> cell_tails_;

  std::size_t K_;
  std::vector<double> alpha_, mean_;
  double log_beta_ = 0.0;  // log B(alpha)
  Fibres fibres_ = Fibres::finite;
  bool injective_ = true;
  bool top_label_ = false;
  double gamma_ = 1.0;
  // Log-affine: D^+ (K x (K-1), row-major), d, v, whether v has one sign, and det's beta.
  std::vector<double> pinv_, d_, v_, beta_;
  bool one_signed_ = true;
};

// r(p) = E[c | p] for a draw (c, p) of a dirichlet generator: c when the map is injective,
// else the posterior mean (c itself where rounding leaves p without a found preimage).
// Throws DomainError for a map with continuous fibres (no posterior formula).
void posterior_mean(const MapPreimages& preimages, std::span<const double> c,
                    std::span<const double> log_p, std::span<double> r, std::span<double> scratch);

}  // namespace calbench
