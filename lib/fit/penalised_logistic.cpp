#include "fit/penalised_logistic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace calbench {
namespace {

double softplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
}

}  // namespace

double bernoulli_log_likelihood(double s, double y) {
  return y * s - softplus(s);
}

Eigen::VectorXd penalised_logistic(const Eigen::MatrixXd& B, const Eigen::VectorXd& u,
                                   const Eigen::VectorXd& y, double penalty) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const Eigen::Index m = B.cols();
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(m);
  const auto objective = [&](const Eigen::VectorXd& b) {
    const Eigen::VectorXd s = u + B * b;
    double v = penalty * b.squaredNorm();
    for (Eigen::Index i = 0; i < s.size(); ++i) v -= bernoulli_log_likelihood(s(i), y(i));
    return v;
  };
  double current = objective(beta);
  for (int iteration = 0; iteration < 100; ++iteration) {
    const Eigen::VectorXd s = u + B * beta;
    Eigen::VectorXd residual(s.size()), weight(s.size());
    for (Eigen::Index i = 0; i < s.size(); ++i) {
      const double g = 1.0 / (1.0 + std::exp(-s(i)));
      residual(i) = g - y(i);
      weight(i) = g * (1.0 - g);
    }
    const Eigen::VectorXd gradient = B.transpose() * residual + 2.0 * penalty * beta;
    Eigen::MatrixXd hessian = B.transpose() * weight.asDiagonal() * B;
    hessian.diagonal().array() += 2.0 * penalty;
    const Eigen::VectorXd step = hessian.ldlt().solve(gradient);
    double scale = 1.0, next = inf;
    Eigen::VectorXd candidate;
    for (int halving = 0; halving < 40; ++halving, scale *= 0.5) {
      candidate = beta - scale * step;
      next = objective(candidate);
      if (next <= current) break;
    }
    if (!(next <= current)) break;
    const double gain = current - next;
    beta = candidate;
    current = next;
    if (gain <= 1e-12 * (1.0 + std::abs(current)) || scale * step.norm() < 1e-10) break;
  }
  return beta;
}

}  // namespace calbench
