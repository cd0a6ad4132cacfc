#include "plan/sample_size_plan.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/tools/roots.hpp>
#include <chrono>
#include <cmath>
#include <map>
#include <utility>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "core/task_kernel.hpp"
#include "estimators/uncertainty.hpp"
#include "truth/population.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {
namespace {

template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

double normal_quantile(double p) {
  return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

// The scaled map of a dirichlet generator (scaled_generator).
MiscalibrationMap scaled_map(const MiscalibrationMap& map, std::size_t K, double s,
                             Direction direction) {
  const double e = direction == Direction::overconfident ? -1.0 : 1.0;
  return std::visit(
      overloaded{
          [&](const IdentityMap&) -> MiscalibrationMap { return TemperatureMap{std::exp(e * s)}; },
          [&](const TemperatureMap& m) -> MiscalibrationMap {
            return TemperatureMap{std::pow(m.temperature, s)};
          },
          [&](const PowerMap& m) -> MiscalibrationMap {
            PowerMap out = m;
            for (double& t : out.exponents) t = std::pow(t, s);
            return out;
          },
          [&](const TopLabelMap& m) -> MiscalibrationMap {
            return TopLabelMap{std::pow(m.gamma, s)};
          },
          [&](const AffineLogitMap& m) -> MiscalibrationMap {
            AffineLogitMap out = m;
            for (std::size_t i = 0; i < K; ++i)
              for (std::size_t j = 0; j < K; ++j) {
                const double identity = i == j ? 1.0 : 0.0;
                out.weights[i * K + j] = identity + s * (m.weights[i * K + j] - identity);
              }
            for (double& b : out.bias) b *= s;
            return out;
          },
          [&](const QuantizeMap&) -> MiscalibrationMap {
            // Its miscalibration is set by the grid, an integer: no continuous strength.
            throw DomainError(
                "the quantize map has no strength to scale: plan needs a map with a continuous "
                "parameter (temperature, power, top_label, affine_logit)");
          }},
      map);
}

CalibrationCurve scaled_curve(const CalibrationCurve& curve, double s, Direction direction) {
  const double e = direction == Direction::overconfident ? -1.0 : 1.0;
  return std::visit(
      overloaded{[&](const IdentityCurve&) -> CalibrationCurve {
                   return LogitLogitCurve{0.0, std::exp(e * s)};
                 },
                 [&](const PolynomialCurve& c) -> CalibrationCurve {
                   return PolynomialCurve{std::pow(c.d, s)};
                 },
                 [&](const LogitLogitCurve& c) -> CalibrationCurve {
                   return LogitLogitCurve{s * c.a, std::pow(c.b, s)};
                 },
                 [&](const LogisticCurve&) -> CalibrationCurve {
                   throw DomainError(
                       "the logistic curve has no calibrated member to scale towards: a power "
                       "question needs a logit_logit or polynomial curve");
                 }},
      curve);
}

// The 2 z sd width and its standard error from the replicate values. The variance's standard
// error is sqrt((m4 - s^4 (R - 3)/(R - 1)) / R) (the fourth central moment m4; exact for the
// unbiased variance's sampling variance up to O(1/R^2)), and sd's by the delta method,
// se(sd) = se(var) / (2 sd).
PlanPoint width_point(std::size_t n, const std::vector<double>& values, double z) {
  const double R = static_cast<double>(values.size());
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= R;
  double m2 = 0.0, m4 = 0.0;
  for (double v : values) {
    const double d = (v - mean) * (v - mean);
    m2 += d;
    m4 += d * d;
  }
  const double var = m2 / (R - 1.0);
  m4 /= R;
  const double se_var = std::sqrt(std::max(0.0, (m4 - var * var * (R - 3.0) / (R - 1.0)) / R));
  const double sd = std::sqrt(var);
  PlanPoint out;
  out.n = n;
  out.mean = mean;
  out.sd = sd;
  out.figure = 2.0 * z * sd;
  out.figure_se = sd > 0.0 ? 2.0 * z * se_var / (2.0 * sd) : 0.0;
  return out;
}

struct Buffers {
  Sample sample;
  GeneratorScratch scratch;
  EstimatorWorkspace workspace;
  ResampleWorkspace resample;
};

struct Replicate {
  double value = 0.0;
  // The interval's width (width questions with an interval method), or 1 when the consistency
  // test rejected, else 0 (power questions).
  double figure = 0.0;
};

// stream_tasks can journal its results; a plan keeps no journal, but the type must be codable.
template <typename Archive>
void serialize(Archive& a, Replicate& r) {
  a(r.value, r.figure);
}

// Replicate `replicate` of sample size n: the estimate and the question's figure, and whether
// the interval holds `reference` (width questions with an interval method).
Replicate simulate_replicate(const PlanSpec& spec, const Generator& generator, std::size_t n,
                             std::size_t replicate, double reference, Buffers& buf, bool& holds) {
  const auto* power = std::get_if<PowerQuestion>(&spec.question);
  const auto* width = std::get_if<WidthQuestion>(&spec.question);
  const std::optional<IntervalMethod> method = width ? width->interval : std::nullopt;
  const Estimator* const estimator = spec.estimator.get();
  // Cell 0 for every n: common random numbers across the sample sizes.
  Engine engine = make_engine({spec.seed, 0, replicate, Purpose::sample});
  generator.sample(engine, n, buf.sample, buf.scratch);
  Replicate r;
  r.value = estimator->estimate(buf.sample, buf.workspace);
  const Estimator* const one[] = {estimator};
  const ResampleKey resample_key{spec.seed, 0, replicate};
  const double observed[] = {r.value};
  if (method) {
    // The interval exactly as calbench eval computes it (runners/eval.cpp), without p-values:
    // the label resamples are drawn only for the methods that use the test.
    const std::vector<std::vector<IntervalMethod>> methods = {{*method}};
    IntervalRequest request{width->resamples, width->level, width->jackknife_groups, false};
    const auto computed =
        sample_intervals(buf.sample, one, observed, methods, request, resample_key,
                         Execution::serial, buf.resample, buf.workspace);
    const std::optional<Interval>& interval = computed.intervals[0];
    if (!interval)
      throw DomainError("interval " + std::string(to_string(*method)) +
                        " gives no interval for this estimator (docs/intervals.md: "
                        "which methods apply to which estimators)");
    r.figure = interval->hi - interval->lo;
    holds = interval->lo <= reference && reference <= interval->hi;
  }
  if (const AnalyticTest* test = estimator->capabilities().analytic_test; power && test) {
    r.figure = test->p_value(buf.sample, buf.workspace) <= power->alpha ? 1.0 : 0.0;
  } else if (power) {
    const auto null = consistency_values(buf.sample, one, resample_key, power->resamples,
                                         Execution::serial, buf.resample);
    r.figure = consistency_p_values(null, observed)[0] <= power->alpha ? 1.0 : 0.0;
  }
  return r;
}

// A fraction of R replicates as a point's coverage, with its binomial standard error.
void set_coverage(PlanPoint& point, std::size_t covered, std::size_t R) {
  const double c = static_cast<double>(covered) / static_cast<double>(R);
  point.coverage = c;
  point.coverage_se = std::sqrt(c * (1.0 - c) / static_cast<double>(R));
}

// Whether a figure meets the question: a width at most the asked one, a power at least it.
bool meets(const PlanQuestion& q, double figure) {
  if (const auto* w = std::get_if<WidthQuestion>(&q)) return figure <= w->width;
  return figure >= std::get<PowerQuestion>(q).power;
}

// The question's figure on the scale where it is interpolated: log width, or power itself.
double scaled_figure(const PlanQuestion& q, double figure) {
  return std::holds_alternative<WidthQuestion>(q) ? std::log(figure) : figure;
}
double scaled_se(const PlanQuestion& q, double figure, double se) {
  return std::holds_alternative<WidthQuestion>(q) ? se / figure : se;
}

void validate(const PlanSpec& spec) {
  if (!spec.estimator) throw DomainError("estimator: missing");
  const Estimator& estimator = *spec.estimator;
  if (spec.replicates < 10)
    throw DomainError("replicates = " + std::to_string(spec.replicates) + ": must be >= 10");
  const PlanSearch& s = spec.search;
  if (s.n_min < 2) throw DomainError("n_min = " + std::to_string(s.n_min) + ": must be >= 2");
  if (s.n_max <= s.n_min)
    throw DomainError("n_max = " + std::to_string(s.n_max) +
                      ": must be > n_min = " + std::to_string(s.n_min));
  if (!(s.ratio > 1.0 && s.ratio <= 16.0))
    throw DomainError("ratio = " + format_double(s.ratio) + ": must be > 1 and <= 16");
  std::visit(
      overloaded{
          [&](const WidthQuestion& w) {
            if (!(w.width > 0.0))
              throw DomainError("width = " + format_double(w.width) + ": must be > 0");
            if (!(w.level > 0.0 && w.level < 1.0))
              throw DomainError("level = " + format_double(w.level) + ": must be in (0, 1)");
            if (!w.interval) return;
            if (w.resamples < 2)
              throw DomainError("resamples = " + std::to_string(w.resamples) + ": must be >= 2");
            if (w.jackknife_groups < 2)
              throw DomainError("jackknife_groups = " + std::to_string(w.jackknife_groups) +
                                ": must be >= 2");
            if (auto why = interval_inapplicable(*w.interval, estimator)) throw DomainError(*why);
          },
          [&](const PowerQuestion& p) {
            if (!(p.power > 0.0 && p.power < 1.0))
              throw DomainError("power = " + format_double(p.power) + ": must be in (0, 1)");
            if (!(p.alpha > 0.0 && p.alpha < 1.0))
              throw DomainError("alpha = " + format_double(p.alpha) + ": must be in (0, 1)");
            if (!(p.detect > 0.0))
              throw DomainError("detect = " + format_double(p.detect) + ": must be > 0");
            // p = (1 + #)/(1 + B) <= alpha needs B >= 1/alpha - 1 (a test with an analytic
            // p-value draws no resamples).
            if (!estimator.capabilities().analytic_test &&
                static_cast<double>(p.resamples) + 1.0 < 1.0 / p.alpha)
              throw DomainError("resamples = " + std::to_string(p.resamples) +
                                ": the test can never reject at alpha = " + format_double(p.alpha) +
                                "; needs resamples + 1 >= 1 / alpha");
          }},
      spec.question);
}

// The sample sizes of the grid: n_min ratio^k rounded, distinct, then n_max.
std::vector<std::size_t> grid(const PlanSearch& s) {
  std::vector<std::size_t> out;
  for (double x = static_cast<double>(s.n_min); x < static_cast<double>(s.n_max); x *= s.ratio) {
    const auto n = static_cast<std::size_t>(std::llround(x));
    if (out.empty() || n > out.back()) out.push_back(n);
  }
  if (out.back() != s.n_max) out.push_back(s.n_max);
  return out;
}

// The reference of a width question's coverage (CoverageReference).
CoverageReference coverage_reference(const Generator& generator, const Estimator& estimator,
                                     const TruthSettings& truth) {
  if (const auto target = estimator.target()) {
    const TruthValue v = compute_truth(generator, truth)[*target];
    return {v.value, v.error, std::string(to_string(v.method)), target};
  }
  const Estimator* const one[] = {&estimator};
  const PopulationValue v = population_values(generator, one, truth.population_samples)[0];
  return {v.value, v.error, "population", std::nullopt};
}

// The last n that fails the question and the first that meets it (either may be missing: the
// question is met at n_min already, or not by n_max).
struct Bracket {
  std::optional<std::size_t> below, above;
  // The guided search's stop at a point whose figure is within its own standard error of the
  // question's (secant_search): that point is the answer.
  std::optional<std::size_t> at;
};

// The grid, smallest n first, until the question is met; then `refine` bisections of the
// bracket on log n (docs/plan.md, "Method").
template <typename Evaluate>
Bracket grid_search(const PlanQuestion& q, const PlanSearch& search, Evaluate&& evaluate) {
  Bracket out;
  for (std::size_t n : grid(search)) {
    if (meets(q, evaluate(n).figure)) {
      out.above = n;
      break;
    }
    out.below = n;
  }
  if (!out.above || !out.below) return out;
  for (std::size_t step = 0; step < search.refine; ++step) {
    const auto mid = static_cast<std::size_t>(
        std::llround(std::sqrt(static_cast<double>(*out.below) * static_cast<double>(*out.above))));
    if (mid <= *out.below || mid >= *out.above) break;
    (meets(q, evaluate(mid).figure) ? out.above : out.below) = mid;
  }
  return out;
}

// Linear interpolation in the bracket's ends a < b: y = a + slope x, x = log n, y the scaled
// figure; the answer is where y equals the scaled target, its standard error the ends'
// standard errors weighted by the interpolation weights and added (they are positively
// correlated by the common streams), carried to x by the slope.
struct Interpolation {
  double x = 0.0, se_x = 0.0, figure = 0.0, figure_se = 0.0, slope = 0.0;
};
Interpolation interpolate(const PlanQuestion& q, const PlanPoint& a, const PlanPoint& b) {
  const auto* power = std::get_if<PowerQuestion>(&q);
  const double xa = std::log(static_cast<double>(a.n)), xb = std::log(static_cast<double>(b.n));
  const double ya = scaled_figure(q, a.figure), yb = scaled_figure(q, b.figure);
  const double target = power ? power->power : std::log(std::get<WidthQuestion>(q).width);
  const double t = std::clamp((target - ya) / (yb - ya), 0.0, 1.0);
  Interpolation out;
  out.x = xa + t * (xb - xa);
  const double se_y =
      (1.0 - t) * scaled_se(q, a.figure, a.figure_se) + t * scaled_se(q, b.figure, b.figure_se);
  out.slope = (yb - ya) / (xb - xa);
  out.se_x = se_y / std::abs(out.slope);
  out.figure = power ? (1.0 - t) * a.figure + t * b.figure : std::exp(ya + t * (yb - ya));
  out.figure_se = (1.0 - t) * a.figure_se + t * b.figure_se;
  return out;
}

// The bracket of `points` (by n): the first n that meets the question, and the last n below it
// (the first crossing, as the grid search follows it).
Bracket bracket_of(const PlanQuestion& q, const std::map<std::size_t, PlanPoint>& points) {
  Bracket out;
  for (const auto& [n, point] : points) {
    if (meets(q, point.figure)) {
      out.above = n;
      break;
    }
    out.below = n;
  }
  return out;
}

// The width question's search with an interval method, placed by its normal-width guide (the
// grid search's points of the cheap 2 z sd figure): the first interval point at the guide's
// answer, then secant steps on (log n, log width) until the interval's width is bracketed, then
// regula falsi inside the bracket until it is as narrow as the grid search's final one
// (ratio^(1 / 2^refine)). The widths fall close to n^-1/2 near the answer, so it takes two to
// four interval points where the grid search takes about ten (most of them far below the
// answer).
template <typename Evaluate>
Bracket secant_search(const PlanQuestion& q, const PlanSearch& search, const Bracket& guide,
                      const std::map<std::size_t, PlanPoint>& guide_points, Evaluate&& evaluate) {
  const double n_min = static_cast<double>(search.n_min);
  const double n_max = static_cast<double>(search.n_max);
  const double target = std::log(std::get<WidthQuestion>(q).width);
  // The guide's answer (n_min or n_max when it has no bracket). Steps take the slope of log
  // width on log n from the two interval points nearest the crossing, kept in [-1, -1/4]
  // against their noise, and -1/2 (sd ~ n^-1/2) while there is one point: the guide's own
  // local slope, between points a few percent apart, is too noisy for a first step.
  double x = std::log(guide.above ? n_min : n_max);
  if (guide.below && guide.above)
    x = interpolate(q, guide_points.at(*guide.below), guide_points.at(*guide.above)).x;
  constexpr double slope = -0.5;
  // A bracket at most sqrt(ratio) wide ends the search (the grid's final one is
  // ratio^(1/2^refine)): log width is so close to linear in log n over it that interpolating
  // there moves n far less than its Monte Carlo error (docs/plan.md), and one interval point
  // less is a third of the work.
  const double final_ratio =
      std::max(std::pow(search.ratio, std::pow(0.5, search.refine)), std::sqrt(search.ratio));
  const double nudge = std::log(std::pow(search.ratio, std::pow(0.5, search.refine))) / 2.0;
  const double max_step = 2.0 * std::log(search.ratio);  // at most ratio^2 per secant step
  std::map<std::size_t, PlanPoint> seen;                 // the interval's points so far
  auto at = [&](double log_n) {
    const auto n =
        static_cast<std::size_t>(std::llround(std::clamp(std::exp(log_n), n_min, n_max)));
    const PlanPoint& point = evaluate(n);
    seen.emplace(n, point);
    return n;
  };
  // A point whose width is within its own standard error of w: the answer itself (the figure
  // cannot be placed closer than its noise; its coverage is simulated at it already).
  auto on_target = [&](std::size_t n) {
    const PlanPoint& p = seen.at(n);
    return p.figure > 0.0 && std::abs(std::log(p.figure) - target) <= p.figure_se / p.figure;
  };
  std::size_t last = at(x);
  if (on_target(last)) return Bracket{std::nullopt, std::nullopt, last};
  // At most as many interval points as the grid search would simulate.
  const std::size_t budget = grid(search).size() + search.refine;
  for (std::size_t step = 1; step < budget; ++step) {
    const Bracket b = bracket_of(q, seen);
    double next = 0.0;
    if (b.below && b.above) {
      if (static_cast<double>(*b.above) <= final_ratio * static_cast<double>(*b.below)) return b;
      // Regula falsi, kept a tenth of the bracket away from its ends so that it shrinks.
      const PlanPoint& lo = seen.at(*b.below);
      const PlanPoint& hi = seen.at(*b.above);
      const double xa = std::log(static_cast<double>(lo.n));
      const double xb = std::log(static_cast<double>(hi.n));
      const double t = std::clamp(
          (target - std::log(lo.figure)) / (std::log(hi.figure) - std::log(lo.figure)), 0.1, 0.9);
      next = xa + t * (xb - xa);
    } else {
      // All points on one side: at n_min and met, or at n_max and not met, is the answer.
      if (b.above && *b.above == search.n_min) return b;
      if (!b.above && b.below && *b.below == search.n_max) return b;
      // A secant step from the two points nearest the crossing (the guide's slope with one).
      const PlanPoint& p = seen.at(b.above ? *b.above : *b.below);
      double local = slope;
      if (seen.size() >= 2) {
        const auto second = b.above ? std::next(seen.begin()) : std::prev(seen.end(), 2);
        const PlanPoint& r = second->second;
        const double s = (std::log(r.figure) - std::log(p.figure)) /
                         (std::log(static_cast<double>(r.n)) - std::log(static_cast<double>(p.n)));
        if (s < 0.0) local = std::clamp(s, -1.0, -0.25);
      }
      const double xp = std::log(static_cast<double>(p.n));
      const double step_x = std::clamp((target - std::log(p.figure)) / local, -max_step, max_step);
      // Past the crossing by a little, so that the next point brackets it.
      next = xp + step_x + (b.above ? -1.0 : 1.0) * nudge;
    }
    const std::size_t n = at(next);
    if (n == last || (b.below && b.above && (n == *b.below || n == *b.above))) break;
    if (on_target(n)) return Bracket{std::nullopt, std::nullopt, n};
    last = n;
  }
  return bracket_of(q, seen);
}

}  // namespace

std::string interval_name(const WidthQuestion& question) {
  return question.interval ? std::string(to_string(*question.interval)) : "normal";
}

namespace {

// PlanAnswer::refused for a width question's answer point.
std::string undercovered(const WidthQuestion& question, const PlanPoint& at) {
  if (!at.coverage || *at.coverage >= question.level - plan_coverage_slack) return "";
  return "the " + interval_name(question) + " interval holds the reference in " +
         format_fixed(*at.coverage, 3) + " ± " + format_fixed(at.coverage_se, 3) +
         " of the replicates at n = " + std::to_string(at.n) + ", below the nominal " +
         format_double(question.level) + " - " + format_double(plan_coverage_slack) +
         ": a sample of that size does not give the interval asked for; " +
         (question.interval
              // Already an interval method (the default, or one asked for by name): naming
              // "default" again would send the user back to the same refusal.
              ? "ask with another interval (docs/intervals.md says where each covers) or "
                "another width, or with more replicates if the coverage is within 2 standard "
                "errors of the bar"
              : "ask with an interval that covers (\"interval\": \"default\", docs/plan.md)");
}

}  // namespace

std::optional<std::string> interval_inapplicable(IntervalMethod method,
                                                 const Estimator& estimator) {
  if (method == IntervalMethod::fake)
    return std::string(
        "interval fake is calbench eval's (calibrated on a fake fitted to a model's rows); a "
        "plan's generator is itself the fake: ask for its default interval");
  if (method == IntervalMethod::consistency && !estimator.vanishes_when_calibrated())
    return std::string(
        "interval consistency needs an estimator whose population value is 0 for "
        "every calibrated model (a calibration error), which this one is not");
  if (method == IntervalMethod::bias_corrected && !estimator.capabilities().bias_model)
    return std::string(
        "interval bias_corrected needs an estimator with a bias model (ece, ace "
        "or classwise_ece with norm l1), which this one has not");
  if (method == IntervalMethod::analytic && !estimator.capabilities().squared_error)
    return std::string(
        "interval analytic needs an estimator with an analytic variance "
        "(ece_debiased with scope top or binary), which this one has not");
  return std::nullopt;
}

GeneratorSpec scaled_generator(const GeneratorSpec& spec, double s, Direction direction) {
  if (!(s >= 0.0)) throw DomainError("scale = " + format_double(s) + ": must be >= 0");
  return std::visit(
      overloaded{[&](const DirichletSpec& d) -> GeneratorSpec {
                   DirichletSpec out = d;
                   out.map = scaled_map(d.map, d.classes, s, direction);
                   return out;
                 },
                 [&](const BetaBinarySpec& b) -> GeneratorSpec {
                   BetaBinarySpec out = b;
                   out.curve = scaled_curve(b.curve, s, direction);
                   return out;
                 },
                 [&](const EmpiricalSpec& e) -> GeneratorSpec {
                   EmpiricalSpec out = e;
                   if (s == 0.0) {
                     out.calibration = LogitSpline{};
                     out.classwise = ClasswiseMap{};
                     return out;
                   }
                   for (double& c : out.calibration.coefficients) c *= s;
                   for (auto* part :
                        {&out.classwise.top, &out.classwise.other_shared, &out.classwise.other})
                     for (double& c : *part) c *= s;
                   return out;
                 },
                 [&](const auto&) -> GeneratorSpec {
                   throw DomainError(
                       "family " + std::string(family_name(spec)) +
                       ": a power question scales the generator's miscalibration map, which "
                       "only the dirichlet, beta_binary and empirical families have");
                 }},
      spec);
}

ScaledFamily::ScaledFamily(GeneratorSpec spec, Quantity quantity, Direction direction,
                           TruthSettings truth)
    : spec_(std::move(spec)), quantity_(quantity), direction_(direction), truth_(truth) {}

TruthValue ScaledFamily::truth_at(double s) {
  if (auto it = known_.find(s); it != known_.end()) return it->second;
  const TruthValue v = compute_truth(Generator(member(s)), truth_)[quantity_];
  known_.emplace(s, v);
  return v;
}

Alternative solve_scale(ScaledFamily& family, double value, const std::string& name) {
  // s = 0 is calibrated: every quantity a member may be indexed by is 0 there, so the root is
  // bracketed by [0, s] for the first s (1, 2, 4, ...) whose truth reaches the value.
  double hi = 1.0;
  TruthValue at_hi = family.truth_at(hi);
  while (at_hi.value < value) {
    if (hi >= 64.0)
      throw DomainError(name + " = " + format_double(value) +
                        " is out of reach: " + std::string(to_string(family.quantity())) + " is " +
                        format_fixed(at_hi.value, 4) + " with the miscalibration scaled by " +
                        format_double(hi));
    hi *= 2.0;
    at_hi = family.truth_at(hi);
  }
  double lo = hi > 1.0 ? hi / 2.0 : 0.0;
  Alternative best{family.member(hi), hi, at_hi};
  auto f = [&](double s) {
    const TruthValue v = family.truth_at(s);
    if (std::abs(v.value - value) < std::abs(best.achieved.value - value))
      best = {family.member(s), s, v};
    return v.value - value;
  };
  const double f_lo = lo == 0.0 ? -value : f(lo);
  if (f_lo >= 0.0) return best;  // MC noise at the doubled bracket's lower end: take it
  // Stop once the value is within max(1e-6, 2 x its own error) of the target.
  auto close = [&](double, double) {
    return std::abs(best.achieved.value - value) <= std::max(1e-6, 2.0 * best.achieved.error);
  };
  std::uintmax_t iterations = 60;
  if (!close(lo, hi))
    boost::math::tools::toms748_solve(f, lo, hi, f_lo, at_hi.value - value, close, iterations);
  return best;
}

Alternative solve_scale(const GeneratorSpec& spec, Quantity quantity, double value,
                        Direction direction, const TruthSettings& truth, const std::string& name) {
  ScaledFamily family(spec, quantity, direction, truth);
  return solve_scale(family, value, name);
}

Alternative solve_alternative(const GeneratorSpec& spec, const PowerQuestion& question,
                              const TruthSettings& truth) {
  return solve_scale(spec, question.quantity, question.detect, question.direction, truth, "detect");
}

PlanResult plan_sample_size(const PlanSpec& spec, const PlanPointFn& on_point,
                            const PlanReplicateFn& on_replicate) {
  validate(spec);
  PlanResult result;
  const PlanQuestion& q = spec.question;
  const auto* power = std::get_if<PowerQuestion>(&q);
  const auto* width = std::get_if<WidthQuestion>(&q);
  const std::optional<IntervalMethod> method = width ? width->interval : std::nullopt;
  if (power) result.alternative = solve_alternative(spec.generator, *power, spec.truth);
  const Generator generator(result.alternative ? result.alternative->spec : spec.generator);
  const double z = power ? 0.0 : normal_quantile(0.5 + 0.5 * std::get<WidthQuestion>(q).level);
  if (width) result.reference = coverage_reference(generator, *spec.estimator, spec.truth);

  // Every replicate of sample size n for the question of `as` (the plan's own, or its normal
  // width for the guide below), folded into its point.
  auto simulate = [&](std::size_t n, const PlanSpec& as, bool report) {
    const auto* as_width = std::get_if<WidthQuestion>(&as.question);
    const std::optional<IntervalMethod> as_method = as_width ? as_width->interval : std::nullopt;
    std::vector<double> values;
    RunningStats widths;
    std::size_t rejected = 0, covered = 0;
    values.reserve(as.replicates);
    // Whether replicate r's interval holds the reference (interval methods): one slot per
    // task, written by that task only.
    std::vector<std::uint8_t> holds(as_method ? as.replicates : 0);
    StreamControl control;
    if (on_replicate && report)
      control.progress = [&](std::size_t done, std::size_t total) { on_replicate(n, done, total); };
    stream_tasks<Replicate, Buffers>(
        TaskGrid({as.replicates}),
        [&](TaskKey key, Buffers& buf) {
          bool holds_reference = false;
          Replicate r = simulate_replicate(as, generator, n, key.replicate,
                                           result.reference ? result.reference->value : 0.0, buf,
                                           holds_reference);
          if (as_method) holds[key.replicate] = holds_reference;
          return r;
        },
        [&](TaskKey, Replicate&& r) {
          values.push_back(r.value);
          widths.add(r.figure);
          rejected += r.figure > 0.0 ? 1 : 0;
        },
        control);
    PlanPoint point = width_point(n, values, z);
    if (as_method) {
      for (std::uint8_t h : holds) covered += h;
      point.figure = widths.mean();
      point.figure_se = widths.standard_error();
      set_coverage(point, covered, as.replicates);
    } else if (as_width) {
      // The normal interval estimate -/+ z sd, sd over the replicates.
      const double half = z * point.sd, truth = result.reference->value;
      covered = 0;
      for (double v : values) covered += v - half <= truth && truth <= v + half ? 1 : 0;
      set_coverage(point, covered, as.replicates);
    }
    if (power) {
      const double R = static_cast<double>(as.replicates);
      point.figure = static_cast<double>(rejected) / R;
      point.figure_se = std::sqrt(point.figure * (1.0 - point.figure) / R);
    }
    if (on_point && report) on_point(point);
    return point;
  };
  std::map<std::size_t, PlanPoint> points;
  auto evaluate = [&](std::size_t n) -> const PlanPoint& {
    if (auto it = points.find(n); it != points.end()) return it->second;
    return points.emplace(n, simulate(n, spec, true)).first->second;
  };

  Bracket bracket;
  if (method && spec.search.guide) {
    // The interval's width is guided by the normal width 2 z sd, which needs one estimate per
    // replicate instead of thousands of resampled ones: its own grid search places the
    // interval's first point, and a safeguarded secant search on (log n, log width) brackets
    // the answer with a few interval points near it (docs/plan.md, "Method").
    PlanSpec normal = spec;
    std::get<WidthQuestion>(normal.question).interval = std::nullopt;
    std::map<std::size_t, PlanPoint> guide_points;
    const Bracket guide = grid_search(q, spec.search, [&](std::size_t n) -> const PlanPoint& {
      if (auto it = guide_points.find(n); it != guide_points.end()) return it->second;
      return guide_points.emplace(n, simulate(n, normal, false)).first->second;
    });
    bracket = secant_search(q, spec.search, guide, guide_points, evaluate);
  } else {
    bracket = grid_search(q, spec.search, evaluate);
  }
  const std::optional<std::size_t> below = bracket.below, above = bracket.above;
  PlanAnswer& answer = result.answer;
  auto finish = [&] {
    for (auto& [n, point] : points) result.points.push_back(point);
    if (width && answer.at_n) answer.refused = undercovered(*width, *answer.at_n);
  };
  const double z95 = normal_quantile(0.975);
  if (bracket.at) {
    // The point on target is the answer; its Monte Carlo interval is its figure's standard
    // error carried to log n by the local slope (to the nearest other point, else -1/2).
    const PlanPoint& p = points.at(*bracket.at);
    double slope = -0.5;
    const PlanPoint* nearest = nullptr;
    const auto distance = [&](std::size_t n) {
      return std::abs(std::log(static_cast<double>(n) / static_cast<double>(p.n)));
    };
    for (const auto& [n, other] : points)
      if (n != p.n && (!nearest || distance(n) < distance(nearest->n))) nearest = &other;
    if (nearest) {
      const double s = std::log(nearest->figure / p.figure) /
                       std::log(static_cast<double>(nearest->n) / static_cast<double>(p.n));
      if (s < 0.0) slope = std::clamp(s, -1.0, -0.25);
    }
    const double se_x = p.figure_se / p.figure / std::abs(slope);
    answer.kind = AnswerKind::found;
    answer.n = p.n;
    answer.n_low = static_cast<double>(p.n) * std::exp(-z95 * se_x);
    answer.n_high = static_cast<double>(p.n) * std::exp(z95 * se_x);
    answer.figure = p.figure;
    answer.figure_se = p.figure_se;
    answer.at_n = p;
    finish();
    return result;
  }
  if (!above || !below) {
    const PlanPoint& edge = points.at(above ? *above : *below);
    answer.kind = above ? AnswerKind::below_range : AnswerKind::above_range;
    answer.n = edge.n;
    answer.n_low = answer.n_high = static_cast<double>(edge.n);
    answer.figure = edge.figure;
    answer.figure_se = edge.figure_se;
    if (width) answer.at_n = edge;
    finish();
    return result;
  }
  const Interpolation at = interpolate(q, points.at(*below), points.at(*above));
  answer.kind = AnswerKind::found;
  answer.n = static_cast<std::size_t>(std::ceil(std::exp(at.x) - 1e-9));
  answer.n_low = std::exp(at.x - z95 * at.se_x);
  answer.n_high = std::exp(at.x + z95 * at.se_x);
  answer.figure = at.figure;
  answer.figure_se = at.figure_se;
  // The coverage at the answer's n itself: simulated there (not interpolated; not one of the
  // search's points unless it is one).
  if (width) {
    const auto it = points.find(answer.n);
    answer.at_n = it != points.end() ? it->second : simulate(answer.n, spec, true);
  }
  finish();
  return result;
}

double replicate_seconds(const PlanSpec& spec, std::size_t n, std::size_t replicates) {
  validate(spec);
  const Generator generator(spec.generator);
  Buffers buf;
  bool holds = false;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t r = 0; r < replicates; ++r)
    simulate_replicate(spec, generator, n, r, 0.0, buf, holds);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace calbench
