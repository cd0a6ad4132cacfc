#pragma once
// Histogram binning (Zadrozny & Elkan 2001) as a binary calibrator, used one-vs-rest: the
// score axis is cut into B bins (recalibrators/score_bins.hpp; equal_mass by default, as
// Zadrozny & Elkan's equal-frequency bins) and a score maps to the mean outcome of the fit
// rows in its bin. An empty bin (possible with equal_width, or with ties under equal_mass)
// maps to its own midpoint, i.e. it is left roughly uncalibrated.
#include "recalibrators/binary_calibrator.hpp"
#include "recalibrators/score_bins.hpp"

namespace calbench {

class HistogramBinning : public BinaryCalibrator {
 public:
  // Throws DomainError unless bins >= 1.
  HistogramBinning(std::size_t bins, ScoreBinning binning);
  std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                       std::span<const double> outcomes,
                                       const std::string& what) const override;
  std::string name() const override { return "histogram_binning"; }
  std::string map_kind() const override { return "steps"; }

 private:
  std::size_t bins_;
  ScoreBinning binning_;
};

// A step map: interior edges and one value per bin (also scaling_binning's output stage).
class StepMap : public BinaryMap {
 public:
  StepMap(std::vector<double> edges, std::vector<double> values)
      : edges_(std::move(edges)), values_(std::move(values)) {}
  double operator()(double s) const override { return values_[bin_of(s, edges_)]; }
  std::vector<FittedValue> parameters() const override {
    return {{"bins", static_cast<double>(values_.size())}};
  }
  FittedState state() const override {
    return {.kind = "steps", .arrays = {{"edges", edges_}, {"values", values_}}};
  }

 private:
  std::vector<double> edges_, values_;
};

// The per-bin means of `values` over the rows in each bin of `keys` (midpoint for empty bins).
std::vector<double> bin_means(std::span<const double> keys, std::span<const double> values,
                              std::span<const double> edges);

}  // namespace calbench
