#include "recalibrators/cross_fitted_error.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "core/error.hpp"

namespace calbench {
namespace {

// L(q, o) for one row, linear in the outcomes o_k (1{y = k}, or c_k on the truth engine's
// samples): nll = -sum_k o_k log q_k; brier = sum_k q_k^2 - 2 q_k o_k + o_k (= sum (q_k - o_k)^2
// for one-hot o).
double row_loss(RefitLoss loss, std::span<const double> q, const Sample& s, std::size_t i) {
  double total = 0.0;
  for (std::size_t k = 0; k < q.size(); ++k) {
    const double o = s.outcome(i, k);
    if (loss == RefitLoss::nll) {
      if (o != 0.0) total -= o * std::log(std::max(q[k], DBL_MIN));
    } else {
      total += q[k] * q[k] - 2.0 * q[k] * o + o;
    }
  }
  return total;
}

}  // namespace

CrossFittedError::CrossFittedError(CrossFittedSpec spec) : spec_(std::move(spec)) {
  if (!spec_.method) throw DomainError("cross_fitted_ce: a recalibration method is needed");
  if (spec_.folds < 2) throw DomainError("cross_fitted_ce: folds must be >= 2");
}

std::shared_ptr<const Estimator> CrossFittedError::population_estimator() const {
  return std::make_shared<TrueLossImprovement>(spec_.loss);
}

double CrossFittedError::estimate(const Sample& s, EstimatorWorkspace& /*workspace*/) const {
  const std::size_t n = s.size, K = s.classes, k = spec_.folds;
  if (n == 0) return 0.0;
  double total = 0.0;
  Sample train, held;
  std::vector<double> q;
  for (std::size_t fold = 0; fold < k && fold < n; ++fold) {
    const std::size_t held_rows = (n - fold + k - 1) / k;
    train.resize(n - held_rows, K);
    held.resize(held_rows, K);
    std::size_t t = 0, h = 0;
    for (std::size_t i = 0; i < n; ++i) {
      Sample& to = i % k == fold ? held : train;
      std::size_t& row = i % k == fold ? h : t;
      std::copy_n(s.p.begin() + static_cast<std::ptrdiff_t>(i * K), K,
                  to.p.begin() + static_cast<std::ptrdiff_t>(row * K));
      to.label[row] = s.label[i];
      ++row;
    }
    train.summarise();
    std::unique_ptr<const CalibrationModel> model;
    try {
      model = fit(*spec_.method, train);
    } catch (const DomainError&) {
      continue;  // a degenerate training part: g = identity for these rows
    }
    q.resize(held_rows * K);
    apply(*model, held.p, K, q);
    if (spec_.mixture) {
      const double w = 1.0 / (static_cast<double>(train.size) + 1.0);
      for (double& v : q) v = (1.0 - w) * v + w / static_cast<double>(K);
    }
    for (std::size_t i = fold, row = 0; i < n; i += k, ++row) {
      total += row_loss(spec_.loss, s.row(i), s, i) -
               row_loss(spec_.loss, {q.data() + row * K, K}, s, i);
    }
  }
  return total / static_cast<double>(n);
}

double TrueLossImprovement::estimate(const Sample& s, EstimatorWorkspace& /*workspace*/) const {
  if (s.truth.empty() || s.size == 0) return 0.0;
  double total = 0.0;
  for (std::size_t i = 0; i < s.size; ++i) {
    const std::span<const double> c{s.truth.data() + i * s.classes, s.classes};
    total += row_loss(loss_, s.row(i), s, i) - row_loss(loss_, c, s, i);
  }
  return total / static_cast<double>(s.size);
}

}  // namespace calbench
