// Decision tasks: the policies by hand, zero cost of miscalibration for calibrated generators
// (exactly), hand-worked K = 2 known answers against quadrature (1e-9) and Monte Carlo (within
// its standard error), the requirement frontier's interpolation, and the scenario end to end.
#include <tbb/global_control.h>

#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "config/registry.hpp"
#include "core/error.hpp"
#include "core/running_stats.hpp"
#include "decisions/decision_spec.hpp"
#include "decisions/decision_tasks_json.hpp"
#include "decisions/decision_value.hpp"
#include "decisions/requirement.hpp"
#include "experiment/experiment.hpp"
#include "scenarios/common.hpp"
#include "scenarios/decision/run.hpp"
#include "scenarios/registry.hpp"

using namespace calbench;

namespace {
using ExperimentConfig = DecisionConfig;
using ResultSet = DecisionResults;
DecisionConfig parse(const nlohmann::ordered_json& document, const std::string& source) {
  return parse_experiment_as<DecisionConfig>(document, source);
}
}  // namespace

namespace {

// Monte Carlo against an exact value: z standard errors. A few dozen comparisons: z = 4.5 keeps
// the family-wise false-alarm rate below 0.1%.
constexpr double z = 4.5;

DirichletGenerator binary(double alpha, MiscalibrationMap map) {
  return DirichletGenerator({2, {alpha, alpha}, std::move(map)});
}

std::vector<std::unique_ptr<DecisionTask>> every_task(std::size_t K) {
  std::vector<std::unique_ptr<DecisionTask>> out;
  std::vector<std::vector<double>> u(K, std::vector<double>(K, -1.0));
  for (std::size_t k = 0; k < K; ++k) u[k][k] = 1.0 + static_cast<double>(k);
  out.push_back(make_task(CostMatrixSpec{u, std::vector<double>(K, -0.2)}));
  out.push_back(make_task(SelectiveSpec{K, 0.8, 0.2}));
  out.push_back(make_task(TriageSpec{K, 1, 1.0, 0.25}));
  std::vector<double> odds(K);
  for (std::size_t k = 0; k < K; ++k)
    odds[k] = static_cast<double>(K) * 0.95 + 0.1 * static_cast<double>(k);
  out.push_back(make_task(BettingSpec{odds, 1.0}));
  out.push_back(make_task(BettingSpec{odds, 0.5}));
  return out;
}

void check_mc_agrees(const DecisionValue& exact, const DecisionValue& mc) {
  INFO("policy: exact " << exact.policy.value << ", MC " << mc.policy.value << " +- "
                        << mc.policy.error);
  CHECK(std::abs(exact.policy.value - mc.policy.value) <= z * mc.policy.error + 1e-12);
  INFO("oracle: exact " << exact.oracle.value << ", MC " << mc.oracle.value << " +- "
                        << mc.oracle.error);
  CHECK(std::abs(exact.oracle.value - mc.oracle.value) <= z * mc.oracle.error + 1e-12);
  INFO("cost: exact " << exact.cost.value << ", MC " << mc.cost.value << " +- " << mc.cost.error);
  CHECK(std::abs(exact.cost.value - mc.cost.value) <= z * mc.cost.error + 1e-12);
}

}  // namespace

// ---- the policies ---------------------------------------------------------------------------

TEST_CASE("cost_matrix takes the action of highest expected utility, ties to the lowest index",
          "[unit][decisions]") {
  // U = [[1, -2], [-1, 3]], abstain -0.2: at q = (0.6, 0.4) the class actions are worth
  // 0.6 - 0.8 = -0.2 and -0.6 + 1.2 = 0.6; at q = (0.9, 0.1): 0.7 and 0.0; at q = (0.7, 0.3):
  // 0.1 and 0.2; at q = (5/7, 2/7) both class actions are worth 1/7 (a tie, to class 0).
  const CostMatrixTask t({{{1, -2}, {-1, 3}}, std::vector<double>{-0.2, -0.2}});
  CHECK(t.decide(std::vector<double>{0.6, 0.4}, {}).action == 1);
  CHECK(t.decide(std::vector<double>{0.9, 0.1}, {}).action == 0);
  CHECK(t.decide(std::vector<double>{0.7, 0.3}, {}).action == 1);
  CHECK(t.decide(std::vector<double>{0.75, 0.25}, {}).action == 0);  // 0.25 vs 0.0
  // With a worse abstention utility nothing changes; with utility[0] = [0, 0] abstaining at -0.2
  // never wins over 0.
  const CostMatrixTask u({{{-1, -1}, {-1, -1}}, std::vector<double>{-0.5, -0.5}});
  CHECK(u.decide(std::vector<double>{0.5, 0.5}, {}).action == 2);  // -1 < -0.5
  const CostMatrixTask tie({{{0, 0}, {0, 0}}, std::vector<double>{0, 0}});
  CHECK(tie.decide(std::vector<double>{0.3, 0.7}, {}).action == 0);  // a three-way tie
  CHECK(expected_utility(t, Decision{1}, std::vector<double>{0.6, 0.4}) == Approx(0.6));
  CHECK_THROWS_AS(CostMatrixTask({{{1, 2}}, std::nullopt}), DomainError);
  CHECK_THROWS_AS(CostMatrixTask({{{1, 2}, {1}}, std::nullopt}), DomainError);
}

