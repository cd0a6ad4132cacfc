#include "generators/logit_spline.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {
namespace {

constexpr std::size_t degree = 3;

// The clamped knot vector's j-th knot: the first and last distinct knots repeated degree + 1
// times, the interior ones once.
double knot_at(std::span<const double> knots, std::ptrdiff_t j) {
  const auto last = static_cast<std::ptrdiff_t>(knots.size()) - 1;
  const std::ptrdiff_t i =
      std::clamp<std::ptrdiff_t>(j - static_cast<std::ptrdiff_t>(degree), 0, last);
  return knots[static_cast<std::size_t>(i)];
}

}  // namespace

void validate(const LogitSpline& spline) {
  if (spline.knots.empty() && spline.coefficients.empty()) return;
  if (spline.knots.size() < 2)
    throw DomainError("calibration knots: expected at least 2, found " +
                      std::to_string(spline.knots.size()));
  for (std::size_t i = 0; i < spline.knots.size(); ++i) {
    if (!std::isfinite(spline.knots[i]))
      throw DomainError("calibration knots[" + std::to_string(i) + "] is not finite");
    if (i > 0 && !(spline.knots[i] > spline.knots[i - 1]))
      throw DomainError("calibration knots[" + std::to_string(i) +
                        "] = " + format_double(spline.knots[i]) + ": must exceed knots[" +
                        std::to_string(i - 1) + "] (strictly increasing)");
  }
  const std::size_t want = spline_basis_size(spline.knots.size());
  if (spline.coefficients.size() != want)
    throw DomainError("calibration coefficients: expected " + std::to_string(want) +
                      " (knots + 2)" + ", found " + std::to_string(spline.coefficients.size()));
  for (std::size_t i = 0; i < want; ++i)
    if (!std::isfinite(spline.coefficients[i]))
      throw DomainError("calibration coefficients[" + std::to_string(i) + "] is not finite");
}

void spline_basis(std::span<const double> knots, double t, std::span<double> out) {
  std::fill(out.begin(), out.end(), 0.0);
  const std::size_t m = knots.size();
  if (m < 2) return;
  t = std::clamp(t, knots.front(), knots.back());
  // The span: the last distinct knot interval [knots[s], knots[s + 1]) holding t, the top one
  // closed on the right.
  std::size_t s =
      static_cast<std::size_t>(std::upper_bound(knots.begin(), knots.end(), t) - knots.begin());
  s = std::min(s == 0 ? 0 : s - 1, m - 2);
  // Cox-de Boor on the clamped vector: the nonzero splines at t are mu - 3 .. mu, mu = s + 3.
  const auto mu = static_cast<std::ptrdiff_t>(s + degree);
  std::array<double, degree + 1> N{1.0, 0.0, 0.0, 0.0};
  for (std::size_t d = 1; d <= degree; ++d) {
    std::array<double, degree + 1> next{};
    for (std::size_t r = 0; r <= d; ++r) {
      // next[r] is B_{mu - d + r, d}(t), from B_{mu - d + r, d - 1} (N[r - 1]) and
      // B_{mu - d + r + 1, d - 1} (N[r]).
      const std::ptrdiff_t i = mu - static_cast<std::ptrdiff_t>(d) + static_cast<std::ptrdiff_t>(r);
      double v = 0.0;
      if (r > 0) {
        const double lo = knot_at(knots, i),
                     hi = knot_at(knots, i + static_cast<std::ptrdiff_t>(d));
        if (hi > lo) v += (t - lo) / (hi - lo) * N[r - 1];
      }
      if (r < d) {
        const double lo = knot_at(knots, i + 1),
                     hi = knot_at(knots, i + static_cast<std::ptrdiff_t>(d) + 1);
        if (hi > lo) v += (hi - t) / (hi - lo) * N[r];
      }
      next[r] = v;
    }
    N = next;
  }
  for (std::size_t r = 0; r <= degree; ++r) out[s + r] = N[r];
}

double spline_offset(const LogitSpline& spline, double t) {
  if (is_identity(spline)) return 0.0;
  std::array<double, 64> small;  // not zeroed here: spline_basis sets every entry it is given
  std::vector<double> large;
  const std::size_t n = spline.coefficients.size();
  std::span<double> basis = n <= small.size() ? std::span<double>(small.data(), n)
                                              : std::span<double>(large = std::vector<double>(n));
  spline_basis(spline.knots, t, basis);
  double f = 0.0;
  for (std::size_t j = 0; j < n; ++j) f += spline.coefficients[j] * basis[j];
  return f;
}

double calibrated_logit(const LogitSpline& spline, double t) {
  if (is_identity(spline)) return t;
  return std::clamp(t, spline.knots.front(), spline.knots.back()) + spline_offset(spline, t);
}

std::string canonical_text(const LogitSpline& spline) {
  if (is_identity(spline)) return "identity";
  std::string out = "spline:knots=";
  for (double k : spline.knots) out += format_double(k) + ",";
  out += ":coefficients=";
  for (double c : spline.coefficients) out += format_double(c) + ",";
  return out;
}

}  // namespace calbench
