#include "estimators/interval_methods.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace calbench {
namespace {

void check_level(double level) {
  if (!(level > 0.0 && level < 1.0))
    throw DomainError("level = " + std::to_string(level) + ": must be > 0 and < 1");
}

double normal_quantile(double a) {
  return boost::math::quantile(boost::math::normal_distribution<double>(), a);
}

double normal_cdf(double z) {
  return boost::math::cdf(boost::math::normal_distribution<double>(), z);
}

// The values in ascending order for quantile_type7_sorted: a view of them when they are sorted
// already (sample_intervals sorts each bootstrap column once for all its methods), else a
// sorted copy.
class SortedValues {
 public:
  explicit SortedValues(std::span<const double> values) : sorted_(values) {
    if (std::is_sorted(values.begin(), values.end())) return;
    copy_.assign(values.begin(), values.end());
    std::sort(copy_.begin(), copy_.end());
    sorted_ = copy_;
  }
  double quantile(double a) const { return quantile_type7_sorted(sorted_, a); }

 private:
  std::vector<double> copy_;
  std::span<const double> sorted_;
};

// The hull of `out` and {0} when the consistency test keeps calibration at size 1 - level.
Interval joined_with_zero(Interval out, const IntervalInputs& in, double level) {
  if (*in.p_calibrated > 1.0 - level) {
    out.lo = std::min(out.lo, 0.0);
    out.hi = std::max(out.hi, 0.0);
  }
  return out;
}

// The values of estimator e from values[b * E + e].
void column_of(const std::vector<double>& values, std::size_t E, std::size_t e,
               std::vector<double>& out) {
  const std::size_t R = E == 0 ? 0 : values.size() / E;
  out.resize(R);
  for (std::size_t b = 0; b < R; ++b) out[b] = values[b * E + e];
}

}  // namespace

SampleIntervals sample_intervals(const Sample& sample, std::span<const Estimator* const> estimators,
                                 std::span<const double> observed,
                                 const std::vector<std::vector<IntervalMethod>>& methods,
                                 const IntervalRequest& request, const ResampleKey& key,
                                 Execution execution, ResampleWorkspace& resample,
                                 EstimatorWorkspace& workspace) {
  const std::size_t E = estimators.size(), M = methods.size();
  const auto wants = [&](std::size_t e, IntervalMethod method) {
    for (const auto& m : methods)
      if (m[e] == method) return true;
    return false;
  };
  // The jackknife (BCa's acceleration) evaluates only the estimators that ask for bca: it is G
  // more evaluations of each, and an expensive estimator (an external program, ace) should not
  // pay them for another's interval.
  std::vector<const Estimator*> jack_list;
  std::vector<std::size_t> jack_of(E, E);  // index into `jack_list`, E: none
  // The bias statistics of the estimators that have one and ask for bias_corrected.
  std::vector<FiniteSampleBias> corrected;
  std::vector<std::size_t> corrected_of(E, E);  // index into `corrected`, E: none
  std::vector<std::optional<double>> corrected_value(E);
  for (std::size_t e = 0; e < E; ++e) {
    if (wants(e, IntervalMethod::bca)) {
      jack_of[e] = jack_list.size();
      jack_list.push_back(estimators[e]);
    }
    if (!wants(e, IntervalMethod::bias_corrected)) continue;
    const BiasModel* model = estimators[e]->capabilities().bias_model;
    if (!model) continue;
    corrected_value[e] = observed[e] - model->finite_sample_bias(sample, workspace);
    corrected_of[e] = corrected.size();
    corrected.emplace_back(*estimators[e]);
  }
  // The bootstrap evaluates the estimators with a method that reads its values: analytic and
  // fake alone resample nothing (an estimator's values do not depend on which others share the
  // resamples: resample b's rows come from its own stream).
  std::vector<const Estimator*> boot_list;
  std::vector<std::size_t> boot_of(E, E);  // index into `boot_list`, E: not bootstrapped
  for (std::size_t e = 0; e < E; ++e) {
    bool reads = false;
    for (const auto& m : methods)
      reads |= m[e] != IntervalMethod::analytic && m[e] != IntervalMethod::fake;
    if (!reads) continue;
    boot_of[e] = boot_list.size();
    boot_list.push_back(estimators[e]);
  }
  const bool resampled = !boot_list.empty();
  const auto phase = [&](std::string_view name, std::size_t total) {
    if (request.progress.begin) request.progress.begin(name, total);
  };
  const ResampleCounter& counter = request.progress.counter;
  // beta* (bias_corrected) on the bootstrap's own resamples: one pass evaluates the estimators
  // and then the bias statistics on each resample, columns booted + c of the values.
  const std::size_t booted = boot_list.size();
  for (const auto& c : corrected) boot_list.push_back(&c);
  const std::size_t columns = boot_list.size();
  if (resampled) phase("bootstrap", request.resamples);
  const auto boot = resampled ? bootstrap_values(sample, boot_list, key, request.resamples,
                                                 execution, resample, counter)
                              : std::vector<double>();
  bool test = request.p_values;
  for (std::size_t e = 0; e < E; ++e)
    test |= wants(e, IntervalMethod::consistency) || wants(e, IntervalMethod::bias_corrected);
  if (test) phase("consistency test", request.resamples);
  const auto null = test ? consistency_values(sample, estimators, key, request.resamples, execution,
                                              resample, counter)
                         : std::vector<double>();
  const bool jackknife = !jack_list.empty() && sample.size >= 2;
  if (jackknife) phase("jackknife", std::min(request.jackknife_groups, sample.size));
  const auto jack = jackknife ? jackknife_values(sample, jack_list, request.jackknife_groups,
                                                 execution, resample, counter)
                              : std::vector<double>();
  SampleIntervals out;
  if (test) out.p_values = consistency_p_values(null, observed);
  out.intervals.assign(M * E, std::nullopt);
  std::vector<double> column, jack_column, bias_column, corrected_column;
  for (std::size_t e = 0; e < E; ++e) {
    column.clear();
    if (boot_of[e] < E) column_of(boot, columns, boot_of[e], column);
    jack_column.clear();
    if (jack_of[e] < E) column_of(jack, jack_list.size(), jack_of[e], jack_column);
    IntervalInputs in;
    in.estimate = observed[e];
    in.bootstrap = column;
    in.jackknife = jack_column;
    if (test) in.p_calibrated = out.p_values[e];
    in.vanishes_when_calibrated = estimators[e]->vanishes_when_calibrated();
    if (const auto* variance = estimators[e]->capabilities().squared_error;
        variance && wants(e, IntervalMethod::analytic))
      in.squared = variance->squared_error(sample, workspace);
    corrected_column.clear();
    if (corrected_of[e] < E) {  // U* = T* - beta*, resample by resample
      column_of(boot, columns, booted + corrected_of[e], bias_column);
      for (std::size_t b = 0; b < column.size(); ++b)
        corrected_column.push_back(column[b] - bias_column[b]);
    }
    // Once for every method's quantiles; the methods use the bootstrap values' order nowhere
    // (U* above was formed in resample order first).
    std::sort(column.begin(), column.end());
    in.corrected = corrected_value[e];
    in.corrected_bootstrap = corrected_column;
    if (e < request.fake_deviations.size()) in.fake_deviations = request.fake_deviations[e];
    for (std::size_t m = 0; m < M; ++m)
      out.intervals[m * E + e] = interval_of(methods[m][e], in, request.level);
  }
  return out;
}

