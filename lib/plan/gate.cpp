#include "plan/gate.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "core/task_kernel.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {

std::string_view to_string(Comparison comparison) {
  return comparison == Comparison::at_most ? "<=" : ">=";
}

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
    out += c.label + " " + std::string(to_string(c.comparison)) + " " + format_double(c.threshold);
  }
  return out + " on n = " + std::to_string(rule.n);
}

namespace {

// The measured false-reject rate the design allows: the request less 1.645 binomial standard
// errors, so that the request is a one-sided 95 % upper bound of the rate.
double design_reject_target(const GateDesignRequest& d, std::size_t replicates) {
  return d.false_reject - gate_design_z * std::sqrt(d.false_reject * (1.0 - d.false_reject) /
                                                    static_cast<double>(replicates));
}

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
  if (const auto& d = spec.design) {
    if (rule.clauses.size() != 1) throw DomainError("design: the rule must have one clause");
    if (!spec.risks.good || !spec.risks.bad) throw DomainError("design: needs risks good and bad");
    for (double limit : {d->false_reject, d->false_accept})
      if (!(limit > 0.0 && limit < 1.0))
        throw DomainError("design: a risk of " + format_double(limit) + ": must be in (0, 1)");
    if (design_reject_target(*d, spec.replicates) <= 0.0)
      throw DomainError("design: false_reject = " + format_double(d->false_reject) +
                        " is within 1.645 standard errors of 0 at " +
                        std::to_string(spec.replicates) + " replicates; raise replicates");
    if (d->n_min < 2 || d->n_max <= d->n_min || !(d->ratio > 1.0))
      throw DomainError("design: needs 2 <= n_min < n_max and ratio > 1");
  }
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

struct Estimate {
  double value = 0.0;
};
template <typename Archive>
void serialize(Archive& a, Estimate& e) {
  a(e.value);
}

// The clause's estimate on R samples of n rows of `generator`, replicate r from the stream
// (seed, cell, r, sample), in replicate order.
std::vector<double> clause_estimates(const Generator& generator, const GateClause& clause,
                                     std::size_t n, std::size_t replicates, std::uint64_t seed,
                                     std::size_t cell) {
  std::vector<double> out;
  out.reserve(replicates);
  stream_tasks<Estimate, Buffers>(
      TaskGrid({replicates}),
      [&](TaskKey key, Buffers& buf) {
        Engine engine = make_engine({seed, cell, key.replicate, Purpose::sample});
        generator.sample(engine, n, buf.sample, buf.scratch);
        return Estimate{clause.estimator->estimate(buf.sample, buf.workspace)};
      },
      [&](TaskKey, Estimate&& e) { out.push_back(e.value); });
  return out;
}

double fraction_passing(const GateClause& clause, const std::vector<double>& estimates) {
  std::size_t passed = 0;
  for (double e : estimates) passed += clause_passes(clause, e) ? 1 : 0;
  return static_cast<double>(passed) / static_cast<double>(estimates.size());
}

double binomial_se(double p, std::size_t replicates) {
  return std::sqrt(p * (1.0 - p) / static_cast<double>(replicates));
}

// One n of the design search: the threshold from the good member's estimates (the largest
// number of failures the target allows, m = floor(target R), fail there), the false-accept
// rate it leaves at the bad member.
GateDesignPoint design_point(const GateSpec& spec, const Generator& good, const Generator& bad,
                             std::size_t n) {
  const GateClause& clause = spec.rule.clauses.front();
  const GateDesignRequest& d = *spec.design;
  const std::size_t R = spec.replicates;
  std::vector<double> g = clause_estimates(good, clause, n, R, spec.seed, 0);
  const bool at_most = clause.comparison == Comparison::at_most;
  // NaN fails every clause: sorted to the failing end.
  const double failing =
      at_most ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  for (double& e : g)
    if (std::isnan(e)) e = failing;
  if (at_most)
    std::sort(g.begin(), g.end());
  else
    std::sort(g.begin(), g.end(), std::greater<>());
  const auto failures =
      static_cast<std::size_t>(std::floor(design_reject_target(d, R) * static_cast<double>(R)));
  GateDesignPoint point;
  point.n = n;
  point.threshold = g[R - 1 - failures];
  GateClause designed = clause;
  designed.threshold = point.threshold;
  point.false_reject = 1.0 - fraction_passing(designed, g);
  point.false_accept =
      fraction_passing(designed, clause_estimates(bad, clause, n, R, spec.seed, 0));
  point.false_accept_se = binomial_se(point.false_accept, R);
  point.meets = std::isfinite(point.threshold) &&
                point.false_accept + gate_design_z * point.false_accept_se <= d.false_accept;
  return point;
}

// The grid n_min ratio^k (rounded, distinct) up to n_max, smallest first, until a point meets;
// then `refine` bisections of the bracket on log n. The answer is the smallest n that met.
GateDesign design_gate(const GateSpec& spec, const GatePoint& good_member,
                       const GatePoint& bad_member) {
  const GateDesignRequest& d = *spec.design;
  const Generator good(good_member.member.spec), bad(bad_member.member.spec);
  std::map<std::size_t, GateDesignPoint> seen;
  auto at = [&](std::size_t n) -> const GateDesignPoint& {
    if (auto it = seen.find(n); it != seen.end()) return it->second;
    return seen.emplace(n, design_point(spec, good, bad, n)).first->second;
  };
  std::optional<std::size_t> below, above;
  for (double x = static_cast<double>(d.n_min);; x *= d.ratio) {
    const std::size_t n = std::min(d.n_max, static_cast<std::size_t>(std::llround(x)));
    if (at(n).meets) {
      above = n;
      break;
    }
    below = n;
    if (n == d.n_max) break;
  }
  if (above && below)
    for (std::size_t step = 0; step < d.refine; ++step) {
      const auto mid = static_cast<std::size_t>(
          std::llround(std::sqrt(static_cast<double>(*below) * static_cast<double>(*above))));
      if (mid <= *below || mid >= *above) break;
      (at(mid).meets ? above : below) = mid;
    }
  GateDesign out;
  for (const auto& [n, point] : seen) out.points.push_back(point);
  if (!above) return out;
  out.answer = seen.at(*above);
  // The designed rule on fresh streams (cell 1).
  GateClause designed = spec.rule.clauses.front();
  designed.threshold = out.answer->threshold;
  const std::size_t R = spec.replicates;
  const std::size_t n = out.answer->n;
  out.verified_false_reject =
      1.0 - fraction_passing(designed, clause_estimates(good, designed, n, R, spec.seed, 1));
  out.verified_false_reject_se = binomial_se(out.verified_false_reject, R);
  out.verified_false_accept =
      fraction_passing(designed, clause_estimates(bad, designed, n, R, spec.seed, 1));
  out.verified_false_accept_se = binomial_se(out.verified_false_accept, R);
  return out;
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
      point.clause_mean.push_back(estimable[i] > 0 ? sum[i] / static_cast<double>(estimable[i])
                                                   : std::numeric_limits<double>::quiet_NaN());
      point.not_estimable.push_back(spec.replicates - estimable[i]);
    }
    if (on_point) on_point(point);
    return point;
  };

  GateResult result;
  const Generator own(spec.generator);
  result.own = compute_truth(own, spec.truth)[family.quantity];
  // s = 1 is the generator itself unless its map is the identity (then a temperature e^-1).
  if (Generator(members.member(1.0)).canonical_text() == own.canonical_text())
    members.remember(1.0, result.own);
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
  if (spec.design) result.design = design_gate(spec, *result.good, *result.bad);
  return result;
}

}  // namespace calbench
