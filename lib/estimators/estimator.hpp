#pragma once
// The estimator interface: a finite sample -> one number, and the ground-truth quantity whose
// population value the number estimates (its target). Bias = E[estimate] - truth[target].
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/fft_convolution.hpp"
#include "core/quantity.hpp"
#include "core/sample.hpp"

namespace calbench {

class ExternalEstimator;
class FixedTopLabelBins;

// Per-thread scratch space for estimators, reused across replicates (no allocation per row).
struct EstimatorWorkspace {
  std::vector<double> outcomes;  // 0/1 outcomes of a scope, filled by the estimator
  // equal-mass binning (estimators/binning.cpp)
  std::vector<std::uint32_t> bucket, bucket_start, gathered, fill, bucket_bin, edge_bucket;
  std::vector<double> values;
  std::vector<std::size_t> split;         // equal-mass split ranks
  std::vector<std::size_t> rank_scratch;  // ranks whose order statistics are wanted
  std::vector<std::size_t> rank_order;    // their indices in ascending order of rank
  std::vector<double> rank_values;        // and their values
  std::vector<double> edges;              // equal-mass bin edges
  std::vector<double> bin_sum, bin_count;
  // kernel estimators (estimators/smooth_ece.cpp, kde_ece.cpp): a grid of residual and unit
  // masses, the sampled kernel, and the smoothed grids
  std::vector<double> grid_residual, grid_mass, kernel, smooth_residual, smooth_mass;
  std::vector<double> window_residual, window_mass;  // the grid nodes a convolution reads
  FftConvolution convolution;
  std::size_t grid_points = 0;  // size the two mass grids were last filled for (0: stale)
  // the binned family (estimators/binning.cpp, binned_ece.cpp): one scope's scores, each
  // row's bin, per-bin sums of scores and outcomes, a sorted copy of the scores
  std::vector<double> scores, sorted, bin_score, bin_hits;
  std::vector<double> bin_gap_squares;  // per bin, sum of (score - outcome)^2
  std::vector<std::uint32_t> bin_of;
  std::vector<std::uint32_t> cell_bin;  // equal-width bins by table (binning.hpp)
  std::vector<std::size_t> kept;        // classwise: kept rows of each gathered class
  // The rows of `confidence_order_of` in non-decreasing order of confidence, when whoever made
  // that sample knew it (the resamples of estimators/uncertainty.cpp); estimators that sort by
  // confidence (uses_confidence_order) read it instead of sorting. Empty otherwise.
  std::span<const std::uint32_t> confidence_order;
  const Sample* confidence_order_of = nullptr;
};

// The known confidence order of `sample` (EstimatorWorkspace::confidence_order), or empty.
inline std::span<const std::uint32_t> known_confidence_order(const Sample& sample,
                                                             const EstimatorWorkspace& workspace) {
  if (workspace.confidence_order_of != &sample) return {};
  return workspace.confidence_order;
}

// An estimate of a squared calibration error S with its delta-method variance V; the
// estimator reports S, or sqrt(max(0, S)) when `root` (estimators/interval_methods.hpp).
struct SquaredErrorEstimate {
  double square = 0.0, variance = 0.0;
  bool root = false;
};

class Estimator {
 public:
  virtual ~Estimator() = default;
  virtual double estimate(const Sample& sample, EstimatorWorkspace& workspace) const = 0;
  // The quantity this estimator is consistent for; empty when it has none among the nine
  // (then its bias is not reported until the truth engine computes its own population value).
  virtual std::optional<Quantity> target() const = 0;
  // The truth engine computes an estimator's own population value (its limit as n grows; for
  // a binned estimator the binned quantity itself, so that bias splits into binning and
  // finite-sample parts) by evaluating an estimator on very large samples. That is this
  // estimator unless it returns another with the same limit that is cheaper at that size
  // (the quadratic SKCE returns its linear-time form). nullptr means this estimator.
  virtual std::shared_ptr<const Estimator> population_estimator() const { return nullptr; }
  // Whether the estimator converges to its target as n grows with every parameter fixed.
  // Binned estimators with a fixed number of bins converge to the binned quantity instead:
  // they say false, and the runner reports their binning and finite-sample bias apart.
  virtual bool converges_to_target() const { return true; }
  // Whether a population value exists at all: false for a test's p-value or its reject/accept
  // outcome (estimators/calibration_test.hpp), whose limit is not a property of the model
  // (and would be meaningless on the truth engine's Rao-Blackwellised outcomes): such an
  // estimator reports mean and sd, no bias.
  virtual bool has_population_value() const { return true; }
  // Whether the estimator's population value is 0 for every calibrated model (an error
  // measure): then a calibration test can be inverted into its interval (interval_methods.hpp).
  virtual bool vanishes_when_calibrated() const { return false; }
  // Why the estimator cannot take samples of `classes` classes (scope binary needs K = 2), or
  // nullopt. Configs check it for every cell before a run (and `validate`) starts, so a run
  // never stops at its first estimate for it.
  virtual std::optional<std::string> classes_problem(std::size_t /*classes*/) const {
    return std::nullopt;
  }
  // The squared error with its analytic variance, for estimators that have one (nullopt: none).
  virtual std::optional<SquaredErrorEstimate> squared_error(
      const Sample& /*sample*/, EstimatorWorkspace& /*workspace*/) const {
    return std::nullopt;
  }
  // A model-based estimate, from this sample, of the estimator's finite-sample bias
  // E[T] - (its population value), for the `bias_corrected` interval (interval_methods.hpp);
  // nullopt when the estimator has none.
  virtual std::optional<double> finite_sample_bias(const Sample& /*sample*/,
                                                   EstimatorWorkspace& /*workspace*/) const {
    return std::nullopt;
  }
  // Whether finite_sample_bias gives a value (it depends on the parameters, not the sample).
  virtual bool has_finite_sample_bias() const { return false; }
  // Capability: an estimator computed by a command outside the process (estimators/external.hpp),
  // which a scenario feeds whole batches of replicates; null for every in-process estimator.
  virtual const ExternalEstimator* external() const { return nullptr; }
  // Capability: a calibration test with an analytic p-value (estimators/calibration_test.hpp:
  // ks_calibration, kuiper_calibration, spiegelhalter, whatever their `output`): the p-value of
  // "calibrated" on this sample; nullopt for every other estimator. calbench plan's power
  // questions test with it instead of consistency resampling.
  virtual std::optional<double> analytic_p_value(const Sample& /*sample*/,
                                                 EstimatorWorkspace& /*workspace*/) const {
    return std::nullopt;
  }
  virtual bool has_analytic_test() const { return false; }
  // Capability: an estimator that is a function of per-bin sums over the top-label rows, each
  // row's bin fixed by its confidence alone (FixedTopLabelBins below); null for the others.
  virtual const FixedTopLabelBins* fixed_top_label_bins() const { return nullptr; }
  // Whether the estimator sorts the rows by confidence and reads a known order instead
  // (known_confidence_order): then a resampler that can give the order in O(n) does.
  virtual bool uses_confidence_order() const { return false; }
};

// The sums of the rows of each bin of a top-label binned statistic, every one added in row
// order: the rows, their confidences s, their outcomes o = 1{y = predicted} and s - o.
struct TopLabelBinSums {
  std::span<const double> count, score, hits, gap;
  double n = 0.0;  // the rows in all
};

// An estimator whose value on any rows is a function of their TopLabelBinSums, the bin of a
// row depending on its confidence alone (fixed edges: not equal-mass bins, whose edges move
// with the rows). The resampling of estimators/uncertainty.cpp then forms a resample's sums
// from the drawn rows' bins, confidences and outcomes, without building the resampled sample
// or binning it again: the same sums, added in the same order, so the same bits as
// Estimator::estimate on the resample.
class FixedTopLabelBins {
 public:
  virtual ~FixedTopLabelBins() = default;
  virtual std::size_t bins() const = 0;
  // The bin in [0, bins()) of a row with this confidence.
  virtual std::size_t bin_of(double confidence) const = 0;
  // The estimator's value on rows with these sums.
  virtual double from_bin_sums(const TopLabelBinSums& sums) const = 0;
  // The estimator's finite_sample_bias on those rows; nullopt when it has none.
  virtual std::optional<double> finite_sample_bias_from(const TopLabelBinSums& /*sums*/) const {
    return std::nullopt;
  }
};

// An estimator that evaluates nothing below a number of rows and returns its library's
// placeholder there (calib_err's 0 below 2 beta rows). `calbench eval` reports such a value as
// not estimable, with why(), instead of printing the placeholder as an estimate.
class MinimumRows {
 public:
  virtual ~MinimumRows() = default;
  virtual std::size_t minimum_rows() const = 0;
  // Why, for the note: "its bins of 100 rows leave none to evaluate below 200 rows".
  virtual std::string why() const = 0;
};

}  // namespace calbench
