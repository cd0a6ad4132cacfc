#include "truth/quantize_truth.hpp"

#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <limits>
#include <map>

#include "truth/dirichlet_integrals.hpp"
#include "truth/dirichlet_max.hpp"
#include "truth/truth_engine.hpp"
#include "truth/vector_quadrature.hpp"

namespace calbench {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

std::vector<double> per_class(std::span<const double> alpha, std::size_t K) {
  return alpha.size() == 1 ? std::vector<double>(K, alpha.front())
                           : std::vector<double>(alpha.begin(), alpha.end());
}

// Upper tails of one component c_k ~ Beta(a, a0 - a) at b: P(c_k > b) and E[c_k 1{c_k > b}]
// = (a/a0) P(Beta(a + 1, a0 - a) > b) (size biasing).
struct Tail {
  double mass = 0.0, first = 0.0;
};
Tail component_tail(double a, double a0, double b) {
  if (b >= 1.0) return {};
  if (b <= 0.0) return {1.0, a / a0};
  return {boost::math::ibetac(a, a0 - a, b), a / a0 * boost::math::ibetac(a + 1.0, a0 - a, b)};
}

// K = 2: the cells of class k as the top class, {c_k > 1/2} cut at the cells' ends.
std::vector<std::vector<QuantizeCellMoments>> binary_cells(std::span<const double> alpha,
                                                           std::size_t levels) {
  const double a0 = alpha[0] + alpha[1];
  std::vector<std::vector<QuantizeCellMoments>> out(2);
  for (std::size_t k = 0; k < 2; ++k)
    for (const QuantizeCell& cell : quantize_cells(levels)) {
      const double lo = std::max(cell.lo, 0.5);
      if (!(cell.hi > lo)) continue;
      const Tail below = component_tail(alpha[k], a0, lo),
                 above = component_tail(alpha[k], a0, cell.hi);
      out[k].push_back({cell.level, below.mass - above.mass, below.first - above.first});
    }
  return out;
}

// Equal concentrations grouped, as dirichlet_max_cdf takes them.
std::vector<ConcentrationGroup> groups_of(std::span<const double> alpha) {
  std::map<double, std::size_t> counts;
  for (double a : alpha) ++counts[a];
  std::vector<ConcentrationGroup> out;
  for (const auto& [a, n] : counts) out.push_back({a, n});
  return out;
}

struct NodeFailed {};

// The Beta(a, b) density at z.
double beta_pdf(double a, double b, double z) {
  return boost::math::ibeta_derivative(a, b, z);
}

std::optional<QuantizeMoments> multiclass_moments(std::span<const double> alpha,
                                                  std::size_t levels) {
  const std::size_t K = alpha.size();
  const double Kd = static_cast<double>(K);
  double a0 = 0.0;
  for (double a : alpha) a0 += a;
  const auto tail = [&](double b) {
    Tail t;
    for (double a : alpha) {
      const Tail c = component_tail(a, a0, b);
      t.mass += c.mass;
      t.first += c.first;
    }
    return t;
  };
  // The density of m on [1/3, 1/2]: component k is the largest at z iff the others, (1 - z)
  // times a Dirichlet(alpha_-k) independent of c_k, stay below z, i.e. below u = z/(1 - z) >= 1/2
  // after scaling, where at most one of them can exceed u:
  //   f(z) = sum_k Beta(z; alpha_k, alpha_0 - alpha_k) (1 - sum_(l != k) P(Beta(alpha_l,
  //          alpha_0 - alpha_k - alpha_l) > u)).
  const auto density = [&](double z) {
    const double u = z / (1.0 - z);
    double f = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      double below = 1.0;
      for (std::size_t l = 0; l < K; ++l)
        if (l != k && u < 1.0) below -= boost::math::ibetac(alpha[l], a0 - alpha[k] - alpha[l], u);
      f += beta_pdf(alpha[k], a0 - alpha[k], z) * below;
    }
    Vec<2> out;
    out[0] = f;
    out[1] = z * f;
    return out;
  };
  const std::vector<QuantizeCell> cells = quantize_cells(levels);
  const double third = std::max(1.0 / 3.0, 1.0 / Kd);
  // above[b] = (P(m > b), E[m 1{m > b}]): tails from 1/2 up, the density's integrals down to
  // 1/3, and below 1/3 (K >= 4) by parts from P(m <= b) = dirichlet_max_cdf (exact to rounding
  // where it converges): E[m 1{m <= b}] = b F(b) - int_(1/K)^b F.
  std::map<double, std::pair<double, double>> above;
  const Tail half = tail(0.5);
  above[0.5] = {half.mass, half.first};
  double error = 0.0;
  double start_of_integral = 1.0 / Kd;  // K >= 4: where the Fourier CDF's integral starts
  {
    std::vector<double> ends = {third, 0.5};
    for (const QuantizeCell& cell : cells)
      for (double b : {cell.lo, cell.hi})
        if (b > third && b < 0.5) ends.push_back(b);
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    double mass = half.mass, first = half.first;
    for (std::size_t i = ends.size() - 1; i > 0; --i) {
      const double piece_ends[2] = {ends[i - 1], ends[i]};
      const auto piece = integrate_adaptive<15, 2>(density, piece_ends,
                                                   {.tolerance = 1e-13, .max_intervals = 400});
      mass += piece.value[0];
      first += piece.value[1];
      error += piece.error;
      above[ends[i - 1]] = {mass, first};
    }
  }
  const TruthValue mean_max = expected_max(alpha);
  if (third > 1.0 / Kd) {  // K >= 4: (1/K, 1/3) by the Fourier CDF
    const std::vector<ConcentrationGroup> groups = groups_of(alpha);
    // The inversion may not converge next to 1/K, where F is tiny: start at the lowest x0 of
    // 1/K + (1/3 - 1/K) 2^-t where it converges with F(x0) <= 1e-13. F increases, so below x0
    // F <= F(x0), and the part left out adds at most (x0 - 1/K) F(x0) to the error.
    double start = 1.0 / Kd, floor_mass = 0.0;
    for (int t = 1; t <= 60; ++t) {
      const double x = 1.0 / Kd + (third - 1.0 / Kd) * std::ldexp(1.0, -t);
      const auto F = dirichlet_max_cdf(groups, x);
      if (!F) {
        if (floor_mass > 1e-13 || start == 1.0 / Kd) return std::nullopt;
        break;
      }
      start = x;
      floor_mass = *F;
      if (*F <= 1e-13) break;
    }
    error += (start - 1.0 / Kd) * floor_mass + floor_mass;
    start_of_integral = start;
    std::vector<double> ends = {start, third};
    for (const QuantizeCell& cell : cells)
      for (double b : {cell.lo, cell.hi})
        if (b > start && b < third) ends.push_back(b);
    for (std::size_t j = 4; j < K; ++j)  // F's kinks
      if (1.0 / static_cast<double>(j) > start) ends.push_back(1.0 / static_cast<double>(j));
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    const auto cdf = [&](double b) {
      const auto F = dirichlet_max_cdf(groups, b);
      if (!F) throw NodeFailed{};
      return *F;
    };
    const std::pair<double, double> at_third = above[third];
    double integral = 0.0;
    try {
      for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
        const double piece_ends[2] = {ends[i], ends[i + 1]};
        const auto piece = integrate_adaptive<15, 1>(
            [&](double x) { return Vec<1>(cdf(x)); }, piece_ends,
            {.tolerance = 1e-12, .max_intervals = 200, .nodes = NodeEvaluation::parallel});
        integral += piece.value[0];
        error += 2.0 * piece.errors[0];
        const double b = ends[i + 1], F = cdf(b);
        if (b < third)
          above[b] = {1.0 - F, mean_max.value - (b * F - integral)};
        else if (std::abs(1.0 - F - at_third.first) > 1e-9 ||  // the two routes meet at 1/3
                 std::abs(mean_max.value - (b * F - integral) - at_third.second) >
                     1e-9 + error + mean_max.error)
          return std::nullopt;
      }
    } catch (const NodeFailed&) {
      return std::nullopt;
    }
  } else if (std::abs(above[third].first - 1.0) > 1e-9 ||  // K = 3: all the mass, and E[m]
             std::abs(above[third].second - mean_max.value) > 1e-9 + error + mean_max.error) {
    return std::nullopt;
  }
  const auto at = [&](double b) -> std::pair<double, double> {
    if (b <= 1.0 / Kd) return {1.0, mean_max.value};
    if (b < start_of_integral) return {1.0, mean_max.value};  // within the error: F(b) <= F(x0)
    if (b >= 0.5) {
      const Tail t = tail(b);
      return {t.mass, t.first};
    }
    return above.at(b);
  };
  QuantizeMoments out;
  out.error = error + mean_max.error;
  for (const QuantizeCell& cell : cells) {
    const auto lo = at(cell.lo), hi = at(cell.hi);
    out.cells.push_back({cell.level, lo.first - hi.first, lo.second - hi.second});
  }
  return out;
}

