// The library conventions of issue #27: TensorFlow's floor(B s) bins, TFP's quantile buckets,
// MAPIE's bin for scores of 0, the calib_err of the LLM harnesses, Kumar's Lp norm for any p,
// relplot's binary smooth ECE and the top-class Brier score. Reference values from running the
// libraries' own code (or, for TensorFlow, a numpy transcription of it) are in
// tests/reference/conventions.json (tests/reference/conventions_ref.py states who computed
// what); each case names the estimator config that reproduces it, built here through the
// registry as a config or `calbench eval --estimators` builds it. Hand-computed cases follow.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/calib_err.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/proper_scores.hpp"
#include "reference_data.hpp"

using namespace calbench;

namespace {

const nlohmann::json& convention_references() {
  static const nlohmann::json values = [] {
    std::ifstream in(testing::reference_dir() + "/conventions.json");
    return nlohmann::json::parse(in);
  }();
  return values;
}

std::shared_ptr<const Estimator> from_config(const Json& entry) {
  Problems problems;
  Json resolved;
  const auto config = parse_estimator(entry, "/estimator", problems, resolved);
  INFO(entry.dump());
  REQUIRE(config);
  return config->estimator;
}

double evaluate(const Estimator& e, const Sample& s) {
  EstimatorWorkspace ws;
  return e.estimate(s, ws);
}

}  // namespace

TEST_CASE("conventions reproduce MAPIE, calib_err, Kumar's Lp, relplot and TensorFlow",
          "[reference][estimators]") {
  std::map<std::string, std::size_t> compared;
  for (const auto& [dataset, cases] : convention_references().items()) {
    const Sample s = testing::load_reference_dataset(dataset);
    for (const auto& [key, c] : cases.items()) {
      const auto estimator = from_config(c.at("estimator"));
      const double expected = c.at("value").get<double>();
      const double ours = evaluate(*estimator, s);
      INFO(dataset << " " << key << " (" << c.at("implementation").get<std::string>()
                   << "): expected " << expected << ", calbench " << ours);
      CHECK(std::abs(ours - expected) <= c.at("tolerance").get<double>());
      ++compared[c.at("implementation").get<std::string>()];
    }
  }
  // docs/conventions.md's figures: 932 cases; TFP's log-space edges move 19 of 84 values, by up
  // to 0.043 (k3_n25).
  std::size_t cases = 0, logspace = 0, logspace_moved = 0;
  double largest_move = 0.0;
  for (const auto& [dataset, by_key] : convention_references().items())
    for (const auto& [key, c] : by_key.items()) {
      ++cases;
      if (!c.contains("tfp_logspace")) continue;
      ++logspace;
      const double move =
          std::abs(c.at("tfp_logspace").get<double>() - c.at("value").get<double>());
      logspace_moved += move > 1e-12 ? 1 : 0;
      largest_move = std::max(largest_move, move);
    }
  CHECK(cases == 932);
  CHECK(logspace == 84);
  CHECK(logspace_moved == 19);
  CHECK(largest_move == Approx(0.0434).margin(5e-5));
  // Every implementation the script ran is compared somewhere.
  for (const char* implementation : {"mapie", "outlier_exposure", "kumar", "relplot",
                                     "tensorflow_transcribed", "tfp_transcribed", "own_direct"})
    CHECK(compared[implementation] > 0);
}

TEST_CASE("calib_err skips its last bin but keeps beta / n weights", "[unit][estimators]") {
  // n = 25, beta = 10: bins [0, 10) and [10, 25); only the first is evaluated, weight 10/25.
  // Confidences 0.50, 0.51, ..., 0.74 (p_0 of K = 2, all > 1/2), rows 0-9 with labels: 4 of
  // them class 0 (correct). Bin 0: mean confidence 0.545, accuracy 0.4, gap 0.145.
  std::vector<double> p;
  std::vector<std::uint32_t> labels;
  for (int i = 0; i < 25; ++i) {
    const double v = 0.5 + 0.01 * i;
    p.push_back(v);
    p.push_back(1.0 - v);
    labels.push_back(i < 10 ? (i % 5 < 2 ? 0u : 1u) : 0u);
  }
  const Sample s = make_sample(2, std::move(p), std::move(labels));
  double conf = 0.0;
  for (int i = 0; i < 10; ++i) conf += 0.5 + 0.01 * i;
  const double gap = std::abs(conf / 10.0 - 0.4);
  CHECK(evaluate(CalibErr({10, Norm::l2}), s) == Approx(std::sqrt(0.4 * gap * gap)).epsilon(1e-14));
  CHECK(evaluate(CalibErr({10, Norm::l1}), s) == Approx(0.4 * gap).epsilon(1e-14));
  CHECK(evaluate(CalibErr({10, Norm::max}), s) == Approx(gap).epsilon(1e-14));
  // beta <= n < 2 beta: no bin evaluated (the library's 0); n < beta: 0 where it raises.
  CHECK(evaluate(CalibErr({13, Norm::l2}), s) == 0.0);
  CHECK(evaluate(CalibErr({26, Norm::l2}), s) == 0.0);
  CHECK_THROWS_AS(CalibErr({0, Norm::l2}), DomainError);
  CHECK_THROWS_AS(CalibErr({10, Norm::average}), DomainError);
}

