#pragma once
// A mixture of Dirichlets fitted to points on the simplex by expectation-maximisation
// (docs/fit.md): the confidence model of the `dirichlet_mixture` family (kyle's multi-Dirichlet
// classifier), fitted to c_i = h^-1(p_i) under the chosen map, as the single Dirichlet is.
//
// E-step: responsibilities rho_ij proportional to w_j Dir(c_i; alpha_j); M-step: w_j = mean_i
// rho_ij and alpha_j the Dirichlet MLE with weights rho_ij (fit/dirichlet_mle.hpp, warm-started
// at the previous alpha_j). Each step cannot lower the likelihood (Dempster, Laird & Rubin
// 1977). Started deterministically: the rows sorted by max c, cut into J groups of equal size,
// a Dirichlet fitted to each.
#include <cstddef>
#include <span>
#include <vector>

#include "generators/dirichlet_mixture.hpp"

namespace calbench {

struct MixtureFit {
  std::vector<MixtureComponent> components;  // weights summing to 1
  double log_likelihood = 0.0;               // sum_i log sum_j w_j Dir(c_i; alpha_j)
  std::size_t free_parameters = 0;           // J K + J - 1
  double bic = 0.0;                          // free_parameters log n - 2 log_likelihood
  std::size_t iterations = 0;
};

// EM for `components` components on n rows of K values (row-major). Throws DomainError when a
// component's weight collapses (fewer than 2 rows' worth of responsibility) or n < 2 J.
MixtureFit fit_dirichlet_mixture(std::span<const double> c, std::size_t classes,
                                 std::size_t components);

// log sum_j w_j Dir(c; alpha_j), from log c (floored as the Dirichlet MLE floors it).
double mixture_log_density(std::span<const double> log_c,
                           std::span<const MixtureComponent> components);

}  // namespace calbench
