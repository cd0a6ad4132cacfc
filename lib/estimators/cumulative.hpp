#pragma once
// `ks_calibration` and `kuiper_calibration`: the cumulative-difference calibration statistics
// of Gupta et al. 2021 ("Calibration of neural networks using splines", their KS error) and
// Arrieta-Ibarra, Gujral, Tannen, Tygert & Xu 2022 ("Metrics of calibration for probabilistic
// predictions", JMLR 23(351): ECCE-MAD and ECCE-R), with the analytic p-values of Tygert 2023.
//
// Scope top: score s_i = max_k p_ik, outcome o_i = 1{argmax p_i = y_i}; scope binary (K = 2):
// s_i = p_i1, o_i = 1{y_i = 1}. With the rows sorted by score, the cumulative differences are
//   C_0 = 0,  C_j = (1/n) sum_{i <= j} (o_i - s_i),
// evaluated only at the end of each run of tied scores (so C is the function
// t -> (1/n) sum_i (o_i - s_i) 1{s_i <= t} at every threshold t, and the value does not depend
// on the order of tied rows; without ties this is every j, as MCGrad's `ecce` and Tygert's
// `calibration.cumulative` compute it).
//   Kolmogorov-Smirnov (ECCE-MAD, Gupta's KS): max_j |C_j|
//   Kuiper (ECCE-R, MCGrad's `ecce`):          max_j C_j - min_j C_j
// sigma = sqrt(sum_i s_i (1 - s_i)) / n is the standard deviation of C_n under calibration;
// under calibration KS/sigma and Kuiper/sigma tend to the maximum of |W| and the range of W, W a
// standard Brownian motion on [0, 1], whose cdfs give the p-values (calibration_test.hpp).
// sigma = 0 (every score 0 or 1): T/sigma is +inf and p = 0 when T > 0, else 0 and p = 1.
//
// Population value (target: its own): sup_t |E[(o - s) 1{s <= t}]| (KS) and
// sup_t E[(o - s) 1{s <= t}] - inf_t E[...] with the empty threshold 0 included (Kuiper); on
// the truth engine's samples the outcome is replaced by c (E[o | s] = E[c | s]), which is exact
// for these statistics because C is linear in the outcomes.
#include "estimators/binned_ece.hpp"
#include "estimators/calibration_test.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

enum class CumulativeStatistic { ks, kuiper };

struct CumulativeSpec {
  CumulativeStatistic statistic = CumulativeStatistic::kuiper;
  Scope scope = Scope::top;  // top or binary
  TestSettings test{};
};

// The statistic of one scope's scores and outcomes (any order; ties grouped), with sigma.
// `order`, when not empty, lists the rows by non-decreasing score (any order within ties), and
// the rows are not sorted again; the value is the same but for the order in which tied rows with
// different outcomes are added (the last bits).
struct CumulativeValue {
  double ks = 0.0, kuiper = 0.0, sigma = 0.0;
};
CumulativeValue cumulative_statistics(std::span<const double> scores,
                                      std::span<const double> outcomes,
                                      EstimatorWorkspace& workspace,
                                      std::span<const std::uint32_t> order = {});

class CumulativeCalibration final : public Estimator,
                                    public AnalyticTest,
                                    public ConfidenceOrdered {
 public:
  explicit CumulativeCalibration(CumulativeSpec spec);
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return std::nullopt; }
  bool vanishes_when_calibrated() const override;
  bool has_population_value() const override;
  std::optional<std::string> classes_problem(std::size_t classes) const override;
  // An analytic test whatever its output; at scope top the scores are the confidences, whose
  // order a resample may know.
  Capabilities capabilities() const override {
    return {.analytic_test = this, .confidence_order = spec_.scope == Scope::top ? this : nullptr};
  }
  // The analytic p-value (the estimate with output p_value).
  double p_value(const Sample& sample, EstimatorWorkspace& workspace) const override;
  double estimate_in_order(const Sample& sample, std::span<const std::uint32_t> order,
                           EstimatorWorkspace& workspace) const override;
  const CumulativeSpec& spec() const { return spec_; }

 private:
  CumulativeSpec spec_;
};

// One scope's scores and outcomes (Rao-Blackwellised outcomes when the sample keeps c) into
// workspace.scores and workspace.outcomes; shared with spiegelhalter.cpp.
void fill_scope(const Sample& sample, Scope scope, EstimatorWorkspace& workspace);

}  // namespace calbench
