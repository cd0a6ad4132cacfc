#include "generators/gamma_sampler.hpp"

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

GammaSampler::GammaSampler(double alpha) : alpha_(alpha) {
  if (!(std::isfinite(alpha) && alpha > 0.0))
    throw DomainError("alpha = " + format_double(alpha) + ": must be a finite number > 0");
  half_ = alpha == 0.5;
  exponential_ = alpha == 1.0;
  boosted_ = alpha < 1.0;
  shape_ = boosted_ ? alpha + 1.0 : alpha;
  d_ = shape_ - 1.0 / 3.0;
  c_ = 1.0 / std::sqrt(9.0 * d_);
  inv_alpha_ = 1.0 / alpha;
  const double r = std::round(inv_alpha_);
  if (boosted_ && r <= 64.0 && r * alpha == 1.0) integer_power_ = static_cast<unsigned>(r);
}

}  // namespace calbench
