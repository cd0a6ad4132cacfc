#include "truth/map_preimage.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace calbench {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

MapPreimages::MapPreimages(const DirichletSpec& spec)
    : K_(spec.classes), alpha_(spec.alpha), injective_(is_injective(spec.map, spec.classes)) {
  if (alpha_.size() == 1) alpha_.assign(K_, alpha_.front());
  double a0 = 0.0;
  for (double a : alpha_) {
    log_beta_ += std::lgamma(a);
    a0 += a;
  }
  log_beta_ -= std::lgamma(a0);
  for (double a : alpha_) mean_.push_back(a / a0);
  if (const auto* top = std::get_if<TopLabelMap>(&spec.map)) {
    top_label_ = true;
    gamma_ = top->gamma;
    return;
  }
  if (const auto* quantize = std::get_if<QuantizeMap>(&spec.map)) {
    // A cell of m with the others' proportions fixed maps to one p: a segment of preimages.
    fibres_ = Fibres::segment;
    levels_ = quantize->levels;
    cell_of_level_.assign(levels_, QuantizeCell{});
    for (const QuantizeCell& c : quantize_cells(levels_))
      cell_of_level_[static_cast<std::size_t>(
          std::lround(c.level * static_cast<double>(levels_) - 0.5))] = c;
    for (std::size_t t = 0; t < K_; ++t) {
      const double a = alpha_[t], b = a0 - a;
      for (const QuantizeCell& c : cell_of_level_) {
        using boost::math::ibetac;
        const bool used = c.hi > c.lo;
        cell_tails_.push_back({used ? ibetac(a, b, c.lo) : 0.0, used ? ibetac(a, b, c.hi) : 0.0,
                               used ? ibetac(a + 1.0, b, c.lo) : 0.0,
                               used ? ibetac(a + 1.0, b, c.hi) : 0.0});
      }
    }
    return;
  }
  const LogAffineForm form = log_affine_form(spec.map, K_);
  const LogAffineFibres fibres = log_affine_fibres(form, K_);
  if (fibres.dimension != 1) {
    const bool zero = std::all_of(form.D.begin(), form.D.end(), [](double v) { return v == 0.0; });
    fibres_ = zero ? Fibres::constant : Fibres::continuum;
    return;
  }
  const auto K = static_cast<Eigen::Index>(K_);
  const Eigen::Map<const RowMatrix> D(form.D.data(), K - 1, K);
  // D has full row rank K - 1 here, so D^+ y is an exact solution of D l = y.
  const RowMatrix pinv = D.completeOrthogonalDecomposition().pseudoInverse();
  pinv_.assign(pinv.data(), pinv.data() + pinv.size());
  d_ = form.d;
  v_ = fibres.direction;
  one_signed_ = injective_;
  // det(D' - u c'^T) with u = D 1 is affine in c' (matrix determinant lemma):
  // beta_0 = det D', beta_j = det(D' - u e_j^T) - beta_0.
  const RowMatrix Dp = D.leftCols(K - 1);
  const Eigen::VectorXd u = D.rowwise().sum();
  beta_.assign(static_cast<std::size_t>(K), 0.0);
  beta_[0] = Dp.fullPivLu().determinant();
  for (Eigen::Index j = 0; j + 1 < K; ++j) {
    RowMatrix G = Dp;
    G.col(j) -= u;
    beta_[static_cast<std::size_t>(j + 1)] = G.fullPivLu().determinant() - beta_[0];
  }
}

double MapPreimages::posterior(std::span<const double> log_p, std::span<double> r,
                               std::span<double> scratch, unsigned* structure,
                               std::size_t* work) const {
  if (top_label_) {
    if (work != nullptr) ++*work;
    return top_label(log_p, r, scratch, structure);
  }
  return log_affine(log_p, r, scratch, structure, work);
}

