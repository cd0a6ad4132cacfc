// The leaderboard computation (leaderboard/): known answers worked by hand on small tables,
// Bradley–Terry recovering known strengths, and the bootstrap's determinism.
#include <algorithm>
#include <boost/random/binomial_distribution.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "leaderboard/bradley_terry.hpp"
#include "leaderboard/kendall_tau.hpp"
#include "leaderboard/leaderboard.hpp"

using namespace calbench;
using Catch::Matchers::WithinAbs;

namespace {

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// Method a's expected wins under the Bradley-Terry model of its Elo scores, `games` per pair: at
// the maximum of the likelihood they equal its wins (the score equations).
double expected_wins(const std::vector<Standing>& s, std::size_t a, double games) {
  const auto theta = [&](std::size_t m) {
    return (s[m].elo.value - 1000.0) * std::numbers::ln10 / 400.0;
  };
  double w = 0;
  for (std::size_t b = 0; b < s.size(); ++b)
    if (b != a) w += games * sigmoid(theta(a) - theta(b));
  return w;
}

// Three methods A, B, C over three cases, lower is better:
//   case 0: 1 2 3   win rates A 1, B 1/2, C 0 (each beats the ones after it)
//   case 1: 2 1 2   A 0 (B better, C tied), B 1, C 0
//   case 2: 1 1 1   all tied: 0 each (ties count for neither)
// Means: A 1/3, B 1/2, C 0.
LeaderboardTable hand_table() {
  LeaderboardTable t;
  t.methods = {"A", "B", "C"};
  t.clusters = {0, 1, 2};
  t.keys.push_back(
      {.name = "metric", .better = Better::lower, .values = {1, 2, 3, 2, 1, 2, 1, 1, 1}});
  return t;
}

}  // namespace

TEST_CASE("a case's win rates count the other methods strictly worse", "[unit][leaderboard]") {
  const std::vector<double> v = {0.1, 0.2, 0.2, 0.3};
  const auto lower = case_win_rates(v, Better::lower);
  CHECK(lower == std::vector<double>{1.0, 1.0 / 3, 1.0 / 3, 0.0});
  const auto higher = case_win_rates(v, Better::higher);
  CHECK(higher == std::vector<double>{0.0, 1.0 / 3, 1.0 / 3, 1.0});
}

TEST_CASE("win rates and ranks of a hand-computed table", "[unit][leaderboard]") {
  const LeaderboardTable t = hand_table();
  const Leaderboards lb = compute_leaderboards(t, {}, {}, leaderboard_stream(1, 0));
  REQUIRE(lb.boards.size() == 1);
  const auto& s = lb.boards[0].standings;
  CHECK_THAT(s[0].win_rate.value, WithinAbs(1.0 / 3, 1e-15));
  CHECK_THAT(s[1].win_rate.value, WithinAbs(0.5, 1e-15));
  CHECK_THAT(s[2].win_rate.value, WithinAbs(0.0, 1e-15));
  CHECK(s[0].rank == 2);
  CHECK(s[1].rank == 1);
  CHECK(s[2].rank == 3);
  CHECK_THAT(s[0].mean, WithinAbs(4.0 / 3, 1e-15));
  CHECK(lb.cases == 3);
  CHECK(lb.clusters == 3);
  for (const auto& x : s) {
    CHECK(x.win_rate.lower <= x.win_rate.value);
    CHECK(x.win_rate.value <= x.win_rate.upper);
  }
  // The Elo of the same table. Its games, ties half a win each: A-B 1.5 - 1.5 (a win, a loss,
  // a tie), A-C 2 - 1 (a win, two ties), B-C 2.5 - 0.5 (two wins, a tie). At the maximum of the
  // likelihood each method's expected wins equal its wins (the score equations): A 3.5, B 4,
  // C 1.5 of 6 games each.
  const auto expected = [&](std::size_t a) { return expected_wins(s, a, 3); };
  CHECK_THAT(expected(0), WithinAbs(3.5, 1e-6));
  CHECK_THAT(expected(1), WithinAbs(4.0, 1e-6));
  CHECK_THAT(expected(2), WithinAbs(1.5, 1e-6));
  CHECK(s[1].elo.value > s[0].elo.value);
  CHECK(s[0].elo.value > s[2].elo.value);
  CHECK_THAT(s[0].elo.value + s[1].elo.value + s[2].elo.value, WithinAbs(3000.0, 1e-9));
}

