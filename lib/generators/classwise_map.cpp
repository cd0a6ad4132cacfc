#include "generators/classwise_map.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/error.hpp"
#include "core/format.hpp"
#include "generators/logit_spline.hpp"

namespace calbench {
namespace {

void check_knots(const std::vector<double>& knots, const std::string& what) {
  if (knots.size() < 2)
    throw DomainError("classwise " + what + ": expected at least 2 knots, found " +
                      std::to_string(knots.size()));
  for (std::size_t i = 0; i < knots.size(); ++i) {
    if (!std::isfinite(knots[i]))
      throw DomainError("classwise " + what + "[" + std::to_string(i) + "] is not finite");
    if (i > 0 && !(knots[i] > knots[i - 1]))
      throw DomainError("classwise " + what + "[" + std::to_string(i) +
                        "] = " + format_double(knots[i]) + ": must exceed the knot before it");
  }
}

void check_coefficients(const std::vector<double>& values, std::size_t want,
                        const std::string& what) {
  if (values.size() != want)
    throw DomainError("classwise " + what + ": expected " + std::to_string(want) +
                      " coefficients, found " + std::to_string(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw DomainError("classwise " + what + "[" + std::to_string(i) + "] is not finite");
}

// sum_r coefficients[first + r] B_r(x) over the cubic B-splines on `knots` (x clamped).
double spline_at(const std::vector<double>& knots, const double* coefficients, double x) {
  std::array<double, 64> basis{};
  const std::size_t m = spline_basis_size(knots.size());
  spline_basis(knots, x, std::span<double>(basis.data(), m));
  double out = 0.0;
  for (std::size_t r = 0; r < m; ++r) out += coefficients[r] * basis[r];
  return out;
}

}  // namespace

void validate(const ClasswiseMap& map, std::size_t classes) {
  if (is_identity(map) && map.top_knots.empty() && map.other_knots.empty()) return;
  if (map.classes != classes)
    throw DomainError("classwise map for K = " + std::to_string(map.classes) +
                      " on a generator of K = " + std::to_string(classes));
  if (classes < 3)
    throw DomainError("a classwise map needs K >= 3 (K = 2: the curve is classwise)");
  if (!map.top.empty() || !map.top_knots.empty()) {
    check_knots(map.top_knots, "top_knots");
    if (map.top_knots.size() + 2 > 64) throw DomainError("classwise top_knots: at most 62");
    check_coefficients(map.top, classes * spline_basis_size(map.top_knots.size()), "top");
  }
  if (has_other_splines(map) || !map.other_knots.empty()) {
    check_knots(map.other_knots, "other_knots");
    if (map.other_knots.size() + 2 > 64) throw DomainError("classwise other_knots: at most 62");
    const std::size_t m = spline_basis_size(map.other_knots.size());
    if (!map.other_shared.empty()) check_coefficients(map.other_shared, m, "other_shared");
    if (!map.other.empty()) check_coefficients(map.other, classes * m, "other");
  }
}

double top_deviation(const ClasswiseMap& map, std::size_t k, double t) {
  if (map.top.empty()) return 0.0;
  const std::size_t m = spline_basis_size(map.top_knots.size());
  return spline_at(map.top_knots, map.top.data() + k * m, t);
}

double other_offset(const ClasswiseMap& map, std::size_t j, double u) {
  if (!has_other_splines(map)) return 0.0;
  const std::size_t m = spline_basis_size(map.other_knots.size());
  const auto coefficient = [&](std::size_t r) {
    return (map.other_shared.empty() ? 0.0 : map.other_shared[r]) +
           (map.other.empty() ? 0.0 : map.other[j * m + r]);
  };
  // Held constant beyond the boundary knots, where the clamped basis is the first (last)
  // B-spline alone: most of a K = 100 model's classes lie below the lowest knot, and this skips
  // their Cox-de Boor recursion (a third of fit's time at K = 100, docs/performance.md).
  if (u <= map.other_knots.front()) return coefficient(0);
  if (u >= map.other_knots.back()) return coefficient(m - 1);
  std::array<double, 64> basis{};
  spline_basis(map.other_knots, u, std::span<double>(basis.data(), m));
  double out = 0.0;
  for (std::size_t r = 0; r < m; ++r) out += coefficient(r) * basis[r];
  return out;
}

void fill_other_classes(const ClasswiseMap& map, std::span<const double> log_p, std::size_t top,
                        double c_top, double log_rest, std::span<double> c) {
  const std::size_t K = log_p.size();
  double largest = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < K; ++j) {
    if (j == top) continue;
    // logit p_j = log p_j - log(1 - p_j); below e^-40 the correction is under an ulp of u.
    const double u = log_p[j] < -40.0 ? log_p[j] : log_p[j] - std::log1p(-std::exp(log_p[j]));
    c[j] = log_p[j] + other_offset(map, j, u);
    largest = std::max(largest, c[j]);
  }
  double sum = 0.0;
  for (std::size_t j = 0; j < K; ++j)
    if (j != top) sum += std::exp(c[j] - largest);
  const double shift = log_rest - largest - std::log(sum);
  for (std::size_t j = 0; j < K; ++j)
    if (j != top) c[j] = std::exp(c[j] + shift);
  c[top] = c_top;
}

ClasswisePieces::Splines ClasswisePieces::pieces(const std::vector<double>& knots,
                                                 std::size_t curves,
                                                 const std::vector<double>& coefficients) {
  Splines out;
  if (coefficients.empty()) return out;
  const std::size_t m = spline_basis_size(knots.size());
  out.knots = knots;
  out.intervals = knots.size() - 1;
  for (std::size_t s = 0; s < out.intervals; ++s)
    out.scale.push_back(3.0 / (knots[s + 1] - knots[s]));
  out.low.resize(curves);
  out.high.resize(curves);
  out.cubic.resize(curves * out.intervals * 4);
  std::array<double, 64> basis{};
  const std::span<double> b(basis.data(), m);
  for (std::size_t c = 0; c < curves; ++c) {
    const double* beta = coefficients.data() + c * m;
    out.low[c] = beta[0];
    out.high[c] = beta[m - 1];
    for (std::size_t s = 0; s < out.intervals; ++s) {
      std::array<double, 4> f{};
      for (std::size_t y = 0; y < 4; ++y) {
        // The interval's end is its right knot exactly (y = 3), not a rounded sum.
        const double x = y == 3 ? knots[s + 1] : knots[s] + static_cast<double>(y) / out.scale[s];
        spline_basis(knots, x, b);
        for (std::size_t r = 0; r < m; ++r) f[y] += beta[r] * basis[r];
      }
      // Newton's forward differences at y = 0, 1, 2, 3, expanded into powers of y:
      // P(y) = f0 + D1 y + D2 y (y - 1) / 2 + D3 y (y - 1)(y - 2) / 6.
      const double d1 = f[1] - f[0], d2 = f[2] - 2.0 * f[1] + f[0],
                   d3 = f[3] - 3.0 * f[2] + 3.0 * f[1] - f[0];
      double* q = out.cubic.data() + (c * out.intervals + s) * 4;
      q[0] = f[0];
      q[1] = d1 - d2 / 2.0 + d3 / 3.0;
      q[2] = d2 / 2.0 - d3 / 2.0;
      q[3] = d3 / 6.0;
    }
  }
  return out;
}

double ClasswisePieces::Splines::value(std::size_t curve, double x) const {
  if (intervals == 0) return 0.0;
  if (x <= knots.front()) return low[curve];
  if (x >= knots.back()) return high[curve];
  std::size_t s = 0;
  while (s + 1 < intervals && x >= knots[s + 1]) ++s;
  const double y = (x - knots[s]) * scale[s];
  const double* q = cubic.data() + (curve * intervals + s) * 4;
  return q[0] + y * (q[1] + y * (q[2] + y * q[3]));
}

ClasswisePieces::ClasswisePieces(const ClasswiseMap& map) : identity_(is_identity(map)) {
  if (identity_) return;
  const std::size_t K = map.classes;
  top_ = pieces(map.top_knots, K, map.top);
  if (has_other_splines(map)) {
    // One curve per class: a + e_j (a alone when there are no per-class splines).
    const std::size_t m = spline_basis_size(map.other_knots.size());
    std::vector<double> combined(K * m, 0.0);
    for (std::size_t j = 0; j < K; ++j)
      for (std::size_t r = 0; r < m; ++r)
        combined[j * m + r] = (map.other_shared.empty() ? 0.0 : map.other_shared[r]) +
                              (map.other.empty() ? 0.0 : map.other[j * m + r]);
    other_ = pieces(map.other_knots, K, combined);
  }
}

void ClasswisePieces::fill_other_classes(std::span<const double> p, std::span<const double> log_p,
                                         std::size_t top, double c_top, double log_rest,
                                         std::span<double> c) const {
  const std::size_t K = log_p.size();
  // Below this log p_j, u_j = log p_j - log1p(-p_j) < log p_j + log 2 is below the lowest knot.
  const double below = other_.intervals == 0 ? std::numeric_limits<double>::infinity()
                                             : other_.knots.front() - std::numbers::ln2;
  double largest = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < K; ++j) {
    if (j == top) continue;
    double offset = 0.0;
    if (other_.intervals > 0)
      offset = log_p[j] < below ? other_.low[j] : other_.value(j, log_p[j] - std::log1p(-p[j]));
    c[j] = log_p[j] + offset;
    largest = std::max(largest, c[j]);
  }
  double sum = 0.0;
  for (std::size_t j = 0; j < K; ++j)
    if (j != top) sum += c[j] = std::exp(c[j] - largest);
  // c_j = exp(w_j - largest) (1 - c_top) / sum: exp(w_j - largest) underflows only where the
  // exact share, smaller still, does too.
  const double scale = std::exp(log_rest - std::log(sum));
  for (std::size_t j = 0; j < K; ++j)
    if (j != top) c[j] *= scale;
  c[top] = c_top;
}

std::string canonical_text(const ClasswiseMap& map) {
  if (is_identity(map)) return "classwise:none";
  const auto list = [](const std::vector<double>& v) {
    std::string out;
    for (double x : v) out += format_double(x) + ",";
    return out;
  };
  return "classwise:top_knots=" + list(map.top_knots) + ":top=" + list(map.top) +
         ":other_knots=" + list(map.other_knots) + ":other_shared=" + list(map.other_shared) +
         ":other=" + list(map.other);
}

}  // namespace calbench
