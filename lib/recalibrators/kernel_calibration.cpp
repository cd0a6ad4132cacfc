#include "recalibrators/kernel_calibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/format.hpp"
#include "estimators/kde_canonical.hpp"

namespace calbench {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class KernelModel : public CalibrationModel {
 public:
  KernelModel(double bandwidth, std::size_t classes, std::vector<double> p,
              std::vector<std::uint32_t> labels)
      : bandwidth_(bandwidth), classes_(classes), p_(std::move(p)), labels_(std::move(labels)) {
    const std::size_t n = labels_.size();
    const double total = std::lgamma(1.0 / bandwidth_ + static_cast<double>(classes_));
    log_normaliser_.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (std::size_t k = 0; k < classes_; ++k)
        sum += std::lgamma(p_[j * classes_ + k] / bandwidth_ + 1.0);
      log_normaliser_[j] = sum - total;
    }
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
    EstimatorWorkspace workspace;
    const KdeCanonicalSpec loo{.power = 1, .bandwidth = std::nullopt, .squared = false};
    b = KdeCanonical(loo).bandwidth(sample, workspace);
  }
  return std::make_unique<KernelModel>(b, sample.classes, sample.p, sample.label);
}

}  // namespace calbench