TEST_CASE("Bradley-Terry on two competitors: theta_a - theta_b = log(wins / losses)",
          "[unit][leaderboard]") {
  // A beats B in 3 of 4 games: the likelihood 3 log p + log(1 - p) peaks at p = 3/4, so the
  // Elo difference is 400 log10(3) = 190.848... and the pair centres on 1000.
  PairwiseResults r(2);
  r.add(0, 1, 1.0, 3.0);
  r.add(0, 1, 0.0, 1.0);
  const BradleyTerryFit fit = fit_bradley_terry(r);
  CHECK_THAT(fit.elo[0] - fit.elo[1], WithinAbs(400.0 * std::log10(3.0), 1e-4));
  CHECK_THAT(fit.elo[0] + fit.elo[1], WithinAbs(2000.0, 1e-9));
  // A tie is half a win each: 2 wins, 1 loss, 2 ties -> 3 - 2.
  PairwiseResults t(2);
  t.add(0, 1, 1.0, 2.0);
  t.add(0, 1, 0.0, 1.0);
  t.add(0, 1, 0.5, 2.0);
  CHECK_THAT(fit_bradley_terry(t).theta[0] * 2, WithinAbs(std::log(3.0 / 2.0), 1e-6));
}

TEST_CASE("Bradley-Terry recovers known strengths", "[stat][leaderboard]") {
  const std::vector<double> theta = {1.0, 0.2, -0.4, -0.8};  // sum zero
  const std::size_t m = theta.size();
  SECTION("expected results: the maximum-likelihood estimate is theta itself") {
    // With wins(a, b) = n sigma(theta_a - theta_b) exactly, the score equations hold at theta.
    PairwiseResults r(m);
    for (std::size_t a = 0; a < m; ++a)
      for (std::size_t b = a + 1; b < m; ++b) r.add(a, b, sigmoid(theta[a] - theta[b]), 10.0);
    const BradleyTerryFit fit = fit_bradley_terry(r);
    for (std::size_t a = 0; a < m; ++a) CHECK_THAT(fit.theta[a], WithinAbs(theta[a], 1e-6));
  }
  SECTION("simulated games") {
    // 2000 games per pair: the standard error of one theta difference is at most
    // 1 / sqrt(2000 p (1 - p)) <= 0.06 over these pairs (p >= 0.14); each theta is a mean of
    // such differences, so 4 standard errors are within 0.25.
    Engine engine = make_engine({.seed = 7, .purpose = Purpose::sample});
    PairwiseResults r(m);
    for (std::size_t a = 0; a < m; ++a)
      for (std::size_t b = a + 1; b < m; ++b) {
        boost::random::binomial_distribution<int> wins(2000, sigmoid(theta[a] - theta[b]));
        const int w = wins(engine);
        r.add(a, b, 1.0, w);
        r.add(a, b, 0.0, 2000 - w);
      }
    const BradleyTerryFit fit = fit_bradley_terry(r);
    for (std::size_t a = 0; a < m; ++a) CHECK_THAT(fit.theta[a], WithinAbs(theta[a], 0.25));
  }
  SECTION("a competitor that wins every game stays finite and on top") {
    PairwiseResults r(3);
    r.add(0, 1, 1.0, 5.0);
    r.add(0, 2, 1.0, 5.0);
    r.add(1, 2, 1.0, 3.0);
    r.add(1, 2, 0.0, 2.0);
    const BradleyTerryFit fit = fit_bradley_terry(r);
    for (double e : fit.elo) CHECK(std::isfinite(e));
    CHECK(fit.elo[0] > fit.elo[1] + 1000.0);
  }
}