const std::vector<IntervalMethod>& interval_methods() {
  static const std::vector<IntervalMethod> all = {
      IntervalMethod::percentile,  IntervalMethod::basic,    IntervalMethod::bca,
      IntervalMethod::consistency, IntervalMethod::analytic, IntervalMethod::bias_corrected,
      IntervalMethod::fake};
  return all;
}

std::string_view to_string(IntervalMethod method) {
  switch (method) {
    case IntervalMethod::percentile:
      return "percentile";
    case IntervalMethod::basic:
      return "basic";
    case IntervalMethod::bca:
      return "bca";
    case IntervalMethod::consistency:
      return "consistency";
    case IntervalMethod::analytic:
      return "analytic";
    case IntervalMethod::bias_corrected:
      return "bias_corrected";
    case IntervalMethod::fake:
      return "fake";
  }
  return "?";
}

Interval basic_interval(double estimate, std::span<const double> bootstrap, double level) {
  check_level(level);
  const SortedValues sorted(bootstrap);
  const double lo = sorted.quantile((1.0 - level) / 2.0);
  const double hi = sorted.quantile((1.0 + level) / 2.0);
  return {2.0 * estimate - hi, 2.0 * estimate - lo};
}

double jackknife_acceleration(std::span<const double> jackknife) {
  if (jackknife.size() < 2) throw DomainError("the jackknife needs at least 2 values");
  double mean = 0.0;
  for (double v : jackknife) mean += v;
  mean /= static_cast<double>(jackknife.size());
  double s2 = 0.0, s3 = 0.0;
  for (double v : jackknife) {
    const double d = mean - v;
    s2 += d * d;
    s3 += d * d * d;
  }
  // Every leave-one-out value equal (a constant statistic, or one that ignores the rows left
  // out): no skewness to correct for.
  if (!(s2 > 0.0)) return 0.0;
  return s3 / (6.0 * std::pow(s2, 1.5));
}

