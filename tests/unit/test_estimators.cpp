// Estimators: reference values of independent implementations (tests/reference), the
// binning convention on edges, edge cases, and convergence to the ground truth.
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/running_stats.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/ece_sweep.hpp"
#include "estimators/proper_scores.hpp"
#include "generators/dirichlet.hpp"
#include "reference_data.hpp"
#include "truth/population.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;
using calbench::testing::load_reference_dataset;
using calbench::testing::manifest;
using calbench::testing::probability_datasets;
using calbench::testing::reference_values;

namespace {

double ece(const Sample& s, std::size_t bins, Binning binning, Norm norm) {
  EstimatorWorkspace ws;
  return BinnedEce({bins, binning, norm}).estimate(s, ws);
}

}  // namespace

TEST_CASE("equal-width bins are right-closed with exact decimal edges", "[unit][estimators]") {
  CHECK(equal_width_bin(0.0, 10) == 0);
  CHECK(equal_width_bin(0.1, 10) == 0);  // (0, 0.1]
  CHECK(equal_width_bin(std::nextafter(0.1, 1.0), 10) == 1);
  CHECK(equal_width_bin(0.3, 10) == 2);  // 0.3 * 10 rounds to 3, still (0.2, 0.3]
  CHECK(equal_width_bin(0.7, 10) == 6);
  CHECK(equal_width_bin(1.0, 10) == 9);
  CHECK(equal_width_bin(0.5, 1) == 0);
  for (int b = 1; b <= 15; ++b) {
    const double edge = b / 15.0;
    CHECK(equal_width_bin(edge, 15) == static_cast<std::size_t>(b - 1));
    if (b < 15)
      CHECK(equal_width_bin(std::nextafter(edge, 1.0), 15) == static_cast<std::size_t>(b));
  }
}

TEST_CASE("equal-width bins by table equal the bins by comparison", "[unit][estimators]") {
  // Every edge, its neighbours either side, the cell boundaries around it, 0, 1, values
  // outside [0, 1], NaN and random scores; bins from 1 to beyond the table's cap of 2^16 cells.
  Engine engine = make_engine({19, 0, 0, Purpose::sample});
  std::vector<double> edges;
  std::vector<std::uint32_t> table;
  for (std::size_t bins : {1, 2, 3, 7, 10, 15, 16, 40, 64, 1000, 1024, 3000, 100000}) {
    equal_width_edges(bins, edges);
    equal_width_table(edges, table);
    const double F = static_cast<double>(table.size());
    std::vector<double> scores = {0.0,
                                  -0.0,
                                  -1.0,
                                  1.0,
                                  2.0,
                                  std::nextafter(1.0, 0.0),
                                  std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::infinity(),
                                  1e-300};
    for (double e : edges) {
      const double cell = std::floor(e * F) / F;
      for (double v : {e, cell, cell + 1.0 / F})
        for (double w : {v, std::nextafter(v, 2.0), std::nextafter(v, -1.0)}) scores.push_back(w);
    }
    for (int r = 0; r < 2000; ++r) scores.push_back(uniform_open01(engine));
    for (double v : scores) {
      INFO("bins " << bins << " score " << v);
      REQUIRE(equal_width_bin(v, edges, table) == equal_width_bin(v, edges));
    }
  }
}

