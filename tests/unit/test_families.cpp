// The generator families of issue #5 (class_conditional, label_noise, beta_binary), the
// Generator interface, targets for the dirichlet family and Panchenko et al.'s lemma.
#include <tbb/global_control.h>

#include <atomic>
#include <boost/math/special_functions/beta.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "core/running_stats.hpp"
#include "experiment/experiment.hpp"
#include "generators/generator.hpp"
#include "scenarios/common.hpp"
#include "scenarios/estimator_bias/run.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/results.hpp"
#include "temp_files.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/family_truth.hpp"
#include "truth/target_solver.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;
namespace fs = std::filesystem;
using OJ = nlohmann::ordered_json;

namespace {

// Monte Carlo against an exact value: z standard errors plus the exact method's own error.
// About a hundred comparisons: z = 4.5 keeps the family-wise false-alarm rate below 0.1%.
constexpr double z = 4.5;

void check_agree(const GroundTruth& exact, const GroundTruth& mc, Quantity q,
                 double floor = 1e-12) {
  INFO(to_string(q) << ": exact " << exact[q].value << " (" << to_string(exact[q].method) << ", "
                    << exact[q].error << "), MC " << mc[q].value << " (" << mc[q].error << ")");
  CHECK(std::abs(exact[q].value - mc[q].value) < z * mc[q].error + exact[q].error + floor);
}

// The quantities that `exact` computes without Monte Carlo.
void check_exact_against_mc(const GroundTruth& exact, const GroundTruth& mc) {
  for (Quantity q : all_quantities)
    if (exact[q].method != TruthMethod::monte_carlo) check_agree(exact, mc, q);
}

GroundTruth truth_of(const GeneratorSpec& spec, std::uint64_t samples = 2'000'000) {
  TruthSettings s;
  s.samples = samples;
  return compute_truth(Generator(spec), s);
}

GroundTruth mc_of(const GeneratorSpec& spec, std::uint64_t samples) {
  TruthSettings s;
  s.samples = samples;
  s.tolerance = 0.0;  // every sample
  return family_monte_carlo(Generator(spec), s);
}

using calbench::testing::read_text;
using calbench::testing::TempDir;

}  // namespace

// ---- the Generator interface ------------------------------------------------------------------

TEST_CASE("Generator over a DirichletSpec draws the same bits as DirichletGenerator", "[unit]") {
  for (const DirichletSpec& spec :
       {DirichletSpec{2, {0.5}, TemperatureMap{0.7}}, DirichletSpec{5, {0.3}, TopLabelMap{2.0}},
        DirichletSpec{4, {0.2, 0.5, 1.0, 2.0}, PowerMap{{0.5, 1, 1.5, 2}}}}) {
    const DirichletGenerator direct(spec);
    const Generator wrapped(spec);
    CHECK(wrapped.family() == "dirichlet");
    CHECK(wrapped.canonical_text() == direct.canonical_text());
    Engine e1 = make_engine({9, 1, 2, Purpose::sample});
    Engine e2 = make_engine({9, 1, 2, Purpose::sample});
    Sample a, b;
    DirichletScratch s1;
    GeneratorScratch s2;
    direct.sample(e1, 500, a, s1, true);
    wrapped.sample(e2, 500, b, s2, true);
    CHECK(a.p == b.p);
    CHECK(a.label == b.label);
    CHECK(a.truth == b.truth);
  }
}

