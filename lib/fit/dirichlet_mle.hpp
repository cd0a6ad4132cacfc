#pragma once
// Maximum-likelihood Dirichlet parameters of points on the simplex (Minka 2000, "Estimating a
// Dirichlet distribution"). The likelihood depends on the points only through the sufficient
// statistics s_k = mean_i log q_ik, so a fit costs O(K) per Newton step whatever n is.
#include <cstddef>
#include <span>
#include <vector>

namespace calbench {

struct DirichletStatistics {
  std::size_t rows = 0;
  std::vector<double> mean_log;     // s_k = mean_i log max(q_ik, floor)
  std::vector<double> mean;         // mean_i q_ik (for the starting point)
  std::vector<double> mean_square;  // mean_i q_ik^2 (for the starting point)
};

// A component below `floor` counts as `floor`: a model's exact zeros (float32 underflow)
// would otherwise make log q = -inf and the likelihood degenerate. 1e-300 keeps every log
// finite and lets the fit report the tiny alpha such data imply (docs/fit.md).
inline constexpr double dirichlet_floor = 1e-300;

// Statistics of `rows` rows of K values each (row-major).
DirichletStatistics dirichlet_statistics(std::span<const double> q, std::size_t classes);

struct DirichletFit {
  std::vector<double> alpha;
  double mean_log_likelihood = 0.0;  // per row, at alpha
  std::size_t iterations = 0;
};

// Mean log-likelihood per row of Dir(alpha) given the statistics:
// lnGamma(alpha_0) - sum_k lnGamma(alpha_k) + sum_k (alpha_k - 1) s_k.
double dirichlet_mean_log_likelihood(const DirichletStatistics& stats,
                                     std::span<const double> alpha);

// Newton's method with Minka's O(K) Hessian inverse (the Hessian is diagonal plus rank one),
// started from the moment estimate, each step halved until it keeps alpha > 0 and does not
// lower the likelihood, falling back to Minka's fixed point alpha_k = psi^-1(psi(alpha_0) +
// s_k), which always increases it. Throws DomainError when fewer than two rows are given. A
// `start` of K values > 0 (the previous EM step's alpha) replaces the moment estimate.
DirichletFit fit_dirichlet(const DirichletStatistics& stats, std::span<const double> start = {});

// psi^-1(x), by Minka's starting point and five Newton steps (his appendix C).
double inverse_digamma(double x);

}  // namespace calbench
