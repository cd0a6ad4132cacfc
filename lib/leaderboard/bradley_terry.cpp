#include "leaderboard/bradley_terry.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <numbers>

#include "core/error.hpp"

namespace calbench {
namespace {

double softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

double sigmoid(double x) {
  return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

// The objective: -(1/N) sum over pairs a < b of [W_ab d - n_ab softplus(d)], d = theta_a -
// theta_b (arena-rank's loss_function over the aggregated games), plus (ridge / 2) |theta|^2.
struct Objective {
  const PairwiseResults& r;
  double ridge, total;

  double value(const Eigen::VectorXd& theta) const {
    double f = 0.0;
    const std::size_t m = r.competitors();
    for (std::size_t a = 0; a < m; ++a)
      for (std::size_t b = a + 1; b < m; ++b) {
        if (r.games(a, b) == 0.0) continue;
        const double d = theta[Eigen::Index(a)] - theta[Eigen::Index(b)];
        f -= r.wins(a, b) * d - r.games(a, b) * softplus(d);
      }
    return f / total + 0.5 * ridge * theta.squaredNorm();
  }

  void derivatives(const Eigen::VectorXd& theta, Eigen::VectorXd& g, Eigen::MatrixXd& h) const {
    const auto m = Eigen::Index(r.competitors());
    g = ridge * theta;
    h = ridge * Eigen::MatrixXd::Identity(m, m);
    for (Eigen::Index a = 0; a < m; ++a)
      for (Eigen::Index b = a + 1; b < m; ++b) {
        const double n = r.games(std::size_t(a), std::size_t(b));
        if (n == 0.0) continue;
        const double p = sigmoid(theta[a] - theta[b]);
        const double ga = -(r.wins(std::size_t(a), std::size_t(b)) - n * p) / total;
        const double w = n * p * (1.0 - p) / total;
        g[a] += ga;
        g[b] -= ga;
        h(a, a) += w;
        h(b, b) += w;
        h(a, b) -= w;
        h(b, a) -= w;
      }
  }
};

}  // namespace

PairwiseResults::PairwiseResults(std::size_t competitors)
    : m_(competitors),
      wins_(competitors * competitors, 0.0),
      games_(competitors * competitors, 0.0) {}

void PairwiseResults::add(std::size_t a, std::size_t b, double outcome, double weight) {
  if (a >= m_ || b >= m_ || a == b) throw DomainError("pairwise results: bad pair of competitors");
  wins_[a * m_ + b] += weight * outcome;
  wins_[b * m_ + a] += weight * (1.0 - outcome);
  games_[a * m_ + b] += weight;
  games_[b * m_ + a] += weight;
}

void PairwiseResults::add(const PairwiseResults& other, double weight) {
  if (other.m_ != m_) throw DomainError("pairwise results: different numbers of competitors");
  for (std::size_t i = 0; i < wins_.size(); ++i) {
    wins_[i] += weight * other.wins_[i];
    games_[i] += weight * other.games_[i];
  }
}

double elo_of(double theta) {
  return 1000.0 + 400.0 / std::numbers::ln10 * theta;
}

BradleyTerryFit fit_bradley_terry(const PairwiseResults& results, double ridge) {
  const std::size_t m = results.competitors();
  double total = 0.0;
  for (std::size_t a = 0; a < m; ++a)
    for (std::size_t b = a + 1; b < m; ++b) total += results.games(a, b);
  if (total <= 0.0) throw DomainError("Bradley-Terry: no games");
  if (!(ridge > 0.0)) throw DomainError("Bradley-Terry: the ridge must be > 0");
  const Objective objective{results, ridge, total};
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(Eigen::Index(m)), g, step;
  Eigen::MatrixXd h;
  BradleyTerryFit fit;
  // Newton with a backtracking line search: the objective is strictly convex (the ridge), so
  // every Newton step is a descent direction and the iteration converges quadratically once
  // near the minimum.
  for (; fit.iterations < 200; ++fit.iterations) {
    objective.derivatives(theta, g, h);
    if (g.lpNorm<Eigen::Infinity>() < 1e-13) break;
    step = h.ldlt().solve(-g);
    const double f0 = objective.value(theta), slope = g.dot(step);
    double t = 1.0;
    while (t > 1e-12 && objective.value(theta + t * step) > f0 + 1e-4 * t * slope) t *= 0.5;
    theta += t * step;
    if (t * step.lpNorm<Eigen::Infinity>() < 1e-14) break;
  }
  // Every gradient of the likelihood part sums to zero and the ridge's minimum has sum zero,
  // so theta sums to zero up to rounding; centring removes the rounding.
  theta.array() -= theta.mean();
  fit.theta.assign(theta.data(), theta.data() + theta.size());
  for (double t : fit.theta) fit.elo.push_back(elo_of(t));
  return fit;
}

}  // namespace calbench
