#pragma once
// Ground-truth values of the nine design quantities for one generator.
#include <algorithm>
#include <array>
#include <span>
#include <string_view>

#include "core/quantity.hpp"

namespace calbench {

enum class TruthMethod { closed_form, quadrature, monte_carlo };
std::string_view to_string(TruthMethod method);

struct TruthValue {
  double value = 0.0;
  TruthMethod method = TruthMethod::monte_carlo;
  // closed_form: 0 (exact up to rounding); quadrature: the integrator's error estimate;
  // monte_carlo: standard error, plus the bracket half-width where a conditional |.| is
  // estimated on bins (docs/truth.md).
  double error = 0.0;
};

// sqrt of a value that estimates a square (the L2 quantities), with its error carried by the
// delta method, |d sqrt(x)/dx| = 1/(2 sqrt x), capped by the root of the error, which bounds
// the root's error wherever x is (near 0 the slope is infinite).
TruthValue root_of(TruthValue v);

struct GroundTruth {
  std::array<TruthValue, all_quantities.size()> values{};
  TruthValue& operator[](Quantity q) { return values[static_cast<std::size_t>(q)]; }
  const TruthValue& operator[](Quantity q) const { return values[static_cast<std::size_t>(q)]; }
};

// K = 2, by quadrature: r(p) - p = (d, -d) with d = r_1(p) - p_1, so classwise_ece_l1 = E|d|,
// canonical_l1 = 2 E|d| and canonical_l2 = sqrt(2 E d^2). Sets those three from E|d|
// (`classwise`) and E d^2 (`mean_square_gap`).
void set_binary_canonical(GroundTruth& out, const TruthValue& classwise,
                          const TruthValue& mean_square_gap);

// Whether q is in `needed`, the list of quantities a caller keeps.
inline bool is_needed(std::span<const Quantity> needed, Quantity q) {
  return std::find(needed.begin(), needed.end(), q) != needed.end();
}

}  // namespace calbench
