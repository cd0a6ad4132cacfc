#include "recalibrators/logistic_calibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace calbench {
namespace {

double logit_of(double s) {
  return safe_log(s) - safe_log(1.0 - s);
}

double sigmoid(double x) {
  return x >= 0.0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

// log σ(x) and log(1 - σ(x)) without overflow.
double log_sigmoid(double x) {
  return x >= 0.0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x));
}

class LogitLinearMap : public BinaryMap {
 public:
  LogitLinearMap(double slope, double intercept) : slope_(slope), intercept_(intercept) {}
  double operator()(double s) const override { return sigmoid(slope_ * logit_of(s) + intercept_); }
  std::vector<FittedValue> parameters() const override {
    return {{"slope", slope_}, {"intercept", intercept_}};
  }
  bool strictly_increasing() const override { return slope_ > 0.0; }
  FittedState state() const override {
    return {.kind = "logit_linear", .scalars = {{"slope", slope_}, {"intercept", intercept_}}};
  }

 private:
  double slope_, intercept_;
};

constexpr double beta_eps = std::numeric_limits<double>::epsilon();

class BetaMap : public BinaryMap {
 public:
  BetaMap(double a, double b, double c) : a_(a), b_(b), c_(c) {}
  double operator()(double s) const override {
    const double x = std::clamp(s, beta_eps, 1.0 - beta_eps);
    return sigmoid(a_ * std::log(x) - b_ * std::log(1.0 - x) + c_);
  }
  std::vector<FittedValue> parameters() const override { return {{"a", a_}, {"b", b_}, {"c", c_}}; }
  bool strictly_increasing() const override { return a_ > 0.0 || b_ > 0.0; }
  FittedState state() const override {
    return {.kind = "beta", .scalars = {{"a", a_}, {"b", b_}, {"c", c_}}};
  }

 private:
  double a_, b_, c_;
};

class ProbabilityLinearMap : public BinaryMap {
 public:
  ProbabilityLinearMap(double slope, double intercept) : slope_(slope), intercept_(intercept) {}
  double operator()(double s) const override { return sigmoid(slope_ * s + intercept_); }
  std::vector<FittedValue> parameters() const override {
    return {{"slope", slope_}, {"intercept", intercept_}};
  }
  bool strictly_increasing() const override { return slope_ > 0.0; }
  FittedState state() const override {
    return {.kind = "probability_linear",
            .scalars = {{"slope", slope_}, {"intercept", intercept_}}};
  }

 private:
  double slope_, intercept_;
};

class LogitQuadraticMap : public BinaryMap {
 public:
  LogitQuadraticMap(double intercept, double linear, double quadratic)
      : intercept_(intercept), linear_(linear), quadratic_(quadratic) {}
  double operator()(double s) const override {
    const double f = logit_of(s);
    return sigmoid(intercept_ + linear_ * f + quadratic_ * f * f);
  }
  std::vector<FittedValue> parameters() const override {
    return {{"intercept", intercept_}, {"linear", linear_}, {"quadratic", quadratic_}};
  }
  // A parabola in f is monotone on the logit range only when its vertex lies outside it.
  bool strictly_increasing() const override {
    if (quadratic_ == 0.0) return linear_ > 0.0;
    const double vertex = -linear_ / (2.0 * quadratic_), edge = -safe_log(0.0);
    return (quadratic_ > 0.0 && vertex <= -edge) || (quadratic_ < 0.0 && vertex >= edge);
  }
  FittedState state() const override {
    return {.kind = "logit_quadratic",
            .scalars = {{"intercept", intercept_}, {"linear", linear_}, {"quadratic", quadratic_}}};
  }

 private:
  double intercept_, linear_, quadratic_;
};

}  // namespace

std::unique_ptr<const BinaryMap> probability_linear_map(double slope, double intercept) {
  return std::make_unique<ProbabilityLinearMap>(slope, intercept);
}

std::unique_ptr<const BinaryMap> logit_quadratic_map(double intercept, double linear,
                                                     double quadratic) {
  return std::make_unique<LogitQuadraticMap>(intercept, linear, quadratic);
}

