#include "recalibrators/kernel_calibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/stop_request.hpp"
#include "estimators/kde_canonical.hpp"

namespace calbench {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// log B(p_j / b + 1) for every fit row.
std::vector<double> log_normalisers(std::span<const double> p, std::size_t classes, double b) {
  const std::size_t n = p.size() / classes;
  const double total = std::lgamma(1.0 / b + static_cast<double>(classes));
  std::vector<double> out(n);
  for (std::size_t j = 0; j < n; ++j) {
    double sum = 0.0;
    for (std::size_t k = 0; k < classes; ++k) sum += std::lgamma(p[j * classes + k] / b + 1.0);
    out[j] = sum - total;
  }
  return out;
}

class KernelModel : public CalibrationModel {
 public:
  KernelModel(double bandwidth, std::size_t classes, std::vector<double> p,
              std::vector<std::uint32_t> labels)
      : bandwidth_(bandwidth), classes_(classes), p_(std::move(p)), labels_(std::move(labels)) {
    log_normaliser_ = log_normalisers(p_, classes_, bandwidth_);
  }

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    const std::size_t n = labels_.size(), rows = p.size() / classes;
    const Eigen::Map<const RowMatrix> centres(p_.data(), static_cast<Eigen::Index>(n),
                                              static_cast<Eigen::Index>(classes));
    // Blocks of rows keep the n x block matrix of log kernels small.
    constexpr std::size_t block = 256;
    RowMatrix logp, log_kernel;
    std::vector<double> top(classes), sum(classes);
    for (std::size_t first = 0; first < rows; first += block) {
      throw_if_stop_requested();  // a block is n x 256 kernels: Ctrl-C within a second
      const std::size_t count = std::min(block, rows - first);
      logp.resize(static_cast<Eigen::Index>(classes), static_cast<Eigen::Index>(count));
      for (std::size_t i = 0; i < count; ++i)
        for (std::size_t k = 0; k < classes; ++k)
          logp(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(i)) =
              safe_log(p[(first + i) * classes + k]);
      // log k_b(p_i; p_j) = sum_k (p_jk / b) log p_ik - log B(p_j / b + 1).
      log_kernel.noalias() = (centres / bandwidth_) * logp;
      for (std::size_t i = 0; i < count; ++i) {
        std::fill(top.begin(), top.end(), -std::numeric_limits<double>::infinity());
        for (std::size_t j = 0; j < n; ++j) {
          double& t = top[labels_[j]];
          t = std::max(t, log_kernel(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(i)) -
                              log_normaliser_[j]);
        }
        const double peak = *std::max_element(top.begin(), top.end());
        std::fill(sum.begin(), sum.end(), 0.0);
        for (std::size_t j = 0; j < n; ++j)
          sum[labels_[j]] +=
              std::exp(log_kernel(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(i)) -
                       log_normaliser_[j] - peak);
        auto out = q.subspan((first + i) * classes, classes);
        for (std::size_t k = 0; k < classes; ++k) out[k] = sum[k];
        normalise_row(out);
      }
    }
  }
  std::vector<FittedValue> parameters() const override { return {{"bandwidth", bandwidth_}}; }
  FittedState state() const override {
    return {.kind = "kernel",
            .scalars = {{"bandwidth", bandwidth_}},
            .arrays = {{"p", p_}, {"labels", std::vector<double>(labels_.begin(), labels_.end())}}};
  }

 private:
  double bandwidth_;
  std::size_t classes_;
  std::vector<double> p_;
  std::vector<std::uint32_t> labels_;
  std::vector<double> log_normaliser_;
};

// The grid bandwidth with the smallest leave-one-out log loss of the labels,
// -(1/n) sum_i log r_{-i}(p_i)_{y_i}, the first on ties; r_{-i} leaves row i out, and a
// probability of 0 counts as log(DBL_MIN). The inner products sum_k p_jk log p_ik do not depend
// on b, so each row's are computed once for the whole grid.
double loo_bandwidth(const Sample& s) {
  const auto& grid = kde_canonical_bandwidth_grid();
  const std::size_t n = s.size, K = s.classes;
  std::vector<std::vector<double>> log_norm;
  for (double b : grid) log_norm.push_back(log_normalisers(s.p, K, b));
  std::vector<double> loss(grid.size(), 0.0), logp(K), inner(n), value(n), sum(K);
  const double floor = std::log(std::numeric_limits<double>::min());
  for (std::size_t i = 0; i < n; ++i) {
    // O(n^2 K) in all (50,000 rows: tens of seconds): Ctrl-C is honoured per row.
    throw_if_stop_requested();
    for (std::size_t k = 0; k < K; ++k) logp[k] = safe_log(s.p[i * K + k]);
    for (std::size_t j = 0; j < n; ++j) {
      double dot = 0.0;
      for (std::size_t k = 0; k < K; ++k) dot += s.p[j * K + k] * logp[k];
      inner[j] = dot;
    }
    for (std::size_t g = 0; g < grid.size(); ++g) {
      double top = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < n; ++j) {
        value[j] = inner[j] / grid[g] - log_norm[g][j];
        if (j != i) top = std::max(top, value[j]);
      }
      std::fill(sum.begin(), sum.end(), 0.0);
      double total = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const double w = std::exp(value[j] - top);
        sum[s.label[j]] += w;
        total += w;
      }
      const double r = sum[s.label[i]] / total;
      loss[g] -= r > 0.0 ? std::max(std::log(r), floor) : floor;
    }
  }
  return grid[static_cast<std::size_t>(std::min_element(loss.begin(), loss.end()) - loss.begin())];
}

}  // namespace

std::unique_ptr<const CalibrationModel> kernel_model(double bandwidth, std::size_t classes,
                                                     std::vector<double> p,
                                                     std::vector<std::uint32_t> labels) {
  return std::make_unique<KernelModel>(bandwidth, classes, std::move(p), std::move(labels));
}

KernelCalibration::KernelCalibration(std::optional<double> bandwidth) : bandwidth_(bandwidth) {
  if (bandwidth_ && !(*bandwidth_ > 0.0 && std::isfinite(*bandwidth_)))
    throw DomainError("kernel: bandwidth = " + format_double(*bandwidth_) +
                      ": must be > 0 and finite");
}

std::unique_ptr<const CalibrationModel> KernelCalibration::fit(const Sample& sample) const {
  check_fit_sample(sample, name(), 2, "the leave-one-out bandwidth needs two rows");
  double b = 0.0;
  if (bandwidth_) {
    b = *bandwidth_;
  } else {
    b = loo_bandwidth(sample);
  }
  return std::make_unique<KernelModel>(b, sample.classes, sample.p, sample.label);
}

}  // namespace calbench
