#pragma once
// `calib_err`: the calibration error of hendrycks/outlier-exposure's utils/calibration_tools.py
// (`calib_err(confidence, correct, p, beta)`, copied into many LLM evaluation harnesses).
// The confidences max_k p_k are sorted (stably here; numpy's argsort is not stable, so where
// tied scores straddle a bin boundary the library's split is unspecified) and cut into
// m = floor(n / beta) bins of beta rows, the last one extended to the end (n - (m-1) beta
// rows). That last bin is never evaluated (the library loops over range(len(bins) - 1)), but
// the weights stay beta / n: at n = 830, beta = 100 it ignores 130 rows (15.7 %).
//   l2 (p = '2', its default): sqrt(sum_{b < m-1} (beta/n) gap_b^2)
//   l1 (p = '1'):              sum_{b < m-1} (beta/n) |gap_b|
//   max (p = 'infty'):         max_{b < m-1} |gap_b|
// gap_b = mean confidence - mean correctness of bin b. With m = 1 (beta <= n < 2 beta) no bin
// is evaluated and the library returns 0; with n < beta it raises an IndexError, where
// calbench also returns 0.
// Its limit as n grows keeps the label noise of beta-row bins (each |gap_b| carries an error
// of sd about sqrt(acc (1 - acc) / beta)), which the truth engine's Rao-Blackwellised
// outcomes lack, so it has no population value here: bias is reported against its target
// (ece_top_l2 or ece_top_l1), and it does not vanish as n grows.
#include "estimators/binning.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

struct CalibErrSpec {
  std::size_t beta = 100;  // rows per bin
  Norm norm = Norm::l2;    // l1, l2 or max
};

class CalibErr final : public Estimator, public MinimumRows {
 public:
  explicit CalibErr(CalibErrSpec spec);  // beta >= 1; norm l1, l2 or max
  std::size_t minimum_rows() const override { return 2 * spec_.beta; }
  std::string why() const override;
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override;
  bool converges_to_target() const override { return false; }
  bool has_population_value() const override { return false; }
  Capabilities capabilities() const override { return {.minimum_rows = this}; }

 private:
  CalibErrSpec spec_;
};

}  // namespace calbench
