#pragma once
// The estimator interface: a finite sample -> one number, and the ground-truth quantity whose
// population value the number estimates (its target). Bias = E[estimate] - truth[target].
//
// The design, in three parts:
// - `Estimator` is the core every estimator has: estimate, target, the facts about its
//   population value and its limit, and which numbers of classes it takes.
// - What only some estimators can do is a capability: one small interface each, below
//   (AnalyticTest, SquaredErrorVariance, BiasModel, FixedTopLabelBins, ConfidenceOrdered,
//   MinimumRows; ExternalEstimator in external.hpp). Estimator::capabilities() names the ones an
//   estimator has in its configuration (the debiased ECE has a squared-error variance, the
//   plain one a bias model), null for the others; a caller asks for the capability it needs
//   instead of testing the estimator's type.
// - EstimatorWorkspace is a thread's scratch, reused across replicates: a few shared buffers
//   that pass between functions of any estimator (a scope's scores and outcomes, the bin sums
//   bin_statistics writes for its callers), and each family's own scratch, reached by its type
//   (workspace.scratch<KernelGrids>()), created at its first use in that workspace and reused
//   from then on. The workspace names no particular estimator: a family declares its scratch
//   beside its code (kernel_grids.hpp; binning.cpp, binned_ece.cpp, ece_sweep.cpp,
//   cumulative.cpp and kde_canonical.cpp keep theirs private) and a new estimator adds no member
//   here.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "core/quantity.hpp"
#include "core/sample.hpp"

namespace calbench {

// The scratch structs of the estimator families, each created on first use and kept by its
// type (EstimatorWorkspace::scratch). Scratch, not state: a copy of a workspace (one per thread)
// starts without any, as FftConvolution's copy does.
class ScratchSlots {
 public:
  ScratchSlots() = default;
  ScratchSlots(const ScratchSlots&) {}
  ScratchSlots& operator=(const ScratchSlots&) { return *this; }
  ScratchSlots(ScratchSlots&&) noexcept = default;
  ScratchSlots& operator=(ScratchSlots&&) noexcept = default;
  ~ScratchSlots() = default;

  // The T of this workspace, value-initialised at the first call. A handful of families use
  // one workspace, so a linear search finds it in a few comparisons.
  template <typename T>
  T& get() {
    const std::type_index key(typeid(T));
    for (const Slot& slot : slots_)
      if (slot.key == key) return *static_cast<T*>(slot.object.get());
    slots_.push_back({key, Owned(new T(), [](void* p) { delete static_cast<T*>(p); })});
    return *static_cast<T*>(slots_.back().object.get());
  }

 private:
  using Owned = std::unique_ptr<void, void (*)(void*)>;
  struct Slot {
    std::type_index key;
    Owned object;
  };
  std::vector<Slot> slots_;
};

// Per-thread scratch space for estimators, reused across replicates (no allocation per row).
struct EstimatorWorkspace {
  // One scope's scores and outcomes (fill_scope in cumulative.hpp, BinnedEce): filled by the
  // estimator, read by the functions it calls.
  std::vector<double> scores, outcomes;
  // Plain buffers for any estimator's use within one evaluation.
  std::vector<double> values;
  std::vector<std::uint32_t> bin_of;
  // The binned family's results (binning.hpp): the edges and, per bin, the count and the sums of
  // scores, of outcomes and of (score - outcome)^2 that bin_statistics writes for its callers.
  std::vector<double> edges;
  std::vector<double> bin_count, bin_score, bin_hits, bin_gap_squares;

  // A family's own scratch, by its type (see the design above).
  template <typename T>
  T& scratch() {
    return scratch_.get<T>();
  }

 private:
  ScratchSlots scratch_;
};

// An estimate of a squared calibration error S with its delta-method variance V; the
// estimator reports S, or sqrt(max(0, S)) when `root` (estimators/interval_methods.hpp).
struct SquaredErrorEstimate {
  double square = 0.0, variance = 0.0;
  bool root = false;
};

class AnalyticTest;
class SquaredErrorVariance;
class BiasModel;
class FixedTopLabelBins;
class ConfidenceOrdered;
class MinimumRows;
class ExternalEstimator;

// The capabilities an estimator has, each null when it has not: callers ask for the one they
// need (`if (const auto* test = estimator.capabilities().analytic_test)`). Written with
// designated initialisers: `return {.bias_model = this};`.
struct Capabilities {
  const AnalyticTest* analytic_test = nullptr;
  const SquaredErrorVariance* squared_error = nullptr;
  const BiasModel* bias_model = nullptr;
  const FixedTopLabelBins* fixed_top_label_bins = nullptr;
  const ConfidenceOrdered* confidence_order = nullptr;
  const MinimumRows* minimum_rows = nullptr;
  const ExternalEstimator* external = nullptr;
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
  // The capabilities below that this estimator has in its configuration; none by default.
  virtual Capabilities capabilities() const { return {}; }
};

// ---- capabilities ------------------------------------------------------------------------

// A calibration test with an analytic p-value (estimators/calibration_test.hpp: ks_calibration,
// kuiper_calibration, spiegelhalter, whatever their `output`). calbench plan's power questions
// test with it instead of consistency resampling.
class AnalyticTest {
 public:
  virtual ~AnalyticTest() = default;
  // The p-value of "calibrated" on this sample.
  virtual double p_value(const Sample& sample, EstimatorWorkspace& workspace) const = 0;
};

// An estimator of a squared calibration error with an analytic variance (the debiased ECE at
// scope top or binary), for the `analytic` interval (interval_methods.hpp).
class SquaredErrorVariance {
 public:
  virtual ~SquaredErrorVariance() = default;
  virtual SquaredErrorEstimate squared_error(const Sample& sample,
                                             EstimatorWorkspace& workspace) const = 0;
};

// A model-based estimate, from the sample, of the estimator's finite-sample bias
// E[T] - (its population value) (the binned L1 errors: bin_gap_bias.hpp), for the
// `bias_corrected` interval (interval_methods.hpp).
class BiasModel {
 public:
  virtual ~BiasModel() = default;
  virtual double finite_sample_bias(const Sample& sample, EstimatorWorkspace& workspace) const = 0;
};

// An estimator that sorts the rows by confidence and can take their order from whoever made the
// sample and knew it (the resamples of estimators/uncertainty.cpp, which build it in O(n)).
class ConfidenceOrdered {
 public:
  virtual ~ConfidenceOrdered() = default;
  // Estimator::estimate, with `order` the rows of `sample` in non-decreasing order of
  // confidence (empty: not known, the estimator sorts).
  virtual double estimate_in_order(const Sample& sample, std::span<const std::uint32_t> order,
                                   EstimatorWorkspace& workspace) const = 0;
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
  // The estimator's BiasModel::finite_sample_bias on those rows; nullopt when it has none.
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