// The top-label quantities from the cells.
void set_top_label(GroundTruth& t, std::span<const QuantizeCellMoments> cells, TruthValue accuracy,
                   double error, TruthMethod method) {
  double mean_z = 0.0, l1 = 0.0, l2 = 0.0, l2_error = 0.0;
  for (const auto& c : cells) {
    if (!(c.probability > 0.0)) continue;
    const double gap = c.first_moment - c.level * c.probability;
    mean_z += c.level * c.probability;
    l1 += std::abs(gap);
    l2 += gap * gap / c.probability;
    l2_error += 2.0 * std::abs(gap) / c.probability * error;
  }
  t[Quantity::accuracy] = accuracy;
  t[Quantity::overconfidence] = {mean_z - accuracy.value, method, accuracy.error + error};
  t[Quantity::ece_top_l1] = {l1, method, error};
  t[Quantity::ece_top_l2] = root_of({l2, method, l2_error});
}

GroundTruth binary_truth(std::span<const double> alpha, std::size_t levels) {
  const auto cells = binary_cells(alpha, levels);
  std::vector<QuantizeCellMoments> top;  // both classes' events of one cell merged
  double accuracy = 0.0, brier = 0.0, nll = 0.0, classwise = 0.0, square_gap = 0.0;
  for (std::size_t j = 0; j < cells[0].size(); ++j) {
    QuantizeCellMoments merged{cells[0][j].level, 0.0, 0.0};
    for (const auto& per_class : cells) {
      const QuantizeCellMoments& c = per_class[j];
      const double q = c.level;
      merged.probability += c.probability;
      merged.first_moment += c.first_moment;
      accuracy += c.first_moment;
      // Brier: p = (q, 1 - q) on the top class's side, 2 E[(q - 1{y = top})^2].
      brier += 2.0 * (q * q * c.probability - 2.0 * q * c.first_moment + c.first_moment);
      nll += -std::log(q) * c.first_moment - std::log1p(-q) * (c.probability - c.first_moment);
      if (c.probability > 0.0) {
        const double gap = c.first_moment - q * c.probability;
        classwise += std::abs(gap);
        square_gap += gap * gap / c.probability;
      }
    }
    top.push_back(merged);
  }
  GroundTruth t;
  set_top_label(t, top, {accuracy, TruthMethod::closed_form, 0.0}, 0.0, TruthMethod::closed_form);
  t[Quantity::brier] = {brier, TruthMethod::closed_form, 0.0};
  t[Quantity::nll] = {nll, TruthMethod::closed_form, 0.0};
  // p_1 tells the top class and the cell (the levels used are > 1/2), so the classwise gap of
  // each (class, cell) event counts once per class.
  set_binary_canonical(t, {classwise, TruthMethod::closed_form, 0.0},
                       {square_gap, TruthMethod::closed_form, 0.0});
  for (Quantity q : {Quantity::canonical_l1, Quantity::canonical_l2})
    t[q].method = TruthMethod::closed_form;
  return t;
}

}  // namespace