TEST_CASE("every family samples valid rows and keeps its truth on request", "[unit]") {
  const std::vector<GeneratorSpec> specs = {
      ClassConditionalSpec{3, {}, class_conditional_alpha(3, 0.5, 1.5)},
      LabelNoiseSpec{4, {0.5}, 0.3, {1, 0, 0, 0}},
      BetaBinarySpec{2.0, 1.0, 0.1, PolynomialCurve{2.0}}};
  for (const auto& spec : specs) {
    const Generator gen(spec);
    INFO(gen.canonical_text());
    Engine engine = make_engine({1, 0, 0, Purpose::sample});
    Sample s;
    GeneratorScratch scratch;
    gen.sample(engine, 2000, s, scratch, true);
    REQUIRE(s.size == 2000);
    REQUIRE(s.truth.size() == 2000 * gen.classes());
    for (std::size_t i = 0; i < s.size; ++i) {
      double sp = 0.0, sc = 0.0;
      for (std::size_t k = 0; k < gen.classes(); ++k) {
        sp += s.p[i * gen.classes() + k];
        sc += s.truth[i * gen.classes() + k];
        REQUIRE(s.p[i * gen.classes() + k] >= 0.0);
      }
      REQUIRE(sp == Approx(1.0).margin(1e-12));
      REQUIRE(sc == Approx(1.0).margin(1e-12));
      REQUIRE(s.label[i] < gen.classes());
    }
  }
  CHECK_THROWS_WITH(Generator(LabelNoiseSpec{3, {1.0}, 1.5, {1, 0, 0}}), Catch::Contains("weight"));
  CHECK_THROWS_WITH(Generator(ClassConditionalSpec{3, {0.5, 0.5, 0.5}, std::vector<double>(9, 1)}),
                    Catch::Contains("prior sums to 1.5"));
  CHECK_THROWS_WITH(Generator(BetaBinarySpec{1.0, -1.0, 0.0, IdentityCurve{}}),
                    Catch::Contains("b = -1"));
  CHECK_THROWS_WITH(Generator(BetaBinarySpec{1.0, 1.0, 0.2, LogisticCurve{0.0, 1.0}}),
                    Catch::Contains("point_mass"));
}

// ---- label_noise ------------------------------------------------------------------------------

