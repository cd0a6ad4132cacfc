#pragma once
// The `class_conditional` family (DESIGN.md §1; the generative assumption behind Dirichlet
// calibration, Kull et al. 2019): y ~ Categorical(pi), p | y = k ~ Dirichlet(alpha^(k)). The
// canonical calibration function is known in closed form,
//   r_k(p) = pi_k Dir(p; alpha^(k)) / sum_j pi_j Dir(p; alpha^(j)),
// and the generator reports c := r(p), so E[1{y = k} | p] = c_k holds by construction.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "generators/dirichlet.hpp"

namespace calbench {

struct ClassConditionalSpec {
  std::size_t classes = 2;
  std::vector<double> prior;  // pi, K entries summing to 1 (empty: uniform)
  std::vector<double> alpha;  // K x K row-major, row k = alpha^(k)
};

// alpha^(k) = a 1 + (b - a) e_k: concentration a off the true class, b on it.
std::vector<double> class_conditional_alpha(std::size_t classes, double concentration,
                                            double correct_class);

class ClassConditionalGenerator {
 public:
  // Validates every parameter; throws DomainError naming it.
  explicit ClassConditionalGenerator(ClassConditionalSpec spec);

  const ClassConditionalSpec& spec() const { return spec_; }
  std::size_t classes() const { return spec_.classes; }
  std::span<const double> alpha_row(std::size_t k) const {
    return {spec_.alpha.data() + k * spec_.classes, spec_.classes};
  }
  // True for a uniform prior and rows a 1 + (b - a) e_k: then r(p) = softmax((b - a) log p), a
  // temperature map of p with 1/T = b - a, and the top-label gap has one sign.
  bool symmetric() const { return symmetric_; }
  // b - a when symmetric().
  double exponent() const { return exponent_; }

  std::string canonical_text() const;

  // r(p) from log p (closed form, in logs: the log densities of different rows differ by
  // hundreds for small alpha).
  void posterior(std::span<const double> log_p, std::span<double> r) const;

  // One draw: y, p (and log p, exact where p underflows), c = r(p). Returns y.
  std::uint32_t draw(Engine& engine, std::span<double> c, std::span<double> p,
                     std::span<double> log_p) const;

 private:
  ClassConditionalSpec spec_;
  std::vector<DirichletGenerator> rows_;  // p | y = k
  std::vector<double> log_prior_, log_norm_;
  // Row k's log weight as offset_k + sum over its entries that differ from their column's most
  // common value base_j: (alpha_kj - base_j) log p_j (the common part sum_j (base_j - 1)
  // log p_j cancels in r), O(K) per draw for a few distinct entries per row instead of O(K^2).
  // (class, alpha_kj - base_j) per row from row_begin_[k] to row_begin_[k + 1].
  std::vector<double> offset_;
  std::vector<std::size_t> row_begin_, deviation_column_;
  std::vector<double> deviation_;
  bool symmetric_ = false;
  double exponent_ = 1.0;
};

}  // namespace calbench
