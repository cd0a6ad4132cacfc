#pragma once
// The calibration curve of the `empirical` family (docs/generators.md): in logit coordinates,
//   s(t) = u + f(u),  u = min(max(t, knots.front()), knots.back()),
// with f a cubic B-spline (de Boor 1978, "A Practical Guide to Splines", ch. IX: the Cox-de Boor
// recursion) on the clamped knot vector whose distinct knots are `knots`, coefficients
// `coefficients` (knots.size() + 2 of them). Beyond the boundary knots the curve is held at its
// boundary value (as histogram binning and isotonic regression hold theirs): a fitted slope
// extrapolated into logits of 30 or 50 (confidences of 1 - 1e-13 and beyond, common for naive
// Bayes and boosting) would decide the calibration of rows the fit has barely seen.
// No coefficients (f absent) is the exact identity, s(t) = t everywhere.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace calbench {

struct LogitSpline {
  std::vector<double> knots;         // strictly increasing, at least 2; empty: f = 0
  std::vector<double> coefficients;  // knots.size() + 2 (cubic B-splines), or empty
};

// The number of cubic B-splines on `knot_count` distinct knots (clamped ends).
inline std::size_t spline_basis_size(std::size_t knot_count) {
  return knot_count < 2 ? 0 : knot_count + 2;
}

// Throws DomainError unless the knots increase strictly and the coefficients fit them (finite).
void validate(const LogitSpline& spline);

// No coefficients: the identity curve.
inline bool is_identity(const LogitSpline& spline) {
  return spline.coefficients.empty();
}

// The values of the cubic B-splines at min(max(t, front), back): out.size() basis functions,
// each in [0, 1], summing to 1 (partition of unity).
void spline_basis(std::span<const double> knots, double t, std::span<double> out);

// f(u) for t (u = t clamped to the knots), and s(t) = u + f(u) (t itself for the identity).
double spline_offset(const LogitSpline& spline, double t);
double calibrated_logit(const LogitSpline& spline, double t);

// Canonical text (knots and coefficients, shortest round-trip decimals).
std::string canonical_text(const LogitSpline& spline);

}  // namespace calbench
