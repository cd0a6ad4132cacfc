#include "fit/calibration_map_fit.hpp"

#include <LBFGSB.h>

#include <Eigen/Core>
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace calbench {

std::string_view to_string(FittedMap map) {
  switch (map) {
    case FittedMap::identity:
      return "identity";
    case FittedMap::temperature:
      return "temperature";
    case FittedMap::power:
      return "power";
  }
  return "?";
}

double map_log(double p) {
  return std::log(std::max(p, DBL_MIN));
}

namespace {

// sum_k exp(a_k (mu + L_k)) and the weights' derivative sum_k a_k c_k, in a stable form.
struct RowSum {
  double log_sum;  // log sum_k exp(a_k (mu + L_k))
  double slope;    // d log_sum / d mu = sum_k a_k w_k, w the normalised terms
};

RowSum row_sum(std::span<const double> log_p, std::span<const double> a, double mu) {
  const std::size_t K = log_p.size();
  const auto exponent = [&](std::size_t k) { return a[a.size() == 1 ? 0 : k] * (mu + log_p[k]); };
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < K; ++k) m = std::max(m, exponent(k));
  double sum = 0.0, weighted = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    const double w = std::exp(exponent(k) - m);
    sum += w;
    weighted += a[a.size() == 1 ? 0 : k] * w;
  }
  return {m + std::log(sum), weighted / sum};
}

double solve_mu(std::span<const double> log_p, std::span<const double> a) {
  // At mu = -max_k L_k the term of the largest p is exp(0) = 1, so the log-sum is >= 0; it is
  // convex and increasing in mu, so Newton's iterates fall monotonically onto the root.
  double mu = -*std::max_element(log_p.begin(), log_p.end());
  for (int it = 0; it < 200; ++it) {
    const RowSum s = row_sum(log_p, a, mu);
    const double next = mu - s.log_sum / s.slope;
    if (!(next < mu) || s.log_sum <= 4 * DBL_EPSILON) break;
    mu = next;
  }
  return mu;
}

constexpr double log_bound = 6.907755278982137;  // log(1e3): exponents in [1e-3, 1e3]

// -sum_i log r_{y_i}(p_i) over beta_j = log a_j = -log t_j (one beta for a temperature).
class PowerObjective {
 public:
  PowerObjective(const Sample& data, std::vector<double> log_p, std::size_t free)
      : data_(data), log_p_(std::move(log_p)), a_(free), grad_a_(free) {}

  double operator()(const Eigen::VectorXd& beta, Eigen::VectorXd& grad) {
    const std::size_t K = data_.classes, free = a_.size();
    for (std::size_t j = 0; j < free; ++j) a_[j] = std::exp(beta[static_cast<Eigen::Index>(j)]);
    std::fill(grad_a_.begin(), grad_a_.end(), 0.0);
    const auto a = [&](std::size_t k) { return a_[free == 1 ? 0 : k]; };
    double nll = 0.0;
    for (std::size_t i = 0; i < data_.size; ++i) {
      const std::span<const double> L(log_p_.data() + i * K, K);
      const double mu = solve_mu(L, a_);
      const std::size_t y = data_.label[i];
      nll -= a(y) * (mu + L[y]);
      // Implicit differentiation of sum_k exp(a_k (mu + L_k)) = 1:
      // d mu / d a_j = -c_j (mu + L_j) / D, D = sum_k a_k c_k; log c_y = a_y (mu + L_y).
      double D = 0.0;
      for (std::size_t k = 0; k < K; ++k) D += a(k) * std::exp(a(k) * (mu + L[k]));
      for (std::size_t k = 0; k < K; ++k) {
        const double c = std::exp(a(k) * (mu + L[k]));
        const double dmu = -c * (mu + L[k]) / D;
        grad_a_[free == 1 ? 0 : k] -= a(y) * dmu;
      }
      grad_a_[free == 1 ? 0 : y] -= mu + L[y];
    }
    for (std::size_t j = 0; j < free; ++j)
      grad[static_cast<Eigen::Index>(j)] = grad_a_[j] * a_[j];  // d/d beta_j = a_j d/d a_j
    return nll;
  }

 private:
  const Sample& data_;
  std::vector<double> log_p_;
  std::vector<double> a_, grad_a_;
};

