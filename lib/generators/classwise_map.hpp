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
// the module comment says. The reference definition (Cox-de Boor at every class); the generator
// evaluates the same map by ClasswisePieces below.
void fill_other_classes(const ClasswiseMap& map, std::span<const double> log_p, std::size_t top,
                        double c_top, double log_rest, std::span<double> c);

// The map's splines as piecewise cubic polynomials, for the generator's per-draw work (issue
// #35: at K = 100 the Cox-de Boor recursion of every class of every draw was a third of `fit`'s
// time). On knot interval s each spline is a cubic in y = 3 (x - knots[s]) / (knots[s + 1] -
// knots[s]), its coefficients by Newton's forward differences of the spline's values at y = 0,
// 1, 2, 3 (the recursion's own values; the cubic through them is the spline on that interval,
// within rounding, ~1e-15 of the coefficients' size). Beyond the boundary knots the value is
// the boundary coefficient, exactly as other_offset and top_deviation give it.
class ClasswisePieces {
 public:
  ClasswisePieces() = default;
  explicit ClasswisePieces(const ClasswiseMap& map);

  bool identity() const { return identity_; }
  // d_k(t) and a(u) + e_j(u), as top_deviation and other_offset.
  double top_deviation(std::size_t k, double t) const { return top_.value(k, t); }
  double other_offset(std::size_t j, double u) const { return other_.value(j, u); }
  // fill_other_classes with p = exp(log p) given too (the draw has it): one exponential per
  // class, and logit p_j = log p_j - log1p(-p_j) only for classes whose log p_j reaches within
  // log 2 of the lowest knot (a non-top p_j <= 1/2, so log1p(-p_j) >= -log 2: below that the
  // offset is the boundary coefficient whatever u is).
  void fill_other_classes(std::span<const double> p, std::span<const double> log_p, std::size_t top,
                          double c_top, double log_rest, std::span<double> c) const;

 private:
  struct Splines {
    std::vector<double> knots, scale;  // scale[s] = 3 / (knots[s + 1] - knots[s])
    std::vector<double> low, high;     // per curve: the value below / above the knots
    std::vector<double> cubic;         // per curve, per interval: 4 coefficients in y
    std::size_t intervals = 0;
    double value(std::size_t curve, double x) const;
  };
  static Splines pieces(const std::vector<double>& knots, std::size_t curves,
                        const std::vector<double>& coefficients);
  bool identity_ = true;
  Splines top_, other_;
};

std::string canonical_text(const ClasswiseMap& map);

}  // namespace calbench