double bca_bias_correction(double estimate, std::span<const double> bootstrap) {
  if (bootstrap.empty()) throw DomainError("BCa needs bootstrap values");
  double below = 0.0;
  for (double v : bootstrap) below += v < estimate ? 1.0 : (v == estimate ? 0.5 : 0.0);
  const double R = static_cast<double>(bootstrap.size());
  const double f = std::clamp(below / R, 0.5 / R, 1.0 - 0.5 / R);
  return normal_quantile(f);
}

Interval bca_interval(double estimate, std::span<const double> bootstrap,
                      std::span<const double> jackknife, double level) {
  return bca_interval(estimate, bootstrap, jackknife_acceleration(jackknife), level);
}

Interval bca_interval(double estimate, std::span<const double> bootstrap, double a, double level) {
  check_level(level);
  const double z0 = bca_bias_correction(estimate, bootstrap);
  // Efron & Tibshirani eq. 14.10. Where 1 - a (z0 + z) <= 0 the corrected probability has
  // passed its limit Phi(z0 - 1/a): the end goes to the nearer extreme of the bootstrap values.
  const auto adjusted = [&](double z) {
    const double w = z0 + z;
    const double denominator = 1.0 - a * w;
    if (!(denominator > 0.0)) return z > 0.0 ? 1.0 : 0.0;
    return normal_cdf(z0 + w / denominator);
  };
  const double a1 = adjusted(normal_quantile((1.0 - level) / 2.0));
  const double a2 = adjusted(normal_quantile((1.0 + level) / 2.0));
  const SortedValues sorted(bootstrap);
  return {sorted.quantile(a1), sorted.quantile(a2)};
}

Interval analytic_interval(const SquaredErrorEstimate& squared, double level) {
  check_level(level);
  const double half =
      normal_quantile((1.0 + level) / 2.0) * std::sqrt(std::max(0.0, squared.variance));
  Interval out{squared.square - half, squared.square + half};
  if (squared.root) {
    out.lo = std::sqrt(std::max(0.0, out.lo));
    out.hi = std::sqrt(std::max(0.0, out.hi));
  }
  return out;
}

Interval fake_interval(double estimate, std::span<const double> deviations, double level) {
  check_level(level);
  if (deviations.empty())
    throw DomainError("a fake-calibrated interval needs the fake's deviations");
  const SortedValues sorted(deviations);
  return {estimate - sorted.quantile((1.0 + level) / 2.0),
          estimate - sorted.quantile((1.0 - level) / 2.0)};
}

Interval normal_interval(double center, std::span<const double> bootstrap, double level) {
  check_level(level);
  const std::size_t R = bootstrap.size();
  if (R < 2) throw DomainError("a normal interval needs at least 2 bootstrap values");
  double mean = 0.0;
  for (double v : bootstrap) mean += v;
  mean /= static_cast<double>(R);
  double ss = 0.0;
  for (double v : bootstrap) ss += (v - mean) * (v - mean);
  const double half =
      normal_quantile((1.0 + level) / 2.0) * std::sqrt(ss / static_cast<double>(R - 1));
  return {center - half, center + half};
}

std::optional<Interval> interval_of(IntervalMethod method, const IntervalInputs& in, double level) {
  switch (method) {
    case IntervalMethod::percentile: {
      if (in.bootstrap.empty()) return std::nullopt;
      check_level(level);
      const SortedValues sorted(in.bootstrap);
      return Interval{sorted.quantile((1.0 - level) / 2.0), sorted.quantile((1.0 + level) / 2.0)};
    }
    case IntervalMethod::basic:
      if (in.bootstrap.empty()) return std::nullopt;
      return basic_interval(in.estimate, in.bootstrap, level);
    case IntervalMethod::bca:
      if (in.bootstrap.empty() || in.jackknife.size() < 2) return std::nullopt;
      return bca_interval(in.estimate, in.bootstrap, in.jackknife, level);
    case IntervalMethod::consistency: {
      if (!in.vanishes_when_calibrated || !in.p_calibrated || in.bootstrap.empty())
        return std::nullopt;
      return joined_with_zero(basic_interval(in.estimate, in.bootstrap, level), in, level);
    }
    case IntervalMethod::bias_corrected: {
      if (!in.corrected || in.corrected_bootstrap.size() < 2) return std::nullopt;
      const Interval out = normal_interval(*in.corrected, in.corrected_bootstrap, level);
      if (!in.vanishes_when_calibrated || !in.p_calibrated) return out;
      return joined_with_zero(out, in, level);
    }
    case IntervalMethod::analytic:
      if (!in.squared) return std::nullopt;
      return analytic_interval(*in.squared, level);
    case IntervalMethod::fake: {
      if (in.fake_deviations.empty()) return std::nullopt;
      const Interval out = fake_interval(in.estimate, in.fake_deviations, level);
      if (!in.vanishes_when_calibrated || !in.p_calibrated) return out;
      return joined_with_zero(out, in, level);
    }
  }
  return std::nullopt;
}

}  // namespace calbench