TEST_CASE("norm lp: p = 1 and 2 are l1 and l2; p >= 1 enforced", "[unit][estimators]") {
  const Sample s = testing::load_reference_dataset("dir_k3_n2000");
  for (const Binning binning : {Binning::equal_width, Binning::equal_mass})
    for (const Scope scope : {Scope::top, Scope::classwise}) {
      BinnedEceSpec lp{15, binning, Norm::lp, scope};
      BinnedEceSpec l1 = lp, l2 = lp;
      l1.norm = Norm::l1;
      l2.norm = Norm::l2;
      lp.power = 1.0;
      CHECK(evaluate(BinnedEce(lp), s) == Approx(evaluate(BinnedEce(l1), s)).epsilon(1e-13));
      lp.power = 2.0;
      CHECK(evaluate(BinnedEce(lp), s) == Approx(evaluate(BinnedEce(l2), s)).epsilon(1e-13));
      // The Lp norm of the bin gaps grows with p (Jensen / power means).
      lp.power = 1.5;
      const double a = evaluate(BinnedEce(lp), s);
      lp.power = 4.0;
      CHECK(evaluate(BinnedEce(lp), s) >= a);
    }
  BinnedEceSpec bad{15, Binning::equal_width, Norm::lp};
  bad.power = 0.5;
  CHECK_THROWS_AS(BinnedEce(bad), DomainError);
}

TEST_CASE("mapie, tensorflow conventions on hand-computed bins", "[unit][estimators]") {
  // K = 2 binary scope, B = 3. MAPIE: edges linspace(0, 1, 3) = 0, 0.5, 1 with digitize
  // right=True: p_1 = 0 alone in bin 0, (0, 0.5] bin 1, (0.5, 1] bin 2. Rows (p_1, y):
  // (0, 1), (0.5, 0), (0.25, 1), (1, 1). Bin 0: gap |0 - 1| = 1, weight 1/4; bin 1: scores
  // 0.5, 0.25 (mean 0.375), outcomes 0, 1 (0.5): gap 0.125, weight 1/2; bin 2: 0.
  const Sample s = make_sample(2, {1.0, 0.0, 0.5, 0.5, 0.75, 0.25, 0.0, 1.0}, {1, 0, 1, 1});
  BinnedEceSpec spec{3, Binning::equal_width, Norm::l1, Scope::binary};
  spec.convention = find_convention("mapie");
  CHECK(evaluate(BinnedEce(spec), s) == Approx(0.25 + 0.5 * 0.125).epsilon(1e-15));
  // TensorFlow: floor(3 s) clipped: 0 -> 0, 0.25 -> 0, 0.5 -> 1, 1 -> 2. Bin 0: scores 0, 0.25
  // (0.125) against 1, 1: gap 0.875, weight 1/2; bin 1: 0.5 against 0: 0.5, weight 1/4.
  spec.convention = find_convention("tensorflow");
  CHECK(evaluate(BinnedEce(spec), s) == Approx(0.5 * 0.875 + 0.25 * 0.5).epsilon(1e-15));
  // MAPIE's "quantile" edges: B = 3, np.percentile at 0, 50, 100 = 0, 0.375, 1 (the median of
  // 0, 0.25, 0.5, 1); digitize right=True: 0 alone, (0, 0.375]: 0.25, (0.375, 1]: 0.5, 1.
  // Bin 0: gap 1, weight 1/4; bin 1: |0.25 - 1| = 0.75, 1/4; bin 2: scores 0.75, outcomes 0.5.
  spec.convention = find_convention("mapie");
  spec.binning = Binning::equal_mass;
  CHECK(evaluate(BinnedEce(spec), s) == Approx(0.25 + 0.25 * 0.75 + 0.5 * 0.25).epsilon(1e-15));
  // MAPIE needs B >= 2.
  spec.binning = Binning::equal_width;
  spec.bins = 1;
  CHECK_THROWS_AS(BinnedEce(spec), DomainError);
}