TEST_CASE("selective, triage and betting policies by hand", "[unit][decisions]") {
  const SelectiveTask s({3, 0.5, 0.3});
  CHECK(s.decide(std::vector<double>{0.2, 0.5, 0.3}, {}).action == 1);  // max p = threshold
  CHECK(s.decide(std::vector<double>{0.4, 0.4, 0.2}, {}).action == 3);  // defer
  CHECK(s.utility(Decision{3}, 0) == -0.3);
  CHECK(s.utility(Decision{1}, 1) == 0.0);
  CHECK(s.utility(Decision{1}, 2) == -1.0);

  // t* = harm / (benefit + harm) = 1 / (3 + 1) = 0.25; exactly at t* there is no treatment.
  const TriageTask t({2, 1, 3.0, 1.0});
  CHECK(t.threshold() == 0.25);
  CHECK(t.decide(std::vector<double>{0.75, 0.25}, {}).action == 0);
  CHECK(t.decide(std::vector<double>{0.7, 0.3}, {}).action == 1);
  // Expected utility of treating at q_d = 0.3: 0.3 * 3 - 0.7 * 1 = 0.2.
  CHECK(expected_utility(t, Decision{1}, std::vector<double>{0.7, 0.3}) == Approx(0.2));

  // Odds (3, 1.5), belief q = (0.4, 0.6): edges 1.2 - 1 = 0.2 and 0.9 - 1 < 0, so bet on 0 with
  // f = (0.4 * 3 - 1) / (3 - 1) = 0.1; a win multiplies the bankroll by 1 + 0.1 * 2 = 1.2
  // (= q o), a loss by 0.9 (= o (1 - q) / (o - 1) = 3 * 0.6 / 2).
  const BettingTask b({{3.0, 1.5}, 1.0});
  const std::vector<double> q = {0.4, 0.6};
  const std::vector<double> log_q = {std::log(0.4), std::log(0.6)};
  const Decision d = b.decide(q, log_q);
  CHECK(d.action == 0);
  CHECK(d.stake == Approx(0.1));
  CHECK(d.log_win == Approx(std::log(1.2)));
  CHECK(d.log_lose == Approx(std::log(0.9)));
  CHECK(b.decide(q, {}) == d);  // without logarithms the same decision up to rounding
  // No edge anywhere (q o <= 1 for both): no bet, utility 0.
  const Decision none = b.decide(std::vector<double>{1.0 / 3.0, 2.0 / 3.0}, {});
  CHECK(none.action == 2);
  CHECK(b.utility(none, 0) == 0.0);
  // Half Kelly: stake 0.05, factors 1.1 and 0.95.
  const BettingTask half({{3.0, 1.5}, 0.5});
  const Decision h = half.decide(q, log_q);
  CHECK(h.stake == Approx(0.05));
  CHECK(h.log_win == Approx(std::log(1.1)));
  CHECK(h.log_lose == Approx(std::log(0.95)));
  CHECK_THROWS_AS(BettingTask({{1.0, 2.0}, 1.0}), DomainError);
  CHECK_THROWS_AS(TriageTask({2, 2, 1.0, 1.0}), DomainError);
}

// ---- identity: zero cost, exactly -----------------------------------------------------------

