#pragma once
// Exact truth at K = 3 for the `dirichlet` maps top_label and the log-affine ones with finite
// fibres (temperature, power, affine_logit injective or with two preimages; identity has closed
// forms), by two-dimensional quadrature over the simplex of p (docs/truth.md, "K = 3"). A
// two-preimage affine_logit has a fold (fold_curve.hpp), along which Phi has an inverse
// square-root singularity: its crossings of each segment are computed from the fold's
// parametrisation (then moved to where the posterior's structure changes) and the inner pieces
// that end there are integrated in s = sqrt(u - u_fold); the t where a segment is tangent to
// the fold or where the fold crosses a tie are outer breaks with the same substitution.
// top_label's candidate preimages start and stop where closed-form or one-variable conditions
// change sign (top_label_breaks in the .cpp), not only where a grid sees its structure change.
//
// Coordinates. Every point of the open simplex lies on the segment {p_k = sigmoid(t)} of any
// class k, where the other two classes j < l share the rest as p_j = sigmoid(-t) sigmoid(u),
// p_l = sigmoid(-t) sigmoid(-u): every component and its logarithm is exact however small, and
// dp_k dp_j = p_k p_j p_l dt du, so the integrand of a density is Phi(p) = q(p) prod p, the
// density of alr(p) (map_preimage.hpp), with r(p) = E[c | p] from the same posterior. Each
// quantity is an integral over t of an inner integral over u:
//   - top label: on the segment of class k with p_k = Z = z the largest, u ranges over
//     |u| <= U(t) = t - log(1 - e^t) for z < 1/2 and over the line for z >= 1/2. Summed over k,
//     M(t) = int Phi du is the density of logit Z, N(t) = int Phi (r_k - z) du; then
//     ece_top_l1 = int |N| dt, ece_top_l2^2 = int N^2/M dt, overconfidence = -int N dt,
//     accuracy = int int Phi r_k, brier = int int Phi (|p - r|^2 + sum r_j (1 - r_j)),
//     nll = -int int Phi sum r_j log p_j, canonical_l1 = int int Phi |r - p|_1 and
//     canonical_l2^2 = int int Phi |r - p|_2^2 (every point of the simplex lies on exactly one
//     top segment, so one pass gives all).
//   - classwise: for each class k, C_k(t) = int Phi (r_k - p_k) du on its segment with
//     p_k = sigmoid(t), and classwise_ece_l1 = (1/3) sum_k int |C_k| dt.
// Kinks and jumps are split out so that each piece is smooth: the outer integrals at t = 0
// (z = 1/2, where the top segment's range becomes the whole line) and at the sign changes of
// N and C_k (the |.| of the top-label and classwise errors); the inner integrals where the
// posterior's preimage structure changes (the image boundary of a two-preimage affine_logit,
// where Phi has an inverse square-root singularity; the candidates of top_label) and where
// r_j - p_j changes sign (canonical_l1's |.|). Breaks are located on sinh-spaced grids that
// span the Dirichlet's 1e-16 tails in log-ratio coordinates, then refined (TOMS 748 for sign
// changes, bisection for structure); the outer sign changes are looked for again among every
// point the integrator evaluated, and a piece where the sign changes is split and redone (with a
// 48-point grid alone, a pair of crossings of a top_label classwise C_k fell in one cell and
// moved the value by 1.2e-4 while the error estimate said 2e-9). top_label's classwise outer
// integral is also split at p_k = 1/3 (candidate k appears, 1/g' singular) and p_k = g(1/2).
//
// Each integral is a vector of integrands sharing one adaptive 21-point Gauss-Kronrod
// subdivision (Boost.Math's nodes and weights) with a global absolute tolerance (1e-11 inner,
// 1e-9 outer); infinite ends are mapped by u = a + x/(1 - x). The reported error is the sum of
// the outer |Kronrod - Gauss| estimates and the integral of the inner ones; it does not cover a
// break that neither the grid nor the integrator's points saw.
#include <cstddef>

#include "generators/dirichlet.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

struct TernaryQuadratureOptions {
  // Points of the grids on which breaks are looked for (the fold curve's: 8 times as many);
  // tests compare 48 with 96.
  int grid_points = 48;
  // If set, receives the number of evaluations of Phi (the posterior), a measure of cost.
  std::size_t* evaluations = nullptr;
  // If set, receives the work spent in them (MapPreimages::posterior's `work`: steps of F).
  std::size_t* work = nullptr;
  // Once this much work is spent (or 30 M evaluations), Phi is taken as 0, the mass check
  // fails and the function returns false (the truth engine then uses Monte Carlo). A count,
  // never a time, so the outcome is the same on every machine. Measured for all nine
  // quantities at 48 points: 23-88 M steps on generic two-preimage maps (0.8-2.3 M evaluations
  // of about 31 steps each), 283 M for the map whose fold is asymptotic to segments at alpha = 1
  // (777 M at 96 points, 867 M at alpha = 0.5: these now fall back to Monte Carlo).
  std::size_t work_budget = 400'000'000;
  // Without it the per-class passes are skipped and classwise_ece_l1 is left unknown (NaN,
  // infinite error): for callers that keep only the quantities of the top-label pass. (With a
  // fold, the per-class passes' second mass check is skipped with them.)
  bool classwise = true;
};

// All nine quantities, method `quadrature`. Returns false (out untouched) unless K = 3 and the
// map is top_label or log-affine with finite fibres (injective or two-preimage; not identity),
// when the integrated density's mass is not 1 (quadrature_check.hpp), or when it runs out of
// its budget (options.work_budget, or 30 M evaluations of Phi: a fold's maps at small alpha,
// any map at alpha ~ 0.02).
bool ternary_quadrature_truth(const DirichletGenerator& generator, GroundTruth& out,
                              const TernaryQuadratureOptions& options = {});

// int Phi over the simplex, which must be 1 (a check of the coordinates and the posterior's
// Jacobians, for tests).
double ternary_quadrature_mass(const DirichletGenerator& generator,
                               const TernaryQuadratureOptions& options = {});

}  // namespace calbench
