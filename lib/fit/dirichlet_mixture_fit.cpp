#include "fit/dirichlet_mixture_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "fit/dirichlet_mle.hpp"

namespace calbench {
namespace {

// lnGamma(alpha_0) - sum_k lnGamma(alpha_k): the Dirichlet's log normaliser.
double log_normaliser(std::span<const double> alpha) {
  double out = std::lgamma(std::accumulate(alpha.begin(), alpha.end(), 0.0));
  for (double a : alpha) out -= std::lgamma(a);
  return out;
}

double log_dirichlet(std::span<const double> log_c, std::span<const double> alpha, double norm) {
  double out = norm;
  for (std::size_t k = 0; k < alpha.size(); ++k) out += (alpha[k] - 1.0) * log_c[k];
  return out;
}

// The Dirichlet statistics of the rows weighted by rho (one weight per row).
DirichletStatistics weighted_statistics(std::span<const double> c, std::span<const double> log_c,
                                        std::size_t K, std::span<const double> rho) {
  DirichletStatistics s;
  s.mean_log.assign(K, 0.0);
  s.mean.assign(K, 0.0);
  s.mean_square.assign(K, 0.0);
  double total = 0.0;
  for (std::size_t i = 0; i < rho.size(); ++i) {
    total += rho[i];
    for (std::size_t k = 0; k < K; ++k) {
      const double v = c[i * K + k];
      s.mean_log[k] += rho[i] * log_c[i * K + k];
      s.mean[k] += rho[i] * v;
      s.mean_square[k] += rho[i] * v * v;
    }
  }
  // fit_dirichlet needs two rows; a component with less responsibility has collapsed.
  s.rows = total >= 2.0 ? static_cast<std::size_t>(total) : 0;
  for (std::size_t k = 0; k < K; ++k) {
    s.mean_log[k] /= total;
    s.mean[k] /= total;
    s.mean_square[k] /= total;
  }
  return s;
}

}  // namespace

double mixture_log_density(std::span<const double> log_c,
                           std::span<const MixtureComponent> components) {
  double m = -std::numeric_limits<double>::infinity();
  std::vector<double> terms;
  for (const MixtureComponent& j : components) {
    terms.push_back(std::log(j.weight) + log_dirichlet(log_c, j.alpha, log_normaliser(j.alpha)));
    m = std::max(m, terms.back());
  }
  double sum = 0.0;
  for (double t : terms) sum += std::exp(t - m);
  return m + std::log(sum);
}

MixtureFit fit_dirichlet_mixture(std::span<const double> c, std::size_t K, std::size_t J) {
  const std::size_t n = K == 0 ? 0 : c.size() / K;
  if (J == 0 || n < 2 * J)
    throw DomainError("a " + std::to_string(J) + "-component Dirichlet mixture needs at least " +
                      std::to_string(2 * J) + " rows, found " + std::to_string(n));
  std::vector<double> log_c(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) log_c[i] = std::log(std::max(c[i], dirichlet_floor));

  // Start: J groups of equal size by max c, one Dirichlet each, equal weights.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<double> top(n);
  for (std::size_t i = 0; i < n; ++i)
    top[i] = *std::max_element(c.begin() + static_cast<std::ptrdiff_t>(i * K),
                               c.begin() + static_cast<std::ptrdiff_t>((i + 1) * K));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return top[a] < top[b]; });
  std::vector<std::vector<double>> rho(J, std::vector<double>(n, 0.0));
  for (std::size_t r = 0; r < n; ++r) rho[std::min(J - 1, r * J / n)][order[r]] = 1.0;

  MixtureFit out;
  out.components.assign(J, MixtureComponent{1.0 / static_cast<double>(J), {}});
  std::vector<double> norm(J), logs(J);
  double previous = -std::numeric_limits<double>::infinity();
  for (out.iterations = 0; out.iterations < 1000; ++out.iterations) {
    // M-step (the first one from the start's hard assignment).
    for (std::size_t j = 0; j < J; ++j) {
      const DirichletStatistics s = weighted_statistics(c, log_c, K, rho[j]);
      if (s.rows < 2)
        throw DomainError("component " + std::to_string(j) + " of " + std::to_string(J) +
                          " collapsed (less than 2 rows' worth of responsibility)");
      out.components[j].weight =
          std::accumulate(rho[j].begin(), rho[j].end(), 0.0) / static_cast<double>(n);
      out.components[j].alpha = fit_dirichlet(s, out.components[j].alpha).alpha;
      norm[j] = log_normaliser(out.components[j].alpha);
    }
    // E-step, and the log-likelihood of the parameters just fitted.
    double ll = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::span<const double> row(log_c.data() + i * K, K);
      double m = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < J; ++j) {
        logs[j] = std::log(out.components[j].weight) +
                  log_dirichlet(row, out.components[j].alpha, norm[j]);
        m = std::max(m, logs[j]);
      }
      double sum = 0.0;
      for (std::size_t j = 0; j < J; ++j) sum += std::exp(logs[j] - m);
      ll += m + std::log(sum);
      for (std::size_t j = 0; j < J; ++j) rho[j][i] = std::exp(logs[j] - m) / sum;
    }
    out.log_likelihood = ll;
    if (ll - previous <= 1e-10 * std::abs(ll)) break;
    previous = ll;
  }
  const double weight_sum =
      std::accumulate(out.components.begin(), out.components.end(), 0.0,
                      [](double s, const MixtureComponent& m) { return s + m.weight; });
  for (MixtureComponent& m : out.components) m.weight /= weight_sum;  // rounding only
  out.free_parameters = J * K + J - 1;
  out.bic = static_cast<double>(out.free_parameters) * std::log(static_cast<double>(n)) -
            2.0 * out.log_likelihood;
  return out;
}

}  // namespace calbench
