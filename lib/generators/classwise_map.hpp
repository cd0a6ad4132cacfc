#pragma once
// The classwise part of the `empirical` family's calibration map (docs/generators.md, docs/fit.md,
// issue #35), for K >= 3. Today's top-label curve s(t) (generators/logit_spline.hpp) says how
// often the top label is right; this map says, class by class, how right the top label is when
// it is class k, and where the label goes when the top label is wrong:
//
//   top class k = argmax p, t = its top-label logit:
//       c_k = sigmoid(s(t) + d_k(t)),
//   every other class j:
//       c_j = (1 - c_k) softmax_{j != k}(log p_j + a(u_j) + e_j(u_j)),  u_j = logit p_j,
//
// with d_k a cubic B-spline on `top_knots` (one per class: class k's deviation from the shared
// top-label curve), a a cubic B-spline on `other_knots` shared by every class and e_j one per
// class on the same knots. Each spline is held at its boundary value beyond its knots (u or t
// clamped), as the top-label curve is. With every spline absent the map is kyle's top-label
// construction, c_j = p_j (1 - c_k)/(1 - z): softmax_{j != k}(log p_j) = p_j / (1 - z).
// The multiplicative form exp(a + e) leaves the ratios of classes the splines hold constant
// (probabilities far below the knots) as the model gave them.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace calbench {

struct ClasswiseMap {
  std::size_t classes = 0;           // K (0: the map is absent)
  std::vector<double> top_knots;     // strictly increasing, >= 2; empty: no top deviations
  std::vector<double> top;           // K x (top_knots + 2), row-major: d_k's coefficients
  std::vector<double> other_knots;   // strictly increasing, >= 2; empty: no non-top splines
  std::vector<double> other_shared;  // other_knots + 2: a's coefficients, or empty
  std::vector<double> other;         // K x (other_knots + 2): e_j's coefficients, or empty
};

inline bool has_top_deviations(const ClasswiseMap& m) {
  return !m.top.empty();
}
inline bool has_other_splines(const ClasswiseMap& m) {
  return !m.other_shared.empty() || !m.other.empty();
}
// Absent: today's top-label construction exactly.
inline bool is_identity(const ClasswiseMap& m) {
  return !has_top_deviations(m) && !has_other_splines(m);
}

// Throws DomainError naming the part unless the sizes fit `classes` and the knots, the knots
// increase strictly and every coefficient is finite.
void validate(const ClasswiseMap& map, std::size_t classes);

// d_k(t) (0 without top deviations).
double top_deviation(const ClasswiseMap& map, std::size_t k, double t);
// a(u) + e_j(u) at u = logit p_j (0 without non-top splines).
double other_offset(const ClasswiseMap& map, std::size_t j, double u);

// c for K >= 3 from log p, the top class, c_top (already including d_top) and
// log_rest = log(1 - c_top) (exact where c_top is near 1): sets c_top and every other class as
// the module comment says.
void fill_other_classes(const ClasswiseMap& map, std::span<const double> log_p, std::size_t top,
                        double c_top, double log_rest, std::span<double> c);

std::string canonical_text(const ClasswiseMap& map);

}  // namespace calbench
