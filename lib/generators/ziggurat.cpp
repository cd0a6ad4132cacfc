#include "generators/ziggurat.hpp"

namespace calbench::ziggurat_detail {

// Both slow paths restart from the draw that failed the fast test and follow Boost.Random's
// unit_exponential_distribution / unit_normal_distribution (Boost 1.74) step for step, with
// the split of core/rng.hpp's engine outputs described in the header.

double exponential_slow(Engine& engine, std::uint64_t bits) {
  const double* tx = boost::random::detail::exponential_table<double>::table_x;
  const double* ty = boost::random::detail::exponential_table<double>::table_y;
  double shift = 0.0;
  for (;;) {
    const std::uint64_t i = bits & 0xff;
    const double x = top53(bits) * tx[i];
    if (x < tx[i + 1]) return shift + x;
    if (i == 0) {
      // The tail beyond tx[1] is again an exponential, shifted: repeat with a shift.
      shift += tx[1];
    } else {
      const double y01 = top53(engine());
      const double y = ty[i] + y01 * (ty[i + 1] - ty[i]);
      // Above the chord: reject; below the tangent: accept; in between: the density decides.
      const double above_upper = (tx[i] - tx[i + 1]) * y01 - (tx[i] - x);
      const double above_lower = y - (ty[i + 1] + (tx[i + 1] - x) * ty[i + 1]);
      if (above_upper < 0.0 && (above_lower < 0.0 || y < std::exp(-x))) return shift + x;
    }
    bits = engine();
  }
}

namespace {

// Beyond r = tx[1]: Marsaglia's tail method, x = r + E1 / r accepted when 2 E2 > (E1 / r)^2.
double normal_tail(Engine& engine) {
  const double r = boost::random::detail::normal_table<double>::table_x[1];
  for (;;) {
    const double x = standard_exponential(engine) / r;
    const double y = standard_exponential(engine);
    if (2.0 * y > x * x) return x + r;
  }
}

}  // namespace

double normal_slow(Engine& engine, std::uint64_t bits) {
  const double* tx = boost::random::detail::normal_table<double>::table_x;
  const double* ty = boost::random::detail::normal_table<double>::table_y;
  for (;;) {
    const std::uint64_t i = (bits >> 1) & 0x7f;
    const double sign = (bits & 1) != 0 ? 1.0 : -1.0;
    const double x = top53(bits) * tx[i];
    if (x < tx[i + 1]) return sign * x;
    if (i == 0) return sign * normal_tail(engine);
    const double y01 = top53(engine());
    const double y = ty[i] + y01 * (ty[i + 1] - ty[i]);
    // Convex layers (x >= 1, the inflection layer included, as Boost explains) have the
    // tangent below the density and the chord above; concave layers the other way round.
    const double chord = (tx[i] - tx[i + 1]) * y01 - (tx[i] - x);
    const double tangent = y - (ty[i] + (tx[i] - x) * ty[i] * tx[i]);
    const bool convex = tx[i] >= 1.0;
    const double above_upper = convex ? chord : tangent;
    const double above_lower = convex ? tangent : chord;
    if (above_upper < 0.0 && (above_lower < 0.0 || y < std::exp(-(x * x / 2.0)))) return sign * x;
    bits = engine();
  }
}

}  // namespace calbench::ziggurat_detail
