#pragma once
// Planning an audit (docs/plan.md): how many labelled samples an estimator needs, on a given
// fake classifier, for a given interval width or for a given power to detect a given
// miscalibration. Answered by simulation with calbench's own generators, truth engine and
// estimators:
//   - the question's figure (the expected width of the estimator's interval, or the rejection
//     rate of the consistency-resampling test) is simulated on a geometric grid of n, smallest
//     first, until it is met; the bracket it falls in is bisected on log n `refine` times; the
//     answer is interpolated inside the last bracket (log width linear in log n, power linear in
//     log n);
//   - every figure carries its Monte Carlo standard error, and the answer carries an interval
//     for n obtained by dividing the interpolated figure's standard error by the local slope.
// Every n uses the same streams (seed, 0, replicate, sample): common random numbers, so the
// simulated curve is smooth in n; the standard errors of two points are then correlated, and
// an interpolated one is bounded by the weighted sum of the two (Minkowski), never assumed
// independent. Results are the same bits for any thread count (core/task_kernel.hpp).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/quantity.hpp"
#include "estimators/estimator.hpp"
#include "estimators/interval_methods.hpp"
#include "generators/generator.hpp"
#include "truth/ground_truth.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

// The n at which the width of the estimator's interval at `level` is <= width.
struct WidthQuestion {
  double width = 0.0;  // > 0
  double level = 0.9;  // in (0, 1)
  // The interval: nullopt for the normal interval estimate -/+ z sd (width 2 z sd, z =
  // Phi^-1((1 + level)/2), sd the estimate's over the replicates); else an interval method
  // (estimators/interval_methods.hpp) computed on every replicate as `calbench eval` computes
  // it (sample_intervals), the figure being its expected width.
  std::optional<IntervalMethod> interval = std::nullopt;
  std::size_t resamples = eval_default_resamples;                // with an interval method
  std::size_t jackknife_groups = eval_default_jackknife_groups;  // bca
};

// Which way a calibrated generator is pushed when its own map gives no direction (identity).
enum class Direction { overconfident, underconfident };

// "normal" or the method's name.
std::string interval_name(const WidthQuestion& question);

// The n at which the level-alpha consistency-resampling test (estimators/uncertainty.hpp,
// `resamples` label redraws, the estimator as its statistic) -- or, for an estimator with an
// analytic test (AnalyticTest, Estimator::capabilities: ks_calibration, kuiper_calibration,
// spiegelhalter), that test, p <= alpha, `resamples` unused -- rejects with probability >= power
// when the truth of `quantity` is `detect`. The alternative is the generator with its
// miscalibration scaled (scaled_generator) until the exact truth of `quantity` equals `detect`.
struct PowerQuestion {
  double power = 0.8;   // in (0, 1)
  double alpha = 0.05;  // in (0, 1)
  Quantity quantity = Quantity::ece_top_l1;
  double detect = 0.0;  // > 0
  std::size_t resamples = 199;
  Direction direction = Direction::overconfident;
};

using PlanQuestion = std::variant<WidthQuestion, PowerQuestion>;

// The n searched: n_min * ratio^k (rounded) up to n_max, then `refine` bisections on log n.
// Width questions with an interval method: with `guide`, the grid and bisections run on the
// normal width first and the interval is simulated only near the answer (sample_size_plan.cpp,
// secant_search); without it, on the grid and bisections like every other question.
struct PlanSearch {
  std::size_t n_min = 100, n_max = 100'000;
  double ratio = 2.0;
  std::size_t refine = 3;
  bool guide = true;
};

struct PlanSpec {
  GeneratorSpec generator;
  std::shared_ptr<const Estimator> estimator;
  PlanQuestion question;
  PlanSearch search;
  std::size_t replicates = 500;
  std::uint64_t seed = 0;
  TruthSettings truth;
};

// One simulated sample size: the question's figure (width or power) with its Monte Carlo
// standard error, and the estimate's mean and sd over the replicates. For a width question
// also the interval's coverage: the fraction of replicates whose interval holds the reference
// (CoverageReference), with its binomial standard error sqrt(c (1 - c) / R).
struct PlanPoint {
  std::size_t n = 0;
  double figure = 0.0, figure_se = 0.0;
  double mean = 0.0, sd = 0.0;
  std::optional<double> coverage = std::nullopt;
  double coverage_se = 0.0;
};

// What a width question's coverage is measured against: the truth of the estimator's target
// (truth engine), or, for an estimator without one, its own population value
// (truth/population.hpp), as estimator_bias measures coverage (docs/intervals.md).
struct CoverageReference {
  double value = 0.0, error = 0.0;
  std::string method;  // a TruthMethod name, or "population"
  std::optional<Quantity> target;
};

// The generator of a power question's alternative and what the truth engine says of it.
struct Alternative {
  GeneratorSpec spec;
  double scale = 1.0;   // s of scaled_generator
  TruthValue achieved;  // the truth of the question's quantity
};

enum class AnswerKind {
  found,        // n inside [n_min, n_max]
  below_range,  // n_min already meets the question
  above_range,  // n_max does not meet it
};