std::unique_ptr<const BinaryMap> logit_linear_map(double slope, double intercept) {
  return std::make_unique<LogitLinearMap>(slope, intercept);
}

std::unique_ptr<const BinaryMap> beta_map(double a, double b, double c) {
  return std::make_unique<BetaMap>(a, b, c);
}

namespace {

double log_likelihood(std::span<const double> X, std::size_t d, std::span<const double> t,
                      const Eigen::VectorXd& w) {
  double ll = 0.0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    double eta = 0.0;
    for (std::size_t j = 0; j < d; ++j) eta += X[i * d + j] * w(static_cast<Eigen::Index>(j));
    ll += t[i] * log_sigmoid(eta) + (1.0 - t[i]) * log_sigmoid(-eta);
  }
  return ll;
}

}  // namespace

std::vector<double> fit_logistic_regression(std::span<const double> X, std::size_t d,
                                            std::span<const double> t, const std::string& what) {
  using Eigen::Index;
  const std::size_t n = t.size();
  const auto D = static_cast<Index>(d);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(D);
  double ll = log_likelihood(X, d, t, w);
  for (int iteration = 0; iteration < 200; ++iteration) {
    Eigen::VectorXd grad = Eigen::VectorXd::Zero(D);
    Eigen::MatrixXd hess = Eigen::MatrixXd::Zero(D, D);
    for (std::size_t i = 0; i < n; ++i) {
      double eta = 0.0;
      for (std::size_t j = 0; j < d; ++j) eta += X[i * d + j] * w(static_cast<Index>(j));
      const double mu = sigmoid(eta);
      const double v = mu * (1.0 - mu);
      for (std::size_t j = 0; j < d; ++j) {
        grad(static_cast<Index>(j)) += (t[i] - mu) * X[i * d + j];
        for (std::size_t l = 0; l < d; ++l)
          hess(static_cast<Index>(j), static_cast<Index>(l)) += v * X[i * d + j] * X[i * d + l];
      }
    }
    // A tiny ridge keeps the solve defined when a feature is constant.
    hess.diagonal().array() += 1e-12 * (1.0 + hess.diagonal().array().abs());
    const Eigen::VectorXd step = hess.ldlt().solve(grad);
    if (!step.allFinite()) break;
    double scale = 1.0;
    Eigen::VectorXd next = w + step;
    double ll_next = log_likelihood(X, d, t, next);
    while (!(ll_next >= ll - 1e-14 * std::abs(ll)) && scale > 1e-10) {
      scale *= 0.5;
      next = w + scale * step;
      ll_next = log_likelihood(X, d, t, next);
    }
    const double size = (scale * step).cwiseAbs().maxCoeff();
    w = next;
    ll = ll_next;
    if (w.cwiseAbs().maxCoeff() > 1e8)
      throw DomainError(what +
                        ": the maximum-likelihood fit diverges (the outcomes are "
                        "separable by the score)");
    if (size < 1e-12 * (1.0 + w.cwiseAbs().maxCoeff())) break;
  }
  if (!w.allFinite()) throw DomainError(what + ": the logistic fit failed (non-finite value)");
  return {w.data(), w.data() + w.size()};
}

bool separable(std::span<const double> scores, std::span<const double> outcomes) {
  double min_pos = INFINITY, max_pos = -INFINITY, min_neg = INFINITY, max_neg = -INFINITY;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (outcomes[i] > 0.5) {
      min_pos = std::min(min_pos, scores[i]);
      max_pos = std::max(max_pos, scores[i]);
    } else {
      min_neg = std::min(min_neg, scores[i]);
      max_neg = std::max(max_neg, scores[i]);
    }
  }
  if (!std::isfinite(min_pos) || !std::isfinite(min_neg)) return true;
  return max_neg <= min_pos || max_pos <= min_neg;
}

std::string LogisticCalibrator::map_kind() const {
  switch (kind_) {
    case LogisticKind::logistic:
    case LogisticKind::platt:
      return "logit_linear";
    case LogisticKind::beta:
      return "beta";
    case LogisticKind::platt_probability:
      return "probability_linear";
    case LogisticKind::quadratic:
      return "logit_quadratic";
  }
  return "logit_linear";
}