TEST_CASE("Kendall tau-b known answers", "[unit][leaderboard]") {
  // One discordant pair of six: (5 - 1) / 6.
  CHECK_THAT(kendall_tau_b(std::vector<double>{1, 2, 3, 4}, std::vector<double>{1, 3, 2, 4}),
             WithinAbs(2.0 / 3, 1e-15));
  // Ties: one pair tied in x, one in y; 4 concordant, 0 discordant: 4 / sqrt(5 * 5) (scipy
  // kendalltau([1, 1, 2, 3], [1, 2, 2, 3]) = 0.8).
  CHECK_THAT(kendall_tau_b(std::vector<double>{1, 1, 2, 3}, std::vector<double>{1, 2, 2, 3}),
             WithinAbs(0.8, 1e-15));
  CHECK(std::isnan(kendall_tau_b(std::vector<double>{1, 1}, std::vector<double>{1, 2})));
}

TEST_CASE("winner agreement splits ties at the best", "[unit][leaderboard]") {
  const std::vector<double> v = {1, 1, 2};
  CHECK(winner_agreement(v, Better::lower, std::vector<double>{0.5, 0.7, 0.1}, Better::lower) == 0);
  CHECK(winner_agreement(v, Better::lower, std::vector<double>{0.5, 0.5, 1}, Better::lower) == 1);
  CHECK(winner_agreement(v, Better::lower, std::vector<double>{0.5, 0.6, 1}, Better::lower) == 0.5);
  // The reference's direction: higher is better, so method 2 (value 1) is its winner.
  CHECK(winner_agreement(v, Better::lower, std::vector<double>{0.5, 0.6, 1}, Better::higher) == 0);
}

TEST_CASE("percentile interpolates as numpy.percentile", "[unit][leaderboard]") {
  CHECK(percentile({4, 1, 3, 2}, 0.25) == 1.75);  // numpy.percentile([1, 2, 3, 4], 25)
  CHECK(percentile({4, 1, 3, 2}, 0.975) == 3.925);
}

TEST_CASE("rank agreement between keys", "[unit][leaderboard]") {
  LeaderboardTable t = hand_table();
  RankingKey same = t.keys[0];
  same.name = "same";
  RankingKey reversed = t.keys[0];
  reversed.name = "reversed";
  reversed.better = Better::higher;  // the same numbers read the other way
  t.keys.push_back(same);
  t.keys.push_back(reversed);
  const Leaderboards lb = compute_leaderboards(t, {{1, 0}, {2, 0}}, {}, leaderboard_stream(3, 0));
  REQUIRE(lb.agreements.size() == 2);
  const RankAgreement& s = lb.agreements[0];
  CHECK(s.tau_b.value == 1.0);
  CHECK(s.case_tau_b.value == 1.0);
  CHECK(s.winner_agreement.value == 1.0);
  CHECK(s.tau_cases == 2);  // case 2 is all ties: its tau-b is undefined
  const RankAgreement& r = lb.agreements[1];
  CHECK(r.case_tau_b.value == -1.0);
  // Reversed win rates: case 0 A 0, B 1/2, C 1; case 1 A 1/2 (beats B, ties C), B 0, C 1/2;
  // means A 1/6, B 1/6, C 1/2 against A 1/3, B 1/2, C 0: tau-b over the pairs (A,B) tied in
  // one, (A,C) and (B,C) discordant: -2 / sqrt(2 * 3).
  CHECK_THAT(r.tau_b.value, WithinAbs(-2.0 / std::sqrt(6.0), 1e-15));
  // Winners: case 0 C against the reference's A (0); case 1 A and C tied at the best against
  // the reference's B (0); case 2 every method tied in both (1).
  CHECK_THAT(r.winner_agreement.value, WithinAbs(1.0 / 3, 1e-15));
}