TEST_CASE("identity: zero cost of miscalibration, exactly, for every task", "[unit][decisions]") {
  // Policy and oracle take the same decision on every case, so the per-case differences, and
  // hence the cost, are exactly 0 — by quadrature (K = 2) and by Monte Carlo (K = 3).
  for (const MiscalibrationMap& map :
       {MiscalibrationMap{IdentityMap{}}, MiscalibrationMap{TemperatureMap{1.0}},
        MiscalibrationMap{TopLabelMap{1.0}}}) {
    for (double alpha : {0.1, 1.0, 3.0}) {
      const auto gen = binary(alpha, map);
      for (const auto& task : every_task(2)) {
        INFO(map_name(map) << ", alpha " << alpha << ", " << task->name());
        const DecisionValue v = exact_decision_value(gen, *task, 0);
        CHECK(v.policy.method == TruthMethod::quadrature);
        CHECK(v.cost.value == 0.0);
        CHECK(v.policy.value == v.oracle.value);
        CHECK(v.figures == v.oracle_figures);
      }
    }
    const DirichletGenerator gen3({3, {0.3, 0.6, 1.2}, map});
    for (const auto& task : every_task(3)) {
      INFO(map_name(map) << ", K = 3, " << task->name());
      const DecisionValue v = exact_decision_value(gen3, *task, 20'000);
      CHECK(v.policy.method == TruthMethod::monte_carlo);
      CHECK(v.cost.value == 0.0);
      CHECK(v.cost.error == 0.0);
      CHECK(v.policy.value == v.oracle.value);
    }
  }
}

// ---- known answers, K = 2 -------------------------------------------------------------------

TEST_CASE("known answer: triage on Beta(1, 1) with temperature 1/2 (rational)",
          "[stat][decisions]") {
  // K = 2, alpha = 1: c_1 = x ~ Uniform(0, 1). Triage with benefit 1, harm 1/4: t* = 0.2.
  // Temperature T: logit p_1 = logit(x) / T, so the policy treats when x > x* = sigma(T logit t*).
  // T = 1/2: logit(0.2) = -log 4, x* = sigma(-log 2) = 1/3. Treating at x is worth
  // x - (1 - x)/4 = 1.25 x - 0.25, so
  //   EU(x*) = int_{x*}^1 (1.25 x - 0.25) dx = 0.625 (1 - x*^2) - 0.25 (1 - x*),
  //   policy  EU(1/3) = 0.625 * 8/9 - 0.25 * 2/3 = 5/9 - 1/6 = 7/18,
  //   oracle  EU(0.2) = 0.625 * 0.96 - 0.25 * 0.8 = 0.4,
  //   cost    = 0.4 - 7/18 = 1/90.
  // Figures: treated = 1 - x* = 2/3, helped = int_{x*}^1 x dx = (1 - x*^2)/2 = 4/9,
  // harmed = 2/3 - 4/9 = 2/9, missed = x*^2 / 2 = 1/18.
  const auto gen = binary(1.0, TemperatureMap{0.5});
  const TriageTask task({2, 1, 1.0, 0.25});
  const DecisionValue q = quadrature_decision_value(gen, task);
  CHECK(std::abs(q.policy.value - 7.0 / 18.0) < 1e-9);
  CHECK(std::abs(q.oracle.value - 0.4) < 1e-9);
  CHECK(std::abs(q.cost.value - 1.0 / 90.0) < 1e-9);
  CHECK(q.policy.error < 1e-9);
  CHECK(std::abs(q.figures[0] - 2.0 / 3.0) < 1e-9);
  CHECK(std::abs(q.figures[1] - 4.0 / 9.0) < 1e-9);
  CHECK(std::abs(q.figures[2] - 2.0 / 9.0) < 1e-9);
  CHECK(std::abs(q.figures[3] - 1.0 / 18.0) < 1e-9);
  check_mc_agrees(q, monte_carlo_decision_value(gen, task, 400'000));
}

TEST_CASE("known answer: triage on Beta(a, a) by the incomplete beta function",
          "[stat][decisions]") {
  // c_1 = x ~ Beta(a, a); the policy treats when x > x* (above). With size biasing,
  // E[x 1{x > x*}] = (1/2) P_{Beta(a+1, a)}(X > x*), so
  //   EU(x*) = (b + h)/2 * I^c_{x*}(a + 1, a) - h * I^c_{x*}(a, a),
  // I^c the complemented regularised incomplete beta (boost::math::ibetac).
  const double b = 1.0, h = 0.25;
  const double t_star = h / (b + h);
  const auto eu = [&](double a, double x) {
    return (b + h) / 2.0 * boost::math::ibetac(a + 1.0, a, x) - h * boost::math::ibetac(a, a, x);
  };
  const auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const double logit_t = std::log(t_star / (1.0 - t_star));
  for (double a : {0.1, 0.5, 2.0}) {
    for (double T : {0.5, 1.0, 2.0}) {
      INFO("alpha " << a << ", T " << T);
      const auto gen = binary(a, TemperatureMap{T});
      const TriageTask task({2, 1, b, h});
      const DecisionValue q = quadrature_decision_value(gen, task);
      const double policy = eu(a, sigmoid(T * logit_t));
      const double oracle = eu(a, t_star);
      CHECK(std::abs(q.policy.value - policy) < 1e-9);
      CHECK(std::abs(q.oracle.value - oracle) < 1e-9);
      CHECK(std::abs(q.cost.value - (oracle - policy)) < 1e-9);
      if (T != 1.0) check_mc_agrees(q, monte_carlo_decision_value(gen, task, 200'000));
    }
  }
}

TEST_CASE("known answer: selective on Beta(1, 1) with temperature 1/2", "[stat][decisions]") {
  // x ~ Uniform(0, 1), deferral cost d = 0.2, threshold 0.8 (Chow's rule 1 - d). The policy
  // predicts when max p >= 0.8, i.e. x >= x_t or x <= 1 - x_t with x_t = sigma(T logit 0.8):
  // for T = 1/2, sigma(log 2) = 2/3. Expected cost = P(predict, wrong) + d P(defer)
  //   = 2 int_{x_t}^1 (1 - x) dx + d (2 x_t - 1) = (1 - x_t)^2 + d (2 x_t - 1):
  //   policy 1/9 + 0.2/3 = 8/45, oracle (x_t = 0.8) 0.04 + 0.12 = 0.16,
  //   cost of miscalibration = 8/45 - 0.16 = 4/225.
  // Coverage 2 (1 - x_t) = 2/3; selective accuracy = (1 - x_t^2) / (2 (1 - x_t)) = 5/6.
  const auto gen = binary(1.0, TemperatureMap{0.5});
  const SelectiveTask task({2, 0.8, 0.2});
  const DecisionValue q = quadrature_decision_value(gen, task);
  CHECK(std::abs(q.policy.value - (-8.0 / 45.0)) < 1e-9);
  CHECK(std::abs(q.oracle.value - (-0.16)) < 1e-9);
  CHECK(std::abs(q.cost.value - 4.0 / 225.0) < 1e-9);
  CHECK(std::abs(q.figures[0] - 2.0 / 3.0) < 1e-9);
  CHECK(std::abs(q.figures[1] - 5.0 / 6.0) < 1e-9);
  CHECK(std::abs(q.figures[2] - 8.0 / 45.0) < 1e-9);
  check_mc_agrees(q, monte_carlo_decision_value(gen, task, 400'000));
}

TEST_CASE("known answer: Kelly betting at even odds on Beta(1, 1)", "[stat][decisions]") {
  // Odds (2, 2), x ~ Uniform(0, 1), calibrated: bet on class 1 when x > 1/2 with f = 2x - 1,
  // growth x log(2x) + (1 - x) log(2 (1 - x)); by symmetry the expected log-growth is
  //   2 int_{1/2}^1 [x log 2x + (1 - x) log 2(1 - x)] dx = log 2 + 2 int_0^1 u log u du
  //   = log 2 - 1/2.
  const auto gen = binary(1.0, IdentityMap{});
  const BettingTask task({{2.0, 2.0}, 1.0});
  const DecisionValue q = quadrature_decision_value(gen, task);
  CHECK(std::abs(q.policy.value - (std::log(2.0) - 0.5)) < 1e-9);
  CHECK(q.cost.value == 0.0);
  // The bet rate is 1 (x = 1/2 has measure 0), the mean stake E|2x - 1| = 1/2.
  CHECK(std::abs(q.figures[0] - 1.0) < 1e-9);
  CHECK(std::abs(q.figures[1] - 0.5) < 1e-9);
  check_mc_agrees(q, monte_carlo_decision_value(gen, task, 400'000));
}

TEST_CASE("K = 2 quadrature agrees with Monte Carlo for every task and several maps",
          "[stat][decisions]") {
  for (const MiscalibrationMap& map :
       {MiscalibrationMap{TemperatureMap{0.6}}, MiscalibrationMap{TemperatureMap{1.7}},
        MiscalibrationMap{TopLabelMap{0.5}}, MiscalibrationMap{PowerMap{{0.7, 1.3}}}}) {
    const DirichletGenerator gen({2, {0.4, 0.8}, map});
    for (const auto& task : every_task(2)) {
      INFO(canonical_text(map) << ", " << task->name());
      const DecisionValue q = quadrature_decision_value(gen, *task);
      CHECK(q.policy.error < 1e-9);
      check_mc_agrees(q, monte_carlo_decision_value(gen, *task, 100'000));
    }
  }
}

TEST_CASE("the oracle is never beaten by a miscalibrated policy (Bayes-optimal tasks)",
          "[stat][decisions]") {
  // cost_matrix, triage, Chow-rule selective and full Kelly act Bayes-optimally on their
  // belief, so acting on the true r(p) is at least as good: cost >= 0 (MC: within its SE), also
  // for the non-injective top_label map (gamma = 2, K = 3), whose oracle uses E[c | p].
  for (const MiscalibrationMap& map :
       {MiscalibrationMap{TemperatureMap{0.5}}, MiscalibrationMap{TopLabelMap{2.0}}}) {
    const DirichletGenerator gen({3, {0.5, 0.5, 0.5}, map});
    auto tasks = every_task(3);
    tasks.pop_back();  // half Kelly is not optimal for its belief
    for (const auto& task : tasks) {
      INFO(canonical_text(map) << ", " << task->name());
      const DecisionValue v = exact_decision_value(gen, *task, 100'000);
      CHECK(v.cost.value > -z * v.cost.error);
      CHECK(v.cost.value > 0.0);
    }
  }
}

TEST_CASE("decision values do not depend on the thread count", "[unit][decisions]") {
  const DirichletGenerator gen({3, {0.5, 0.5, 0.5}, TemperatureMap{0.7}});
  const TriageTask task({3, 2, 1.0, 0.5});
  DecisionValue one, two;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = exact_decision_value(gen, task, 50'000);
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    two = exact_decision_value(gen, task, 50'000);
  }
  CHECK(one.policy.value == two.policy.value);
  CHECK(one.cost.value == two.cost.value);
  CHECK(one.cost.error == two.cost.error);
  CHECK(one.figures == two.figures);
}

// ---- the requirement frontier ---------------------------------------------------------------

TEST_CASE("requirement frontier: interpolation between the bracketing cells", "[unit][decisions]") {
  Requirement at_least{.metric = DecisionMetric::expected_utility,
                       .figure = {},
                       .bound = Bound::at_least,
                       .value = 0.3,
                       .regret = false};
  // Given out of order; sorted by accuracy: (0.6, 0.1), (0.7, 0.2), (0.8, 0.4). The last
  // failing cell is 1 (margin -0.1), the next cell 2 (margin 0.1):
  // a* = 0.7 + 0.1 * 0.1 / 0.2 = 0.75.
  std::vector<FrontierPoint> points = {{2, 0.8, 0.4}, {0, 0.6, 0.1}, {1, 0.7, 0.2}};
  Frontier f = minimal_accuracy(points, at_least);
  CHECK(f.status == FrontierStatus::reached);
  CHECK(*f.minimal_accuracy == Approx(0.75));
  CHECK(f.below->cell == 1);
  CHECK(f.above->cell == 2);
  CHECK(f.monotone);

  at_least.value = 0.05;
  f = minimal_accuracy(points, at_least);
  CHECK(f.status == FrontierStatus::met_everywhere);
  CHECK(*f.minimal_accuracy == 0.6);

  at_least.value = 0.5;
  f = minimal_accuracy(points, at_least);
  CHECK(f.status == FrontierStatus::unreachable);
  CHECK(!f.minimal_accuracy);
  CHECK(f.closest->cell == 2);

  // at_most 0.15 on a cost that falls with accuracy: (0.6, 0.3), (0.7, 0.2), (0.8, 0.1):
  // margins -0.15, -0.05, 0.05, so a* = 0.7 + 0.1 * 0.05 / 0.1 = 0.75.
  const Requirement at_most{.metric = DecisionMetric::miscalibration_cost,
                            .figure = {},
                            .bound = Bound::at_most,
                            .value = 0.15,
                            .regret = true};
  f = minimal_accuracy({{0, 0.6, 0.3}, {1, 0.7, 0.2}, {2, 0.8, 0.1}}, at_most);
  CHECK(*f.minimal_accuracy == Approx(0.75));

  // Not monotone: met at 0.6, failed at 0.7, met at 0.8: the frontier is where it holds for
  // good, a* = 0.7 + 0.1 * 0.1 / 0.2 = 0.75, flagged.
  f = minimal_accuracy({{0, 0.6, 0.35}, {1, 0.7, 0.2}, {2, 0.8, 0.4}},
                       Requirement{.metric = DecisionMetric::expected_utility,
                                   .figure = {},
                                   .bound = Bound::at_least,
                                   .value = 0.3,
                                   .regret = false});
  CHECK(*f.minimal_accuracy == Approx(0.75));
  CHECK(!f.monotone);
  CHECK(minimal_accuracy({}, at_least).status == FrontierStatus::unreachable);
}

TEST_CASE("the frontier moves to higher accuracy with miscalibration either way",
          "[e2e][decisions]") {
  // Triage (benefit 1, harm 1/4) on K = 2: for each alpha the calibrated policy is the oracle
  // and the best (the known answers above: cost 1/90 at alpha = 1, T = 1/2), and the expected
  // utility grows with accuracy, so an over- or underconfident model needs more accuracy.
  const auto document = nlohmann::ordered_json::parse(R"({
    "name": "frontier",
    "scenario": "decision",
    "seed": 3,
    "replicates": 4,
    "sample_size": 50,
    "generator": {"family": "dirichlet", "classes": 2, "alpha": 1,
                  "miscalibration": {"map": "temperature", "temperature": 1}},
    "decision": {"task": "triage", "benefit": 1, "harm": 0.25},
    "requirement": {"at_least": 0.42},
    "sweep": {"generator.alpha": [0.2, 0.4, 0.7, 1.0],
              "generator.miscalibration.temperature": [0.5, 1.0, 2.0]}
  })");
  const ExperimentConfig config = parse(document, "frontier.json");
  REQUIRE(config.requirement);
  CHECK(config.requirement->accuracy_key == "generator.alpha");
  const ResultSet r = run_decision(config, {});
  REQUIRE(r.requirements);
  REQUIRE(r.requirements->rows.size() == 3);
  const auto& rows = r.requirements->rows;
  for (const auto& row : rows) REQUIRE(row.status == FrontierStatus::reached);
  INFO(r.requirements->verdict);
  CHECK(*rows[0].minimal_accuracy > *rows[1].minimal_accuracy);
  CHECK(*rows[2].minimal_accuracy > *rows[1].minimal_accuracy);
  CHECK(rows[1].ece_top_l1 == Approx(0.0).margin(1e-12));
  // Cell 10 is alpha 1, T 0.5: the rational known answer.
  CHECK(std::abs(r.records[9].decision.expected_utility - 7.0 / 18.0) < 1e-9);
  CHECK(std::abs(r.records[9].decision.miscalibration_cost - 1.0 / 90.0) < 1e-9);
  CHECK(r.records[10].decision.miscalibration_cost == 0.0);
  CHECK(r.requirements->verdict.find("Verdict:") == 0);
}

TEST_CASE("other families: label_noise without noise costs exactly 0, with noise more",
          "[stat][decisions]") {
  // label_noise reports p ~ Dirichlet(alpha) and has c = (1 - w) p + w beta: with w = 0, c = p
  // bit for bit, so policy and oracle agree everywhere. With w = 0.3 and uniform beta the
  // oracle treats when c_2 = 0.7 p_2 + 0.1 > t* = 0.2, i.e. p_2 > 1/7, the policy when
  // p_2 > 0.2: it misses patients and loses (cost > 0). (At t* = 1/K the two would agree.)
  const TriageTask task({3, 2, 1.0, 0.25});
  const Generator calibrated(LabelNoiseSpec{3, {0.5}, 0.0, {1.0 / 3, 1.0 / 3, 1.0 / 3}});
  const DecisionValue v0 = exact_decision_value(calibrated, task, 20'000);
  CHECK(v0.policy.method == TruthMethod::monte_carlo);
  CHECK(v0.cost.value == 0.0);
  const Generator noisy(LabelNoiseSpec{3, {0.5}, 0.3, {1.0 / 3, 1.0 / 3, 1.0 / 3}});
  const DecisionValue v1 = exact_decision_value(noisy, task, 50'000);
  CHECK(v1.cost.value > z * v1.cost.error);
  // The realised utility on test sets agrees with the exact value.
  RunningStats realised;
  for (std::uint64_t r = 0; r < 40; ++r) {
    Engine engine = make_engine({77, 0, r, Purpose::sample});
    realised.add(realised_utility(noisy, task, 500, engine));
  }
  CHECK(std::abs(realised.mean() - v1.policy.value) < z * realised.standard_error());
}

TEST_CASE("target sweep: the frontier rises with the target ECE", "[e2e][decisions]") {
  // generator.target.accuracy is the accuracy key by default; each ECE level is a group.
  const auto document = nlohmann::ordered_json::parse(R"({
    "name": "targets",
    "scenario": "decision",
    "replicates": 4,
    "sample_size": 50,
    "generator": {"family": "dirichlet", "classes": 2,
                  "target": {"accuracy": 0.85, "ece_top_l1": 0.03},
                  "miscalibration": {"map": "temperature"}},
    "decision": {"task": "triage", "benefit": 1, "harm": 0.25},
    "requirement": {"at_least": 0.44},
    "sweep": {"generator.target.accuracy": [0.8, 0.85, 0.88, 0.91],
              "generator.target.ece_top_l1": [0.0, 0.03, 0.06]}
  })");
  ExperimentConfig config = parse(document, "targets.json");
  solve_targets(config);
  REQUIRE(config.requirement);
  CHECK(config.requirement->accuracy_key == "generator.target.accuracy");
  const ResultSet r = run_decision(config, {});
  REQUIRE(r.requirements);
  const auto& rows = r.requirements->rows;
  REQUIRE(rows.size() == 3);
  for (const auto& row : rows) REQUIRE(row.status == FrontierStatus::reached);
  CHECK(*rows[0].minimal_accuracy < *rows[1].minimal_accuracy);
  CHECK(*rows[1].minimal_accuracy < *rows[2].minimal_accuracy);
  // The interpolated ECE at the frontier is the group's target.
  CHECK(*rows[2].ece_top_l1 == Approx(0.06).margin(1e-3));
  CHECK(r.records.front().cell.target);
  CHECK(r.records.front().decision.miscalibration_cost == 0.0);  // ECE 0: temperature 1
}

TEST_CASE("every decision registry row: its example parses, runs, and costs 0 when calibrated",
          "[unit][decisions]") {
  for (const auto& row : decision_registry()) {
    INFO(row.name << ": " << row.example);
    auto document = nlohmann::ordered_json::parse(R"({
      "scenario": "decision", "replicates": 3, "sample_size": 20,
      "generator": {"family": "dirichlet", "classes": 2, "alpha": 0.7}
    })");
    document["decision"] =
        nlohmann::ordered_json::parse(example_object("task", row.name, row.example));
    const ExperimentConfig config = parse(document, "example.json");
    REQUIRE(config.cells.size() == 1);
    const DecisionTaskConfig& d = config.cells.front().decision;
    const auto& params = std::get<Value::Object>(d.params.data);
    const auto has_param = [&](const std::string& key) {
      return std::any_of(params.begin(), params.end(),
                         [&](const auto& p) { return p.first == key; });
    };
    CHECK(d.task == row.name);
    // Every documented parameter with a default is in the resolved parameters.
    for (const auto& p : row.params)
      if (p.fallback != "required" && p.fallback != "none") CHECK(has_param(p.key));
    // Every figure the task reports is named in the row's documentation.
    std::string figures;
    for (const auto& note : row.notes)
      if (note.label == "figures") figures = note.text;
    for (const auto& f : d.figures) CHECK(figures.find(f) != std::string::npos);
    const ResultSet r = run_decision(config, {});
    CHECK(r.records.front().decision.miscalibration_cost == 0.0);
    CHECK(r.records.front().decision.method == TruthMethod::quadrature);
  }
}

// ---- after a recalibrator -------------------------------------------------------------------

namespace {

// g(p) = p: the recalibrated policy is the uncalibrated one.
class IdentityModel : public CalibrationModel {
 public:
  void apply(std::span<const double> p, std::size_t, std::span<double> q) const override {
    std::copy(p.begin(), p.end(), q.begin());
  }
  FittedState state() const override { return {.kind = "identity"}; }
};

// A decision config with a `recalibrator`; K = 2 triage (quadrature for the uncalibrated values).
ExperimentConfig recalibrated_config(double temperature, std::size_t fit_size,
                                     std::size_t replicates) {
  auto document = nlohmann::ordered_json::parse(R"({
    "scenario": "decision", "seed": 5, "sample_size": 20,
    "generator": {"family": "dirichlet", "classes": 2, "alpha": 0.5,
                  "miscalibration": {"map": "temperature", "temperature": 1}},
    "decision": {"task": "triage", "benefit": 1, "harm": 0.25},
    "recalibrator": {"method": {"name": "temperature"}, "samples": 200000}
  })");
  document["replicates"] = replicates;
  document["generator"]["miscalibration"]["temperature"] = temperature;
  document["recalibrator"]["fit_size"] = fit_size;
  return parse(document, "recalibrated.json");
}

}  // namespace

TEST_CASE("recalibrated values: g = identity reproduces the uncalibrated cost on the same draws",
          "[stat][decisions]") {
  const IdentityModel identity;
  const std::vector<const CalibrationModel*> models = {&identity, &identity};
  for (double temperature : {1.0, 0.5}) {
    INFO("temperature " << temperature);
    const Generator gen(DirichletSpec{2, {0.5, 0.5}, TemperatureMap{temperature}});
    for (const auto& task : every_task(2)) {
      INFO(task->name());
      const DecisionValue exact = exact_decision_value(gen, *task, 0);
      const auto values = recalibrated_decision_values(gen, *task, models, 100'000);
      REQUIRE(values.size() == 2);
      // Both models are valued on the same draws: the same bits.
      CHECK(values[0].cost.value == values[1].cost.value);
      // Against the quadrature of the uncalibrated policy.
      CHECK(std::abs(values[0].cost.value - exact.cost.value) <= z * values[0].cost.error + 1e-12);
      CHECK(std::abs(values[0].policy.value - exact.policy.value) <=
            z * values[0].policy.error + 1e-12);
      // Where p = c bit for bit, the thresholded tasks decide alike on every draw.
      if (temperature == 1.0 && task->name() != "betting") CHECK(values[0].cost.value == 0.0);
    }
  }
  // K = 3 (Monte Carlo): the draws are those of exact_decision_value, so with the same number
  // of draws the cost is the same up to summation order.
  const Generator gen3(DirichletSpec{3, {0.5, 0.5, 0.5}, TemperatureMap{0.7}});
  const TriageTask task({3, 2, 1.0, 0.5});
  const DecisionValue mc = exact_decision_value(gen3, task, 64'000);
  const auto v3 = recalibrated_decision_values(gen3, task, models, 64'000);
  CHECK(v3[0].cost.value == Approx(mc.cost.value).epsilon(1e-12).margin(1e-15));
  std::vector<RecalibratedValue> one, two;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = recalibrated_decision_values(gen3, task, models, 20'000);
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    two = recalibrated_decision_values(gen3, task, models, 20'000);
  }
  CHECK(one[0].cost.value == two[0].cost.value);
  CHECK(one[0].policy.error == two[0].policy.error);
}

TEST_CASE("recalibrated: temperature scaling on a calibrated generator costs ~0",
          "[stat][decisions]") {
  const std::size_t R = 8;
  const ExperimentConfig config = recalibrated_config(1.0, 20'000, R);
  const ResultSet r = run_decision(config, {});
  const DecisionRecord& d = r.records.front().decision;
  CHECK(d.miscalibration_cost == 0.0);
  REQUIRE(d.recalibrated);
  const RecalibratedRecord& q = *d.recalibrated;
  CHECK(q.label == "temperature");
  CHECK(q.fits == R);
  CHECK(q.failed_fits == 0);
  // Zero within the spread of the fits and the Monte Carlo error; never below 0 beyond it
  // (the oracle is Bayes-optimal for triage).
  const double se = q.cost_sd / std::sqrt(static_cast<double>(R)) + q.cost_error;
  INFO("recalibrated cost " << q.cost_mean << " sd " << q.cost_sd << " error " << q.cost_error);
  CHECK(std::abs(q.cost_mean) <= z * se);
  CHECK(q.cost_mean < 1e-4);
  CHECK(q.utility_mean == Approx(d.oracle_expected_utility - q.cost_mean).margin(1e-12));
}

TEST_CASE("recalibrated: temperature scaling recovers most of a temperature miscalibration",
          "[stat][decisions]") {
  const std::size_t R = 8;
  for (double temperature : {0.5, 2.0}) {
    INFO("generator temperature " << temperature);
    const ResultSet r = run_decision(recalibrated_config(temperature, 20'000, R), {});
    const DecisionRecord& d = r.records.front().decision;
    REQUIRE(d.recalibrated);
    const RecalibratedRecord& q = *d.recalibrated;
    INFO("uncalibrated cost " << d.miscalibration_cost << ", recalibrated " << q.cost_mean << " sd "
                              << q.cost_sd << " error " << q.cost_error);
    CHECK(q.fits == R);
    CHECK(d.miscalibration_cost > 1e-3);
    CHECK(q.cost_mean < 0.05 * d.miscalibration_cost);
    CHECK(q.cost_mean >= -z * q.cost_error);
    CHECK(q.utility_mean > d.expected_utility);
  }
}

TEST_CASE("recalibrator config: parsed as a methods item, validated, rejected elsewhere",
          "[unit][decisions]") {
  const auto base = nlohmann::ordered_json::parse(R"({
    "scenario": "decision", "replicates": 3, "sample_size": 20,
    "generator": {"family": "dirichlet", "classes": 2, "alpha": 0.5},
    "decision": {"task": "triage"}
  })");
  const auto problems_of = [&](const char* recalibrator) {
    auto document = base;
    document["recalibrator"] = nlohmann::ordered_json::parse(recalibrator);
    try {
      parse_experiment(document, "r.json");
    } catch (const ConfigError& error) {
      return error.problems();
    }
    return std::vector<std::string>{};
  };
  const auto has = [](const std::vector<std::string>& problems, const std::string& text) {
    return std::any_of(problems.begin(), problems.end(),
                       [&](const std::string& p) { return p.find(text) != std::string::npos; });
  };
  CHECK(problems_of(R"({"method": {"name": "histogram_binning", "bins": 5}, "fit_size": 500})")
            .empty());
  auto p = problems_of(R"({"method": {"name": "warp"}, "fit_size": 500})");
  CHECK(has(p, "r.json: /recalibrator/method/name: unknown recalibration method \"warp\""));
  p = problems_of(R"({"method": {"name": "temperature"}})");
  CHECK(has(p, "r.json: /recalibrator/fit_size: required key"));
  p = problems_of(R"({"method": {"name": "bbq", "prior_strength": -1}, "fit_size": 1})");
  CHECK(has(p, "/recalibrator/method/prior_strength"));
  CHECK(has(p, "/recalibrator/fit_size"));
  p = problems_of(R"({"method": {"name": "temperature"}, "fit_size": 50, "fit": 1})");
  CHECK(has(p, "/recalibrator/fit: unknown key"));
  p = problems_of(
      R"({"method": {"name": "temperature", "label": "uncalibrated"}, "fit_size": 50})");
  CHECK(has(p, "/recalibrator/method: label \"uncalibrated\" is reserved"));
  p = problems_of(R"([1])");
  CHECK(has(p, "/recalibrator: expected an object"));
  // Defaults are filled into the resolved config; the method is built.
  auto document = base;
  document["recalibrator"] = {{"method", {{"name", "temperature"}}}, {"fit_size", 300}};
  const ExperimentConfig config = parse(document, "r.json");
  REQUIRE(config.cells.front().recalibrator);
  CHECK(config.cells.front().recalibrator->fit_size == 300);
  CHECK(config.resolved["recalibrator"]["samples"] == 200000);
  // A sweep over the fit size makes one cell per size.
  document["sweep"] = {{"recalibrator.fit_size", {100, 1000}}};
  const ExperimentConfig swept = parse(document, "r.json");
  REQUIRE(swept.cells.size() == 2);
  CHECK(swept.cells[1].recalibrator->fit_size == 1000);
}
