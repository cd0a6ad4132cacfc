#include "estimators/cumulative.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"

namespace calbench {

void fill_scope(const Sample& s, Scope scope, EstimatorWorkspace& ws) {
  const bool top = scope == Scope::top;
  ws.scores.resize(s.size);
  ws.outcomes.resize(s.size);
  for (std::size_t i = 0; i < s.size; ++i) {
    ws.scores[i] = top ? s.confidence[i] : s.p[2 * i + 1];
    ws.outcomes[i] = s.outcome(i, top ? s.predicted[i] : 1);
  }
}

namespace {

// cumulative_statistics's own scratch (EstimatorWorkspace::scratch): the rows by score.
struct CumulativeScratch {
  std::vector<std::size_t> sorted;
};

// The statistics over the rows in `order` (non-decreasing scores).
template <class Index>
CumulativeValue cumulative_in_order(std::span<const double> scores,
                                    std::span<const double> outcomes,
                                    std::span<const Index> order) {
  const std::size_t n = order.size();
  CumulativeValue out;
  const double inv_n = 1.0 / static_cast<double>(n);
  double sum = 0.0, hi = 0.0, lo = 0.0, variance = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    const double s = scores[order[j]];
    // Each term divided by n before summing, as MCGrad's cumulative sum of normalised
    // differences, so the references agree to rounding.
    sum += (outcomes[order[j]] - s) * inv_n;
    variance += s * (1.0 - s);
    if (j + 1 < n && scores[order[j + 1]] == s) continue;  // inside a run of ties
    hi = std::max(hi, sum);
    lo = std::min(lo, sum);
  }
  out.ks = std::max(hi, -lo);
  out.kuiper = hi - lo;
  out.sigma = std::sqrt(std::max(variance, 0.0)) * inv_n;
  return out;
}

}  // namespace

CumulativeValue cumulative_statistics(std::span<const double> scores,
                                      std::span<const double> outcomes, EstimatorWorkspace& ws,
                                      std::span<const std::uint32_t> order) {
  const std::size_t n = scores.size();
  if (n == 0) return {};
  if (!order.empty()) {
    if (order.size() != n) throw DomainError("cumulative statistics: order of the wrong size");
    return cumulative_in_order(scores, outcomes, order);
  }
  std::vector<std::size_t>& sorted = ws.scratch<CumulativeScratch>().sorted;
  sorted.resize(n);
  std::iota(sorted.begin(), sorted.end(), std::size_t{0});
  std::sort(sorted.begin(), sorted.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  return cumulative_in_order(scores, outcomes, std::span<const std::size_t>(sorted));
}

CumulativeCalibration::CumulativeCalibration(CumulativeSpec spec) : spec_(spec) {
  if (spec_.scope == Scope::classwise)
    throw DomainError("cumulative calibration statistics: scope must be top or binary");
  if (!(spec_.test.level > 0.0 && spec_.test.level < 1.0))
    throw DomainError("cumulative calibration statistics: level must be in (0, 1)");
}

bool CumulativeCalibration::vanishes_when_calibrated() const {
  return spec_.test.output == TestOutput::statistic || spec_.test.output == TestOutput::normalized;
}

bool CumulativeCalibration::has_population_value() const {
  return spec_.test.output == TestOutput::statistic;
}

std::optional<std::string> CumulativeCalibration::classes_problem(std::size_t classes) const {
  if (spec_.scope == Scope::binary && classes != 2)
    return "scope binary needs K = 2 classes, found K = " + std::to_string(classes);
  return std::nullopt;
}

double CumulativeCalibration::p_value(const Sample& s, EstimatorWorkspace& ws) const {
  CumulativeSpec spec = spec_;
  spec.test.output = TestOutput::p_value;
  return CumulativeCalibration(spec).estimate(s, ws);
}

double CumulativeCalibration::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  return estimate_in_order(s, {}, ws);
}

double CumulativeCalibration::estimate_in_order(const Sample& s,
                                                std::span<const std::uint32_t> order,
                                                EstimatorWorkspace& ws) const {
  if (const auto problem = classes_problem(s.classes)) throw DomainError(*problem);
  fill_scope(s, spec_.scope, ws);
  // At scope top the scores are the confidences, whose order a resample may know.
  if (spec_.scope != Scope::top) order = {};
  const CumulativeValue v = cumulative_statistics(ws.scores, ws.outcomes, ws, order);
  const bool ks = spec_.statistic == CumulativeStatistic::ks;
  const double statistic = ks ? v.ks : v.kuiper;
  if (spec_.test.output == TestOutput::statistic) return statistic;
  double normalized = 0.0;
  if (v.sigma > 0.0)
    normalized = statistic / v.sigma;
  else if (statistic > 0.0)
    normalized = std::numeric_limits<double>::infinity();
  const double cdf = ks ? brownian_max_abs_cdf(normalized) : brownian_range_cdf(normalized);
  return test_output(spec_.test, statistic, normalized, 1.0 - cdf);
}

}  // namespace calbench