TEST_CASE("the leaderboard bootstrap is a pure function of its stream", "[unit][leaderboard]") {
  LeaderboardTable t;
  t.methods = {"a", "b", "c", "d"};
  RankingKey key{.name = "k", .better = Better::lower, .values = {}};
  Engine engine = make_engine({.seed = 11, .purpose = Purpose::sample});
  for (std::size_t c = 0; c < 40; ++c) {
    t.clusters.push_back(c / 4);  // 10 blocks of 4 cases
    for (std::size_t m = 0; m < 4; ++m)
      key.values.push_back(0.1 * static_cast<double>(m) + uniform_open01(engine));
  }
  t.keys.push_back(key);
  const StreamKey stream = leaderboard_stream(5, 2);
  const auto first = compute_leaderboards(t, {{0, 0}}, {}, stream);
  const auto again = compute_leaderboards(t, {{0, 0}}, {}, stream);
  auto other = stream;
  other.seed = 6;
  const auto moved = compute_leaderboards(t, {{0, 0}}, {}, other);
  bool differs = false;
  for (std::size_t m = 0; m < 4; ++m) {
    const Standing &x = first.boards[0].standings[m], &y = again.boards[0].standings[m],
                   &z = moved.boards[0].standings[m];
    CHECK(x.win_rate.lower == y.win_rate.lower);
    CHECK(x.win_rate.upper == y.win_rate.upper);
    CHECK(x.elo.lower == y.elo.lower);
    CHECK(x.elo.upper == y.elo.upper);
    CHECK(x.win_rate.value == z.win_rate.value);  // the point estimate draws nothing
    differs = differs || x.win_rate.lower != z.win_rate.lower || x.elo.upper != z.elo.upper;
    CHECK(x.win_rate.lower < x.win_rate.upper);
  }
  CHECK(differs);
  CHECK(first.clusters == 10);
  // One block holding every case: every resample is the whole table, the interval a point.
  t.clusters.assign(40, 9);
  const auto one = compute_leaderboards(t, {}, {}, stream);
  for (const Standing& s : one.boards[0].standings) {
    CHECK(s.win_rate.lower == s.win_rate.value);
    CHECK(s.win_rate.upper == s.win_rate.value);
  }
}

TEST_CASE("leaderboard inputs are checked", "[unit][leaderboard]") {
  LeaderboardTable t = hand_table();
  t.keys[0].values[4] = std::nan("");
  CHECK_THROWS_WITH(compute_leaderboards(t, {}, {}, {}),
                    "leaderboard: key metric, case 1, method B: the value is not finite");
  t = hand_table();
  t.keys[0].values.pop_back();
  CHECK_THROWS_AS(compute_leaderboards(t, {}, {}, {}), DomainError);
}

// A method that failed in a case loses it. Three methods over three cases, lower is better,
// NaN where a method failed (ignored):
//   case 0: A 1, B 2, C 3        win rates A 1, B 1/2, C 0
//   case 1: A fails, B 1, C 2    A 0 (worse than both), B 1, C 1/2 (beats the failed A)
//   case 2: A, B fail, C 5       A 0 and B 0 (tied with each other), C 1
// Win rates A 1/3, B 1/2, C 1/2; means over the cases each fitted: A 1, B 3/2, C 10/3.
TEST_CASE("a failed method loses its case and keeps it for the others", "[unit][leaderboard]") {
  const double nan = std::nan("");
  LeaderboardTable t;
  t.methods = {"A", "B", "C"};
  t.clusters = {0, 1, 2};
  t.keys.push_back(
      {.name = "metric", .better = Better::lower, .values = {1, 2, 3, nan, 1, 2, nan, nan, 5}});
  t.failed = {false, false, false, true, false, false, true, true, false};
  const Leaderboards lb = compute_leaderboards(t, {{0, 0}}, {}, leaderboard_stream(1, 0));
  CHECK(lb.cases == 3);
  const auto& s = lb.boards[0].standings;
  CHECK(s[0].win_rate.value == 1.0 / 3);
  CHECK(s[1].win_rate.value == 0.5);
  CHECK(s[2].win_rate.value == 0.5);
  CHECK(s[0].rank == 3);
  CHECK(s[1].rank == 1);
  CHECK(s[2].rank == 1);
  CHECK(s[0].mean == 1.0);
  CHECK(s[1].mean == 1.5);
  CHECK_THAT(s[2].mean, WithinAbs(10.0 / 3, 1e-15));
  CHECK(s[0].failed == 2);
  CHECK(s[1].failed == 1);
  CHECK(s[2].failed == 0);
  // Games: A-B 1.5 - 1.5 (a win, a loss, the failures' tie), A-C 1 - 2, B-C 2 - 1. At the
  // maximum of the likelihood each method's expected wins equal its wins: A 2.5, B 3.5, C 3.
  const auto expected = [&](std::size_t a) { return expected_wins(s, a, 3); };
  CHECK_THAT(expected(0), WithinAbs(2.5, 1e-6));
  CHECK_THAT(expected(1), WithinAbs(3.5, 1e-6));
  CHECK_THAT(expected(2), WithinAbs(3.0, 1e-6));
  // The key against itself: every case's tau-b is 1 (the failures tie in both rankings), and
  // the winner is the winner.
  REQUIRE(lb.agreements.size() == 1);
  CHECK(lb.agreements[0].case_tau_b.value == 1.0);
  CHECK(lb.agreements[0].tau_cases == 3);
  CHECK(lb.agreements[0].winner_agreement.value == 1.0);
  // A method failing everywhere: no mean, win rate 0, every case kept.
  t.failed = {true, false, false, true, false, false, true, true, false};
  const Leaderboards all = compute_leaderboards(t, {}, {}, leaderboard_stream(1, 0));
  CHECK(std::isnan(all.boards[0].standings[0].mean));
  CHECK(all.boards[0].standings[0].failed == 3);
  CHECK(all.boards[0].standings[0].win_rate.value == 0.0);
  CHECK(all.cases == 3);
  // Without the flags the NaN is an error naming the slot.
  t.failed.clear();
  CHECK_THROWS_WITH(compute_leaderboards(t, {}, {}, {}),
                    "leaderboard: key metric, case 1, method A: the value is not finite");
  t.failed = {true};
  CHECK_THROWS_WITH(compute_leaderboards(t, {}, {}, {}),
                    "leaderboard: 1 failure flags, expected none or cases x methods = 9");
}

