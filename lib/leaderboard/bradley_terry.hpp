#pragma once
// The Bradley–Terry model fitted by maximum likelihood to pairwise results, and its Elo scale,
// as CalArena (probkit/CalArena utils.py, compute_elo_scores) fits it through lmarena's
// arena-rank (arena_rank/models/bradley_terry.py): P(a beats b) = sigma(theta_a - theta_b),
// a tie is half a win for each side (arena-rank's default_outcome_map: "tie" -> 0.5), the
// log-likelihood is averaged over games, and Elo = 1000 + (400 / ln 10) theta with theta
// summing to zero (arena-rank starts L-BFGS at theta = 0 and every gradient sums to zero, so
// its ratings keep sum zero).
#include <cstddef>
#include <vector>

namespace calbench {

// Pairwise results of M competitors: wins(a, b) = games a won against b plus half the ties,
// games(a, b) = games between a and b (symmetric). Row-major M x M.
class PairwiseResults {
 public:
  explicit PairwiseResults(std::size_t competitors);
  std::size_t competitors() const { return m_; }
  // One game: `a` beat `b` (outcome 1), lost (0) or tied (0.5); `weight` games at once.
  void add(std::size_t a, std::size_t b, double outcome, double weight = 1.0);
  // Adds `other` weight times (a bootstrap resample's multiplicity).
  void add(const PairwiseResults& other, double weight);
  double wins(std::size_t a, std::size_t b) const { return wins_[a * m_ + b]; }
  double games(std::size_t a, std::size_t b) const { return games_[a * m_ + b]; }

 private:
  std::size_t m_;
  std::vector<double> wins_, games_;
};

struct BradleyTerryFit {
  std::vector<double> theta;  // natural-log strengths, summing to zero
  std::vector<double> elo;    // 1000 + 400 / ln(10) * theta
  std::size_t iterations = 0;
};

// Newton's method on the average negative log-likelihood plus (ridge / 2) |theta|^2. The ridge
// (default 1e-8) differs from CalArena, whose L-BFGS is unpenalised: it pins the
// sum-zero solution and keeps theta finite when a competitor wins (or loses) every game, where
// the maximum-likelihood estimate does not exist and arena-rank stops wherever its tolerance
// (ftol 1e-9) halts it. Where the estimate exists the ridge moves an Elo by about
// 1e-8 theta / (Fisher information per game): against an unpenalised scipy fit on CalArena's
// results (python/tests/test_leaderboard.py) the Elos differ by 6e-5 points at most.
// Hand-written rather than taken from a library because the model is a 2-line likelihood whose
// Hessian Eigen factors directly; the M x M system (M competitors) has no library of its own.
BradleyTerryFit fit_bradley_terry(const PairwiseResults& results, double ridge = 1e-8);

double elo_of(double theta);

}  // namespace calbench
