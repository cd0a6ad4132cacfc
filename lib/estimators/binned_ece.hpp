#pragma once
// The binned calibration-error family, one class composed of binning x scope x norm x
// convention (x debiasing):
// - `ece` (scope top): Guo et al. 2017, eq. 3; norm max is their MCE, norm average netcal's
//   and kyle's "ACE" (average calibration error).
// - `classwise_ece` (scope classwise): Kull et al. 2019's classwise ECE = Nixon et al. 2019's
//   SCE: (1/K) sum_k CE_k, CE_k the binned error of p_k against 1{y = k}. With a threshold
//   t > 0 only rows with p_k > t count for class k (weights n_kb / n_k over the n_k kept
//   rows), which with equal-mass bins is Nixon et al.'s TACE. norm l2: sqrt((1/K) sum CE_k^2).
// - `ace` (Nixon et al. 2019): classwise, equal-mass ranges, convention `nixon`.
// - scope binary (K = 2): scores p_1, outcomes 1{y = 1} (sklearn calibration_curve).
// - norm lp: (sum_b (n_b/n) |gap_b|^p)^(1/p); classwise ((1/K) sum_k CE_k^p)^(1/p), as Kumar
//   et al.'s `calibration` (_get_ce, mode marginal: np.mean(ces ** p) ** (1 / p)).
// - `ece_debiased` (Kumar et al. 2019): per bin (n_b/n)[(mean_b s - mean_b o)^2 -
//   mean_b o (1 - mean_b o)/(n_b - 1)], summed, an unbiased estimate of the squared binned L2
//   error; reports sqrt(max(0, .)) unless `squared`.
// Targets: see target(); conventions in estimators/convention.hpp and docs/conventions.md.
#include "estimators/binning.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

enum class Scope { top, classwise, binary };

struct BinnedEceSpec {
  std::size_t bins = 15;
  Binning binning = Binning::equal_width;
  Norm norm = Norm::l1;
  Scope scope = Scope::top;
  double threshold = 0.0;  // classwise: keep p_k > threshold (when > 0 or the convention drops 0)
  const Convention* convention = nullptr;  // nullptr: calbench
  bool debiased = false;                   // Kumar et al.'s debiased squared L2 (norm ignored)
  bool squared = false;                    // debiased: report the square, not its root
  double power = 2.0;                      // norm lp: the exponent p >= 1
};

class BinnedEce final : public Estimator, public SquaredErrorVariance, public BiasModel {
 public:
  explicit BinnedEce(BinnedEceSpec spec);  // bins >= 1, threshold in [0, 1)
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  bool converges_to_target() const override { return false; }
  std::optional<Quantity> target() const override;
  bool vanishes_when_calibrated() const override { return true; }
  std::optional<std::string> classes_problem(std::size_t classes) const override;
  // The debiased estimator at scope top or binary has a SquaredErrorVariance, the l1 norm
  // without debiasing a BiasModel, calbench's own top-label ECE with equal-width bins and norm
  // l1, l2 or max (the estimate's single-pass path) FixedTopLabelBins.
  Capabilities capabilities() const override {
    return {.squared_error = spec_.debiased && spec_.scope != Scope::classwise ? this : nullptr,
            .bias_model = !spec_.debiased && spec_.norm == Norm::l1 ? this : nullptr,
            .fixed_top_label_bins = top_bins_ ? &*top_bins_ : nullptr};
  }
  // SquaredErrorVariance, the debiased estimator (scope top or binary): S and its delta-method
  // variance over the bins b of weight w_b = n_b/n (Kumar et al. 2019's S, fixed bins):
  //   V = max(0, (1/n) [sum_b w_b e_b (4 v_b + e_b) - S^2]  +  (2/n^2) sum_b v_b^2),
  // e_b = T_b / w_b the bin's unbiased estimate of its squared gap d_b^2 (not clipped at 0:
  // that would add a positive term for every bin of a calibrated model), v_b the sample
  // variance (divisor n_b - 1) of s - o within the bin. The first term is the variance of S's
  // influence function IF = d_b (2 (s - o) - d_b) - S; it vanishes for a calibrated model,
  // where the second, the variance of the degenerate part sum_b w_b (eps_b^2 - v_b/n_b),
  // eps_b ~ N(0, v_b/n_b), is what remains. Bins with n_b < 2 add nothing to either term.
  // The first term is estimated without bias (mean 0 when calibrated) and may come out
  // negative; only the sum is clipped, since clipping it alone adds about 0.4 sd of its noise,
  // which inflated sqrt(V) by 14 % at 15 bins (20 % at 5) for a calibrated model.
  SquaredErrorEstimate squared_error(const Sample& sample,
                                     EstimatorWorkspace& workspace) const override;
  // BiasModel, norm l1 without debiasing (ece, classwise_ece, ace): the estimate of E[T] minus
  // the binned population value under the binomial model of each bin at its debiased gap
  // (bin_gap_bias.hpp), weighted and averaged over classes as the estimate is.
  double finite_sample_bias(const Sample& sample, EstimatorWorkspace& workspace) const override;
  const BinnedEceSpec& spec() const { return spec_; }

 private:
  // The estimate (binned_calibration_error) and finite_sample_bias (scope_error with `bias`)
  // from per-bin sums, the same arithmetic in the same order.
  class TopBins final : public FixedTopLabelBins {
   public:
    explicit TopBins(const BinnedEceSpec& spec);
    std::size_t bins() const override { return edges_.size() - 1; }
    std::size_t bin_of(double confidence) const override {
      return equal_width_bin(confidence, edges_);
    }
    double from_bin_sums(const TopLabelBinSums& sums) const override;
    std::optional<double> finite_sample_bias_from(const TopLabelBinSums& sums) const override;

   private:
    std::vector<double> edges_;
    Norm norm_;
  };
  std::optional<TopBins> top_bins_;
  // The error of one scope's scores against their outcomes; for l2 and the debiased estimator
  // the square (the root is taken after averaging over classes).
  // The top-label (or binary) scores and outcomes into workspace.scores, outcomes.
  void single_scope(const Sample& sample, EstimatorWorkspace& workspace) const;
  // With `bias`, each bin's |gap| is replaced by its abs_gap_bias (same weights).
  double scope_error(std::span<const double> scores, std::span<const double> outcomes,
                     EstimatorWorkspace& workspace, bool bias) const;
  // The estimate (or, with `bias`, finite_sample_bias) by the general path of each scope.
  double by_scope(const Sample& sample, EstimatorWorkspace& workspace, bool bias) const;
  BinnedEceSpec spec_;
};

}  // namespace calbench