TEST_CASE("label_noise: canonical L1 = w 2(K-1)/K for a unit beta, closed forms against MC",
          "[stat][truth]") {
  // By hand: beta = e_j gives ||p - e_j||_1 = (1 - p_j) + sum_{i != j} p_i = 2(1 - p_j), and
  // E p_j = 1/K for symmetric alpha, so E||r(p) - p||_1 = w 2(K - 1)/K.
  for (std::size_t K : {2, 3, 10})
    for (double w : {0.1, 0.4}) {
      const auto t = truth_of(LabelNoiseSpec{K, {0.5}, w, [&] {
                                               std::vector<double> b(K, 0.0);
                                               b[K - 1] = 1.0;
                                               return b;
                                             }()});
      const double Kd = static_cast<double>(K);
      CHECK(t[Quantity::canonical_l1].value == Approx(w * 2.0 * (Kd - 1.0) / Kd).margin(1e-14));
      CHECK(t[Quantity::canonical_l1].method == TruthMethod::closed_form);
      CHECK(t[Quantity::classwise_ece_l1].value == Approx(w * 2.0 * (Kd - 1.0) / (Kd * Kd)));
      // Overconfident everywhere: E[c_top | Z] = (1 - w) Z + w/K <= Z.
      CHECK(t[Quantity::ece_top_l1].value == Approx(t[Quantity::overconfidence].value));
    }
  // K = 3, w = 0.3 by hand: 0.3 * 4/3 = 0.4.
  CHECK(truth_of(LabelNoiseSpec{3, {2.0}, 0.3, {0, 1, 0}})[Quantity::canonical_l1].value ==
        Approx(0.4).margin(1e-15));
  // Every quantity against the generic Monte Carlo, symmetric (all exact) and not.
  for (const LabelNoiseSpec& spec :
       {LabelNoiseSpec{4, {0.5}, 0.3, {1, 0, 0, 0}}, LabelNoiseSpec{3, {2.0}, 0.2, {0.2, 0.3, 0.5}},
        LabelNoiseSpec{3, {0.3, 0.6, 1.0}, 0.25, {0.6, 0.1, 0.3}},
        // w = 1: the labels ignore p (Widmann et al.'s most miscalibrated model).
        LabelNoiseSpec{3, {1.0}, 1.0, {1, 0, 0}}}) {
    INFO(Generator(spec).canonical_text());
    check_exact_against_mc(truth_of(spec), mc_of(spec, 800'000));
  }
}

// ---- class_conditional ------------------------------------------------------------------------

TEST_CASE("class_conditional: r(p) is the conditional class frequency", "[stat][truth]") {
  // Draw (p, y) from the generative model and group the draws by the closed-form r_k(p): in
  // each group the frequency of y = k must match the mean of r_k (the tower property that makes
  // c := r(p) the truth).
  const ClassConditionalGenerator gen(
      {3, {0.2, 0.3, 0.5}, {1.5, 0.4, 0.8, 0.5, 2.0, 0.5, 0.7, 0.6, 1.2}});
  Engine engine = make_engine({4, 0, 0, Purpose::truth});
  std::vector<double> c(3), p(3), log_p(3);
  constexpr int bins = 10;
  std::array<std::array<RunningStats, bins>, 3> freq, mean_r;
  for (int i = 0; i < 300'000; ++i) {
    const auto y = gen.draw(engine, c, p, log_p);
    for (std::size_t k = 0; k < 3; ++k) {
      const int b = std::min(bins - 1, static_cast<int>(c[k] * bins));
      freq[k][b].add(y == k ? 1.0 : 0.0);
      mean_r[k][b].add(c[k]);
    }
  }
  int checked = 0;
  for (std::size_t k = 0; k < 3; ++k)
    for (int b = 0; b < bins; ++b) {
      if (freq[k][b].count() < 200) continue;
      INFO("class " << k << " bin " << b << " frequency " << freq[k][b].mean() << " mean r "
                    << mean_r[k][b].mean());
      CHECK(std::abs(freq[k][b].mean() - mean_r[k][b].mean()) < z * freq[k][b].standard_error());
      ++checked;
    }
  CHECK(checked >= 25);
  // The symmetric form is a temperature map of p: r(p) = softmax((b - a) log p).
  const ClassConditionalGenerator sym({4, {}, class_conditional_alpha(4, 0.5, 1.25)});
  REQUIRE(sym.symmetric());
  CHECK(sym.exponent() == 0.75);
  const std::vector<double> q = {0.1, 0.2, 0.3, 0.4};
  std::vector<double> lq(4), r(4);
  double norm = 0.0;
  for (int k = 0; k < 4; ++k) {
    lq[k] = std::log(q[k]);
    norm += std::pow(q[k], 0.75);
  }
  sym.posterior(lq, r);
  for (int k = 0; k < 4; ++k) CHECK(r[k] == Approx(std::pow(q[k], 0.75) / norm).epsilon(1e-13));
}

TEST_CASE("class_conditional: exact quantities against Monte Carlo", "[stat][truth]") {
  for (const ClassConditionalSpec& spec :
       {ClassConditionalSpec{2, {0.3, 0.7}, {2.0, 0.5, 0.7, 1.5}},
        ClassConditionalSpec{3, {}, class_conditional_alpha(3, 0.5, 1.2)},
        ClassConditionalSpec{3, {0.2, 0.3, 0.5}, class_conditional_alpha(3, 0.8, 3.0)}}) {
    INFO(Generator(spec).canonical_text());
    const GroundTruth exact = truth_of(spec);
    check_exact_against_mc(exact, mc_of(spec, 800'000));
    if (spec.classes == 2)
      for (Quantity q : all_quantities) CHECK(exact[q].method != TruthMethod::monte_carlo);
  }
}

// ---- beta_binary ------------------------------------------------------------------------------

TEST_CASE("beta_binary: polynomial closed forms = quadrature = Monte Carlo", "[stat][truth]") {
  // The issue's L2 formula by hand, a = 2, b = 1, d = 2: f ~ Beta(2, 1) has density 2f and
  // E(f^2 - f)^2 = 2 int f (f^2 - f)^2 df = 2 (1/6 - 2/5 + 1/4) = 1/30; the formula gives
  // [B(4,1) - 2 B(5,1) + B(6,1)] / B(2,1) = (1/4 - 2/5 + 1/6) * 2 = 1/30. Canonical L2 adds the
  // (equal) class-0 term: sqrt(2/30).
  {
    using boost::math::beta;
    const double formula =
        (beta(4.0, 1.0) - 2.0 * beta(5.0, 1.0) + beta(6.0, 1.0)) / beta(2.0, 1.0);
    CHECK(formula == Approx(1.0 / 30.0).epsilon(1e-14));
    const auto t = truth_of(BetaBinarySpec{2.0, 1.0, 0.0, PolynomialCurve{2.0}});
    CHECK(t[Quantity::canonical_l2].value == Approx(std::sqrt(2.0 / 30.0)).epsilon(1e-14));
    CHECK(t[Quantity::canonical_l2].method == TruthMethod::closed_form);
    // E|f^2 - f| = E f - E f^2 = 2/3 - 1/2 = 1/6.
    CHECK(t[Quantity::classwise_ece_l1].value == Approx(1.0 / 6.0).epsilon(1e-14));
  }
  for (const BetaBinarySpec& spec : {BetaBinarySpec{2.0, 1.0, 0.0, PolynomialCurve{2.0}},
                                     BetaBinarySpec{0.7, 0.4, 0.0, PolynomialCurve{0.5}},
                                     BetaBinarySpec{3.0, 2.0, 0.15, PolynomialCurve{1.5}},
                                     BetaBinarySpec{1.5, 1.5, 0.0, IdentityCurve{}}}) {
    const BetaBinaryGenerator gen(spec);
    INFO(gen.canonical_text());
    GroundTruth closed;
    REQUIRE(beta_binary_closed_form(gen, closed));
    const GroundTruth quad = beta_binary_quadrature(gen);
    for (Quantity q : all_quantities) {
      if (closed[q].method != TruthMethod::closed_form) continue;
      INFO(to_string(q) << ": closed " << closed[q].value << ", quadrature " << quad[q].value);
      CHECK(std::abs(closed[q].value - quad[q].value) < 1e-9);
    }
    check_exact_against_mc(truth_of(spec), mc_of(spec, 800'000));
  }
}

TEST_CASE("beta_binary: logistic and logit_logit curves by quadrature against MC",
          "[stat][truth]") {
  for (const BetaBinarySpec& spec : {BetaBinarySpec{2.5, 1.0, 0.0, LogisticCurve{-3.0, 6.0}},
                                     BetaBinarySpec{0.5, 0.5, 0.2, LogitLogitCurve{0.2, 0.8}},
                                     BetaBinarySpec{4.0, 1.5, 0.0, LogitLogitCurve{-0.5, 1.6}}}) {
    INFO(Generator(spec).canonical_text());
    const GroundTruth t = truth_of(spec);
    for (Quantity q : all_quantities) CHECK(t[q].method == TruthMethod::quadrature);
    check_exact_against_mc(t, mc_of(spec, 800'000));
  }
  // logit_logit with a = 0, b = 1 is the identity: every calibration error is 0.
  const auto id = truth_of(BetaBinarySpec{2.0, 3.0, 0.0, LogitLogitCurve{0.0, 1.0}});
  for (Quantity q : {Quantity::ece_top_l1, Quantity::classwise_ece_l1, Quantity::canonical_l2})
    CHECK(id[q].value == Approx(0.0).margin(1e-10));
}

// ---- targets ----------------------------------------------------------------------------------

namespace {

struct TargetCase {
  std::size_t K;
  TargetMap map;
  TargetDirection direction;
  std::vector<double> accuracy, ece;
};

// Solves every (accuracy, ECE) of every case and checks the solved generator's truth, computed
// afresh, against the target.
void check_target_grid(const std::vector<TargetCase>& cases) {
  TargetSolver solver;
  const TruthSettings settings;
  const auto start = std::chrono::steady_clock::now();
  int solved = 0;
  for (const auto& c : cases)
    for (double A : c.accuracy)
      for (double E : c.ece) {
        const DirichletTarget target{c.K, A, E, c.direction, c.map};
        INFO("K " << c.K << " " << to_string(c.map) << " " << to_string(c.direction) << " A " << A
                  << " E " << E);
        const TargetSolution s = solver.solve(target, settings);
        // The run's truth for the solved generator, computed afresh.
        const GroundTruth t = compute_truth(DirichletGenerator(s.spec), settings);
        CHECK(std::abs(t[Quantity::accuracy].value - A) < 1e-3);
        CHECK(std::abs(t[Quantity::ece_top_l1].value - E) < 1e-3);
        CHECK(t[Quantity::ece_top_l1].value == s.ece_top_l1.value);
        const bool over = t[Quantity::overconfidence].value > 0.0;
        CHECK(over == (c.direction == TargetDirection::overconfident));
        ++solved;
      }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN(solved << " targets solved and checked in " << seconds << " s");
}

}  // namespace

// One target of each (K, map, direction) in the default run; the whole grid is [slow].
TEST_CASE("target solving: achieved accuracy and ECE within 1e-3", "[stat][truth]") {
  check_target_grid({{2, TargetMap::temperature, TargetDirection::overconfident, {0.75}, {0.05}},
                     {2, TargetMap::top_label, TargetDirection::underconfident, {0.9}, {0.05}},
                     {10, TargetMap::temperature, TargetDirection::overconfident, {0.7}, {0.08}},
                     {10, TargetMap::temperature, TargetDirection::underconfident, {0.6}, {0.3}},
                     {5, TargetMap::top_label, TargetDirection::overconfident, {0.8}, {0.15}}});
}

TEST_CASE("target solving: achieved accuracy and ECE within 1e-3 on a grid", "[slow][truth]") {
  check_target_grid(
      {{2, TargetMap::temperature, TargetDirection::overconfident, {0.6, 0.75, 0.9}, {0.02, 0.05}},
       {2, TargetMap::top_label, TargetDirection::underconfident, {0.7, 0.9}, {0.05, 0.15}},
       {10, TargetMap::temperature, TargetDirection::overconfident, {0.5, 0.7, 0.9}, {0.03, 0.08}},
       {10, TargetMap::temperature, TargetDirection::underconfident, {0.6, 0.85}, {0.1, 0.3}},
       {5, TargetMap::top_label, TargetDirection::overconfident, {0.6, 0.8}, {0.05, 0.15}}});
}

TEST_CASE("target solving: the accuracy alone to quadrature precision", "[unit][truth]") {
  // The accuracy alone: E[max c] at the solved alpha, to quadrature precision.
  const double alpha = solve_alpha_for_accuracy(4, 0.7);
  CHECK(expected_max(std::vector<double>(4, alpha)).value == Approx(0.7).margin(1e-10));
}

TEST_CASE("target solving: unreachable targets are errors that say why", "[unit][truth]") {
  TargetSolver solver;
  const TruthSettings settings;
  auto field_of = [&](const DirichletTarget& t) {
    try {
      (void)solver.solve(t, settings);
    } catch (const TargetError& e) {
      return e.field() + ": " + e.what();
    }
    return std::string("solved");
  };
  using TD = TargetDirection;
  using TM = TargetMap;
  CHECK_THAT(field_of({5, 0.8, 0.25, TD::overconfident, TM::temperature}),
             Catch::StartsWith("ece_top_l1") && Catch::Contains("1 - accuracy"));
  CHECK_THAT(field_of({5, 0.5, 0.35, TD::underconfident, TM::temperature}),
             Catch::Contains("accuracy - 1/K"));
  CHECK_THAT(field_of({5, 0.2, 0.05, TD::overconfident, TM::temperature}),
             Catch::StartsWith("accuracy") && Catch::Contains("1/K = 0.2"));
  CHECK_THAT(field_of({5, 1.0, 0.0, TD::overconfident, TM::temperature}),
             Catch::StartsWith("accuracy"));
  CHECK_THAT(field_of({5, 0.8, 0.05, TD::underconfident, TM::top_label}),
             Catch::StartsWith("direction"));
  // ECE 0 is the calibrated generator: parameter 1.
  const auto s = solver.solve({5, 0.8, 0.0, TD::overconfident, TM::temperature}, settings);
  CHECK(s.parameter == 1.0);
  CHECK(s.ece_top_l1.value == 0.0);
}

TEST_CASE("targets in a config: swept, solved per cell and reported", "[e2e]") {
  OJ doc = OJ::parse(R"({
    "name": "targets", "scenario": "estimator_bias", "seed": 1, "replicates": 4,
    "sample_size": 200,
    "generator": {"family": "dirichlet", "classes": 4,
                  "target": {"accuracy": 0.8, "ece_top_l1": 0.05},
                  "miscalibration": {"map": "temperature"}},
    "estimators": [{"name": "ece"}, {"name": "accuracy"}],
    "truth": {"samples": 200000},
    "sweep": {"generator.target.accuracy": [0.7, 0.8],
              "generator.target.ece_top_l1": [0.0, 0.05]}
  })");
  auto config = parse_experiment_as<EstimatorBiasConfig>(doc, "targets.json");
  REQUIRE(config.cells.size() == 4);
  CHECK(config.resolved["generator"]["target"]["direction"] == "overconfident");
  // Parsing does not solve: the run's setup does.
  CHECK(!config.resolved.contains("solved_targets"));
  CHECK(!config.cells[0].solution);
  solve_targets(config);
  REQUIRE(config.resolved["solved_targets"].size() == 4);
  CHECK(config.resolved["solved_targets"][3]["solved"].contains("temperature"));
  const EstimatorBiasResults r = run_estimator_bias(config, {});
  for (std::size_t c = 0; c < 4; ++c) {
    const auto& cell = r.records[c].cell;
    REQUIRE(cell.target);
    const double A = cell.target->target.accuracy;
    const double E = cell.target->target.ece_top_l1;
    CHECK(std::abs(cell.truth_value(Quantity::accuracy) - A) < 1e-3);
    CHECK(std::abs(cell.truth_value(Quantity::ece_top_l1) - E) < 1e-3);
  }
  // An unreachable cell is a config error at its sweep value, found when solving.
  doc["sweep"]["generator.target.ece_top_l1"] = {0.05, 0.25};
  try {
    auto unreachable = parse_experiment_as<EstimatorBiasConfig>(doc, "targets.json");
    solve_targets(unreachable);
    FAIL("an unreachable target was accepted");
  } catch (const ConfigError& e) {
    // 0.25 is reachable at accuracy 0.7 (bound 0.3), not at 0.8 (bound 0.2): cell 3 only.
    REQUIRE(e.problems().size() == 1);
    CHECK_THAT(e.problems()[0],
               Catch::StartsWith("targets.json: /sweep/generator.target.ece_top_l1/1: ") &&
                   Catch::Contains("unreachable at accuracy 0.8"));
  }
}

// ---- Panchenko et al. 2021 --------------------------------------------------------------------

TEST_CASE("Panchenko et al.'s lemma: ECE <= 1 - accuracy when always overconfident",
          "[stat][truth]") {
  // Lemma: if P(y = argmax p | Z) <= Z for every Z, then ECE = E[Z] - accuracy <= 1 - accuracy
  // (Z <= 1). Checked in the truth engine across generators that are overconfident everywhere:
  // temperature T < 1, top_label gamma < 1, symmetric class_conditional with b - a < 1, and
  // label_noise with symmetric alpha.
  std::vector<GeneratorSpec> specs;
  for (std::size_t K : {2, 4, 10})
    for (double a : {0.1, 0.5, 2.0}) {
      for (double T : {0.2, 0.6, 0.95}) specs.push_back(DirichletSpec{K, {a}, TemperatureMap{T}});
      for (double g : {0.3, 0.8}) specs.push_back(DirichletSpec{K, {a}, TopLabelMap{g}});
      specs.push_back(ClassConditionalSpec{K, {}, class_conditional_alpha(K, a, a + 0.5)});
      std::vector<double> beta(K, 0.0);
      beta[0] = 1.0;
      specs.push_back(LabelNoiseSpec{K, {a}, 0.3, beta});
    }
  for (const auto& spec : specs) {
    const GroundTruth t = truth_of(spec, 100'000);
    INFO(Generator(spec).canonical_text() << ": ECE " << t[Quantity::ece_top_l1].value
                                          << ", accuracy " << t[Quantity::accuracy].value);
    const double slack = z * (t[Quantity::ece_top_l1].error + t[Quantity::accuracy].error);
    CHECK(t[Quantity::overconfidence].value >= -slack);
    CHECK(t[Quantity::ece_top_l1].value <= 1.0 - t[Quantity::accuracy].value + slack);
    CHECK(t[Quantity::ece_top_l1].value ==
          Approx(t[Quantity::overconfidence].value).margin(slack + 1e-12));
  }
}

// ---- estimator_bias on every family -----------------------------------------------------------

TEST_CASE("estimator_bias runs on each new family with the same bytes on 1 and 2 threads",
          "[e2e]") {
  const std::vector<std::string> generators = {
      R"({"family": "class_conditional", "classes": 3, "concentration": 0.5, "correct_class": 1.5})",
      R"({"family": "label_noise", "classes": 4, "alpha": [0.3, 0.5, 0.8, 1.0], "weight": 0.2,
          "beta": [0.1, 0.2, 0.3, 0.4]})",
      R"({"family": "beta_binary", "a": 2, "b": 1, "point_mass": 0.1,
          "calibration": {"curve": "polynomial", "d": 2}})"};
  for (const auto& g : generators) {
    OJ doc = OJ::parse(R"({
      "name": "fam", "scenario": "estimator_bias", "seed": 8, "replicates": 12,
      "sample_size": 150,
      "estimators": [{"name": "ece"}, {"name": "classwise_ece"}, {"name": "brier"},
                     {"name": "nll"}, {"name": "smooth_ece"}],
      "truth": {"samples": 50000, "population_samples": 16000}
    })");
    doc["generator"] = OJ::parse(g);
    const auto config = parse_experiment_as<EstimatorBiasConfig>(doc, "fam.json");
    INFO(g);
    std::string summary[2], cells[2];
    for (int threads : {1, 2}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                static_cast<std::size_t>(threads));
      const EstimatorBiasResults r = run_estimator_bias(config, {});
      TempDir dir;
      write_results(module_of(config), r, config.resolved, RunInfo{}, dir.path);
      summary[threads - 1] = read_text(dir.path / "summary.json");
      cells[threads - 1] = read_text(dir.path / "cells.csv");
    }
    CHECK(summary[0] == summary[1]);
    CHECK(cells[0] == cells[1]);
    CHECK(summary[0].find("\"bias\": null") == std::string::npos);
  }
}

TEST_CASE("family configs: defaults filled into the resolved config", "[unit][config]") {
  auto resolved_generator = [](const char* generator) {
    OJ doc = OJ::parse(R"({"scenario": "estimator_bias", "replicates": 2, "sample_size": 10,
                           "estimators": [{"name": "ece"}]})");
    doc["generator"] = OJ::parse(generator);
    auto config = parse_experiment_as<EstimatorBiasConfig>(doc, "f.json");
    REQUIRE(config.cells.size() == 1);
    solve_targets(config);
    return std::pair{config.resolved["generator"], config.cells[0].generator};
  };
  {
    const auto [r, spec] = resolved_generator(
        R"({"family": "class_conditional", "classes": 4, "concentration": 0.5, "correct_class": 2})");
    CHECK(r["prior"] == OJ::parse("[0.25, 0.25, 0.25, 0.25]"));
    const auto& cc = std::get<ClassConditionalSpec>(spec);
    CHECK(cc.alpha == class_conditional_alpha(4, 0.5, 2.0));
  }
  {
    const auto [r, spec] =
        resolved_generator(R"({"family": "label_noise", "classes": 3, "weight": 0.2})");
    CHECK(r["alpha"] == 1.0);
    CHECK(r["beta"] == 0);
    CHECK(std::get<LabelNoiseSpec>(spec).beta == std::vector<double>{1, 0, 0});
  }
  {
    const auto [r, spec] = resolved_generator(R"({"family": "beta_binary", "a": 2, "b": 1})");
    CHECK(r["classes"] == 2);
    CHECK(r["point_mass"] == 0.0);
    CHECK(r["calibration"] == OJ::parse(R"({"curve": "identity"})"));
    CHECK(std::holds_alternative<IdentityCurve>(std::get<BetaBinarySpec>(spec).curve));
  }
  {
    const auto [r, spec] = resolved_generator(
        R"({"family": "dirichlet", "classes": 2, "target": {"accuracy": 0.8, "ece_top_l1": 0.05},
            "miscalibration": {"map": "top_label"}})");
    CHECK(r["target"]["direction"] == "overconfident");
    CHECK(!r.contains("alpha"));
    const auto& d = std::get<DirichletSpec>(spec);
    CHECK(std::get<TopLabelMap>(d.map).gamma < 1.0);
  }
}

// Concentrations of a few hundredths: Beta densities t^(a - 1) near 0 made the K = 2 quadrature's
// squared top-label gap overflow (n * n / m) and the K = 3 exact top label's tanh_sinh overflow
// next to 1; Boost threw "evaluated your function at a singular point" out of the truth engine.
// Now K = 2 stays exact and K = 3 falls back to Monte Carlo for those two quantities.
TEST_CASE("class_conditional truth at concentrations 0.1 and 0.02 is finite, K = 2 exact",
          "[unit][truth]") {
  {
    const Generator gen(ClassConditionalSpec{2, {0.5, 0.5}, class_conditional_alpha(2, 0.1, 0.4)});
    GroundTruth t;
    REQUIRE_NOTHROW(t = compute_truth(gen, TruthSettings{}));
    for (Quantity q : all_quantities) {
      INFO(to_string(q));
      CHECK(t[q].method != TruthMethod::monte_carlo);
      CHECK(std::isfinite(t[q].value));
    }
    // Symmetric rows: y = 1 has p_1 ~ Beta(0.4, 0.1), correct iff p_1 > 1/2.
    CHECK(t[Quantity::accuracy].value == Approx(boost::math::ibetac(0.4, 0.1, 0.5)).margin(1e-9));
  }
  {
    const Generator gen(ClassConditionalSpec{
        3, {1.0 / 3, 1.0 / 3, 1.0 / 3}, class_conditional_alpha(3, 0.02, 0.08)});
    TruthSettings settings;
    settings.samples = 1'000'000;
    GroundTruth t;
    REQUIRE_NOTHROW(t = compute_truth(gen, settings));
    for (Quantity q : all_quantities) {
      INFO(to_string(q));
      CHECK(std::isfinite(t[q].value));
      CHECK(t[q].error < 2e-4);
    }
  }
}