// Kumar et al.'s `calibration` package computes its edges by division and bins right-closed,
// and splits equal-mass bins as array_split with midpoint edges: calbench's conventions. It
// agrees with calbench to the last bits on every dataset, edge datasets included.
TEST_CASE("ece matches the reference implementations", "[unit][estimators][reference]") {
  struct Case {
    std::string stem, implementation;
    Binning binning;
    Norm norm;
    bool random_only;
  };
  const std::vector<Case> cases = {
      {"ece_top_ew_", "kumar", Binning::equal_width, Norm::l1, false},
      {"ce_l2_top_ew_", "kumar", Binning::equal_width, Norm::l2, false},
      {"ece_top_em_", "kumar", Binning::equal_mass, Norm::l1, false},
      {"ce_l2_top_em_", "kumar", Binning::equal_mass, Norm::l2, false},
      {"mce_top_ew_", "kyle", Binning::equal_width, Norm::max, true},
  };
  const auto& ref = reference_values();
  int compared = 0;
  for (const auto& name : probability_datasets()) {
    const Sample s = load_reference_dataset(name);
    const auto& values = ref.at(name);
    for (std::size_t B : {4u, 8u, 10u, 15u}) {
      for (const auto& c : cases) {
        // MCE: kyle and sklearn bin right-closed on linspace edges, which equal ours but on
        // the edge datasets; compare on the random (dir_*) datasets only.
        if (c.random_only && name.rfind("dir_", 0) != 0) continue;
        const std::string key = c.stem + std::to_string(B);
        if (!values.contains(key) || !values[key].contains(c.implementation)) continue;
        INFO(name << ", " << key << " vs " << c.implementation);
        CHECK(ece(s, B, c.binning, c.norm) ==
              Approx(values[key][c.implementation].get<double>()).margin(1e-12));
        ++compared;
      }
    }
  }
  CHECK(compared > 100);
}

TEST_CASE("brier, nll and accuracy match the reference implementations",
          "[unit][estimators][reference]") {
  const auto& ref = reference_values();
  EstimatorWorkspace ws;
  for (const auto& name : probability_datasets()) {
    const Sample s = load_reference_dataset(name);
    const auto& values = ref.at(name);
    INFO(name);
    if (values.contains("brier") && values["brier"].contains("own_direct"))
      CHECK(BrierEstimator().estimate(s, ws) ==
            Approx(values["brier"]["own_direct"].get<double>()).margin(1e-12));
    if (values.contains("accuracy") && values["accuracy"].contains("kyle") &&
        values["accuracy"]["kyle"].is_number())
      CHECK(AccuracyEstimator().estimate(s, ws) ==
            Approx(values["accuracy"]["kyle"].get<double>()).margin(1e-12));
    if (values.contains("nll") && values["nll"].contains("own_direct")) {
      const auto& v = values["nll"]["own_direct"];
      if (v.is_number()) {
        CHECK(NllEstimator().estimate(s, ws) == Approx(v.get<double>()).margin(1e-12));
      } else {
        // "inf": a zero probability on the true class; calbench clamps at DBL_MIN (documented).
        CHECK(std::isfinite(NllEstimator().estimate(s, ws)));
      }
    }
  }
}

TEST_CASE("equal-mass bins send ties across a split to the lower bin", "[unit][estimators]") {
  // Scores 0.2, 0.5, 0.5, 0.5, 0.9 with 2 bins: parts of 3 and 2, the split falls inside the
  // run of 0.5s, so all three go to the lower bin: {0.2, 0.5, 0.5, 0.5} and {0.9}.
  const std::vector<double> scores = {0.5, 0.9, 0.2, 0.5, 0.5};
  const std::vector<double> outcomes = {1, 1, 0, 0, 0};
  EstimatorWorkspace ws;
  // bin 1: mean score 0.425, mean outcome 0.25 -> gap 0.175, weight 4/5; bin 2: gap 0.1, 1/5.
  CHECK(binned_calibration_error(scores, outcomes, Binning::equal_mass, 2, Norm::l1, ws) ==
        Approx(0.8 * 0.175 + 0.2 * 0.1).margin(1e-15));
  CHECK(binned_calibration_error(scores, outcomes, Binning::equal_mass, 2, Norm::max, ws) ==
        Approx(0.175).margin(1e-15));
  // More bins than samples: B := n, one sample per bin but for the tied run.
  CHECK(binned_calibration_error(scores, outcomes, Binning::equal_mass, 50, Norm::l1, ws) ==
        Approx((0.2 + 0.5 * 3 - 1 + 0.1) / 5.0).margin(1e-15));
}

