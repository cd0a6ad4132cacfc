#include "plan/gate.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "core/task_kernel.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {

bool clause_passes(const GateClause& clause, double estimate) {
  // A NaN compares false both ways: a value calbench cannot estimate passes no clause.
  return clause.comparison == Comparison::at_most ? estimate <= clause.threshold
                                                  : estimate >= clause.threshold;
}

bool rule_passes(const GateRule& rule, std::span<const double> estimates) {
  const bool all = rule.join == Join::all;
  for (std::size_t i = 0; i < rule.clauses.size(); ++i)
    if (clause_passes(rule.clauses[i], estimates[i]) != all) return !all;
  return all;
}

std::string rule_text(const GateRule& rule) {
  std::string out;
  for (std::size_t i = 0; i < rule.clauses.size(); ++i) {
    const GateClause& c = rule.clauses[i];
    if (i > 0) out += rule.join == Join::all ? " and " : " or ";
    out += c.label + (c.comparison == Comparison::at_most ? " <= " : " >= ") +
           format_double(c.threshold);
  }
  return out + " on n = " + std::to_string(rule.n);
}

namespace {

void validate(const GateSpec& spec) {
  const GateRule& rule = spec.rule;
  if (rule.clauses.empty()) throw DomainError("rule: at least one clause");
  for (const GateClause& c : rule.clauses) {
    if (!c.estimator) throw DomainError("rule: a clause without an estimator");
    if (!std::isfinite(c.threshold))
      throw DomainError("threshold of " + c.label + " = " + format_double(c.threshold) +
                        ": must be finite");
  }
  if (rule.n < 2) throw DomainError("n = " + std::to_string(rule.n) + ": must be >= 2");
  if (spec.replicates < 10)
    throw DomainError("replicates = " + std::to_string(spec.replicates) + ": must be >= 10");
  auto positive = [](double v, const std::string& name) {
    if (!(v > 0.0)) throw DomainError(name + " = " + format_double(v) + ": must be > 0");
  };
  for (double v : spec.family.values) positive(v, "family value");
  if (spec.risks.good) positive(*spec.risks.good, "good");
  if (spec.risks.bad) positive(*spec.risks.bad, "bad");
}

// Per-thread working memory, allocated once.
struct Buffers {
  Sample sample;
  GeneratorScratch scratch;
  EstimatorWorkspace workspace;
};

// One replicate: each clause's estimate and whether the rule passed.
struct Replicate {
  std::vector<double> estimates;
  bool passed = false;
};

// stream_tasks can journal its results; a gate keeps no journal, but the type must be codable.
template <typename Archive>
void serialize(Archive& a, Replicate& r) {
  a(r.estimates, r.passed);
}

}  // namespace

GateResult evaluate_gate(const GateSpec& spec, const GatePointFn& on_point) {
  validate(spec);
  const GateRule& rule = spec.rule;
  const GateFamily& family = spec.family;
  const std::size_t clauses = rule.clauses.size();
  ScaledFamily members(spec.generator, family.quantity, family.direction, spec.truth);
  // The member at one true error, simulated: R samples of n rows, the rule on each.
  auto simulate = [&](double value, const std::string& name) {
    GatePoint point;
    point.value = value;
    point.member = solve_scale(members, value, name);
    const Generator generator(point.member.spec);
    std::size_t passed = 0;
    std::vector<std::size_t> clause_passed(clauses, 0), estimable(clauses, 0);
    std::vector<double> sum(clauses, 0.0);
    stream_tasks<Replicate, Buffers>(
        TaskGrid({spec.replicates}),
        [&](TaskKey key, Buffers& buf) {
          // Cell 0 for every member: common random numbers across the family.
          Engine engine = make_engine({spec.seed, 0, key.replicate, Purpose::sample});
          generator.sample(engine, rule.n, buf.sample, buf.scratch);
          Replicate r;
          r.estimates.reserve(clauses);
          for (const GateClause& c : rule.clauses)
            r.estimates.push_back(c.estimator->estimate(buf.sample, buf.workspace));
          r.passed = rule_passes(rule, r.estimates);
          return r;
        },
        [&](TaskKey, Replicate&& r) {
          passed += r.passed ? 1 : 0;
          for (std::size_t i = 0; i < clauses; ++i) {
            clause_passed[i] += clause_passes(rule.clauses[i], r.estimates[i]) ? 1 : 0;
            if (std::isnan(r.estimates[i])) continue;
            ++estimable[i];
            sum[i] += r.estimates[i];
          }
        });
    const double R = static_cast<double>(spec.replicates);
    point.pass = static_cast<double>(passed) / R;
    point.pass_se = std::sqrt(point.pass * (1.0 - point.pass) / R);
    for (std::size_t i = 0; i < clauses; ++i) {
      point.clause_pass.push_back(static_cast<double>(clause_passed[i]) / R);
      point.clause_mean.push_back(estimable[i] > 0
                                      ? sum[i] / static_cast<double>(estimable[i])
                                      : std::numeric_limits<double>::quiet_NaN());
      point.not_estimable.push_back(spec.replicates - estimable[i]);
    }
    if (on_point) on_point(point);
    return point;
  };

  GateResult result;
  result.own = members.truth_at(1.0);
  for (std::size_t i = 0; i < family.values.size(); ++i)
    result.points.push_back(simulate(family.values[i], "values[" + std::to_string(i) + "]"));
  // A risk at a value of the curve is that point (the same member and streams).
  auto risk = [&](double value, const std::string& name) {
    for (const GatePoint& p : result.points)
      if (p.value == value) return p;
    return simulate(value, name);
  };
  if (spec.risks.good) result.good = risk(*spec.risks.good, "good");
  if (spec.risks.bad) result.bad = risk(*spec.risks.bad, "bad");
  return result;
}

}  // namespace calbench
