#include "estimators/calibration_test.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace calbench {

double test_output(const TestSettings& settings, double statistic, double normalized,
                   double p_value) {
  switch (settings.output) {
    case TestOutput::statistic:
      return statistic;
    case TestOutput::normalized:
      return normalized;
    case TestOutput::p_value:
      return p_value;
    case TestOutput::reject:
      return p_value <= settings.level ? 1.0 : 0.0;
  }
  return statistic;
}

// Neither Boost.Math nor another Debian-packaged library has these two distributions (Boost's
// kolmogorov_smirnov_distribution is the Brownian *bridge* of the goodness-of-fit test), so the
// series are summed here. Both are theta-function series whose terms fall like
// exp(-c k^2 / x^2) (times 1/k for the first): a term below 1e-18 of the running sum ends the
// sum, after about 6x terms. Beyond x = 40 both upper tails are below exp(-200) and the
// cdf is 1 in double precision.
constexpr double tail_end = 40.0;
double brownian_max_abs_cdf(double x) {
  if (!(x > 0.0)) return 0.0;
  if (x > tail_end) return 1.0;
  constexpr double pi = std::numbers::pi;
  double sum = 0.0;
  for (int k = 0; k < 1000; ++k) {
    const double odd = 2.0 * k + 1.0;
    const double term = std::exp(-odd * odd * pi * pi / (8.0 * x * x)) / odd;
    sum += (k % 2 == 0) ? term : -term;
    if (term < 1e-18 * std::abs(sum)) break;
  }
  return std::clamp(4.0 / pi * sum, 0.0, 1.0);
}

double brownian_range_cdf(double x) {
  if (!(x > 0.0)) return 0.0;
  if (x > tail_end) return 1.0;
  constexpr double pi = std::numbers::pi;
  double sum = 0.0;
  for (int k = 0; k < 1000; ++k) {
    const double half = k + 0.5;
    const double term = (8.0 / (x * x) + 2.0 / (half * half * pi * pi)) *
                        std::exp(-2.0 * half * half * pi * pi / (x * x));
    sum += term;
    if (term < 1e-18 * sum) break;
  }
  return std::clamp(sum, 0.0, 1.0);
}

}  // namespace calbench
