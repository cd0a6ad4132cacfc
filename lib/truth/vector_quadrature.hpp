#pragma once
// The one adaptive quadrature of a vector of integrands: the ternary quadrature's nested
// integrals (truth/ternary_quadrature.cpp, 21 points) and the top-label integrals of a Dirichlet
// maximum (truth/dirichlet_max.cpp, 15 points) use it.
//
// Hand-written around Boost.Math's Gauss-Kronrod nodes and weights because Boost's own
// adaptive rule (gauss_kronrod<>::integrate) does not fit either job: it takes one scalar
// integrand, where these evaluate a costly density once per node for all components (a vector),
// and it controls each subinterval relative to its own value, which over-refines the far tails
// (values of 1e-100 that need no digits). Here one global absolute tolerance bounds the sum of
// the pieces' errors: the components are densities of one probability measure times
// quantities of order 1, so one absolute tolerance suits them all.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

namespace calbench {

// A vector of integrands' values (abs is the max norm).
template <std::size_t N>
struct Vec {
  std::array<double, N> v{};
  Vec() = default;
  explicit Vec(double x) { v.fill(x); }
  double& operator[](std::size_t i) { return v[i]; }
  double operator[](std::size_t i) const { return v[i]; }
  Vec& operator+=(const Vec& o) {
    for (std::size_t i = 0; i < N; ++i) v[i] += o.v[i];
    return *this;
  }
  friend Vec operator+(Vec a, const Vec& b) { return a += b; }
  friend Vec operator-(Vec a, const Vec& b) {
    for (std::size_t i = 0; i < N; ++i) a.v[i] -= b.v[i];
    return a;
  }
  friend Vec operator-(Vec a) {
    for (double& x : a.v) x = -x;
    return a;
  }
  friend Vec operator*(Vec a, double s) {
    for (double& x : a.v) x *= s;
    return a;
  }
  friend Vec operator*(double s, Vec a) { return a * s; }
  friend double abs(const Vec& a) {
    double m = 0.0;
    for (double x : a.v) m = std::max(m, std::abs(x));
    return m;
  }
};

// How a rule evaluates its nodes: in order, or all at once on TBB's workers (a node of the
// Dirichlet maximum's density at K = 300 costs about a second).
enum class NodeEvaluation { serial, parallel };

struct VectorQuadratureOptions {
  double tolerance = 1e-11;         // on the sum of the pieces' errors (max norm)
  std::size_t max_intervals = 200;  // the most pieces
  NodeEvaluation nodes = NodeEvaluation::serial;
};

template <std::size_t N>
struct VectorIntegral {
  Vec<N> value{0.0};
  Vec<N> errors{0.0};  // per component: the sum of its |Kronrod - Gauss| over the pieces
  double error = 0.0;  // the sum of the pieces' max-norm errors
};

namespace quadrature_detail {

template <std::size_t N>
struct Piece {
  double lo = 0.0, hi = 0.0;
  Vec<N> value{0.0}, errors{0.0};
  double error = 0.0;  // max norm of `errors`
};

// The Points-point Kronrod rule and its embedded Gauss rule (Boost.Math's nodes and weights) on
// [lo, hi]: the Kronrod value, and |Kronrod - Gauss| as its error. The sums run in a fixed
// order whatever the evaluation: the centre, then the pairs mid -/+ half x_i.
template <std::size_t Points, std::size_t N, class F>
Piece<N> kronrod(const F& f, double lo, double hi, NodeEvaluation evaluation) {
  using Rule = boost::math::quadrature::gauss_kronrod<double, Points>;
  constexpr std::size_t gauss_points = (Points - 1) / 2;
  // The Gauss nodes are the Kronrod nodes of odd index for an even Gauss order, of even index
  // (the centre among them) for an odd one.
  constexpr bool centre_is_gauss = gauss_points % 2 == 1;
  const auto& x = Rule::abscissa();  // x[0] = 0
  const auto& wk = Rule::weights();
  const auto& wg = boost::math::quadrature::gauss<double, gauss_points>::weights();
  const double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo);
  // Node 0 is the centre, node 2i - 1 is mid - half x_i and node 2i is mid + half x_i.
  std::array<Vec<N>, Points> at;
  const auto node = [&](std::size_t j) {
    if (j == 0) return mid;
    const std::size_t i = (j + 1) / 2;
    return j % 2 == 1 ? mid - half * x[i] : mid + half * x[i];
  };
  if (evaluation == NodeEvaluation::parallel)
    tbb::parallel_for(std::size_t{0}, Points, [&](std::size_t j) { at[j] = f(node(j)); });
  else
    for (std::size_t j = 0; j < Points; ++j) at[j] = f(node(j));
  Vec<N> k = at[0] * wk[0], g = centre_is_gauss ? at[0] * wg[0] : Vec<N>(0.0);
  for (std::size_t i = 1; i < x.size(); ++i) {
    const Vec<N> pair = at[2 * i - 1] + at[2 * i];
    k += pair * wk[i];
    if ((i % 2 == 0) == centre_is_gauss) g += pair * wg[i / 2];
  }
  Piece<N> piece{lo, hi, k * half, {}, abs(k - g) * half};
  for (std::size_t c = 0; c < N; ++c) piece.errors[c] = std::abs(k[c] - g[c]) * half;
  return piece;
}

}  // namespace quadrature_detail

// The integral of f (a Vec<N>) over [ends.front(), ends.back()] by adaptive Gauss-Kronrod of
// `Points` points: the pieces between consecutive `ends` are the first ones (so a narrow peak
// the caller knows of cannot fall between nodes), then the piece with the largest error is
// bisected until the errors sum to at most options.tolerance (or options.max_intervals pieces
// are used). The pieces are summed in their order on the line, so the bits do not depend on the
// order of refinement.
template <std::size_t Points, std::size_t N, class F>
VectorIntegral<N> integrate_adaptive(const F& f, std::span<const double> ends,
                                     const VectorQuadratureOptions& options) {
  using quadrature_detail::Piece;
  std::vector<Piece<N>> parts;
  double total_error = 0.0;
  for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
    parts.push_back(quadrature_detail::kronrod<Points, N>(f, ends[i], ends[i + 1], options.nodes));
    total_error += parts.back().error;
  }
  while (total_error > options.tolerance && parts.size() < options.max_intervals) {
    const auto worst =
        std::max_element(parts.begin(), parts.end(),
                         [](const Piece<N>& a, const Piece<N>& b) { return a.error < b.error; });
    const double m = 0.5 * (worst->lo + worst->hi);
    if (!(m > worst->lo && m < worst->hi)) break;  // no room left to bisect
    const Piece<N> left = quadrature_detail::kronrod<Points, N>(f, worst->lo, m, options.nodes);
    const Piece<N> right = quadrature_detail::kronrod<Points, N>(f, m, worst->hi, options.nodes);
    *worst = left;
    parts.push_back(right);
    total_error = 0.0;
    for (const Piece<N>& part : parts) total_error += part.error;
  }
  std::sort(parts.begin(), parts.end(),
            [](const Piece<N>& a, const Piece<N>& b) { return a.lo < b.lo; });
  VectorIntegral<N> out;
  for (const Piece<N>& part : parts) {
    out.value += part.value;
    out.errors += part.errors;
    out.error += part.error;
  }
  return out;
}

}  // namespace calbench
