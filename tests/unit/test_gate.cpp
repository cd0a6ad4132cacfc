// calbench gate (docs/gates.md): the rule's logic, the scaled empirical fake, P(pass) against a
// known binomial answer, the and/or identity on common samples, determinism across thread
// counts, and the gate file's errors. The OC curve against an independent numpy simulation is
// tests/cli/gate.sh (ctest cli.gate).
#include <tbb/task_arena.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>

#include "core/error.hpp"
#include "core/format.hpp"
#include "estimators/estimators_json.hpp"
#include "plan/gate.hpp"
#include "plan/gate_json.hpp"
#include "temp_files.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

std::shared_ptr<const Estimator> estimator(const std::string& json) {
  Problems problems;
  Json resolved;
  const auto config = parse_estimator(Json::parse(json), "/estimator", problems, resolved);
  REQUIRE(config);
  return config->estimator;
}

GateClause clause(const std::string& json, Comparison comparison, double threshold,
                  const std::string& label) {
  return {estimator(json), label, comparison, threshold};
}

// K = 2, score f ~ Beta(3, 1.5), P(y = 1 | f) = sigmoid(-0.2 + 0.6 logit f): overconfident.
BetaBinarySpec binary_fake() {
  BetaBinarySpec spec;
  spec.a = 3.0;
  spec.b = 1.5;
  spec.curve = LogitLogitCurve{-0.2, 0.6};
  return spec;
}

GateSpec ece_gate(std::size_t replicates) {
  GateSpec spec;
  spec.generator = binary_fake();
  spec.rule.clauses = {clause(R"({"name": "ece", "bins": 15})", Comparison::at_most, 0.08, "ece")};
  spec.rule.n = 100;
  spec.family.values = {0.03, 0.1};
  spec.replicates = replicates;
  spec.seed = 11;
  return spec;
}

}  // namespace

TEST_CASE("rule_passes: and needs every clause, or one; NaN passes none", "[unit][gate]") {
  GateRule rule;
  rule.clauses = {clause(R"({"name": "ece"})", Comparison::at_most, 0.08, "ece"),
                  clause(R"({"name": "accuracy"})", Comparison::at_least, 0.9, "accuracy")};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(rule_passes(rule, std::vector<double>{0.08, 0.9}));  // the thresholds pass
  CHECK_FALSE(rule_passes(rule, std::vector<double>{0.081, 0.95}));
  CHECK_FALSE(rule_passes(rule, std::vector<double>{0.05, 0.89}));
  CHECK_FALSE(rule_passes(rule, std::vector<double>{nan, 0.95}));
  rule.join = Join::any;
  CHECK(rule_passes(rule, std::vector<double>{0.081, 0.95}));
  CHECK(rule_passes(rule, std::vector<double>{0.05, 0.5}));
  CHECK_FALSE(rule_passes(rule, std::vector<double>{0.2, 0.5}));
  CHECK_FALSE(rule_passes(rule, std::vector<double>{nan, nan}));
  rule.n = 250;
  CHECK(rule_text(rule) == "ece <= 0.08 or accuracy >= 0.9 on n = 250");
}