double MapPreimages::log_affine(std::span<const double> log_p, std::span<double> r,
                                std::span<double> scratch, unsigned* structure,
                                std::size_t* work) const {
  const std::size_t K = K_;
  std::size_t steps = 0;  // evaluations of F, the unit of `work`
  std::span<double> l0 = scratch.first(K), l = scratch.subspan(K, K), y = scratch.subspan(2 * K, K);
  for (std::size_t k = 0; k + 1 < K; ++k) y[k] = log_p[k] - log_p[K - 1] - d_[k];
  for (std::size_t i = 0; i < K; ++i) {
    double s = 0.0;
    for (std::size_t k = 0; k + 1 < K; ++k) s += pinv_[i * (K - 1) + k] * y[k];
    l0[i] = s;
  }
  // F(kappa) = logsumexp(l0 + kappa w) and F'(kappa), for w = sign * v.
  const auto F = [&](double kappa, double sign, double& slope) {
    ++steps;
    double top = -inf;
    for (std::size_t k = 0; k < K; ++k) top = std::max(top, l0[k] + kappa * sign * v_[k]);
    double sum = 0.0, weighted = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      const double e = std::exp(l0[k] + kappa * sign * v_[k] - top);
      sum += e;
      weighted += e * sign * v_[k];
    }
    slope = weighted / sum;
    return top + std::log(sum);
  };
  // The root of F(kappa; sign v) = 0 on the increasing side, by Newton from `start` (where
  // F >= 0 and F' > 0): for a convex function the iterates decrease monotonically to it.
  const auto newton = [&](double start, double sign, double& root) {
    double kappa = start, slope = 0.0;
    for (int it = 0; it < 200; ++it) {
      const double f = F(kappa, sign, slope);
      root = kappa;
      // Rounding may leave the last step a hair below the root.
      if (std::abs(f) <= 1e-15 || f < 0.0 || !(slope > 0.0)) return std::abs(f) <= 1e-12;
      const double step = f / slope;
      kappa -= step;
      if (std::abs(step) <= 1e-15 * (1.0 + std::abs(kappa))) {
        root = kappa;
        return std::abs(F(kappa, sign, slope)) <= 1e-12;
      }
    }
    return false;
  };
  // A start right of the root on the side where sign * v increases F: where the term k with
  // sign * v_k > 0 reaching 0 last forces F >= 0, and at least `from`.
  const auto start_beyond = [&](double sign, double from) {
    double best = -inf;
    for (std::size_t k = 0; k < K; ++k)
      if (sign * v_[k] > 0.0) best = std::max(best, -l0[k] / (sign * v_[k]));
    double kappa = std::max(best, from), slope = 0.0;
    for (double step = 1.0; F(kappa, sign, slope) < 0.0 && step < 1e12; step *= 2.0) kappa += step;
    return kappa;
  };
  double roots[2];  // in units of v
  int count = 0;
  if (one_signed_) {
    double root;
    if (newton(start_beyond(1.0, -inf), 1.0, root)) roots[count++] = root;
  } else {
    // F's minimum: F' = E_softmax[v] increases from min v to max v; bracket, then TOMS 748.
    double slope = 0.0, lo = -1.0, hi = 1.0;
    while (F(lo, 1.0, slope), slope > 0.0 && lo > -1e12) lo *= 2.0;
    while (F(hi, 1.0, slope), slope < 0.0 && hi < 1e12) hi *= 2.0;
    std::uintmax_t iterations = 200;
    const auto [a, b] = boost::math::tools::toms748_solve(
        [&](double kappa) {
          double s = 0.0;
          F(kappa, 1.0, s);
          return s;
        },
        lo, hi, boost::math::tools::eps_tolerance<double>(50), iterations);
    const double star = 0.5 * (a + b);
    if (F(star, 1.0, slope) <= 0.0) {
      double root;
      if (newton(start_beyond(1.0, star), 1.0, root)) roots[count++] = root;
      if (newton(start_beyond(-1.0, -star), -1.0, root)) roots[count++] = -root;
    }
  }
  if (structure != nullptr) *structure = static_cast<unsigned>(count);
  if (work != nullptr) *work += steps;
  double total = 0.0;
  std::fill(r.begin(), r.end(), 0.0);
  for (int i = 0; i < count; ++i) {
    double sum = 0.0, log_w = -log_beta_, det = beta_[0];
    for (std::size_t k = 0; k < K; ++k) {
      l[k] = l0[k] + roots[i] * v_[k];
      sum += std::exp(l[k]);
    }
    const double log_sum = std::log(sum);  // 0 up to rounding: renormalised
    for (std::size_t k = 0; k < K; ++k) {
      l[k] -= log_sum;
      log_w += alpha_[k] * l[k];
      if (k + 1 < K) det += beta_[k + 1] * std::exp(l[k]);
    }
    const double w = std::exp(log_w) / std::abs(det);
    if (!std::isfinite(w)) continue;  // on a fold, where two preimages merge: measure zero
    total += w;
    for (std::size_t k = 0; k < K; ++k) r[k] += w * std::exp(l[k]);
  }
  if (total > 0.0) {
    for (double& v : r) v /= total;
  } else {
    for (std::size_t k = 0; k < K; ++k) r[k] = std::exp(log_p[k]);
  }
  return total;
}

