#include "recalibrators/scaling_binning.hpp"

#include "core/error.hpp"
#include "recalibrators/histogram_binning.hpp"
#include "recalibrators/logistic_calibration.hpp"
#include "recalibrators/score_bins.hpp"

namespace calbench {
namespace {

class ScalingBinningMap : public BinaryMap {
 public:
  ScalingBinningMap(std::unique_ptr<const BinaryMap> scaler, std::vector<double> edges,
                    std::vector<double> values)
      : scaler_(std::move(scaler)), edges_(std::move(edges)), values_(std::move(values)) {}
  double operator()(double s) const override { return values_[bin_of((*scaler_)(s), edges_)]; }
  std::vector<FittedValue> parameters() const override {
    auto out = scaler_->parameters();
    out.push_back({"bins", static_cast<double>(values_.size())});
    return out;
  }
  FittedState state() const override {
    return {.kind = "scaling_binning",
            .arrays = {{"edges", edges_}, {"values", values_}},
            .parts = {scaler_->state()}};
  }

 private:
  std::unique_ptr<const BinaryMap> scaler_;
  std::vector<double> edges_, values_;
};

}  // namespace

std::unique_ptr<const BinaryMap> scaling_binning_map(std::unique_ptr<const BinaryMap> scaler,
                                                     std::vector<double> edges,
                                                     std::vector<double> values) {
  return std::make_unique<ScalingBinningMap>(std::move(scaler), std::move(edges),
                                             std::move(values));
}

ScalingBinning::ScalingBinning(std::size_t bins) : bins_(bins) {
  if (bins_ < 1) throw DomainError("scaling_binning: bins = 0: must be >= 1");
}

std::unique_ptr<const BinaryMap> ScalingBinning::fit(std::span<const double> scores,
                                                     std::span<const double> outcomes,
                                                     const std::string& what) const {
  if (scores.empty()) throw DomainError(what + ": the fit sample is empty");
  auto scaler = LogisticCalibrator(LogisticKind::platt).fit(scores, outcomes, what);
  std::vector<double> scaled(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) scaled[i] = (*scaler)(scores[i]);
  auto edges = interior_edges(scaled, bins_, ScoreBinning::equal_mass);
  auto values = bin_means(scaled, scaled, edges);
  return std::make_unique<ScalingBinningMap>(std::move(scaler), std::move(edges),
                                             std::move(values));
}

}  // namespace calbench