TEST_CASE("scaled_generator: a fitted empirical fake, s = 0 calibrated, s = 1 itself",
          "[unit][gate]") {
  EmpiricalSpec spec;
  spec.classes = 2;
  spec.rows = std::make_shared<const std::vector<double>>(
      std::vector<double>{0.9, 0.1, 0.3, 0.7, 0.05, 0.95, 0.6, 0.4});
  spec.calibration = {{-4.0, 0.0, 4.0}, {-0.5, -0.3, 0.0, 0.2, 0.4}};
  const Generator fitted(spec);
  const auto same = std::get<EmpiricalSpec>(scaled_generator(spec, 1.0, Direction::overconfident));
  CHECK(Generator(same).canonical_text() == fitted.canonical_text());
  const auto twice = std::get<EmpiricalSpec>(scaled_generator(spec, 2.0, Direction::overconfident));
  CHECK(twice.calibration.coefficients == std::vector<double>{-1.0, -0.6, 0.0, 0.4, 0.8});
  CHECK(twice.calibration.knots == spec.calibration.knots);
  const Generator calibrated(scaled_generator(spec, 0.0, Direction::overconfident));
  const TruthSettings settings;
  const GroundTruth zero = compute_truth(calibrated, settings);
  CHECK(zero[Quantity::ece_top_l1].value == 0.0);
  CHECK(zero[Quantity::canonical_l1].value == 0.0);
  // With h = 0 the truth is the exact average over the rows, so the classwise error (K = 2:
  // E|g(p_1) - p_1|) is known by hand: each row's |sigmoid(u + s f(u)) - p_1| grows with s.
  double previous = 0.0;
  for (double s : {0.5, 1.0, 2.0}) {
    const Generator g(scaled_generator(spec, s, Direction::overconfident));
    const double truth = compute_truth(g, settings)[Quantity::classwise_ece_l1].value;
    double by_hand = 0.0;
    for (std::size_t i = 0; i < 4; ++i) {
      const double p1 = (*spec.rows)[2 * i + 1];
      const double t = std::log(p1 / (1.0 - p1));
      const double u = std::clamp(t, -4.0, 4.0);
      const double offset = spline_offset(spec.calibration, t);
      by_hand += std::abs(1.0 / (1.0 + std::exp(-(u + s * offset))) - p1) / 4.0;
    }
    CHECK(truth == Approx(by_hand).epsilon(1e-12));
    CHECK(truth > previous);
    previous = truth;
  }
}

TEST_CASE("evaluate_gate: P(accuracy >= t) is the binomial tail at the member's accuracy",
          "[stat][gate]") {
  // Each row is right with probability acc, the member's true accuracy, independently, so
  // the number right on n rows is Binomial(n, acc) and P(pass) = P(X >= k) exactly.
  GateSpec spec = ece_gate(4000);
  spec.rule.n = 50;
  spec.family.values = {0.02, 0.08, 0.14};
  const TruthSettings settings;
  for (double value : spec.family.values) {
    const Alternative member = solve_scale(spec.generator, Quantity::ece_top_l1, value,
                                           Direction::overconfident, settings, "value");
    const double acc = compute_truth(Generator(member.spec), settings)[Quantity::accuracy].value;
    const double k = std::round(acc * 50.0);
    GateSpec one = spec;
    one.family.values = {value};
    one.rule.clauses = {
        clause(R"({"name": "accuracy"})", Comparison::at_least, (k - 0.5) / 50.0, "accuracy")};
    const GateResult result = evaluate_gate(one);
    const double exact =
        cdf(complement(boost::math::binomial(50.0, acc), k - 1.0));  // P(X >= k) = P(X > k - 1)
    const GatePoint& p = result.points.at(0);
    INFO("true ECE " << value << ", accuracy " << acc << ", k " << k << ": P(pass) " << p.pass
                     << " ± " << p.pass_se << ", exact " << exact);
    CHECK(std::abs(p.pass - exact) <= 3.5 * std::sqrt(exact * (1.0 - exact) / 4000.0));
    CHECK(p.member.achieved.value == Approx(value).margin(1e-5));
  }
}

TEST_CASE("evaluate_gate: and + or = the two clauses, replicate by replicate", "[unit][gate]") {
  // The same samples under both joins: #(a and b) + #(a or b) = #a + #b exactly.
  GateSpec spec = ece_gate(400);
  spec.rule.clauses.push_back(
      clause(R"({"name": "accuracy"})", Comparison::at_least, 0.78, "accuracy"));
  const GateResult both = evaluate_gate(spec);
  spec.rule.join = Join::any;
  const GateResult either = evaluate_gate(spec);
  for (std::size_t i = 0; i < both.points.size(); ++i) {
    const GatePoint& a = both.points[i];
    const GatePoint& o = either.points[i];
    CHECK(a.clause_pass == o.clause_pass);
    CHECK(a.pass + o.pass == Approx(a.clause_pass[0] + a.clause_pass[1]).margin(1e-12));
    CHECK(a.pass <= std::min(a.clause_pass[0], a.clause_pass[1]));
    CHECK(o.pass >= std::max(o.clause_pass[0], o.clause_pass[1]));
    // Both clauses matter at these members (neither always nor never passes).
    CHECK(a.pass < o.pass);
  }
}

