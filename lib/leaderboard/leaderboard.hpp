#pragma once
// Leaderboards of methods over cases, CalArena's way (probkit/CalArena utils.py,
// compute_winrates and compute_elo_scores; docs/recalibration.md, "Leaderboards"): per ranking
// key (a metric, lower is better unless it says higher), each method's win rate — per case the
// share of the OTHER methods strictly worse, ties counted for neither, averaged over cases — and
// its Bradley–Terry Elo (leaderboard/bradley_terry.hpp) over the pairwise results of every case,
// both with percentile bootstrap intervals over clusters of cases (CalArena's block bootstrap:
// clusters drawn with replacement, each bringing all its cases). Between pairs of keys: Kendall's
// tau-b between the two leaderboards' win rates, its mean over cases, and the share of cases in
// which the key's best method is the reference key's best; between two keys compared with the
// same reference, the differences of those agreements, with intervals from the same resamples
// (paired). A method that failed in a case loses it: on every key it is worse than every method
// that did not fail there, and ties with the others that failed.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/rng.hpp"

namespace calbench {

enum class Better { lower, higher };
std::string_view to_string(Better better);

// One ranking key's values, case-major: values[c * methods + m].
struct RankingKey {
  std::string name;
  Better better = Better::lower;
  std::vector<double> values;
};

struct LeaderboardTable {
  std::vector<std::string> methods;
  std::vector<std::size_t> clusters;  // per case: its bootstrap block (CalArena: the dataset)
  std::vector<RankingKey> keys;
  // Case-major as a key's values: failed[c * methods + m] when method m has no values in case c
  // (its fit failed there; its slots in every key are ignored, NaN allowed). Empty: none failed.
  std::vector<bool> failed;
  std::size_t cases() const { return clusters.size(); }
  bool failed_in(std::size_t c, std::size_t m) const {
    return !failed.empty() && failed[c * methods.size() + m];
  }
};

struct LeaderboardSettings {
  std::size_t resamples = 1000;     // win rates and rank agreement (CalArena's n_bootstraps)
  std::size_t elo_resamples = 100;  // Elo: the first ones of the same draws (CalArena's 100)
  double level = 0.95;
};

struct Estimate {
  double value = std::numeric_limits<double>::quiet_NaN();
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
};

// A method on one key's leaderboard.
struct Standing {
  // The key's mean value over the cases the method did not fail; NaN when it failed in all.
  double mean = 0.0;
  Estimate win_rate, elo;
  std::size_t rank = 0;    // 1 + the methods with a higher win rate
  std::size_t failed = 0;  // cases the method failed (and lost)
};

struct Board {
  std::size_t key = 0;              // index into LeaderboardTable::keys
  std::vector<Standing> standings;  // in LeaderboardTable::methods' order
};

struct RankAgreement {
  std::size_t key = 0, reference = 0;  // indices into LeaderboardTable::keys
  Estimate tau_b;                      // between the two boards' win rates
  Estimate case_tau_b;                 // per case between the values, averaged over cases
  Estimate winner_agreement;           // share of cases whose best method is the reference's
  std::size_t tau_cases = 0;           // cases where the per-case tau-b is defined
};

// Two keys against one reference: each agreement of `key` minus that of `other`, its interval
// the percentiles of the differences over the same resamples (a paired bootstrap). The point
// value is exactly the difference of the two agreements' point values.
struct RankContrast {
  std::size_t key = 0, other = 0, reference = 0;  // indices into LeaderboardTable::keys
  Estimate tau_b, case_tau_b, winner_agreement;
};

struct Leaderboards {
  std::vector<Board> boards;  // one per key, in the table's order
  std::vector<RankAgreement> agreements;
  // Per reference (in order of first appearance in `compare`), every pair of the keys compared
  // with it, in the order of `compare`: (k_i, k_j) for i < j.
  std::vector<RankContrast> contrasts;
  std::size_t cases = 0, clusters = 0;
};

// One case (the values of every method): per method the share of the other methods strictly
// worse. CalArena: df[other_cols].gt(df[col], axis=0).mean(axis=1).
std::vector<double> case_win_rates(std::span<const double> values, Better better);

// One case's share of the key's best methods (ties at the best split evenly) that are among
// the reference's best: 1 or 0 without ties.
double winner_agreement(std::span<const double> values, Better better,
                        std::span<const double> reference, Better reference_better);

// The bootstrap's stream for a run's `seed` and a `scope` (a recalibration run: a cell's index,
// or 2^63 for its pooled board): core/rng.hpp's `bootstrap` purpose at the replicate 2^64 - 1,
// which no replicate's resamples reach (they use r * 2^32 + b with b below the few thousand
// resamples a run allows).
inline constexpr std::uint64_t leaderboard_replicate = ~std::uint64_t{0};
inline StreamKey leaderboard_stream(std::uint64_t seed, std::uint64_t scope) {
  return {.seed = seed,
          .cell = scope,
          .replicate = leaderboard_replicate,
          .purpose = Purpose::bootstrap};
}

// Every key's board, the agreement of each (key, reference) pair in `compare` and the contrasts
// of the keys sharing a reference among the first `contrasted` pairs (default: all; the
// recalibration scenario leaves its regret board's agreements with the true boards out). The
// bootstrap draws from `stream` only, in a fixed order, so the result is a pure function of its
// inputs. Throws DomainError on a non-finite value of a method that did not fail (naming key, case
// and method), fewer than two methods, no cases or a malformed table.
Leaderboards compute_leaderboards(const LeaderboardTable& table,
                                  const std::vector<std::pair<std::size_t, std::size_t>>& compare,
                                  const LeaderboardSettings& settings, StreamKey stream,
                                  std::size_t contrasted = std::numeric_limits<std::size_t>::max());

// numpy.percentile's default (linear interpolation between order statistics), q in [0, 1].
double percentile(std::vector<double> values, double q);

}  // namespace calbench
