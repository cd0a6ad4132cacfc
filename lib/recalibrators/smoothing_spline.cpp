#include "recalibrators/smoothing_spline.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"

namespace calbench {
namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// The package's defaults (splinecalib.SplineCalib.__init__).
constexpr std::size_t knot_sample_size = 30;
constexpr double prior_weight = 20.0;
constexpr double logodds_eps_default = 1e-4;
constexpr std::size_t folds = 5;
constexpr double held_out_decimals = 1e4;  // reg_prec = 4
// The held-out fifth's stream: fixed, so a fit is a pure function of its sample.
constexpr std::uint64_t fold_seed = 42;

double sigmoid(double x) {
  return x >= 0.0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}
// log(1 + e^x) without overflow.
double softplus(double x) {
  return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

double clipped_logit(double x, double eps) {
  const double c = std::clamp(x, eps, 1.0 - eps);
  return std::log(c / (1.0 - c));
}

// numpy.linspace(start, stop, num): start + i step, the last point exactly stop.
std::vector<double> linspace(double start, double stop, std::size_t num) {
  std::vector<double> out(num);
  const double step = (stop - start) / static_cast<double>(num - 1);
  for (std::size_t i = 0; i < num; ++i) out[i] = start + static_cast<double>(i) * step;
  out.back() = stop;
  return out;
}

// The unity prior's grid (x = y) and weights, scaled to a total weight of prior_weight.
void unity_prior(std::vector<double>& x, std::vector<double>& w) {
  std::vector<double> grid;
  for (double e : linspace(-8.0, -2.0, 19)) {
    grid.push_back(std::pow(10.0, e));
    grid.push_back(1.0 - std::pow(10.0, e));
  }
  for (double v : linspace(0.01, 0.99, 99)) grid.push_back(v);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  double total = 0.0;
  for (double g : grid) total += (g < 0.01 || g > 0.99) ? 1.0 / 18.0 : 1.0;
  for (double g : grid) {
    x.push_back(g);
    w.push_back(prior_weight / total * ((g < 0.01 || g > 0.99) ? 1.0 / 18.0 : 1.0));
  }
}

// The package's _compute_logodds_eps_from_data over every row in (0, 1). Its "closest to
// one", 1 - min(1 - x), is the largest x itself, so only the smallest x counts; kept as is.
double logodds_eps(std::span<const double> x) {
  double low = 1.0;
  for (double v : x)
    if (v > 0.0 && v < 1.0) low = std::min(low, v);
  const double exponent = std::nearbyint(std::log2(low)) - 1.0;  // numpy.round: half to even
  return std::max(1e-16, std::min(logodds_eps_default, std::exp2(exponent)));
}

class SplineMap : public BinaryMap {
 public:
  SplineMap(double eps, std::vector<double> knots, std::vector<double> coefficients, double lambda)
      : eps_(eps), knots_(std::move(knots)), beta_(std::move(coefficients)), lambda_(lambda) {}
  double operator()(double s) const override {
    const auto row = natural_spline_basis(clipped_logit(s, eps_), knots_);
    double eta = 0.0;
    for (std::size_t j = 0; j < row.size(); ++j) eta += row[j] * beta_[j];
    return sigmoid(eta);
  }
  std::vector<FittedValue> parameters() const override {
    return {{"lambda", lambda_}, {"knots", static_cast<double>(knots_.size())}};
  }
  FittedState state() const override {
    return {.kind = "smoothing_spline",
            .scalars = {{"eps", eps_}, {"lambda", lambda_}},
            .arrays = {{"knots", knots_}, {"coefficients", beta_}}};
  }

 private:
  double eps_;
  std::vector<double> knots_, beta_;
  double lambda_;
};

// (1/N) sum_i w_i [y_i softplus(-eta_i) + (1 - y_i) softplus(eta_i)] + lambda/d ||beta||^2,
// N the rows: convex, minimised by Newton's method with step halving from beta = 0. (The
// package uses L-BFGS-B with gtol 1e-4; the cubic columns of the log-odds span 1e4 and more,
// so first-order methods crawl, while d <= 39 keeps a Newton step cheap.)
double objective(const MatrixXd& X, const VectorXd& y, const VectorXd& w, double lambda,
                 const VectorXd& beta) {
  const VectorXd eta = X * beta;
  double f = 0.0;
  for (Index i = 0; i < eta.size(); ++i)
    f += w(i) * (y(i) * softplus(-eta(i)) + (1.0 - y(i)) * softplus(eta(i)));
  return f / static_cast<double>(X.rows()) +
         lambda / static_cast<double>(beta.size()) * beta.squaredNorm();
}

// From `start` (the optimum is unique, so a warm start changes only the cost).
VectorXd minimise(const MatrixXd& X, const VectorXd& y, const VectorXd& w, double lambda,
                  VectorXd beta) {
  const double N = static_cast<double>(X.rows()), d = static_cast<double>(X.cols());
  double f = objective(X, y, w, lambda, beta);
  for (int iteration = 0; iteration < 200; ++iteration) {
    const VectorXd eta = X * beta;
    VectorXd r(eta.size()), v(eta.size());
    for (Index i = 0; i < eta.size(); ++i) {
      const double mu = sigmoid(eta(i));
      r(i) = w(i) * (mu - y(i));
      v(i) = w(i) * mu * (1.0 - mu);
    }
    const VectorXd grad = X.transpose() * r / N + 2.0 * lambda / d * beta;
    MatrixXd hess(X.cols(), X.cols());
    hess.setZero();
    hess.selfadjointView<Eigen::Lower>().rankUpdate((X.transpose() * v.cwiseSqrt().asDiagonal()),
                                                    1.0 / N);
    hess.triangularView<Eigen::StrictlyUpper>() = hess.transpose();
    hess.diagonal().array() += 2.0 * lambda / d + 1e-12 * (1.0 + hess.diagonal().array().abs());
    const VectorXd step = hess.ldlt().solve(grad);
    if (!step.allFinite()) break;
    double scale = 1.0, f_next = objective(X, y, w, lambda, beta - step);
    while (!(f_next <= f + 1e-15 * std::abs(f)) && scale > 1e-10) {
      scale *= 0.5;
      f_next = objective(X, y, w, lambda, beta - scale * step);
    }
    if (!(f_next <= f + 1e-15 * std::abs(f))) break;  // no descent left: at the optimum
    beta -= scale * step;
    f = f_next;
    if ((scale * step).cwiseAbs().maxCoeff() < 1e-12 * (1.0 + beta.cwiseAbs().maxCoeff())) break;
  }
  return beta;
}

MatrixXd design(std::span<const double> t, std::span<const double> knots) {
  MatrixXd X(static_cast<Index>(t.size()), static_cast<Index>(knots.size()));
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto row = natural_spline_basis(t[i], knots);
    for (std::size_t j = 0; j < row.size(); ++j)
      X(static_cast<Index>(i), static_cast<Index>(j)) = row[j];
  }
  return X;
}

}  // namespace