struct PlanAnswer {
  AnswerKind kind = AnswerKind::found;
  std::size_t n = 0;  // the smallest n meeting the question (interpolated, rounded up)
  double n_low = 0.0, n_high = 0.0;      // a 95 % Monte Carlo interval for it
  double figure = 0.0, figure_se = 0.0;  // the interpolated figure at n and its standard error
  // Width questions: the interval simulated at n itself (the same streams as every point):
  // its coverage, coverage_se, mean width (figure) and se. At n_min or n_max, that point.
  std::optional<PlanPoint> at_n;
  // Width questions: why the answer is refused, or "" when it is not. An n at which the
  // question's interval holds its reference in fewer than level - plan_coverage_slack of the
  // replicates (at_n's coverage) is not an answer: the width asked for belongs to an interval
  // that does not cover there (docs/plan.md, "Refused answers").
  std::string refused;
};

// How far below the nominal level an answer's measured coverage may lie: 0.05, the slack of
// docs/intervals.md's "measured below nominal - 0.05" notes.
inline constexpr double plan_coverage_slack = 0.05;

struct PlanResult {
  std::vector<PlanPoint> points;  // by n
  std::optional<Alternative> alternative;
  std::optional<CoverageReference> reference;  // width questions
  PlanAnswer answer;
};

// Scales the miscalibration of `spec` by s >= 0: s = 0 is calibrated, s = 1 is `spec` itself.
// dirichlet: temperature T^s, power exponents t_k^s, top_label gamma^s, affine_logit
// W = I + s (W - I), b = s b; identity becomes temperature e^(-s) (overconfident) or e^s.
// beta_binary: polynomial d^s, logit_logit (s a, b^s); identity becomes logit_logit b = e^(-s)
// or e^s. empirical (a `calbench fit` fake): its curve's offset f and every classwise spline
// times s, s(t) = u + s f(u), the rows and bandwidth kept; s = 0 drops the curve and the
// classwise map (c = p exactly; for s > 0 the curve is held at its boundary knots as the fitted
// one is). Other families and the logistic curve have no calibrated member in their family:
// DomainError.
GeneratorSpec scaled_generator(const GeneratorSpec& spec, double s, Direction direction);

// The family scaled_generator(spec, s, direction), s >= 0, and the truth of one quantity at
// each member, remembered by s: solving several values on one family (a gate's OC curve) shares
// the bracket's doubling steps and every member computed before.
class ScaledFamily {
 public:
  ScaledFamily(GeneratorSpec spec, Quantity quantity, Direction direction, TruthSettings truth);
  GeneratorSpec member(double s) const { return scaled_generator(spec_, s, direction_); }
  TruthValue truth_at(double s);
  // Records a truth computed elsewhere (the generator's own at s = 1, when it is that member).
  void remember(double s, const TruthValue& value) { known_.emplace(s, value); }
  Quantity quantity() const { return quantity_; }

 private:
  GeneratorSpec spec_;
  Quantity quantity_;
  Direction direction_;
  TruthSettings truth_;
  std::map<double, TruthValue> known_;
};

// The member whose truth equals `value`: s solved by TOMS 748 to within max(1e-6, 2 x the
// truth's own error). DomainError, naming the value as `name`, when it is out of reach for
// s <= 64.
Alternative solve_scale(ScaledFamily& family, double value, const std::string& name);
Alternative solve_scale(const GeneratorSpec& spec, Quantity quantity, double value,
                        Direction direction, const TruthSettings& truth, const std::string& name);

// The alternative of a power question: s solved (TOMS 748) so that the truth of the quantity
// equals `detect`, to within max(1e-6, 2 x the truth's own error). DomainError when the value
// is out of reach for s <= 64.
Alternative solve_alternative(const GeneratorSpec& spec, const PowerQuestion& question,
                              const TruthSettings& truth);

// Why `method` cannot give an interval for `estimator` (consistency for an estimator that is
// not a calibration error, bias_corrected without a bias model, analytic without a squared
// error variance: Estimator::capabilities), or nullopt.
std::optional<std::string> interval_inapplicable(IntervalMethod method, const Estimator& estimator);

// Called after each simulated n (from the calling thread), for progress lines.
using PlanPointFn = std::function<void(const PlanPoint&)>;

// Called from worker threads after each finished replicate of sample size n with (n, done,
// total), for a progress line within one n.
using PlanReplicateFn = std::function<void(std::size_t n, std::size_t done, std::size_t total)>;

// Validates the spec (DomainError naming the field) and answers the question.
PlanResult plan_sample_size(const PlanSpec& spec, const PlanPointFn& on_point = {},
                            const PlanReplicateFn& on_replicate = {});

// The seconds `replicates` replicates of sample size n take on one thread: the question's work
// per replicate (a sample, the estimate, and the interval or the test with its resamples),
// timed on the replicates of the plan's own streams. calbench plan's up-front estimate scales
// it to the search's sizes (the work is close to linear in n).
double replicate_seconds(const PlanSpec& spec, std::size_t n, std::size_t replicates);

}  // namespace calbench