namespace {

// The equal-mass convention written the obvious way: sort, split with numpy.array_split's
// sizes, edges at midpoints, each score to the first bin whose edge is not below it.
double naive_equal_mass(std::vector<double> s, const std::vector<double>& o, std::size_t bins,
                        Norm norm) {
  const std::size_t n = s.size(), B = std::min(bins, n);
  std::vector<double> sorted = s;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> edges;
  std::size_t end = 0;
  for (std::size_t b = 0; b + 1 < B; ++b) {
    end += n / B + (b < n % B ? 1 : 0);
    edges.push_back((sorted[end - 1] + sorted[end]) / 2.0);
  }
  std::vector<double> sum(B, 0.0), count(B, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<std::size_t>(std::lower_bound(edges.begin(), edges.end(), s[i]) -
                                            edges.begin());
    sum[b] += s[i] - o[i];
    count[b] += 1.0;
  }
  double out = 0.0;
  for (std::size_t b = 0; b < B; ++b) {
    if (count[b] == 0.0) continue;
    const double gap = std::abs(sum[b]) / count[b];
    if (norm == Norm::l1) out += count[b] / static_cast<double>(n) * gap;
    if (norm == Norm::l2) out += count[b] / static_cast<double>(n) * gap * gap;
    if (norm == Norm::max) out = std::max(out, gap);
  }
  return norm == Norm::l2 ? std::sqrt(out) : out;
}

}  // namespace

namespace {

// Scores built to stress the bucketed selection and placement: heavy ties, scores packed into
// one tiny interval (one bucket), exact 0 and 1, edges on bucket boundaries, and scores piled
// up near 0 as classwise scores are (logarithmic buckets), down to and below their floor 2^-32.
double stress_score(Engine& engine, int kind) {
  const double u = uniform_open01(engine);
  switch (kind) {
    case 0:
      return u;
    case 1:
      return std::round(u * 7.0) / 7.0;  // 8 tied values, 0 and 1 included
    case 2:
      return 0.999 + 1e-12 * std::round(u * 50.0);  // packed, tied
    case 3:
      return static_cast<double>(static_cast<int>(u * 64.0)) / 64.0;
    case 4:
      return std::pow(u, 8.0);  // 70 % below 1/16
    case 5:
      return std::round(std::pow(u, 8.0) * 50.0) / 50.0;  // tied, most at exactly 0
    case 6:
      // 2^-79 .. 1, on bucket edges, on both sides of the logarithmic buckets' floor 2^-64
      return std::ldexp(1.0, -static_cast<int>(u * 80.0));
    default:
      return std::exp(-100.0 * u);  // an overconfident network's class probabilities
  }
}

// One stress trial: n scores of the trial's kind (up to 3,000), outcomes drawn from them,
// and a number of bins (up to 40).
struct StressTrial {
  std::vector<double> s, o;
  std::size_t bins;
};
StressTrial stress_trial(Engine& engine, int trial) {
  const std::size_t n = 1 + static_cast<std::size_t>(uniform_open01(engine) * 3000.0);
  StressTrial t{std::vector<double>(n), std::vector<double>(n),
                1 + static_cast<std::size_t>(uniform_open01(engine) * 40.0)};
  for (std::size_t i = 0; i < n; ++i) {
    t.s[i] = stress_score(engine, trial % 8);
    t.o[i] = uniform_open01(engine) < t.s[i] ? 1.0 : 0.0;
  }
  return t;
}

}  // namespace

TEST_CASE("equal-mass binning equals the sort-based definition", "[unit][estimators]") {
  Engine engine = make_engine({17, 0, 0, Purpose::sample});
  EstimatorWorkspace ws;
  for (int trial = 0; trial < 700; ++trial) {
    const auto [s, o, bins] = stress_trial(engine, trial);
    const std::size_t n = s.size();
    for (Norm norm : {Norm::l1, Norm::l2, Norm::max}) {
      INFO("trial " << trial << " n " << n << " bins " << bins);
      CHECK(binned_calibration_error(s, o, Binning::equal_mass, bins, norm, ws) ==
            Approx(naive_equal_mass(s, o, bins, norm)).margin(1e-12));
    }
  }
}

