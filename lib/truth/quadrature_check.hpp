#pragma once
// The self-check every quadrature truth makes before its values are used: the density it
// integrated must integrate to 1. Where the density's mass sits closer to an edge than double
// precision's quadrature nodes reach (a Dirichlet with alpha_k near 0.03 puts a mass of order
// alpha_k within e^(-1/alpha_k) of a face; a temperature near 1e17 collapses every p onto 1/K)
// the integrators return a confident but wrong value (K = 3, alpha 0.03, temperature 0.5:
// accuracy 0.86 against a sampled 0.98, z = 52). A failed check makes the truth engine fall
// back to Monte Carlo, which draws from the sampler itself.
#include <cmath>

namespace calbench {

// The integrators are asked for 1e-11; 1e-6 leaves room for their stated error and still
// rejects every failure seen (the mass was off by 1e-2 or more).
inline constexpr double quadrature_mass_tolerance = 1e-6;

// True when `mass`, the integral of the density, is 1 within quadrature_mass_tolerance (NaN
// fails).
inline bool quadrature_mass_ok(double mass) {
  return std::abs(mass - 1.0) <= quadrature_mass_tolerance;
}

}  // namespace calbench