std::vector<double> smoothing_spline_knots(std::span<const double> scores,
                                           const std::string& what) {
  std::vector<double> unique(scores.begin(), scores.end());
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  const std::size_t m = unique.size();
  if (m < 3)
    throw DomainError(what + ": the fit sample has " + std::to_string(m) +
                      " distinct scores; the spline needs at least 3");
  std::vector<double> knots;
  if (m > knot_sample_size) {
    knots = {unique.front(), unique.back()};
    const std::size_t interior = m - 2, take = knot_sample_size - 2;
    for (std::size_t i = 0; i < take; ++i) {
      const auto rank = static_cast<std::size_t>(
          std::llround(static_cast<double>(i) * static_cast<double>(interior - 1) /
                       static_cast<double>(take - 1)));
      knots.push_back(unique[1 + rank]);
    }
  } else {
    knots = unique;
  }
  for (double k : linspace(0.1, 0.9, 9)) knots.push_back(k);
  std::sort(knots.begin(), knots.end());
  knots.erase(std::unique(knots.begin(), knots.end()), knots.end());
  return knots;
}

std::vector<double> natural_spline_basis(double x, std::span<const double> knots) {
  const std::size_t K = knots.size();
  std::vector<double> row(K, 0.0);
  row[0] = 1.0;
  if (K < 2) return row;
  row[1] = x;
  const double last = knots[K - 1];
  auto d = [&](double xi) {
    const double a = std::max(x - xi, 0.0), b = std::max(x - last, 0.0);
    return (a * a * a - b * b * b) / (last - xi);
  };
  const double d_last = d(knots[K - 2]);
  for (std::size_t i = 1; i + 1 < K; ++i) row[i + 1] = d(knots[i - 1]) - d_last;
  return row;
}

