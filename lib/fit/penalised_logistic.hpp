#pragma once
// Penalised logistic regression with an offset, the fitting step of the empirical family's
// curves (fit/empirical_fit.hpp, fit/classwise_fit.hpp): beta minimising the convex
//   sum_i softplus(s_i) - y_i s_i + penalty |beta|^2,  s = offset + B beta,
// by Newton's method with step halving, from beta = 0 (the identity).
#include <Eigen/Dense>

namespace calbench {

Eigen::VectorXd penalised_logistic(const Eigen::MatrixXd& B, const Eigen::VectorXd& offset,
                                   const Eigen::VectorXd& y, double penalty);

// log P(y | s) for a Bernoulli with logit s.
double bernoulli_log_likelihood(double s, double y);

}  // namespace calbench
