#include "recalibrators/logit_scaling.hpp"

#include <LBFGS.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {
namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// The penalised mean NLL and its gradient. The optimiser works on standardised logits
// z'_k = (z_k - m_k)/s_k (m_k, s_k the mean and sd of logit k over the fit rows), a linear
// reparametrisation of the same model: W z + b = W' z' + b' with W = W' diag(1/s) and
// b = b' - W m. With alpha << 1 the logits spread over tens of units and the problem in the
// original coordinates is so ill-conditioned that L-BFGS needs thousands of iterations; the
// penalty is always taken on the original W and b. Packed parameters: W' (K x K,
// column-major) then b' for the matrix form; a' then b' for the vector form. Remembers the
// best point seen, which is the answer when a line search gives up close to the optimum.
class Objective {
 public:
  Objective(const Sample& sample, const LogitScalingSpec& spec, PenaltyCoefficients penalty)
      : spec_(spec),
        penalty_(penalty),
        K_(static_cast<Index>(sample.classes)),
        n_(static_cast<Index>(sample.size)),
        z_(K_, n_),
        mean_(VectorXd::Zero(K_)),
        scale_(VectorXd::Ones(K_)),
        labels_(sample.label) {
    for (Index i = 0; i < n_; ++i)
      for (Index k = 0; k < K_; ++k)
        z_(k, i) = safe_log(sample.p[static_cast<std::size_t>(i * K_ + k)]);
    mean_ = z_.rowwise().mean();
    for (Index k = 0; k < K_; ++k) {
      const double var = (z_.row(k).array() - mean_(k)).square().mean();
      scale_(k) = var > 1e-24 ? std::sqrt(var) : 1.0;
    }
    for (Index i = 0; i < n_; ++i) z_.col(i) = (z_.col(i) - mean_).cwiseQuotient(scale_);
  }

  bool matrix() const { return spec_.form == LogitScalingForm::matrix; }
  Index dimension() const { return matrix() ? K_ * K_ + K_ : 2 * K_; }

  // The original (W, b) of packed standardised parameters; W full K x K.
  void to_original(const VectorXd& x, MatrixXd& W, VectorXd& b) const {
    if (matrix())
      W = Eigen::Map<const MatrixXd>(x.data(), K_, K_) * scale_.cwiseInverse().asDiagonal();
    else
      W = x.head(K_).cwiseQuotient(scale_).asDiagonal();
    b = x.tail(K_) - W * mean_;
  }

  // Packed standardised parameters of the identity map W = I, b = 0.
  VectorXd identity() const {
    VectorXd x = VectorXd::Zero(dimension());
    if (matrix()) {
      for (Index k = 0; k < K_; ++k) x(k * K_ + k) = scale_(k);
    } else {
      x.head(K_) = scale_;
    }
    x.tail(K_) = mean_;  // b' = b + W m = m
    return x;
  }

  double operator()(const VectorXd& x, VectorXd& grad) {
    const auto b = x.tail(K_);
    // Logits of the calibrated model, one column per row of the sample.
    MatrixXd logits;
    if (matrix()) {
      const Eigen::Map<const MatrixXd> W(x.data(), K_, K_);
      logits.noalias() = W * z_;
    } else {
      logits = x.head(K_).asDiagonal() * z_;
    }
    logits.colwise() += b;
    double nll = 0.0;
    for (Index i = 0; i < n_; ++i) {
      auto col = logits.col(i);
      const double top = col.maxCoeff();
      col.array() = (col.array() - top).exp();
      const double sum = col.sum();
      col /= sum;
      const auto y = static_cast<Index>(labels_[static_cast<std::size_t>(i)]);
      nll -= std::log(std::max(col(y), std::numeric_limits<double>::min()));
      col(y) -= 1.0;  // now Q - Y
    }
    const double inv_n = 1.0 / static_cast<double>(n_);
    nll *= inv_n;
    logits *= inv_n;  // G = (Q - Y)/n, K x n
    grad.resize(dimension());
    if (matrix()) {
      Eigen::Map<MatrixXd> gW(grad.data(), K_, K_);
      gW.noalias() = logits * z_.transpose();
    } else {
      grad.head(K_) = (logits.array() * z_.array()).rowwise().sum();
    }
    grad.tail(K_) = logits.rowwise().sum();
    // The penalty on the original parameters, its gradient carried back by the chain rule:
    // dW'_ij = gW_ij / s_j - gb_i m_j / s_j, db' = gb.
    double penalty = 0.0;
    const bool off_diagonal = matrix() && penalty_.off_diagonal > 0.0;
    if (off_diagonal || penalty_.diagonal > 0.0 || penalty_.intercept > 0.0) {
      MatrixXd W;
      VectorXd bo;
      to_original(x, W, bo);
      MatrixXd gW = MatrixXd::Zero(K_, K_);
      VectorXd gb = VectorXd::Zero(K_);
      if (off_diagonal) {
        MatrixXd off = W;
        off.diagonal().setZero();
        penalty += penalty_.off_diagonal * off.squaredNorm();
        gW = 2.0 * penalty_.off_diagonal * off;
      }
      if (penalty_.diagonal > 0.0) {
        const VectorXd d = W.diagonal().array() - 1.0;
        penalty += penalty_.diagonal * d.squaredNorm();
        gW.diagonal() += 2.0 * penalty_.diagonal * d;
      }
      if (penalty_.intercept > 0.0) {
        penalty += penalty_.intercept * bo.squaredNorm();
        gb = 2.0 * penalty_.intercept * bo;
      }
      const VectorXd ratio = mean_.cwiseQuotient(scale_);
      if (matrix()) {
        Eigen::Map<MatrixXd> g(grad.data(), K_, K_);
        g += gW * scale_.cwiseInverse().asDiagonal();
        g -= gb * ratio.transpose();
      } else {
        grad.head(K_) += gW.diagonal().cwiseQuotient(scale_) - gb.cwiseProduct(ratio);
      }
      grad.tail(K_) += gb;
    }
    const double f = nll + penalty;
    if (std::isfinite(f) && f < best_) {
      best_ = f;
      best_x_ = x;
    }
    return f;
  }