std::unique_ptr<const BinaryMap> smoothing_spline_map(double eps, std::vector<double> knots,
                                                      std::vector<double> coefficients,
                                                      double lambda) {
  return std::make_unique<SplineMap>(eps, std::move(knots), std::move(coefficients), lambda);
}

SmoothingSplineCalibrator::SmoothingSplineCalibrator(std::optional<double> lambda)
    : lambda_(lambda) {
  if (lambda_ && !(*lambda_ >= 0.0 && std::isfinite(*lambda_)))
    throw DomainError("smoothing_spline: lambda = " + format_double(*lambda_) +
                      ": must be >= 0 and finite");
}

std::unique_ptr<const BinaryMap> SmoothingSplineCalibrator::fit(std::span<const double> scores,
                                                                std::span<const double> outcomes,
                                                                const std::string& what) const {
  if (scores.empty()) throw DomainError(what + ": the fit sample is empty");
  const std::vector<double> knots_p = smoothing_spline_knots(scores, what);
  const std::size_t n = scores.size();
  // Rows: the data, then the unity prior.
  std::vector<double> x(scores.begin(), scores.end()), y(outcomes.begin(), outcomes.end());
  std::vector<double> w(n, 1.0);
  std::vector<double> prior_x;
  unity_prior(prior_x, w);
  x.insert(x.end(), prior_x.begin(), prior_x.end());
  y.insert(y.end(), prior_x.begin(), prior_x.end());
  const double eps = logodds_eps(x);
  std::vector<double> knots;
  for (double k : knots_p) knots.push_back(clipped_logit(k, eps));
  knots.erase(std::unique(knots.begin(), knots.end()), knots.end());
  std::vector<double> t(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) t[i] = clipped_logit(x[i], eps);
  const MatrixXd X = design(t, knots);
  const Eigen::Map<const VectorXd> Y(y.data(), static_cast<Index>(y.size()));
  const Eigen::Map<const VectorXd> W(w.data(), static_cast<Index>(w.size()));

  double lambda = 0.0;
  if (lambda_) {
    lambda = *lambda_;
  } else {
    // One stratified fifth of the data rows held out; the prior's rows always train.
    std::vector<bool> held_out(x.size(), false);
    Engine engine = make_engine({fold_seed, 0, 0, Purpose::split});
    for (const double label : {0.0, 1.0}) {
      std::vector<std::size_t> members;
      for (std::size_t i = 0; i < n; ++i)
        if (outcomes[i] == label) members.push_back(i);
      for (std::size_t i = members.size(); i > 1; --i) {
        boost::random::uniform_int_distribution<std::size_t> pick(0, i - 1);
        std::swap(members[i - 1], members[pick(engine)]);
      }
      const auto count = static_cast<std::size_t>(
          std::llround(static_cast<double>(members.size()) / static_cast<double>(folds)));
      for (std::size_t j = 0; j < count; ++j) held_out[members[j]] = true;
    }
    std::vector<Index> train, test;
    for (std::size_t i = 0; i < x.size(); ++i)
      (held_out[i] ? test : train).push_back(static_cast<Index>(i));
    const MatrixXd X_train = X(train, Eigen::all);
    const VectorXd Y_train = Y(train), W_train = W(train);
    double best = std::numeric_limits<double>::infinity();
    lambda = std::pow(10.0, -4.0);
    VectorXd warm = VectorXd::Zero(X.cols());
    for (double e : linspace(-4.0, 4.0, 17)) {
      const double candidate = std::pow(10.0, e);
      if (test.empty()) break;
      const VectorXd beta = minimise(X_train, Y_train, W_train, candidate, warm);
      warm = beta;
      double loss = 0.0;
      for (Index i : test) {
        const double p = std::clamp(sigmoid(X.row(i).dot(beta)), 1e-16, 1.0 - 1e-16);
        loss -= Y(i) * std::log(p) + (1.0 - Y(i)) * std::log(1.0 - p);
      }
      loss = std::nearbyint(loss / static_cast<double>(test.size()) * held_out_decimals) /
             held_out_decimals;
      if (loss < best) {
        best = loss;
        lambda = candidate;
      }
    }
  }
  const VectorXd beta = minimise(X, Y, W, lambda, VectorXd::Zero(X.cols()));
  if (!beta.allFinite()) throw DomainError(what + ": the spline fit failed (non-finite value)");
  return std::make_unique<SplineMap>(
      eps, std::move(knots), std::vector<double>(beta.data(), beta.data() + beta.size()), lambda);
}

}  // namespace calbench
