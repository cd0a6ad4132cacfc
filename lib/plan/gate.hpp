#pragma once
// Acceptance gates (docs/gates.md, issue #40): a rule such as "15-bin ECE <= 0.08 on n = 100
// labelled rows", and what it risks. A gate is evaluated on a family of fakes indexed by the
// true calibration error: the gate's generator with its miscalibration scaled by s
// (scaled_generator, plan/sample_size_plan.hpp), s solved so that the exact truth of the
// family's quantity equals each value asked for. At each member calbench draws R samples of n
// rows, evaluates the rule on each and reports
//   - the operating characteristic P(pass) = (passes)/R with its binomial standard error
//     sqrt(P (1 - P) / R), beside the member's truth (value, method, error);
//   - at a "good" true error the false-reject rate 1 - P(pass), at a "bad" one the false-accept
//     rate P(pass), each simulated at the member whose truth is that value (not interpolated).
// Every member uses the same streams (seed, 0, replicate, sample): common random numbers, so
// the curve is smooth in the true error. Results are the same bits for any thread count
// (core/task_kernel.hpp).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/quantity.hpp"
#include "estimators/estimator.hpp"
#include "generators/generator.hpp"
#include "plan/sample_size_plan.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

// A clause passes when the estimate is at most (at least) the threshold. A calibration test's
// p-value is the estimate of a test estimator with output p_value ("p >= 0.05": at_least).
enum class Comparison { at_most, at_least };
// "<=", ">=".
std::string_view to_string(Comparison comparison);

struct GateClause {
  std::shared_ptr<const Estimator> estimator;
  std::string label;  // the estimator's label, for the output
  Comparison comparison = Comparison::at_most;
  double threshold = 0.0;
};

// The clauses are joined by `and` (every clause passes) or `or` (at least one passes).
enum class Join { all, any };

struct GateRule {
  std::vector<GateClause> clauses;  // at least one
  Join join = Join::all;
  std::size_t n = 100;  // labelled rows the gate is evaluated on (>= 2)
};

// Whether a clause passes on `estimate`; a NaN estimate (not estimable) fails every clause.
bool clause_passes(const GateClause& clause, double estimate);
// Whether the rule passes on the clauses' estimates, one per clause, in order.
bool rule_passes(const GateRule& rule, std::span<const double> estimates);
// "ece_ew15 <= 0.08 and kuiper_p >= 0.05 on n = 100".
std::string rule_text(const GateRule& rule);

// The family of fakes: the truth of `quantity` at each member, solved for the scale s.
struct GateFamily {
  Quantity quantity = Quantity::ece_top_l1;
  std::vector<double> values;  // the true errors of the OC curve's points, each > 0
  Direction direction = Direction::overconfident;
};

// The true errors at which the risks are reported; either may be absent.
struct GateRisks {
  std::optional<double> good, bad;
};

// The design question (docs/gates.md, "Design"): the smallest n, and the threshold of a
// one-clause rule, whose false-reject rate at the good member is at most `false_reject` and
// false-accept rate at the bad member at most `false_accept`, each at its one-sided 95 % upper
// Monte Carlo bound. n is searched on n_min ratio^k, then `refine` bisections on log n.
struct GateDesignRequest {
  double false_reject = 0.05, false_accept = 0.05;  // in (0, 1)
  std::size_t n_min = 20, n_max = 100'000;
  double ratio = 2.0;  // > 1
  std::size_t refine = 4;
};

struct GateSpec {
  GeneratorSpec generator;
  GateRule rule;
  GateFamily family;
  GateRisks risks;
  std::optional<GateDesignRequest> design;  // needs one clause and both risks
  std::size_t replicates = 1000;            // >= 10
  std::uint64_t seed = 0;
  TruthSettings truth;
};

// One member of the family and the rule's behaviour there.
struct GatePoint {
  double value = 0.0;  // the true error asked for
  Alternative member;  // its generator, scale s and achieved truth
  double pass = 0.0, pass_se = 0.0;
  std::vector<double> clause_pass;         // per clause: the fraction of replicates it passed
  std::vector<double> clause_mean;         // per clause: the mean estimate (NaN ones left out)
  std::vector<std::size_t> not_estimable;  // per clause: replicates with a NaN estimate
};

// One sample size of the design search: the threshold that keeps the good member's measured
// false-reject rate at most the request less 1.645 standard errors, and the false-accept rate
// it leaves at the bad member.
struct GateDesignPoint {
  std::size_t n = 0;
  double threshold = 0.0;
  double false_reject = 0.0, false_accept = 0.0, false_accept_se = 0.0;
  bool meets = false;  // false_accept + 1.645 se <= the request
};

struct GateDesign {
  std::vector<GateDesignPoint> points;    // by n
  std::optional<GateDesignPoint> answer;  // the smallest n that met; nullopt: not by n_max
  // The answer's rule simulated again on fresh streams (cell 1 instead of 0): its measured
  // risks and their binomial standard errors.
  double verified_false_reject = 0.0, verified_false_reject_se = 0.0;
  double verified_false_accept = 0.0, verified_false_accept_se = 0.0;
};

struct GateResult {
  TruthValue own;                 // the gate generator's own truth of the family's quantity (s = 1)
  std::vector<GatePoint> points;  // by the values asked for, in their order
  std::optional<GatePoint> good, bad;  // the members at the risks' true errors
  std::optional<GateDesign> design;
};

// The multiplier of the design's one-sided 95 % bounds.
inline constexpr double gate_design_z = 1.6448536269514722;

// 1 - P(pass) at the good member, and its standard error (the same as P(pass)'s).
inline double false_reject(const GatePoint& good) {
  return 1.0 - good.pass;
}

// Called after each simulated member (from the calling thread), for progress lines.
using GatePointFn = std::function<void(const GatePoint&)>;

// Validates the spec (DomainError naming the field) and simulates every member.
GateResult evaluate_gate(const GateSpec& spec, const GatePointFn& on_point = {});

}  // namespace calbench