TEST_CASE("Nixon's equal-mass bins equal their sort-based definition", "[unit][estimators]") {
  // robustness_metrics' rule (estimators/convention.hpp): edges sort(s)[round(i n / B)], i < B,
  // then 1.0; bins left-closed, scores >= 1 in bin B. Written the obvious way, its sums in row
  // order equal bin_statistics' to the last bit.
  const Convention& nixon = *find_convention("nixon");
  Engine engine = make_engine({20, 0, 0, Purpose::sample});
  EstimatorWorkspace ws;
  for (int trial = 0; trial < 700; ++trial) {
    const auto [s, o, bins] = stress_trial(engine, trial);
    const std::size_t n = s.size();
    std::vector<double> sorted = s;
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> inner;
    const double step = static_cast<double>(n) / static_cast<double>(bins);  // numpy.linspace
    for (std::size_t b = 1; b < bins; ++b) {
      const double r = std::nearbyint(static_cast<double>(b) * step);  // half to even
      inner.push_back(sorted[std::min(static_cast<std::size_t>(r), n - 1)]);
    }
    std::vector<double> count(bins + 1, 0.0), score(bins + 1, 0.0), hits(bins + 1, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto b = s[i] >= 1.0
                         ? bins
                         : static_cast<std::size_t>(std::count_if(
                               inner.begin(), inner.end(), [&](double e) { return e <= s[i]; }));
      count[b] += 1.0;
      score[b] += s[i];
      hits[b] += o[i];
    }
    INFO("trial " << trial << " n " << n << " bins " << bins);
    REQUIRE(bin_statistics(s, o, Binning::equal_mass, bins, nixon, ws) == bins + 1);
    CHECK(ws.bin_count == count);
    CHECK(ws.bin_score == score);
    CHECK(ws.bin_hits == hits);
  }
}

TEST_CASE("stable_score_order is std::stable_sort's permutation", "[unit][estimators]") {
  // The bucketed order (ece_sweep, caltrain's rank_floor bins) against the comparison sort,
  // on the kinds of sample above plus negatives, values above 1 and signed zeros, which the
  // buckets clamp and stable_sort treats as ties.
  Engine engine = make_engine({18, 0, 0, Purpose::sample});
  EstimatorWorkspace ws;
  std::vector<std::uint32_t> order, expected;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = static_cast<std::size_t>(uniform_open01(engine) * 3000.0);
    const int kind = trial % 5;
    std::vector<double> s(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double u = uniform_open01(engine);
      switch (kind) {
        case 0:
          s[i] = u;
          break;
        case 1:
          s[i] = std::round(u * 7.0) / 7.0;
          break;
        case 2:
          s[i] = 0.999 + 1e-12 * std::round(u * 50.0);
          break;
        case 3:
          s[i] = std::round(u * 8.0) / 2.0 - 1.5;  // -1.5 .. 2.5 in halves
          break;
        default:
          s[i] = u < 0.5 ? (u < 0.25 ? -0.0 : 0.0) : u * u * u * 1e-6;
          break;
      }
    }
    expected.resize(n);
    for (std::size_t i = 0; i < n; ++i) expected[i] = static_cast<std::uint32_t>(i);
    std::stable_sort(expected.begin(), expected.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return s[a] < s[b]; });
    stable_score_order(s, ws, order);
    INFO("trial " << trial << " n " << n);
    REQUIRE(order == expected);
  }
}