TEST_CASE("Kendall tau-b orders infinite scores by comparison", "[unit][leaderboard]") {
  const double inf = std::numeric_limits<double>::infinity();
  // (inf, inf, 1) against (3, 2, 1): one pair tied in x, two concordant: 2 / sqrt(2 * 3).
  CHECK_THAT(kendall_tau_b(std::vector<double>{inf, inf, 1}, std::vector<double>{3, 2, 1}),
             WithinAbs(2.0 / std::sqrt(6.0), 1e-15));
}

namespace {

// Three keys over cases: the reference, a copy with a little noise and one with much.
LeaderboardTable contrast_table(const std::vector<std::size_t>& blocks) {
  LeaderboardTable t;
  t.methods = {"a", "b", "c", "d", "e"};
  t.clusters = blocks;
  Engine engine = make_engine({.seed = 21, .purpose = Purpose::sample});
  RankingKey ref{.name = "ref", .better = Better::lower, .values = {}};
  RankingKey near{.name = "near", .better = Better::lower, .values = {}};
  RankingKey far{.name = "far", .better = Better::lower, .values = {}};
  for (std::size_t c = 0; c < blocks.size(); ++c)
    for (std::size_t m = 0; m < t.methods.size(); ++m) {
      const double truth = 0.1 * static_cast<double>(m) + 0.2 * uniform_open01(engine);
      ref.values.push_back(truth);
      near.values.push_back(truth + 0.02 * uniform_open01(engine));
      far.values.push_back(truth + 3.0 * uniform_open01(engine));
    }
  t.keys = {ref, near, far};
  return t;
}

LeaderboardTable cases_of_block(const LeaderboardTable& t, std::size_t block) {
  LeaderboardTable out;
  out.methods = t.methods;
  const std::size_t m = t.methods.size();
  for (const RankingKey& key : t.keys) out.keys.push_back({key.name, key.better, {}});
  for (std::size_t c = 0; c < t.cases(); ++c) {
    if (t.clusters[c] != block) continue;
    out.clusters.push_back(c);
    for (std::size_t k = 0; k < t.keys.size(); ++k)
      out.keys[k].values.insert(out.keys[k].values.end(), t.keys[k].values.begin() + c * m,
                                t.keys[k].values.begin() + (c + 1) * m);
  }
  return out;
}

}  // namespace