std::optional<QuantizeMoments> quantize_moments(std::span<const double> alpha, std::size_t levels) {
  if (alpha.size() != 2) return multiclass_moments(alpha, levels);
  QuantizeMoments out;
  const auto cells = binary_cells(alpha, levels);
  for (std::size_t j = 0; j < cells[0].size(); ++j)
    out.cells.push_back({cells[0][j].level, cells[0][j].probability + cells[1][j].probability,
                         cells[0][j].first_moment + cells[1][j].first_moment});
  return out;
}

GroundTruth quantize_truth(const DirichletGenerator& generator, const TruthSettings& settings,
                           std::span<const Quantity> needed) {
  const auto& spec = generator.spec();
  const std::size_t K = generator.classes();
  const std::size_t levels = std::get<QuantizeMap>(spec.map).levels;
  const std::vector<double> alpha = per_class(spec.alpha, K);
  if (K == 2) return binary_truth(alpha, levels);

  const auto moments = multiclass_moments(alpha, levels);
  std::vector<Quantity> by_monte_carlo;
  for (Quantity q : needed) {
    const bool top = q == Quantity::ece_top_l1 || q == Quantity::ece_top_l2 ||
                     q == Quantity::overconfidence || q == Quantity::accuracy;
    if (!top || !moments) by_monte_carlo.push_back(q);
  }
  GroundTruth t;
  for (TruthValue& v : t.values) v = {nan, TruthMethod::monte_carlo, inf};
  if (!by_monte_carlo.empty()) t = monte_carlo_truth(generator, settings, by_monte_carlo);
  const TruthValue accuracy = expected_max(alpha);
  if (moments) {
    set_top_label(t, moments->cells, accuracy, moments->error, TruthMethod::quadrature);
  } else {
    t[Quantity::accuracy] = accuracy;
  }
  return t;
}

}  // namespace calbench