TEST_CASE("estimators survive the edge cases", "[unit][estimators]") {
  EstimatorWorkspace ws;
  const std::vector<std::pair<std::size_t, std::vector<double>>> cases = {
      {2, {1.0, 0.0}},                      // n = 1, confidence exactly 1
      {3, {1.0, 0.0, 0.0, 0.0, 1.0, 0.0}},  // exact zeros and ones
      {3, {0.4, 0.4, 0.2, 0.4, 0.4, 0.2}},  // ties in the maximum, identical rows
      {2, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}},  // every prediction identical
  };
  for (const auto& [K, p] : cases) {
    const std::size_t n = p.size() / K;
    std::vector<std::uint32_t> labels(n, static_cast<std::uint32_t>(K - 1));  // often wrong
    const Sample s = make_sample(K, p, labels);
    for (Binning b : {Binning::equal_width, Binning::equal_mass})
      for (Norm norm : {Norm::l1, Norm::l2, Norm::max})
        for (std::size_t B : {1u, 15u}) {
          const double v = ece(s, B, b, norm);
          REQUIRE(std::isfinite(v));
          REQUIRE(v >= 0.0);
          REQUIRE(v <= 1.0);
        }
    REQUIRE(std::isfinite(BrierEstimator().estimate(s, ws)));
    REQUIRE(std::isfinite(NllEstimator().estimate(s, ws)));
  }
  // A confidently wrong prediction: NLL is clamped at -log(DBL_MIN), not inf.
  const Sample wrong = make_sample(2, {1.0, 0.0}, {1});
  CHECK(NllEstimator().estimate(wrong, ws) == Approx(-std::log(DBL_MIN)));
  CHECK(BrierEstimator().estimate(wrong, ws) == Approx(2.0));
  // Ties in the maximum: the lowest index is the prediction.
  const Sample tie = make_sample(3, {0.4, 0.4, 0.2}, {1});
  CHECK(tie.predicted[0] == 0);
  CHECK(AccuracyEstimator().estimate(tie, ws) == 0.0);
}