TEST_CASE("contrasts of two keys' agreements are paired differences", "[unit][leaderboard]") {
  // 12 cases in two blocks of 6. A resample draws block 0 twice, both once, or block 1 twice
  // (probabilities 1/4, 1/2, 1/4; of 1,000 resamples about 250, 500 and 250, sd 14 to 16), and
  // block 0 twice weighs its cases as block 0 alone does. So any statistic takes three values,
  // on block 0's cases, on all (the point estimate) and on block 1's, each more than 25 times,
  // and its 2.5 % and 97.5 % percentiles are the least and the greatest of the three. For a
  // paired difference those are differences within one resample; unpaired percentiles would
  // combine the extremes of each agreement, taken from different resamples.
  std::vector<std::size_t> blocks(12);
  for (std::size_t c = 0; c < 12; ++c) blocks[c] = c < 6 ? 3 : 8;
  const LeaderboardTable t = contrast_table(blocks);
  const std::vector<std::pair<std::size_t, std::size_t>> compare = {{1, 0}, {2, 0}};
  const Leaderboards lb = compute_leaderboards(t, compare, {}, leaderboard_stream(4, 1));
  REQUIRE(lb.contrasts.size() == 1);
  const RankContrast& rc = lb.contrasts[0];
  CHECK(rc.key == 1);
  CHECK(rc.other == 2);
  CHECK(rc.reference == 0);
  // The point value is the difference of the two agreements, exactly.
  CHECK(rc.tau_b.value == lb.agreements[0].tau_b.value - lb.agreements[1].tau_b.value);
  CHECK(rc.case_tau_b.value ==
        lb.agreements[0].case_tau_b.value - lb.agreements[1].case_tau_b.value);
  CHECK(rc.winner_agreement.value ==
        lb.agreements[0].winner_agreement.value - lb.agreements[1].winner_agreement.value);
  // The interval: the least and greatest of the contrast on each block alone and on both.
  std::vector<double> tau = {rc.tau_b.value}, case_tau = {rc.case_tau_b.value};
  for (std::size_t block : {3, 8}) {
    const Leaderboards one =
        compute_leaderboards(cases_of_block(t, block), compare, {}, leaderboard_stream(4, 1));
    tau.push_back(one.contrasts[0].tau_b.value);
    case_tau.push_back(one.contrasts[0].case_tau_b.value);
  }
  CHECK(tau[1] != tau[2]);  // the design: the blocks differ
  CHECK(case_tau[1] != case_tau[2]);
  CHECK(rc.tau_b.lower == *std::min_element(tau.begin(), tau.end()));
  CHECK(rc.tau_b.upper == *std::max_element(tau.begin(), tau.end()));
  CHECK(rc.case_tau_b.lower == *std::min_element(case_tau.begin(), case_tau.end()));
  CHECK(rc.case_tau_b.upper == *std::max_element(case_tau.begin(), case_tau.end()));
  CHECK(rc.tau_b.lower <= rc.tau_b.value);
  CHECK(rc.tau_b.value <= rc.tau_b.upper);
  // The near copy tracks the reference better than the far one in both blocks.
  CHECK(rc.tau_b.lower > 0.0);

  // A key against its own copy: the same draws, a difference of exactly 0 in every resample.
  LeaderboardTable twin = contrast_table(blocks);
  twin.keys.push_back(twin.keys[1]);
  twin.keys.back().name = "near_again";
  const Leaderboards same =
      compute_leaderboards(twin, {{1, 0}, {3, 0}, {2, 0}}, {}, leaderboard_stream(4, 1));
  REQUIRE(same.contrasts.size() == 3);  // (near, near_again), (near, far), (near_again, far)
  CHECK(same.contrasts[0].other == 3);
  for (const Estimate& e : {same.contrasts[0].tau_b, same.contrasts[0].case_tau_b,
                            same.contrasts[0].winner_agreement}) {
    CHECK(e.value == 0.0);
    CHECK(e.lower == 0.0);
    CHECK(e.upper == 0.0);
  }
  CHECK(same.contrasts[1].tau_b.lower == rc.tau_b.lower);
  CHECK(same.contrasts[2].key == 3);
}