TEST_CASE("top-class Brier score by hand and linear in the outcome", "[unit][estimators]") {
  // Rows (p, y): (0.7, 0.2, 0.1; 0) correct, (0.3, 0.6, 0.1; 0) wrong:
  // ((0.7 - 1)^2 + (0.6 - 0)^2) / 2 = (0.09 + 0.36) / 2.
  const Sample s = make_sample(3, {0.7, 0.2, 0.1, 0.3, 0.6, 0.1}, {0, 0});
  const BrierEstimator top(BrierComponent::total, 15, BrierScope::top);
  CHECK(evaluate(top, s) == Approx(0.225).epsilon(1e-15));
  CHECK_FALSE(top.target());
  CHECK_THROWS_AS(BrierEstimator(BrierComponent::reliability, 15, BrierScope::top), DomainError);
}

namespace {

const nlohmann::json& probmetrics_references() {
  static const nlohmann::json values = [] {
    std::ifstream in(testing::reference_dir() + "/probmetrics.json");
    return nlohmann::json::parse(in);
  }();
  return values;
}

// Every case of one set; returns the largest |calbench - probmetrics| and counts the cases and
// the exact agreements.
double check_probmetrics_cases(const std::string& set, const Sample& s, const Json& cases,
                               std::size_t& compared, std::size_t& exact) {
  double largest = 0.0;
  for (const auto& [key, c] : cases.items()) {
    const double expected = c.at("value").get<double>();
    const double ours = evaluate(*from_config(c.at("estimator")), s);
    INFO(set << " " << key << ": probmetrics " << expected << ", calbench " << ours);
    CHECK(std::abs(ours - expected) <= c.at("tolerance").get<double>());
    largest = std::max(largest, std::abs(ours - expected));
    ++compared;
    exact += ours == expected ? 1 : 0;
  }
  return largest;
}

}  // namespace

TEST_CASE("probmetrics_ece reproduces probmetrics' ece, rmsce and mce", "[reference][estimators]") {
  const auto& refs = probmetrics_references();
  std::size_t compared = 0, exact = 0;
  double largest = 0.0;
  for (const auto& [dataset, cases] : refs.at("datasets").items())
    largest =
        std::max(largest, check_probmetrics_cases(dataset, testing::load_reference_dataset(dataset),
                                                  cases, compared, exact));
  for (const auto& [name, set] : refs.at("inline").items()) {
    const auto rows = set.at("p").get<std::vector<std::vector<double>>>();
    std::vector<double> p;
    for (const auto& row : rows) p.insert(p.end(), row.begin(), row.end());
    const Sample s =
        make_sample(rows.front().size(), p, set.at("y").get<std::vector<std::uint32_t>>());
    largest = std::max(largest, check_probmetrics_cases(name, s, set.at("cases"), compared, exact));
  }
  // docs/conventions.md: 27 datasets x 9 + 5 inline sets x 9 cases, 260 equal as floats, the
  // others one float32 unit apart (2^-24 = 5.96e-8).
  INFO(compared << " cases, " << exact << " exact, largest difference " << largest);
  CHECK(compared == 288);
  CHECK(exact == 260);
  CHECK(largest == Approx(std::ldexp(1.0, -24)).margin(1e-12));
}

TEST_CASE("probmetrics_ece drops absent classes and has no value for a single one",
          "[unit][estimators]") {
  const auto e = from_config(Json{{"name", "probmetrics_ece"}, {"bins", 2}});
  // K = 3 with class 1 absent: the columns 0 and 2 remain, renormalised, and the error is the
  // binary one on the second, q = p_2 / (p_0 + p_2): rows (0.5, 0.3, 0.2) -> 2/7 and
  // (0.1, 0.3, 0.6) -> 6/7, labels 0 and 2: bins [0, 0.5) and [0.5, 1) hold one row each with
  // gaps |0 - 2/7| and |1 - 6/7|, so the error is (2/7 + 1/7)/2 = 3/14 (as a float32).
  const Sample s = make_sample(3, {0.5, 0.3, 0.2, 0.1, 0.3, 0.6}, {0, 2});
  CHECK(evaluate(*e, s) == static_cast<double>(static_cast<float>(3.0 / 14.0)));
  const Sample one = make_sample(3, {0.5, 0.3, 0.2, 0.1, 0.3, 0.6}, {2, 2});
  CHECK(std::isnan(evaluate(*e, one)));  // the library raises ValueError
}