TEST_CASE("evaluate_gate: the generator's own truth, also for an identity map", "[unit][gate]") {
  // An identity map is calibrated; its family's member at s = 1 is a temperature e^-1, not it.
  GateSpec spec = ece_gate(20);
  spec.generator = DirichletSpec{2, {2.0, 2.0}, IdentityMap{}};
  spec.family.values = {0.05};
  const GateResult identity = evaluate_gate(spec);
  CHECK(identity.own.value == 0.0);
  CHECK(identity.points.at(0).member.achieved.value == Approx(0.05).margin(1e-6));
  spec.generator = binary_fake();
  const GateResult fake = evaluate_gate(spec);
  CHECK(fake.own.value ==
        compute_truth(Generator(binary_fake()), TruthSettings{})[Quantity::ece_top_l1].value);
}

TEST_CASE("evaluate_gate: the same points on 1 and 2 threads", "[unit][gate]") {
  GateSpec spec = ece_gate(300);
  spec.risks = {0.03, 0.12};
  GateResult one, two;
  tbb::task_arena(1).execute([&] { one = evaluate_gate(spec); });
  tbb::task_arena(2).execute([&] { two = evaluate_gate(spec); });
  REQUIRE(one.points.size() == two.points.size());
  for (std::size_t i = 0; i < one.points.size(); ++i) {
    CHECK(one.points[i].pass == two.points[i].pass);
    CHECK(one.points[i].clause_mean == two.points[i].clause_mean);
  }
  CHECK(one.good->pass == two.good->pass);
  CHECK(one.bad->pass == two.bad->pass);
}

TEST_CASE("load_gate: every problem at its JSON pointer", "[unit][gate]") {
  calbench::testing::TempDir dir;
  auto problems = [&](const std::string& text) -> std::vector<std::string> {
    const auto file = dir.path / "gate.json";
    std::ofstream(file) << text;
    try {
      (void)load_gate(file);
    } catch (const ConfigError& e) {
      return e.problems();
    }
    return {};
  };
  auto has = [](const std::vector<std::string>& found, const std::string& what) {
    for (const auto& p : found)
      if (p.find(what) != std::string::npos) return true;
    return false;
  };
  const std::string generator =
      R"("generator": {"family": "beta_binary", "a": 2, "b": 2,
                       "calibration": {"curve": "logit_logit", "a": 0, "b": 0.7}})";
  // Several problems at once, each at its pointer.
  const auto found = problems("{" + generator + R"(, "rule": {"n": 0, "clauses": [
      {"estimator": {"name": "ece", "bins": 0}, "at_most": 0.08}, {"estimator": {"name": "ece"}}]},
      "family": {"values": []}, "risks": {"good": -1}})");
  INFO(join(found, "\n"));
  CHECK(has(found, "gate.json: /rule/n: expected an integer >= 2, found 0"));
  CHECK(has(found, "gate.json: /rule/clauses/0/estimator/bins"));
  CHECK(has(found, "gate.json: /rule/clauses/1: expected \"at_most\""));
  CHECK(has(found, "gate.json: /family/values: expected a non-empty array"));
  CHECK(has(found, "gate.json: /risks/good"));
  // A clean file parses, with its defaults filled in.
  const auto file = dir.path / "ok.json";
  std::ofstream(file) << "{" + generator + R"(, "rule": {"n": 100, "clauses": [
      {"estimator": {"name": "ece"}, "at_most": 0.08}]}, "family": {"values": [0.05]}})";
  const GateConfig config = load_gate(file);
  CHECK(config.name == "ok");
  CHECK(config.spec.replicates == 1000);
  CHECK(config.resolved["rule"]["join"] == "and");
  CHECK(config.resolved["family"]["quantity"] == "ece_top_l1");
  CHECK(rule_text(config.spec.rule) == "ece_ew15 <= 0.08 on n = 100");
}
