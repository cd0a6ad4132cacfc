#include "decisions/betting.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

BettingTask::BettingTask(BettingSpec spec) : spec_(std::move(spec)) {
  const std::size_t K = spec_.odds.size();
  if (K < 2)
    throw DomainError("odds has " + std::to_string(K) + " entries: must have one per class (>= 2)");
  for (std::size_t k = 0; k < K; ++k) {
    const double o = spec_.odds[k];
    if (!(std::isfinite(o) && o > 1.0))
      throw DomainError("odds[" + std::to_string(k) + "] = " + format_double(o) +
                        ": must be a finite decimal odd > 1");
    log_odds_.push_back(std::log(o));
    log_net_.push_back(std::log(o - 1.0));
  }
  if (!(spec_.fraction > 0.0 && spec_.fraction <= 1.0))
    throw DomainError("fraction = " + format_double(spec_.fraction) + ": must be > 0 and <= 1");
}

std::vector<std::string> BettingTask::action_names() const {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < classes(); ++k) out.push_back("bet_" + std::to_string(k));
  out.emplace_back("no_bet");
  return out;
}

Decision BettingTask::decide(std::span<const double> q, std::span<const double> log_q) const {
  const std::size_t K = classes();
  Decision best{K};
  double best_growth = -INFINITY;
  for (std::size_t k = 0; k < K; ++k) {
    const double o = spec_.odds[k];
    if (!(q[k] * o > 1.0)) continue;
    // log(1 - q_k) from the other components: no cancellation when q_k is near 1.
    double log_rest;
    if (!log_q.empty()) {
      double top = -INFINITY;
      for (std::size_t j = 0; j < K; ++j)
        if (j != k) top = std::max(top, log_q[j]);
      double s = 0.0;
      for (std::size_t j = 0; j < K; ++j)
        if (j != k) s += std::exp(log_q[j] - top);
      // Every other outcome has probability exactly 0 (a point mass): log(1 - q_k) = -inf.
      log_rest = top == -INFINITY ? -INFINITY : top + std::log(s);
    } else {
      double s = 0.0;
      for (std::size_t j = 0; j < K; ++j)
        if (j != k) s += q[j];
      log_rest = std::log(s);
    }
    const double f = (q[k] * o - 1.0) / (o - 1.0);
    double stake, log_win, log_lose;
    if (spec_.fraction == 1.0) {
      stake = f;
      log_win = (log_q.empty() ? std::log(q[k]) : log_q[k]) + log_odds_[k];
      log_lose = log_odds_[k] - log_net_[k] + log_rest;
    } else {
      stake = spec_.fraction * f;
      log_win = std::log1p(stake * (o - 1.0));
      log_lose = std::log1p(-stake);
    }
    const double growth = q[k] * log_win + std::exp(log_rest) * log_lose;
    if (growth > best_growth) {
      best_growth = growth;
      best = Decision{k, stake, log_win, log_lose};
    }
  }
  return best;
}

// Tallies: [bet, stake, bet and won].
void BettingTask::tally(const Decision& d, std::span<const double> w, std::span<double> out) const {
  double mass = 0.0;
  for (double v : w) mass += v;
  const bool bet = d.action < classes();
  out[0] = bet ? mass : 0.0;
  out[1] = bet ? d.stake * mass : 0.0;
  out[2] = bet ? w[d.action] : 0.0;
}

void BettingTask::figures(std::span<const double> m, std::span<double> out) const {
  for (std::size_t i = 0; i < 3; ++i) out[i] = m[i];
}

}  // namespace calbench
