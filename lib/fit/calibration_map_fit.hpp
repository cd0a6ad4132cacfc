#pragma once
// The calibration function of a real model, fitted as the inverse of a dirichlet-family
// miscalibration map (docs/fit.md). If the model's outputs were p = h(c) with c the true class
// distribution and h injective, then r(p) = P(Y | p) = h^-1(p) = c. So fitting h by the
// likelihood of the labels under r(p) = h^-1(p) gives both the generator's map (h) and its true
// distributions (c_i = h^-1(p_i)), to which the Dirichlet is then fitted.
//
// The maps fitted (DESIGN.md §1 names):
// - identity: r(p) = p.
// - temperature T: p ∝ c^(1/T), so r(p) ∝ p^T (temperature scaling with factor T).
// - power t_1..t_K: p_k ∝ c_k^(t_k), so r_k(p) = (lambda p_k)^(1/t_k) with lambda > 0 the one
//   value making the row sum to 1. (Not q ∝ p^(1/t): the per-class exponents make the
//   normaliser row-dependent.) Temperature is the tied special case.
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "core/sample.hpp"

namespace calbench {

enum class FittedMap { identity, temperature, power };

std::string_view to_string(FittedMap map);

struct MapFit {
  FittedMap map = FittedMap::identity;
  // The generator's parameters: {T} for temperature, t_1..t_K for power, empty for identity.
  std::vector<double> parameters;
  double negative_log_likelihood = 0.0;  // -sum_i log r_{y_i}(p_i)
  std::size_t free_parameters = 0;
  double aic = 0.0;  // 2 free_parameters + 2 negative_log_likelihood
  bool converged = true;
};

// r(p) for the power map with exponents t (one per class; a single value t = 1/T is a
// temperature T),
// from log p (floored, see map_log). Solves sum_k exp(a_k (mu + log p_k)) = 1 for mu =
// log lambda, a_k = 1/t_k, by Newton's method on the convex, increasing log-sum-exp, started
// where it is >= 0 so that the iterates decrease monotonically to the root. Returns mu.
double power_inverse(std::span<const double> log_p, std::span<const double> exponents,
                     std::span<double> c);

// log max(p, smallest normal double): the recalibrators' logit convention, so an exact 0 gives
// a finite log (-708.4).
double map_log(double p);

// Fits one map by maximum likelihood of the labels (L-BFGS over log(1/t_k), analytic
// gradient by implicit differentiation of the normaliser). Throws DomainError when the fit
// runs away (an exponent outside [1e-3, 1e3]: the labels are nearly separable by p).
MapFit fit_map(const Sample& data, FittedMap map);

// -sum_i log r_{y_i}(p_i) for the given generator parameters ({T}, t_1..t_K, or empty for
// identity): the objective fit_map minimises, for standard errors by its curvature.
double map_negative_log_likelihood(const Sample& data, FittedMap map,
                                   std::span<const double> parameters);

// r(p_i) of every row under a fitted map, row-major like data.p.
std::vector<double> calibrated_rows(const Sample& data, const MapFit& fit);

}  // namespace calbench
