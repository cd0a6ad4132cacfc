#pragma once
// The fold of a two-preimage log-affine map at K = 3 (an affine_logit whose fibre direction v
// has mixed signs, map_preimage.hpp), seen from the segment coordinates of the ternary
// quadrature (ternary_quadrature.hpp: on the segment of class k, t = logit p_k and
// u = log(p_j/p_l), j < l the other two classes).
//
// The Jacobian determinant of alr(c) -> alr(p) is affine in c (matrix determinant lemma), so
// the fold, where the two preimages of p merge, is the line det(c) = 0 in the simplex of c:
// with c_3 = 1 - c_1 - c_2 written homogeneously, gamma . c = 0, gamma = (b0 + b1, b0 + b2, b0)
// for det = b0 + b1 c_1 + b2 c_2. It meets the simplex's edges in two points E0, E1 and is
// parametrised as c(theta) = sigmoid(-theta) E0 + sigmoid(theta) E1, so that log c is linear
// in theta in both tails (the component that vanishes at an end goes as e^(-|theta|)). Its
// image h(c(theta)) is the boundary of the image of h, along which the density of p has an
// inverse square-root singularity (one side has two preimages, the other none).
//
// For each class k, t_k(theta) is the segment coordinate of the fold's image: the segment of
// class k at t crosses the fold where t_k(theta) = t, once per monotone piece of t_k whose range
// contains t; where t_k has an extremum the segment is tangent to the fold and the number of
// crossings changes (the inner integral over u jumps by a finite amount there, plus a
// square-root term: the chord through the two-preimage side has width ~ sqrt(t - t*) and
// int du / sqrt((u - u1)(u2 - u)) = pi whatever its width). The top-label range |u| <= U(t)
// ends where p_k = p_j, so a crossing meets that end where the fold crosses a tie p_k = p_j.
// Both kinds of t are breaks of the outer integrals, with a square-root substitution there.
#include <cstddef>
#include <span>
#include <vector>

#include "generators/dirichlet.hpp"

namespace calbench {

class FoldCurve {
 public:
  // `det` is det's coefficients (MapPreimages::fold_coefficients); the fold is followed over
  // |theta| <= span (clamped to 700, where e^(-theta) still has a logarithm) on a grid of
  // `grid_points` sinh-spaced points, on which extrema and ties are found and then refined.
  FoldCurve(const DirichletSpec& spec, std::span<const double> det, double span, int grid_points);

  // False when det = 0 does not cross the open simplex in two points (then there is no fold:
  // not expected for a two-preimage map, whose preimages lie on either side of it).
  bool valid() const { return valid_; }

  // The u of the points where the fold crosses the segment of class k at t, within (lo, hi),
  // sorted.
  std::vector<double> crossings(std::size_t k, double t, double lo, double hi) const;

  // The t of class k's segments tangent to the fold (extrema of t_k(theta)), and t_k at the
  // ends of the grid (limits where the fold runs out to the boundary, possibly an asymptote).
  const std::vector<double>& tangencies(std::size_t k) const { return tangencies_[k]; }

  // The t = logit p_k = logit p_j where the fold crosses a tie p_k = p_j (any pair).
  const std::vector<double>& ties() const { return ties_; }

 private:
  // The fold's point at theta: log p (exact in the tails).
  void log_p_at(double theta, std::span<double> log_p) const;
  // t and u of the segment of class k through the point log_p.
  static void segment_coordinates(std::span<const double> log_p, std::size_t k, double& t,
                                  double& u);
  double t_at(std::size_t k, double theta) const;

  // A monotone piece of t_k(theta): theta in [a, b], t from t_a to t_b.
  struct Piece {
    double a, b, t_a, t_b;
  };

  MiscalibrationMap map_;
  std::vector<double> log_e0_, log_e1_;
  bool valid_ = false;
  std::vector<Piece> pieces_[3];
  std::vector<double> tangencies_[3];
  std::vector<double> ties_;
};

}  // namespace calbench
