#include "recalibrators/cdf_spline.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace calbench {
namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

class CdfSplineMap : public BinaryMap {
 public:
  CdfSplineMap(std::vector<double> x, std::vector<double> y) : x_(std::move(x)), y_(std::move(y)) {}
  double operator()(double s) const override {
    double v = 0.0;
    if (s <= x_.front()) {
      v = y_.front();
    } else if (s >= x_.back()) {
      v = y_.back();
    } else {
      const auto j =
          static_cast<std::size_t>(std::upper_bound(x_.begin(), x_.end(), s) - x_.begin());
      const double t = (s - x_[j - 1]) / (x_[j] - x_[j - 1]);
      v = y_[j - 1] + t * (y_[j] - y_[j - 1]);
    }
    return std::clamp(v, 0.0, 1.0);
  }
  FittedState state() const override {
    return {.kind = "cdf_spline", .arrays = {{"x", x_}, {"y", y_}}};
  }

 private:
  std::vector<double> x_, y_;
};

// Second derivatives at the knots from the knot values, natural end conditions (M = 0 at both
// ends): the interior rows solve tridiag(1, 4, 1) M = (6/delta^2) (y_{i} - 2 y_{i+1} + y_{i+2}).
MatrixXd second_derivatives(std::size_t knots, double delta) {
  const auto m = static_cast<Index>(knots), inner = m - 2;
  MatrixXd A = MatrixXd::Zero(inner, inner), B = MatrixXd::Zero(inner, m);
  for (Index i = 0; i < inner; ++i) {
    A(i, i) = 4.0;
    if (i > 0) A(i, i - 1) = A(i - 1, i) = 1.0;
    B(i, i) = 1.0;
    B(i, i + 1) = -2.0;
    B(i, i + 2) = 1.0;
  }
  B *= 6.0 / (delta * delta);
  MatrixXd out = MatrixXd::Zero(m, m);
  out.middleRows(1, inner) = A.partialPivLu().solve(B);
  return out;
}

// Row of the map from (M, knot values) to the spline (derivative = false) or its derivative
// at x, on the interval j = floor(x / delta) clamped to the last one.
void basis_row(double x, double delta, std::size_t knots, bool derivative, Eigen::Ref<VectorXd> mM,
               Eigen::Ref<VectorXd> my) {
  mM.setZero();
  my.setZero();
  auto j = static_cast<Index>(std::floor(x / delta));
  j = std::clamp<Index>(j, 0, static_cast<Index>(knots) - 2);
  const double t = x - static_cast<double>(j) * delta;
  if (!derivative) {
    mM(j) = -t * t * t / (6.0 * delta) + t * t / 2.0 - 2.0 * delta * t / 6.0;
    mM(j + 1) = t * t * t / (6.0 * delta) - delta * t / 6.0;
    my(j) = 1.0 - t / delta;
    my(j + 1) = t / delta;
  } else {
    mM(j) = -t * t / (2.0 * delta) + t - 2.0 * delta / 6.0;
    mM(j + 1) = t * t / (2.0 * delta) - delta / 6.0;
    my(j) = -1.0 / delta;
    my(j + 1) = 1.0 / delta;
  }
}

}  // namespace

std::unique_ptr<const BinaryMap> cdf_spline_map(std::vector<double> x, std::vector<double> y) {
  return std::make_unique<CdfSplineMap>(std::move(x), std::move(y));
}

CdfSplineCalibrator::CdfSplineCalibrator(std::size_t knots) : knots_(knots) {
  if (knots_ < 3)
    throw DomainError("cdf_spline: knots = " + std::to_string(knots_) + ": must be >= 3");
}

std::unique_ptr<const BinaryMap> CdfSplineCalibrator::fit(std::span<const double> scores,
                                                          std::span<const double> outcomes,
                                                          const std::string& what) const {
  const std::size_t n = scores.size();
  if (n < knots_)
    throw DomainError(what + ": the fit sample has " + std::to_string(n) +
                      " rows, fewer than its " + std::to_string(knots_) + " spline knots");
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  const double delta = 1.0 / static_cast<double>(knots_ - 1);
  const MatrixXd M_of_knots = second_derivatives(knots_, delta);
  const auto K = static_cast<Index>(knots_);
  MatrixXd design(static_cast<Index>(n), K), slope(static_cast<Index>(n), K);
  VectorXd h(static_cast<Index>(n)), mM(K), my(K);
  double cumulative = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = order[i];
    cumulative += (outcomes[r] - scores[r]) / static_cast<double>(n);
    h(static_cast<Index>(i)) = cumulative;
    const double x = static_cast<double>(i) / static_cast<double>(n - 1);
    basis_row(x, delta, knots_, false, mM, my);
    design.row(static_cast<Index>(i)) = (mM.transpose() * M_of_knots + my.transpose());
    basis_row(x, delta, knots_, true, mM, my);
    slope.row(static_cast<Index>(i)) = (mM.transpose() * M_of_knots + my.transpose());
  }
  const VectorXd knot_values = design.completeOrthogonalDecomposition().solve(h);
  const VectorXd derivative = slope * knot_values;
  std::vector<double> x, y, count;
  for (std::size_t i = 0; i < n; ++i) {
    const double s = scores[order[i]], g = derivative(static_cast<Index>(i)) + s;
    if (x.empty() || s != x.back()) {
      x.push_back(s);
      y.push_back(0.0);
      count.push_back(0.0);
    }
    y.back() += g;
    count.back() += 1.0;
  }
  for (std::size_t j = 0; j < x.size(); ++j) y[j] /= count[j];
  if (!std::all_of(y.begin(), y.end(), [](double v) { return std::isfinite(v); }))
    throw DomainError(what + ": the spline fit failed (non-finite value)");
  return std::make_unique<CdfSplineMap>(std::move(x), std::move(y));
}

}  // namespace calbench