double MapPreimages::top_label(std::span<const double> log_p, std::span<double> r,
                               std::span<double> scratch, unsigned* structure) const {
  const std::size_t K = K_;
  const double Kd = static_cast<double>(K), spread = 1.0 - 1.0 / Kd;
  // p_k once (K exponentials per call, not K per candidate); the sums below keep the order
  // of index, skipping j, so the bits are those of recomputing each exp.
  std::span<double> p = scratch.first(K);
  double sum_log_p = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    sum_log_p += log_p[k];
    p[k] = std::exp(log_p[k]);
  }
  double total = 0.0;
  unsigned bits = 0;
  std::fill(r.begin(), r.end(), 0.0);
  for (std::size_t j = 0; j < K; ++j) {
    const double pj = p[j];
    if (!(pj > 1.0 / Kd)) continue;  // only classes above 1/K have a candidate
    // 1 - p_j from the other components (exact where p_j is near 1).
    double rest = 0.0, other_max = 0.0;
    for (std::size_t i = 0; i < K; ++i)
      if (i != j) {
        rest += p[i];
        other_max = std::max(other_max, p[i]);
      }
    if (rest <= 0.0) continue;
    // u^gamma = (p_j - 1/K)/(1 - 1/K) = 1 - rest/spread; m = g^-1(p_j) = 1/K + spread u with
    // 1 - m = spread (1 - u) = -spread expm1(log(u^gamma)/gamma).
    const double log_ug = std::log1p(-rest / spread);
    const double log_u = log_ug / gamma_;
    const double one_minus_m = -spread * std::expm1(log_u);
    const double m = 1.0 / Kd + spread * std::exp(log_u);
    const double scale = one_minus_m / rest;  // c_i = p_i scale for i != j
    if (other_max * scale > m) continue;      // m would not be c's largest component
    const double log_g_prime = std::log(gamma_) + (gamma_ - 1.0) * log_u;
    const double log_scale = std::log(scale);
    if (!std::isfinite(log_g_prime) || !std::isfinite(log_scale)) continue;
    double log_w = (alpha_[j] - 1.0) * std::log(m) + (Kd - 2.0) * log_scale - log_g_prime -
                   log_beta_ + sum_log_p;
    for (std::size_t i = 0; i < K; ++i)
      if (i != j) log_w += (alpha_[i] - 1.0) * (log_p[i] + log_scale);
    const double w = std::exp(log_w);
    if (!std::isfinite(w)) continue;
    bits |= 1u << std::min<std::size_t>(j, 31);
    total += w;
    for (std::size_t i = 0; i < K; ++i) r[i] += w * (i == j ? m : p[i] * scale);
  }
  if (structure != nullptr) *structure = bits;
  if (total > 0.0) {
    for (double& v : r) v /= total;
  } else {
    for (std::size_t k = 0; k < K; ++k) r[k] = p[k];
  }
  return total;
}

void MapPreimages::quantize_posterior(std::span<const double> log_p, std::span<double> r) const {
  const std::size_t K = K_;
  const std::size_t t =
      static_cast<std::size_t>(std::max_element(log_p.begin(), log_p.end()) - log_p.begin());
  // The level's cell: p_t is the level (i + 1/2)/L to rounding.
  const double L = static_cast<double>(levels_);
  const auto i = static_cast<std::size_t>(
      std::clamp(std::lround(std::exp(log_p[t]) * L - 0.5), 0L, static_cast<long>(levels_) - 1));
  const QuantizeCell& cell = cell_of_level_[i];
  const double log_rest = std::log1p(-cell.level);
  double w_max = 0.0;
  for (std::size_t k = 0; k < K; ++k)
    if (k != t) w_max = std::max(w_max, std::exp(log_p[k] - log_rest));
  const double bound = w_max / (1.0 + w_max), lo = std::max(cell.lo, bound), hi = cell.hi;
  const std::array<double, 4>& tails = cell_tails_[t * levels_ + i];
  double above_lo = tails[0], first_above_lo = tails[2];
  if (bound > cell.lo) {  // the runner-up cuts the cell: tails at the bound
    const double a = alpha_[t], b = alpha_[t] / mean_[t] - alpha_[t];  // alpha_0 - alpha_t
    above_lo = boost::math::ibetac(a, b, lo);
    first_above_lo = boost::math::ibetac(a + 1.0, b, lo);
  }
  // P(lo < m <= hi) and E[m 1{lo < m <= hi}] (size biasing), from upper tails, exact near 1.
  const double mass = above_lo - tails[1];
  const double first = mean_[t] * (first_above_lo - tails[3]);
  const double m = mass > 0.0 ? std::clamp(first / mass, lo, hi) : 0.5 * (lo + hi);
  for (std::size_t k = 0; k < K; ++k) r[k] = k == t ? m : (1.0 - m) * std::exp(log_p[k] - log_rest);
}

void posterior_mean(const MapPreimages& preimages, std::span<const double> c,
                    std::span<const double> log_p, std::span<double> r, std::span<double> scratch) {
  switch (preimages.fibres()) {
    case MapPreimages::Fibres::constant: {
      const auto& mean = preimages.prior_mean();  // p carries no information: r = E[c]
      std::copy(mean.begin(), mean.end(), r.begin());
      return;
    }
    case MapPreimages::Fibres::continuum:
      throw DomainError(
          "affine_logit: W sends a subspace of dimension >= 2 into span(1), so each p has a "
          "continuum of preimages and r(p) = E[c | p] has no formula here");
    case MapPreimages::Fibres::segment:
      preimages.quantize_posterior(log_p, r);
      return;
    case MapPreimages::Fibres::finite:
      break;
  }
  if (preimages.injective()) {
    std::copy(c.begin(), c.end(), r.begin());
    return;
  }
  if (!(preimages.posterior(log_p, r, scratch) > 0.0))
    std::copy(c.begin(), c.end(), r.begin());  // p on a fold: rounding lost its preimages
}

}  // namespace calbench
