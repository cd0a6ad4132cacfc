#include "fit/dirichlet_mle.hpp"

#include <algorithm>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>
#include <cfloat>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace calbench {

DirichletStatistics dirichlet_statistics(std::span<const double> q, std::size_t classes) {
  DirichletStatistics out;
  out.rows = classes == 0 ? 0 : q.size() / classes;
  out.mean_log.assign(classes, 0.0);
  out.mean.assign(classes, 0.0);
  out.mean_square.assign(classes, 0.0);
  for (std::size_t i = 0; i < out.rows; ++i)
    for (std::size_t k = 0; k < classes; ++k) {
      const double v = q[i * classes + k];
      out.mean_log[k] += std::log(std::max(v, dirichlet_floor));
      out.mean[k] += v;
      out.mean_square[k] += v * v;
    }
  const double n = static_cast<double>(std::max<std::size_t>(out.rows, 1));
  for (std::size_t k = 0; k < classes; ++k) {
    out.mean_log[k] /= n;
    out.mean[k] /= n;
    out.mean_square[k] /= n;
  }
  return out;
}

double dirichlet_mean_log_likelihood(const DirichletStatistics& stats,
                                     std::span<const double> alpha) {
  const double a0 = std::accumulate(alpha.begin(), alpha.end(), 0.0);
  double out = std::lgamma(a0);
  for (std::size_t k = 0; k < alpha.size(); ++k)
    out += (alpha[k] - 1.0) * stats.mean_log[k] - std::lgamma(alpha[k]);
  return out;
}

double inverse_digamma(double x) {
  // Minka's start: exp(x) + 1/2 for x >= -2.22, else -1/(x + gamma_Euler) (psi(1) = -gamma).
  constexpr double euler = 0.57721566490153286;
  double y = x >= -2.22 ? std::exp(x) + 0.5 : -1.0 / (x + euler);
  for (int i = 0; i < 5; ++i) y -= (boost::math::digamma(y) - x) / boost::math::trigamma(y);
  return y;
}

namespace {

// Moment estimate (Minka eq. 21-23): alpha_0 from each class's mean and second moment,
// averaged over the classes whose estimate is usable; alpha_k = alpha_0 m_k.
std::vector<double> moment_start(const DirichletStatistics& s) {
  const std::size_t K = s.mean.size();
  double sum = 0.0;
  std::size_t used = 0;
  for (std::size_t k = 0; k < K; ++k) {
    const double var = s.mean_square[k] - s.mean[k] * s.mean[k];
    const double a0 = (s.mean[k] - s.mean_square[k]) / var;
    if (var > 0.0 && std::isfinite(a0) && a0 > 0.0) {
      sum += a0;
      ++used;
    }
  }
  const double a0 = used > 0 ? sum / static_cast<double>(used) : static_cast<double>(K);
  std::vector<double> alpha(K);
  for (std::size_t k = 0; k < K; ++k) alpha[k] = a0 * std::max(s.mean[k], 1e-12);
  return alpha;
}

}  // namespace

DirichletFit fit_dirichlet(const DirichletStatistics& stats, std::span<const double> start) {
  const std::size_t K = stats.mean_log.size();
  if (stats.rows < 2 || K < 2)
    throw DomainError("a Dirichlet fit needs at least two rows of at least two classes");
  std::vector<double> alpha =
      start.size() == K ? std::vector<double>(start.begin(), start.end()) : moment_start(stats);
  std::vector<double> step(K), trial(K);
  double ll = dirichlet_mean_log_likelihood(stats, alpha);
  DirichletFit out;
  for (out.iterations = 0; out.iterations < 1000; ++out.iterations) {
    const double a0 = std::accumulate(alpha.begin(), alpha.end(), 0.0);
    // Gradient g_k = psi(a0) - psi(alpha_k) + s_k; Hessian H = z 11' + diag(q) with
    // z = psi'(a0), q_k = -psi'(alpha_k); H^-1 g = (g - b) / q, b = sum(g/q) / (1/z + sum 1/q).
    const double z = boost::math::trigamma(a0), psi0 = boost::math::digamma(a0);
    double num = 0.0, den = 1.0 / z;
    for (std::size_t k = 0; k < K; ++k) {
      const double g = psi0 - boost::math::digamma(alpha[k]) + stats.mean_log[k];
      const double q = -boost::math::trigamma(alpha[k]);
      step[k] = g;  // holds g until b is known
      num += g / q;
      den += 1.0 / q;
    }
    const double b = num / den;
    double largest = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      step[k] = (step[k] - b) / -boost::math::trigamma(alpha[k]);  // H^-1 g
      largest = std::max(largest, std::abs(step[k]) / alpha[k]);
    }
    if (largest < 1e-13) break;
    bool accepted = false;
    for (double t = 1.0; t > 1e-6 && !accepted; t *= 0.5) {
      bool positive = true;
      for (std::size_t k = 0; k < K; ++k) {
        trial[k] = alpha[k] - t * step[k];
        positive = positive && trial[k] > 0.0;
      }
      if (!positive) continue;
      const double trial_ll = dirichlet_mean_log_likelihood(stats, trial);
      // Near the maximum the likelihood is flat to rounding while the score is not yet 0:
      // a step that lowers it by no more than rounding is still Newton's, and accepted.
      if (trial_ll >= ll - 8 * DBL_EPSILON * (std::abs(ll) + 1.0)) {
        accepted = true;
        ll = trial_ll;
        alpha.swap(trial);
      }
    }
    if (!accepted) {
      // Minka's fixed point: never lowers the likelihood and keeps alpha > 0.
      for (std::size_t k = 0; k < K; ++k) trial[k] = inverse_digamma(psi0 + stats.mean_log[k]);
      const double trial_ll = dirichlet_mean_log_likelihood(stats, trial);
      if (!(trial_ll > ll)) break;
      ll = trial_ll;
      alpha.swap(trial);
    }
  }
  out.alpha = std::move(alpha);
  out.mean_log_likelihood = ll;
  return out;
}

}  // namespace calbench
