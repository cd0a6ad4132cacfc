#pragma once
// Task `betting` (the Kelly criterion; Kelly 1956): each case is a race with K outcomes and a
// bookmaker offering decimal odds o_k > 1 (a stake s on outcome k returns s o_k if k wins).
// The bettor stakes a fraction of the bankroll on at most one outcome per case.
// With belief q, staking f on outcome k grows the bankroll by the factor 1 + f (o_k - 1) if k
// wins and 1 - f otherwise; the expected log-growth
//   G_k(f; q) = q_k log(1 + f (o_k - 1)) + (1 - q_k) log(1 - f)
// is maximal at the Kelly fraction f_k = (q_k o_k - 1) / (o_k - 1), positive exactly when k has
// an edge q_k o_k > 1. There 1 + f_k (o_k - 1) = q_k o_k and 1 - f_k = o_k (1 - q_k)/(o_k - 1).
// Policy: among the outcomes with an edge, bet lambda f_k (lambda = `fraction`, 1 for full
// Kelly) on the one whose growth G_k(lambda f_k; q) is largest (lowest index on ties); with no
// edge anywhere, no bet (action K, utility 0).
// Utility: the realised log-growth U(d, j) = log(1 + s (o_k - 1)) if j = k, log(1 - s) if not,
// for the stake s on k; so the expected utility is E[sum_j c_j U(d(p), j)], the expected
// log-growth per bet. The oracle (belief r(p)) maximises it among single bets.
// Figures: bet_rate = P(bet), mean_stake = E[s], win_rate = P(bet and won).
#include <vector>

#include "decisions/decision_task.hpp"

namespace calbench {

struct BettingSpec {
  std::vector<double> odds;  // decimal odds, one per class, each > 1
  double fraction = 1.0;     // lambda in (0, 1]: fractional Kelly
};

class BettingTask final : public DecisionTask {
 public:
  explicit BettingTask(BettingSpec spec);

  std::string_view name() const override { return "betting"; }
  std::size_t classes() const override { return spec_.odds.size(); }
  std::vector<std::string> action_names() const override;
  Decision decide(std::span<const double> q, std::span<const double> log_q) const override;
  double utility(const Decision& d, std::size_t k) const override {
    if (d.action == classes()) return 0.0;
    return d.action == k ? d.log_win : d.log_lose;
  }
  std::vector<std::string> figure_names() const override {
    return {"bet_rate", "mean_stake", "win_rate"};
  }
  std::size_t tally_count() const override { return 3; }
  void tally(const Decision& d, std::span<const double> w, std::span<double> out) const override;
  void figures(std::span<const double> tally_means, std::span<double> out) const override;

  const BettingSpec& spec() const { return spec_; }

 private:
  BettingSpec spec_;
  std::vector<double> log_odds_, log_net_;  // log o_k, log(o_k - 1)
};

}  // namespace calbench
