#pragma once
// `spiegelhalter`: Spiegelhalter's (1986) Z test of calibration ("Probabilistic prediction in
// patient management and clinical trials", Statistics in Medicine 5, eq. for Z; as R's
// rms::val.prob reports it).
//
// Scope top: s_i = max_k p_ik, o_i = 1{argmax p_i = y_i}; scope binary (K = 2): s_i = p_i1,
// o_i = 1{y_i = 1}. With
//   N = sum_i (o_i - s_i)(1 - 2 s_i)     (= n x (Brier score - its expectation under
//                                           calibration, sum_i s_i (1 - s_i) / n))
//   V = sum_i (1 - 2 s_i)^2 s_i (1 - s_i) (the variance of N under calibration)
// statistic = N / n, normalised Z = N / sqrt(V), two-sided p = 2 Phi(-|Z|) = erfc(|Z|/sqrt 2).
// V = 0 (every score 0, 1/2 or 1): Z = +-inf and p = 0 when N != 0, else Z = 0 and p = 1.
// The statistic is signed: at K = 2 (either scope) an overconfident model, r(s) on the far
// side of s from 1/2, makes both factors share a sign and N > 0; an underconfident one N < 0.
// For the top label at K >= 3 scores below 1/2 count with the opposite lever.
// Population value (its own target): E[(r(s) - s)(1 - 2s)], 0 under calibration, computed
// with c in place of the outcome (linear in the outcomes).
#include "estimators/binned_ece.hpp"
#include "estimators/calibration_test.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

struct SpiegelhalterSpec {
  Scope scope = Scope::top;  // top or binary
  TestSettings test{};
};

class Spiegelhalter final : public Estimator, public AnalyticTest {
 public:
  explicit Spiegelhalter(SpiegelhalterSpec spec);
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return std::nullopt; }
  bool has_population_value() const override;
  std::optional<std::string> classes_problem(std::size_t classes) const override;
  // The analytic p-value (the estimate with output p_value).
  Capabilities capabilities() const override { return {.analytic_test = this}; }
  double p_value(const Sample& sample, EstimatorWorkspace& workspace) const override;

 private:
  SpiegelhalterSpec spec_;
};

}  // namespace calbench
