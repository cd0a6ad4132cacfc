#pragma once
// Affine maps of the logits z = log p, fitted by minimising the mean negative log-likelihood
// (plus a penalty) with L-BFGS and analytic gradients (LBFGSpp over Eigen):
//   vector     q = softmax(a ⊙ z + b)           (Guo et al. 2017)            2K parameters
//   matrix     q = softmax(W z + b)             (Guo et al. 2017)            K^2 + K
//   dirichlet  q = softmax(W log p + b) with the ODIR penalty (Kull et al. 2019)
//                λ/(K(K-1)) Σ_{i≠j} W_ij^2 + μ/K Σ_j b_j^2  added to the mean NLL.
// With logits defined as log p, matrix scaling and Dirichlet calibration have the same model;
// they differ only in the penalty (matrix: none, so it needs n >= K^2 + K). The gradient of
// the mean NLL is G^T [Z 1] with G = (Q - Y)/n; the penalty adds 2λ/(K(K-1)) W_ij off the
// diagonal and 2μ/K b_j. All fits start from the identity map (W = I, b = 0).
//
// CalArena's structured penalties (probmetrics' SVSCalibrator and SMSCalibrator with their
// default ridge penalty) replace ODIR when `structured` is set:
//   c_b Σ_j b_j^2 + c_d Σ_j (W_jj - 1)^2 + c_o Σ_{i≠j} W_ij^2,
//   c_b = λ_b K^ρ/n^τ, c_d = λ_d K^ρ/n^τ, c_o = λ_o (K(K-1))^ρ/n^τ   (n the fit rows),
// so the pull towards the identity weakens as the fit sample grows.
//
// Degenerate fits: fewer rows than the parameters no penalty pins down (free_parameters:
// vector 2K, or K with mu > 0; matrix K^2 + K; with lambda > 0 the K diagonal weights, plus K
// intercepts unless mu > 0) throw DomainError.
#include <cstddef>
#include <optional>
#include <vector>

#include "recalibrators/recalibrator.hpp"

namespace calbench {

enum class LogitScalingForm { vector, matrix };

// The structured penalty's strengths and exponents (probmetrics' defaults: all 1).
struct StructuredPenalty {
  double intercept = 1.0;     // λ_b
  double diagonal = 1.0;      // λ_d, on W_jj - 1
  double off_diagonal = 1.0;  // λ_o (matrix form only)
  double rho = 1.0;
  double tau = 1.0;
};

// The penalty's coefficients for K classes and n fit rows: c_o Σ_{i≠j} W_ij^2 +
// c_d Σ (W_jj - 1)^2 + c_b Σ b_j^2.
struct PenaltyCoefficients {
  double off_diagonal = 0.0;
  double diagonal = 0.0;
  double intercept = 0.0;
};

struct LogitScalingSpec {
  LogitScalingForm form = LogitScalingForm::matrix;
  double lambda = 0.0;  // off-diagonal penalty (matrix form only)
  double mu = 0.0;      // intercept penalty
  // When set, the structured penalty instead of lambda and mu.
  std::optional<StructuredPenalty> structured{};
  std::size_t max_iterations = 1000;
  double tolerance = 1e-6;  // on the gradient norm (standardised coordinates)
  // Also stop when the objective fell by less than this (relative) over the last 10
  // iterations: with K = 100 the intercepts of rare classes creep on long after the
  // objective has settled to 10 digits.
  double objective_tolerance = 1e-9;
};

// The fitted map: W (K x K row-major; diagonal for the vector form) and b.
struct LogitScalingParameters {
  std::size_t classes = 0;
  std::vector<double> weights;  // K x K row-major
  std::vector<double> bias;     // K
  double objective = 0.0;       // the penalised mean NLL at the optimum
  int iterations = 0;
};

class LogitScaling : public Recalibrator {
 public:
  // `name` is the registry name ("vector", "matrix", "dirichlet"); checks λ, μ >= 0.
  LogitScaling(std::string name, LogitScalingSpec spec);
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return name_; }
  bool gives(const FittedState& state, std::size_t) const override {
    return has_kind(state, "logit_affine");
  }
  // The fit itself, for tests and the benchmark.
  LogitScalingParameters fit_parameters(const Sample& sample) const;
  // Rows needed: the parameters no penalty pins down.
  std::size_t free_parameters(std::size_t classes) const;
  PenaltyCoefficients penalty(std::size_t classes, std::size_t rows) const;

 private:
  std::string name_;
  LogitScalingSpec spec_;
};

class LogitScalingModel : public CalibrationModel {
 public:
  explicit LogitScalingModel(LogitScalingParameters parameters);
  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override;
  std::vector<FittedValue> parameters() const override;
  // Injective when W restricted to the sum-zero directions, modulo constants, is invertible
  // (the projected matrix P W P has rank K - 1, P = I - 11^T/K), checked once at fit time.
  bool injective() const override { return injective_; }
  FittedState state() const override;
  const LogitScalingParameters& fitted() const { return parameters_; }

 private:
  LogitScalingParameters parameters_;
  bool injective_ = false;
};

}  // namespace calbench