  double best() const { return best_; }
  const VectorXd& best_x() const { return best_x_; }

 private:
  const LogitScalingSpec& spec_;
  PenaltyCoefficients penalty_;
  Index K_, n_;
  MatrixXd z_;  // K x n standardised logits
  VectorXd mean_, scale_;
  const std::vector<std::uint32_t>& labels_;
  double best_ = std::numeric_limits<double>::infinity();
  VectorXd best_x_;
};

// Whether p -> softmax(W log p + b) is injective on the open simplex. q = q' means
// W (log p - log p') is a multiple of 1; the differences d = log p - log p' with W d ∝ 1 form
// the kernel of P W (P = I - 11^T/K). When that kernel is one line spanned by v, d = s v is
// a difference of two normalised log-vectors only if sum_k p'_k (e^{s v_k} - 1) = 0 has a
// solution with p' > 0, which needs components of v of both signs. So: injective iff rank
// P W = K - 1 and no two components of the kernel vector have opposite signs.
bool affine_injective(const LogitScalingParameters& fitted) {
  const auto K = static_cast<Index>(fitted.classes);
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> W(
      fitted.weights.data(), K, K);
  const MatrixXd P =
      MatrixXd::Identity(K, K) - MatrixXd::Constant(K, K, 1.0 / static_cast<double>(K));
  const MatrixXd PW = P * W;
  Eigen::JacobiSVD<MatrixXd> svd(PW, Eigen::ComputeFullV);
  const VectorXd& s = svd.singularValues();  // decreasing
  if (s(0) <= 0.0 || s(K - 2) <= 1e-10 * s(0)) return false;
  const VectorXd v = svd.matrixV().col(K - 1);
  const double scale = v.cwiseAbs().maxCoeff();
  bool positive = false, negative = false;
  for (Index k = 0; k < K; ++k) {
    if (v(k) > 1e-12 * scale) positive = true;
    if (v(k) < -1e-12 * scale) negative = true;
  }
  return !(positive && negative);
}

}  // namespace

LogitScaling::LogitScaling(std::string name, LogitScalingSpec spec)
    : name_(std::move(name)), spec_(spec) {
  if (!(spec_.lambda >= 0.0) || !std::isfinite(spec_.lambda))
    throw DomainError(name_ + ": lambda = " + format_double(spec_.lambda) + ": must be >= 0");
  if (!(spec_.mu >= 0.0) || !std::isfinite(spec_.mu))
    throw DomainError(name_ + ": mu = " + format_double(spec_.mu) + ": must be >= 0");
  if (spec_.max_iterations == 0) throw DomainError(name_ + ": max_iterations must be >= 1");
}

PenaltyCoefficients LogitScaling::penalty(std::size_t classes, std::size_t rows) const {
  const double K = static_cast<double>(classes), n = static_cast<double>(rows);
  if (!spec_.structured) {
    return {.off_diagonal = K > 1.0 ? spec_.lambda / (K * (K - 1.0)) : 0.0,
            .intercept = spec_.mu / K};
  }
  const StructuredPenalty& s = *spec_.structured;
  const double scale = std::pow(K, s.rho) / std::pow(n, s.tau);
  return {.off_diagonal = s.off_diagonal * std::pow(K * (K - 1.0), s.rho) / std::pow(n, s.tau),
          .diagonal = s.diagonal * scale,
          .intercept = s.intercept * scale};
}