std::string LogisticCalibrator::name() const {
  switch (kind_) {
    case LogisticKind::logistic:
      return "logistic";
    case LogisticKind::platt:
      return "platt";
    case LogisticKind::beta:
      return "beta";
    case LogisticKind::platt_probability:
      return "platt_probability";
    case LogisticKind::quadratic:
      return "quadratic";
  }
  return "?";
}

std::unique_ptr<const BinaryMap> LogisticCalibrator::fit(std::span<const double> scores,
                                                         std::span<const double> outcomes,
                                                         const std::string& what) const {
  const std::size_t n = scores.size();
  if (n == 0) throw DomainError(what + ": the fit sample is empty");
  const bool smoothed = kind_ == LogisticKind::platt || kind_ == LogisticKind::platt_probability;
  if (!smoothed && separable(scores, outcomes))
    throw DomainError(what +
                      ": the outcomes are separable by the score (or one outcome never occurs), "
                      "so the maximum-likelihood fit does not exist; platt's smoothed targets "
                      "avoid this");
  std::vector<double> targets(outcomes.begin(), outcomes.end());
  if (smoothed) {
    double positives = 0.0;
    for (double o : outcomes) positives += o > 0.5 ? 1.0 : 0.0;
    const double negatives = static_cast<double>(n) - positives;
    const double hi = (positives + 1.0) / (positives + 2.0), lo = 1.0 / (negatives + 2.0);
    for (std::size_t i = 0; i < n; ++i) targets[i] = outcomes[i] > 0.5 ? hi : lo;
  }
  if (kind_ == LogisticKind::platt_probability) {
    std::vector<double> X(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      X[2 * i] = scores[i];
      X[2 * i + 1] = 1.0;
    }
    const auto w = fit_logistic_regression(X, 2, targets, what);
    return std::make_unique<ProbabilityLinearMap>(w[0], w[1]);
  }
  if (kind_ == LogisticKind::quadratic) {
    // Separable by a monotone score was rejected above; separable by a parabola (positives
    // only in the middle) shows as a diverging fit, which fit_logistic_regression rejects.
    std::vector<double> X(3 * n);
    for (std::size_t i = 0; i < n; ++i) {
      const double f = logit_of(scores[i]);
      X[3 * i] = f;
      X[3 * i + 1] = f * f;
      X[3 * i + 2] = 1.0;
    }
    const auto w = fit_logistic_regression(X, 3, targets, what);
    return std::make_unique<LogitQuadraticMap>(w[2], w[0], w[1]);
  }
  if (kind_ != LogisticKind::beta) {
    std::vector<double> X(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      X[2 * i] = logit_of(scores[i]);
      X[2 * i + 1] = 1.0;
    }
    const auto w = fit_logistic_regression(X, 2, targets, what);
    return std::make_unique<LogitLinearMap>(w[0], w[1]);
  }
  // Beta calibration: features log s and -log(1 - s).
  std::vector<double> X(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const double s = std::clamp(scores[i], beta_eps, 1.0 - beta_eps);
    X[3 * i] = std::log(s);
    X[3 * i + 1] = -std::log(1.0 - s);
    X[3 * i + 2] = 1.0;
  }
  auto w = fit_logistic_regression(X, 3, targets, what);
  if (w[0] < 0.0 || w[1] < 0.0) {
    const std::size_t keep = w[0] < 0.0 ? 1 : 0;  // the feature that stays
    std::vector<double> X2(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      X2[2 * i] = X[3 * i + keep];
      X2[2 * i + 1] = 1.0;
    }
    const auto w2 = fit_logistic_regression(X2, 2, targets, what);
    w = keep == 1 ? std::vector<double>{0.0, w2[0], w2[1]} : std::vector<double>{w2[0], 0.0, w2[1]};
  }
  return std::make_unique<BetaMap>(w[0], w[1], w[2]);
}

}  // namespace calbench