// For temperature maps the top-label gap has one sign, so the population value of the binned
// L1 ECE equals ece_top_l1 exactly for any bins; at n = 200,000 the finite-sample bias is far
// below the tolerance. Tolerance: 4.5 standard errors of the replicate mean plus the truth's
// own error.
TEST_CASE("ece, brier, nll and accuracy converge to their targets", "[stat][estimators]") {
  DirichletGenerator gen({10, {0.5}, TemperatureMap{0.7}});
  const GroundTruth truth = compute_truth(gen, TruthSettings{});
  const std::vector<std::shared_ptr<Estimator>> estimators = {
      std::make_shared<BinnedEce>(BinnedEceSpec{15, Binning::equal_width, Norm::l1}),
      std::make_shared<BinnedEce>(BinnedEceSpec{15, Binning::equal_mass, Norm::l1}),
      std::make_shared<BrierEstimator>(), std::make_shared<NllEstimator>(),
      std::make_shared<AccuracyEstimator>()};
  std::vector<RunningStats> stats(estimators.size());
  Sample s;
  DirichletScratch scratch;
  EstimatorWorkspace ws;
  for (std::size_t r = 0; r < 12; ++r) {
    Engine engine = make_engine({99, 0, r, Purpose::sample});
    gen.sample(engine, 200'000, s, scratch);
    for (std::size_t e = 0; e < estimators.size(); ++e)
      stats[e].add(estimators[e]->estimate(s, ws));
  }
  for (std::size_t e = 0; e < estimators.size(); ++e) {
    const Quantity q = *estimators[e]->target();
    INFO(to_string(q) << " estimator " << e << ": mean " << stats[e].mean() << ", truth "
                      << truth[q].value);
    CHECK(std::abs(stats[e].mean() - truth[q].value) <
          4.5 * stats[e].standard_error() + truth[q].error);
  }
}

// Kumar et al. 2019 (Verified Uncertainty Calibration, sec. 5): the debiased estimator of the
// squared binned L2 error is unbiased for it up to the bins' O(1/n) plug-in terms; the plain
// plug-in square is biased upward by about sum_b mean_b o (1 - mean_b o) / n. Against the
// binned quantity's own population value, at n = 1,000 over 400 replicates.
TEST_CASE("ece_debiased is unbiased for the squared binned L2 error where the plug-in is not",
          "[stat][estimators]") {
  DirichletGenerator gen({10, {0.5}, TemperatureMap{0.7}});
  const BinnedEce debiased(
      {15, Binning::equal_mass, Norm::l2, Scope::top, 0.0, nullptr, true, true});
  const BinnedEce plugin({15, Binning::equal_mass, Norm::l2});
  const Estimator* population[] = {&plugin};
  const PopulationValue binned = population_values(gen, population, 400'000)[0];
  const double target = binned.value * binned.value;  // plug-in l2 reports the root
  RunningStats d, p;
  Sample s;
  DirichletScratch scratch;
  EstimatorWorkspace ws;
  for (std::size_t r = 0; r < 400; ++r) {
    Engine engine = make_engine({7, 0, r, Purpose::sample});
    gen.sample(engine, 1000, s, scratch);
    d.add(debiased.estimate(s, ws));
    const double root = plugin.estimate(s, ws);
    p.add(root * root);
  }
  INFO("binned L2^2 " << target << " (se of root " << binned.error << "), debiased " << d.mean()
                      << " +- " << d.standard_error() << ", plug-in " << p.mean() << " +- "
                      << p.standard_error());
  const double target_se = 2.0 * binned.value * binned.error;
  CHECK(std::abs(d.mean() - target) < 4.5 * std::hypot(d.standard_error(), target_se));
  CHECK(p.mean() - target > 4.5 * std::hypot(p.standard_error(), target_se));
}

// ece_sweep (Roelofs et al. 2022) lets the number of bins grow with n, so unlike a fixed
// 15-bin ECE it converges to ece_top_l1 itself, also where the top-label gap changes sign
// (here p_1 = softmax(0.5 log c + (1.5, 0))_1 is overconfident for Z < 0.95 and underconfident
// above, so the truth engine conditions on Z instead of using |E[Z] - accuracy|). At n = 100,000
// its mean is within 4.5 standard errors, the truth's error and a 0.004 allowance for the remaining
// O(sqrt(b*/n)) noise bias of |.| of the truth.
TEST_CASE("ece_sweep converges to ece_top_l1 where the gap changes sign", "[stat][estimators]") {
  DirichletGenerator gen({2, {1.0}, AffineLogitMap{{0.5, 0.0, 0.0, 0.5}, {1.5, 0.0}}});
  const GroundTruth truth = compute_truth(gen, TruthSettings{});
  const auto& t = truth[Quantity::ece_top_l1];
  const EceSweep sweep({Binning::equal_mass, Norm::l1});
  RunningStats stats, bins;
  Sample s;
  DirichletScratch scratch;
  EstimatorWorkspace ws;
  for (std::size_t r = 0; r < 8; ++r) {
    Engine engine = make_engine({8, 0, r, Purpose::sample});
    gen.sample(engine, 100'000, s, scratch);
    stats.add(sweep.estimate(s, ws));
    bins.add(static_cast<double>(EceSweep::last_bins(ws)));
  }
  INFO("ece_sweep " << stats.mean() << " +- " << stats.standard_error() << ", truth " << t.value
                    << " +- " << t.error << ", mean b* " << bins.mean());
  CHECK(std::abs(stats.mean() - t.value) < 4.5 * stats.standard_error() + t.error + 0.004);
}

namespace {
struct ScratchA {
  std::vector<double> buffer;
};
struct ScratchB {
  int calls = 0;
};
}  // namespace

TEST_CASE("a workspace keeps one scratch per type, made once, and a copy starts without",
          "[unit][estimators]") {
  // EstimatorWorkspace::scratch (estimator.hpp): created value-initialised at the first call,
  // the same object at every later one, whatever other types were added since (each lives on
  // the heap, so references held across calls stay valid).
  EstimatorWorkspace ws;
  ScratchA& a = ws.scratch<ScratchA>();
  CHECK(a.buffer.empty());
  a.buffer.assign(1000, 1.5);
  const double* data = a.buffer.data();
  for (int i = 0; i < 8; ++i) ++ws.scratch<ScratchB>().calls;
  CHECK(&ws.scratch<ScratchA>() == &a);
  CHECK(ws.scratch<ScratchA>().buffer.data() == data);  // no new allocation
  CHECK(ws.scratch<ScratchB>().calls == 8);
  // Scratch, not state: a copy (one workspace per thread) starts empty; the original keeps its.
  EstimatorWorkspace copy = ws;
  CHECK(copy.scratch<ScratchA>().buffer.empty());
  CHECK(copy.scratch<ScratchB>().calls == 0);
  CHECK(ws.scratch<ScratchB>().calls == 8);
  EstimatorWorkspace moved = std::move(ws);
  CHECK(&moved.scratch<ScratchA>() == &a);
}