std::size_t LogitScaling::free_parameters(std::size_t K) const {
  if (spec_.structured) {
    const StructuredPenalty& s = *spec_.structured;
    const std::size_t intercepts = s.intercept > 0.0 ? 0 : K, diagonal = s.diagonal > 0.0 ? 0 : K;
    const std::size_t off =
        spec_.form == LogitScalingForm::matrix && !(s.off_diagonal > 0.0) ? K * (K - 1) : 0;
    return std::max<std::size_t>(1, intercepts + diagonal + off);
  }
  if (spec_.form == LogitScalingForm::vector) return spec_.mu > 0.0 ? K : 2 * K;
  const std::size_t weights = spec_.lambda > 0.0 ? K : K * K;
  return weights + (spec_.mu > 0.0 ? 0 : K);
}

LogitScalingParameters LogitScaling::fit_parameters(const Sample& sample) const {
  const std::size_t K = sample.classes;
  const std::string what = spec_.structured                         ? "the unpenalised parameters"
                           : spec_.form == LogitScalingForm::vector ? "a, b"
                           : spec_.lambda > 0.0                     ? "the diagonal of W"
                                                                    : "W";
  check_fit_sample(
      sample, name_, free_parameters(K),
      what + (spec_.mu > 0.0 || spec_.structured ? std::string() : std::string(" and b")));
  Objective objective(sample, spec_, penalty(K, sample.size));
  LBFGSpp::LBFGSParam<double> param;
  param.epsilon = spec_.tolerance;
  param.epsilon_rel = 0.0;  // |x| in standardised coordinates is not a meaningful scale
  param.max_iterations = static_cast<int>(spec_.max_iterations);
  param.past = 10;
  param.delta = spec_.objective_tolerance;
  param.max_linesearch = 60;
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  LBFGSpp::LBFGSSolver<double> solver(param);
  VectorXd x = objective.identity();
  double fx = 0.0;
  int iterations = 0;
  try {
    iterations = solver.minimize(objective, x, fx);
  } catch (const std::exception&) {
    // A line search that cannot improve any further: keep the best point evaluated.
    iterations = -1;
  }
  if (!(objective.best() < std::numeric_limits<double>::infinity()))
    throw DomainError(name_ + ": the objective is not finite at the identity map");
  x = objective.best_x();
  MatrixXd W;
  VectorXd b;
  objective.to_original(x, W, b);
  LogitScalingParameters out;
  out.classes = K;
  out.weights.assign(K * K, 0.0);
  const auto Ki = static_cast<Index>(K);
  for (Index r = 0; r < Ki; ++r)
    for (Index c = 0; c < Ki; ++c) out.weights[static_cast<std::size_t>(r * Ki + c)] = W(r, c);
  out.bias.assign(b.data(), b.data() + b.size());
  out.objective = objective.best();
  out.iterations = iterations;
  return out;
}

std::unique_ptr<const CalibrationModel> LogitScaling::fit(const Sample& sample) const {
  return std::make_unique<LogitScalingModel>(fit_parameters(sample));
}

LogitScalingModel::LogitScalingModel(LogitScalingParameters parameters)
    : parameters_(std::move(parameters)), injective_(affine_injective(parameters_)) {}

void LogitScalingModel::apply(std::span<const double> p, std::size_t classes,
                              std::span<double> q) const {
  const auto K = static_cast<Index>(classes);
  const auto rows = static_cast<Index>(p.size() / classes);
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> W(
      parameters_.weights.data(), K, K);
  const Eigen::Map<const VectorXd> b(parameters_.bias.data(), K);
  // Rows of p and q as the columns of K x rows column-major matrices.
  MatrixXd z(K, rows);
  for (Index i = 0; i < rows; ++i)
    for (Index k = 0; k < K; ++k) z(k, i) = safe_log(p[static_cast<std::size_t>(i * K + k)]);
  Eigen::Map<MatrixXd> out(q.data(), K, rows);
  out.noalias() = W * z;
  out.colwise() += b;
  for (Index i = 0; i < rows; ++i)
    softmax_in_place(q.subspan(static_cast<std::size_t>(i * K), classes));
}

FittedState LogitScalingModel::state() const {
  return {.kind = "logit_affine",
          .arrays = {{"weights", parameters_.weights}, {"bias", parameters_.bias}}};
}

std::vector<FittedValue> LogitScalingModel::parameters() const {
  // Scalars that summarise W and b: the mean diagonal weight, the mean |off-diagonal| weight
  // and the mean |intercept|.
  const std::size_t K = parameters_.classes;
  double diagonal = 0.0, off = 0.0, bias = 0.0;
  for (std::size_t r = 0; r < K; ++r) {
    for (std::size_t c = 0; c < K; ++c) {
      if (r == c)
        diagonal += parameters_.weights[r * K + c];
      else
        off += std::abs(parameters_.weights[r * K + c]);
    }
    bias += std::abs(parameters_.bias[r]);
  }
  const double Kd = static_cast<double>(K);
  return {{"diagonal_mean", diagonal / Kd},
          {"off_diagonal_abs_mean", off / (Kd * (Kd - 1.0))},
          {"intercept_abs_mean", bias / Kd}};
}

}  // namespace calbench
