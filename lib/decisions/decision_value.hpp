#pragma once
// Exact expected utility of a decision task on a generator (docs/decisions.md).
//
// For c ~ Dirichlet(alpha), p = h(c) and r(p) = E[c | p]:
//   policy  = E[sum_k c_k U(d(p), k)]     the deployed policy, acting on the reported p
//   oracle  = E[sum_k c_k U(d(r(p)), k)]  the same policy acting on the true r(p)
//   cost    = oracle - policy             the cost of miscalibration (what acting on the
//                                         true probabilities would gain; >= 0 whenever the
//                                         policy is Bayes-optimal for its belief)
// Rao-Blackwellised (c in place of the label) and computed with common random numbers: the
// two policies are evaluated on the same c, and the cost is the expectation of the per-case
// difference, which is exactly 0 wherever both take the same decision. For `identity` (p = c
// bit for bit, and r = c) the cost is therefore exactly 0.
// r(p) = c for injective maps; for top_label with gamma > 1 and K >= 3 it is the posterior
// mean over the preimages (truth/truth_engine.hpp).
//
// Methods:
// - K = 2 and an injective map: one-dimensional quadrature over t = log(c_1/c_0), whose density
//   is sigma(t)^a1 sigma(-t)^a0 / B(a1, a0) (c_1 ~ Beta(a1, a0)). The decisions are piecewise
//   constant in t; their change points are located on a fine grid (t = sinh(u), 40001 points
//   over |t| <= 5000) and refined by bisection to a few ulps, and the integral is split there:
//   Gauss-Kronrod (61 points, adaptive, depth <= 10) between change points, exp-sinh on the
//   two tails.
//   A decision region narrower than the grid spacing (5e-4 near t = 0, 5e-3 |t| far out) would
//   be missed; the tasks here have at most K + 1 regions and none that narrow in practice.
// - otherwise, and for the other families: Monte Carlo over c in 64 batches, streams keyed by
//   the generator's canonical text (purpose `decision`), so the value is the same in every run;
//   error = standard error.
#include <cstdint>
#include <span>
#include <vector>

#include "core/sample.hpp"
#include "decisions/decision_task.hpp"
#include "generators/dirichlet.hpp"
#include "generators/generator.hpp"
#include "recalibrators/recalibrator.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

struct DecisionValue {
  TruthValue policy, oracle, cost;     // method and error (integrator estimate or SE)
  std::vector<double> figures;         // the policy's figures (task.figure_names())
  std::vector<double> oracle_figures;  // the oracle's
  std::uint64_t samples = 0;           // Monte Carlo draws; 0 for quadrature
};

// Quadrature where it applies (K = 2, injective map), Monte Carlo otherwise with `samples`
// draws. Deterministic for any thread count (parallel over fixed batches, merged in order).
DecisionValue exact_decision_value(const DirichletGenerator& generator, const DecisionTask& task,
                                   std::uint64_t samples);
// Any family: `dirichlet` as above; the others (class_conditional, label_noise, beta_binary)
// by Monte Carlo over their draws (c, p), where c is a function of p, so r(p) = c.
DecisionValue exact_decision_value(const Generator& generator, const DecisionTask& task,
                                   std::uint64_t samples);

// The two methods on their own, for tests. quadrature_decision_value throws DomainError when it
// does not apply.
DecisionValue quadrature_decision_value(const DirichletGenerator& generator,
                                        const DecisionTask& task);
DecisionValue monte_carlo_decision_value(const DirichletGenerator& generator,
                                         const DecisionTask& task, std::uint64_t samples);

// True when quadrature_decision_value applies.
bool decision_quadrature_applies(const DirichletGenerator& generator);

// The policy acting on q = g(p) for a fitted calibration map g, against the oracle, by Monte
// Carlo over the same draws (c, p, r(p)) as monte_carlo_decision_value / exact_decision_value's
// Monte Carlo with `samples` draws (the first samples/64 of each of its 64 keyed batch streams):
//   policy = E[sum_k r_k U(d(g(p)), k)]
//   cost   = E[sum_k r_k (U(d(r(p)), k) - U(d(g(p)), k))]  (oracle - recalibrated)
// The cost is the mean of the per-draw difference (common random numbers), exactly 0 on every
// draw where the two decide alike; errors are standard errors. Every model is evaluated on the
// same draws, in one pass (g applied in batches). A nullptr model is the uncalibrated one
// (q = p, decided on p and log p as the policy of monte_carlo_decision_value, so its cost is that
// Monte Carlo cost on the same draws). Deterministic for any thread count.
struct RecalibratedValue {
  TruthValue policy, cost;
};
std::vector<RecalibratedValue> recalibrated_decision_values(
    const Generator& generator, const DecisionTask& task,
    std::span<const CalibrationModel* const> models, std::uint64_t samples);

// The realised mean utility (1/n) sum_i U(d(p_i), y_i) of one test set of n cases drawn from
// `engine`: what an evaluation on real data of that size would measure.
double realised_utility(const DirichletGenerator& generator, const DecisionTask& task,
                        std::size_t n, Engine& engine);
// The mean realised utility (1/n) sum_i U(d(q_i), y_i) of the rows q_i and labels y_i of a
// sample (a test set, possibly recalibrated). Throws DomainError on an empty sample.
double realised_utility(const DecisionTask& task, const Sample& sample);
// Any family (for `dirichlet` the same draws as above).
double realised_utility(const Generator& generator, const DecisionTask& task, std::size_t n,
                        Engine& engine);

}  // namespace calbench
