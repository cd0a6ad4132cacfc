#pragma once
// The non-finite guard (docs/config.md, "Non-finite values"): a NaN or infinite truth, estimate,
// utility or fitted value would be written as `null`; instead the computation stops with a
// NumericalError (exit status 2) naming where the value arose.
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

// `value`, or a NumericalError "WHERE gave VALUE, not a finite number". `where()` builds the
// name only when it is needed ("cell 3, replicate 7: estimator ece_ew15").
template <typename Where>
double require_finite(double value, Where&& where) {
  if (!std::isfinite(value))
    throw NumericalError(std::string(where()) + " gave " + format_double(value) +
                         ", not a finite number");
  return value;
}

}  // namespace calbench