std::vector<double> log_rows(const Sample& data) {
  std::vector<double> out(data.p.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = map_log(data.p[i]);
  return out;
}

}  // namespace

double power_inverse(std::span<const double> log_p, std::span<const double> exponents,
                     std::span<double> c) {
  std::vector<double> a(exponents.size());
  for (std::size_t j = 0; j < a.size(); ++j) a[j] = 1.0 / exponents[j];
  const double mu = solve_mu(log_p, a);
  double sum = 0.0;
  for (std::size_t k = 0; k < log_p.size(); ++k) {
    c[k] = std::exp(a[a.size() == 1 ? 0 : k] * (mu + log_p[k]));
    sum += c[k];
  }
  for (double& v : c) v /= sum;  // the root is exact to rounding; this removes the rounding
  return mu;
}

MapFit fit_map(const Sample& data, FittedMap map) {
  MapFit out;
  out.map = map;
  if (map == FittedMap::identity) {
    for (std::size_t i = 0; i < data.size; ++i)
      out.negative_log_likelihood -= map_log(data.p[i * data.classes + data.label[i]]);
  } else {
    const std::size_t free = map == FittedMap::temperature ? 1 : data.classes;
    PowerObjective objective(data, log_rows(data), free);
    LBFGSpp::LBFGSBParam<double> param;
    param.epsilon = 1e-9;
    param.epsilon_rel = 0.0;
    param.max_iterations = 500;
    LBFGSpp::LBFGSBSolver<double> solver(param);
    const auto n = static_cast<Eigen::Index>(free);
    Eigen::VectorXd beta = Eigen::VectorXd::Zero(n);  // the identity map
    const Eigen::VectorXd lower = Eigen::VectorXd::Constant(n, -log_bound);
    const Eigen::VectorXd upper = Eigen::VectorXd::Constant(n, log_bound);
    double fx = 0.0;
    try {
      solver.minimize(objective, beta, fx, lower, upper);
    } catch (const std::exception&) {
      // A line search that cannot improve further: beta is the last accepted point.
      Eigen::VectorXd grad(n);
      fx = objective(beta, grad);
    }
    out.negative_log_likelihood = fx;
    // a_j = exp(beta_j) = 1 / t_j; a temperature is T = 1 / t = a (p ∝ c^(1/T)).
    for (Eigen::Index j = 0; j < n; ++j) {
      out.parameters.push_back(map == FittedMap::temperature ? std::exp(beta[j])
                                                             : std::exp(-beta[j]));
      if (std::abs(beta[j]) > log_bound - 1e-6) out.converged = false;
    }
    if (!out.converged)
      throw DomainError(std::string(to_string(map)) +
                        " fit ran away (an exponent reached 1e-3 or 1e3): the labels are "
                        "nearly separable by the model's probabilities");
  }
  out.free_parameters = out.parameters.size();
  out.aic = 2.0 * static_cast<double>(out.free_parameters) + 2.0 * out.negative_log_likelihood;
  return out;
}

double map_negative_log_likelihood(const Sample& data, FittedMap map,
                                   std::span<const double> parameters) {
  MapFit fit;
  fit.map = map;
  fit.parameters.assign(parameters.begin(), parameters.end());
  const std::vector<double> c = calibrated_rows(data, fit);
  double nll = 0.0;
  for (std::size_t i = 0; i < data.size; ++i) nll -= map_log(c[i * data.classes + data.label[i]]);
  return nll;
}

std::vector<double> calibrated_rows(const Sample& data, const MapFit& fit) {
  std::vector<double> out(data.p.size());
  if (fit.map == FittedMap::identity) {
    out = data.p;
    return out;
  }
  const std::size_t K = data.classes;
  // A temperature T is the single exponent t = 1/T.
  const std::vector<double> exponents = fit.map == FittedMap::temperature
                                            ? std::vector<double>{1.0 / fit.parameters.at(0)}
                                            : fit.parameters;
  std::vector<double> L(K);
  for (std::size_t i = 0; i < data.size; ++i) {
    for (std::size_t k = 0; k < K; ++k) L[k] = map_log(data.p[i * K + k]);
    power_inverse(L, exponents, std::span<double>(out.data() + i * K, K));
  }
  return out;
}

}  // namespace calbench
