#pragma once
// What a calibration-test estimator reports, and the null distributions of the cumulative
// statistics (estimators/cumulative.hpp, estimators/spiegelhalter.hpp).
//
// A test estimator computes a statistic T, its normalised form T/sigma (sigma its standard
// deviation under perfect calibration, computed from the scores alone) and an analytic p-value
// of "calibrated"; `output` chooses which one the estimator returns, and `reject` returns
// 1{p <= level}, so that the mean over replicates of an estimator_bias run is the test's
// rejection rate (its size at a calibrated generator, its power otherwise) and the sd over
// replicates gives that rate's standard error, sd / sqrt(R).
#include <string_view>

namespace calbench {

enum class TestOutput { statistic, normalized, p_value, reject };

struct TestSettings {
  TestOutput output = TestOutput::statistic;
  double level = 0.05;  // `reject` only: reject calibration when p <= level
};

// The value a test estimator reports from its statistic, its normalised form and its p-value.
double test_output(const TestSettings& settings, double statistic, double normalized,
                   double p_value);

// P(max_{t in [0,1]} |W(t)| <= x) for a standard Brownian motion W (the limit of the
// normalised Kolmogorov-Smirnov calibration statistic under calibration; Tygert 2023,
// "Calibration of P-values for calibration and for deviation of a subpopulation from the full
// population", eq. for the KS case; Feller 1951):
//   (4/pi) sum_{k>=0} (-1)^k / (2k+1) exp(-(2k+1)^2 pi^2 / (8 x^2)),  x > 0; 0 at x <= 0.
double brownian_max_abs_cdf(double x);

// P(max W - min W <= x) on [0, 1] (the limit of the normalised Kuiper statistic, i.e. the
// range of a standard Brownian motion; Feller 1951, Tygert 2023):
//   sum_{k>=0} (8/x^2 + 2/((k+1/2)^2 pi^2)) exp(-2 (k+1/2)^2 pi^2 / x^2),  x > 0; 0 at x <= 0.
double brownian_range_cdf(double x);

}  // namespace calbench
