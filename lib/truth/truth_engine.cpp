#include "truth/truth_engine.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/format.hpp"
#include "core/rng.hpp"
#include "truth/dirichlet_integrals.hpp"

namespace calbench {
namespace {

// Independent groups of the Monte Carlo sample: each has its own stream and accumulators, so
// the result does not depend on the thread count; even and odd groups form the two halves of
// the cross-fitted |.| estimate.
constexpr std::size_t groups = 8;

// ---------------------------------------------------------------------------------------------
// Fine bins on [0, 1] for conditional expectations given a score v: log-scale towards 0 and
// towards 1, read straight off the bits of min(v, 1 - v): 32 bins per octave (relative width
// 1/32) over 40 octaves, and one bin each for the last 2^-40 at either end, where
// |E[c | v] - v| contributes at most about 2^-40. The index is monotone in v.
constexpr int octaves = 40;
constexpr int sub_bits = 5;
constexpr std::size_t per_side = 1 + (std::size_t{octaves} << sub_bits);
constexpr std::size_t fine_bins = 2 * per_side;

std::size_t fine_bin(double v) {
  const bool upper = v > 0.5;
  const double x = upper ? 1.0 - v : v;  // exact for v > 0.5 (Sterbenz)
  std::size_t index = 0;
  if (x >= 0x1p-40) {
    const auto bits = std::bit_cast<std::uint64_t>(x);
    const int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;  // -40 .. -1
    const auto mantissa =
        static_cast<std::size_t>((bits >> (52 - sub_bits)) & ((1u << sub_bits) - 1));
    index = 1 + (static_cast<std::size_t>(exponent + octaves) << sub_bits) + mantissa;
    if (index >= per_side) index = per_side - 1;  // x = 0.5 exactly
  }
  return upper ? fine_bins - 1 - index : index;
}

// Running sums of a residual per bin, for several "channels" (classes, or the top label).
struct BinSums {
  std::vector<double> n, s, ss;
  void resize(std::size_t size) {
    n.assign(size, 0.0);
    s.assign(size, 0.0);
    ss.assign(size, 0.0);
  }
  void add(std::size_t i, double d) {
    n[i] += 1.0;
    s[i] += d;
    ss[i] += d * d;
  }
};

// E|E[D | V]| from bin sums of one channel (all groups pooled, and the two halves).
struct AbsConditional {
  double plug_in = 0.0, cross_fit = 0.0, variance_if = 0.0;
};

AbsConditional abs_conditional(const BinSums& all, const BinSums& a, const BinSums& b,
                               std::size_t begin, std::size_t end, double N) {
  AbsConditional out;
  double resid = 0.0, mean_sq = 0.0;
  auto sgn = [](double v) { return (v > 0.0) - (v < 0.0); };
  for (std::size_t i = begin; i < end; ++i) {
    if (all.n[i] == 0.0) continue;
    out.plug_in += std::abs(all.s[i]);
    out.cross_fit += sgn(a.s[i]) * b.s[i] + sgn(b.s[i]) * a.s[i];
    resid += all.ss[i] - all.s[i] * all.s[i] / all.n[i];
    mean_sq += all.s[i] * all.s[i] / all.n[i];
  }
  out.plug_in /= N;
  out.cross_fit /= N;
  // Influence function of E|mu(V)|: sign(mu)(D - mu) + |mu| - T; its variance is
  // E(D - mu)^2 + E mu^2 - T^2 (signs taken as known away from the crossings).
  out.variance_if = std::max(0.0, resid / N + mean_sq / N - out.plug_in * out.plug_in);
  return out;
}

// sqrt(E (E[D | V])^2) with each bin's mean square debiased by its variance over n_b.
struct SquaredConditional {
  double value = 0.0, variance_if = 0.0;
};

SquaredConditional squared_conditional(const BinSums& all, std::size_t merge, double N) {
  SquaredConditional out;
  double var_term = 0.0, fourth = 0.0;
  for (std::size_t i = 0; i < all.n.size(); i += merge) {
    double n = 0.0, s = 0.0, ss = 0.0;
    for (std::size_t j = i; j < std::min(i + merge, all.n.size()); ++j) {
      n += all.n[j];
      s += all.s[j];
      ss += all.ss[j];
    }
    if (n < 2.0) continue;
    const double m = s / n;
    const double within = (ss - s * s / n) / (n - 1.0);  // sample variance in the bin
    out.value += n / N * (m * m - within / n);
    var_term += 4.0 * m * m * (ss - s * s / n) / N;
    fourth += n / N * m * m * m * m;
  }
  out.variance_if = std::max(0.0, var_term + fourth - out.value * out.value);
  return out;
}

// The unconditional expectations and their control variates.
enum Target { t_acc, t_gap, t_gap_sq, t_brier, t_nll, t_can_l1, t_can_l2sq, targets };
enum Control { c_sum_sq, c_neg_entropy, c_max, controls };

struct Moments {
  std::array<double, targets> x{}, xx{};
  std::array<double, controls> y{};
  std::array<std::array<double, controls>, targets> xy{};
  std::array<std::array<double, controls>, controls> yy{};
  double n = 0.0;
  void add(const std::array<double, targets>& xs, const std::array<double, controls>& ys) {
    n += 1.0;
    for (int i = 0; i < targets; ++i) {
      x[i] += xs[i];
      xx[i] += xs[i] * xs[i];
      for (int j = 0; j < controls; ++j) xy[i][j] += xs[i] * ys[j];
    }
    for (int j = 0; j < controls; ++j) {
      y[j] += ys[j];
      for (int l = 0; l < controls; ++l) yy[j][l] += ys[j] * ys[l];
    }
  }
  void merge(const Moments& o) {
    n += o.n;
    for (int i = 0; i < targets; ++i) {
      x[i] += o.x[i];
      xx[i] += o.xx[i];
      for (int j = 0; j < controls; ++j) xy[i][j] += o.xy[i][j];
    }
    for (int j = 0; j < controls; ++j) {
      y[j] += o.y[j];
      for (int l = 0; l < controls; ++l) yy[j][l] += o.yy[j][l];
    }
  }
};

// Solves the 3 x 3 system A b = r by Gaussian elimination with partial pivoting; a dependency
// on a linear-algebra library is not worth one fixed-size solve. A singular system (a control
// that is constant) gives b = 0 for the affected coefficient.
std::array<double, controls> solve(std::array<std::array<double, controls>, controls> A,
                                   std::array<double, controls> r) {
  constexpr int m = controls;
  std::array<int, m> order{0, 1, 2};
  for (int col = 0; col < m; ++col) {
    int pivot = col;
    for (int row = col + 1; row < m; ++row)
      if (std::abs(A[order[row]][col]) > std::abs(A[order[pivot]][col])) pivot = row;
    std::swap(order[col], order[pivot]);
    const double d = A[order[col]][col];
    if (std::abs(d) < 1e-300) continue;
    for (int row = col + 1; row < m; ++row) {
      const double f = A[order[row]][col] / d;
      for (int k = col; k < m; ++k) A[order[row]][k] -= f * A[order[col]][k];
      r[order[row]] -= f * r[order[col]];
    }
  }
  std::array<double, m> b{};
  for (int col = m - 1; col >= 0; --col) {
    const double d = A[order[col]][col];
    double v = r[order[col]];
    for (int k = col + 1; k < m; ++k) v -= A[order[col]][k] * b[k];
    b[col] = std::abs(d) < 1e-300 ? 0.0 : v / d;
  }
  return b;
}

// Control-variate estimate of E[X_i] and its standard error (Glasserman 2004, §4.1), with the
// regression coefficients estimated from the whole sample (bias O(1/N)).
TruthValue controlled_mean(const Moments& M, int i, const std::array<double, controls>& mu) {
  const double N = M.n;
  std::array<std::array<double, controls>, controls> cov_yy{};
  std::array<double, controls> cov_xy{};
  for (int j = 0; j < controls; ++j) {
    cov_xy[j] = M.xy[i][j] / N - M.x[i] / N * M.y[j] / N;
    for (int l = 0; l < controls; ++l) cov_yy[j][l] = M.yy[j][l] / N - M.y[j] / N * M.y[l] / N;
  }
  const auto beta = solve(cov_yy, cov_xy);
  double value = M.x[i] / N;
  double var = M.xx[i] / N - value * value;
  for (int j = 0; j < controls; ++j) {
    value -= beta[j] * (M.y[j] / N - mu[j]);
    var -= 2.0 * beta[j] * cov_xy[j];
    for (int l = 0; l < controls; ++l) var += beta[j] * beta[l] * cov_yy[j][l];
  }
  return {value, TruthMethod::monte_carlo, std::sqrt(std::max(var, 0.0) / N)};
}

struct GroupResult {
  Moments moments;
  BinSums top, classwise;
};

bool classes_exchangeable(const DirichletGenerator& g) {
  return g.symmetric() && is_class_symmetric(g.spec().map);
}

// One group's stream and accumulators; `draw` continues where the previous call stopped.
class GroupSampler {
 public:
  GroupSampler(const DirichletGenerator& gen, std::uint64_t key, std::size_t group, bool pooled)
      : gen_(gen),
        engine_(make_engine({key, group, 0, Purpose::truth})),
        pooled_(pooled),
        injective_(is_injective(gen.spec().map, gen.classes())) {
    const std::size_t K = gen.classes();
    for (auto* v : {&c_, &log_c_, &p_, &log_p_, &tmp_, &r_}) v->resize(K);
    result_.top.resize(fine_bins);
    result_.classwise.resize(fine_bins * (pooled ? 1 : K));
    const auto& map = gen.spec().map;
    gamma_ = std::holds_alternative<TopLabelMap>(map) ? std::get<TopLabelMap>(map).gamma : 1.0;
  }

  void draw(std::size_t count) {
    const std::size_t K = gen_.classes();
    const auto& spec = gen_.spec();
    for (std::size_t i = 0; i < count; ++i) {
      gen_.draw_truth(engine_, c_, log_c_);
      apply(spec.map, c_, log_c_, p_, log_p_, tmp_);
      std::size_t top = 0;
      for (std::size_t k = 1; k < K; ++k)
        if (p_[k] > p_[top]) top = k;
      const double Z = p_[top];
      const double gap = c_[top] - Z;
      double sum_sq_p = 0.0, cross = 0.0, nll = 0.0, sum_sq_c = 0.0, neg_ent = 0.0, max_c = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        sum_sq_p += p_[k] * p_[k];
        cross += p_[k] * c_[k];
        if (c_[k] > 0.0) {
          nll -= c_[k] * log_p_[k];
          neg_ent += c_[k] * log_c_[k];
        }
        sum_sq_c += c_[k] * c_[k];
        max_c = std::max(max_c, c_[k]);
      }
      if (!injective_) top_label_posterior_mean(p_, log_p_, spec.alpha, gamma_, r_);
      const std::vector<double>& truth_p = injective_ ? c_ : r_;
      double l1 = 0.0, l2 = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        const double d = truth_p[k] - p_[k];
        l1 += std::abs(d);
        l2 += d * d;
      }
      result_.moments.add({c_[top], gap, gap * gap, sum_sq_p - 2.0 * cross + 1.0, nll, l1, l2},
                          {sum_sq_c, neg_ent, max_c});
      result_.top.add(fine_bin(Z), gap);
      for (std::size_t k = 0; k < K; ++k)
        result_.classwise.add((pooled_ ? 0 : k * fine_bins) + fine_bin(p_[k]), c_[k] - p_[k]);
    }
  }

  const GroupResult& result() const { return result_; }

 private:
  const DirichletGenerator& gen_;
  Engine engine_;
  bool pooled_, injective_;
  double gamma_ = 1.0;
  std::vector<double> c_, log_c_, p_, log_p_, tmp_, r_;
  GroupResult result_;
};

BinSums merge_bins(const std::vector<GroupSampler>& groups_, BinSums GroupResult::*member,
                   int parity) {
  BinSums out;
  out.resize((groups_[0].result().*member).n.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (parity >= 0 && static_cast<int>(g % 2) != parity) continue;
    const BinSums& b = groups_[g].result().*member;
    for (std::size_t i = 0; i < b.n.size(); ++i) {
      out.n[i] += b.n[i];
      out.s[i] += b.s[i];
      out.ss[i] += b.ss[i];
    }
  }
  return out;
}

// Combines a cross-fitted |.| estimate over channels into a TruthValue; the channels are
// averaged (classwise) and their influence variances added as if independent.
TruthValue abs_value(const BinSums& all, const BinSums& a, const BinSums& b, std::size_t channels,
                     double N_per_channel) {
  double plug = 0.0, cross = 0.0, var = 0.0;
  for (std::size_t ch = 0; ch < channels; ++ch) {
    const auto r = abs_conditional(all, a, b, ch * fine_bins, (ch + 1) * fine_bins, N_per_channel);
    plug += r.plug_in;
    cross += r.cross_fit;
    var += r.variance_if;
  }
  const double C = static_cast<double>(channels);
  plug /= C;
  cross /= C;
  const double se = std::sqrt(var / N_per_channel) / C;
  // The plug-in is biased up and the cross-fit down: report the midpoint, and as error the
  // standard error plus half the bracket.
  return {0.5 * (plug + cross), TruthMethod::monte_carlo, se + 0.5 * std::abs(plug - cross)};
}

GroundTruth summarise(const DirichletGenerator& gen, const std::vector<GroupSampler>& samplers,
                      const std::array<double, controls>& mu, bool pooled);

}  // namespace

void top_label_posterior_mean(std::span<const double> p, std::span<const double> log_p,
                              std::span<const double> alpha, double gamma, std::span<double> r) {
  const std::size_t K = p.size();
  const double Kd = static_cast<double>(K);
  // The largest and second-largest components of p.
  std::size_t first = 0, second = 1;
  if (p[second] > p[first]) std::swap(first, second);
  for (std::size_t k = 2; k < K; ++k) {
    if (p[k] > p[first]) {
      second = first;
      first = k;
    } else if (p[k] > p[second]) {
      second = k;
    }
  }
  double best_log_w = -INFINITY;
  std::fill(r.begin(), r.end(), 0.0);
  // Weighted sum accumulated relative to the largest log weight seen so far.
  double total = 0.0;
  for (std::size_t j = 0; j < K; ++j) {
    if (p[j] < 1.0 / Kd || p[j] >= 1.0) continue;
    const double m = top_label_g_inverse(p[j], gamma, K);
    const double scale = (1.0 - m) / (1.0 - p[j]);  // c_i = p_i * scale for i != j
    const double other_max = p[j == first ? second : first];
    if (other_max * scale > m) continue;  // c^(j) would not have j as its argmax
    const double g_prime = top_label_g_prime(m, gamma, K);
    if (!(g_prime > 0.0)) continue;
    const double log_scale = std::log(scale);
    double log_w = (alpha[j] - 1.0) * std::log(m) + (Kd - 2.0) * log_scale - std::log(g_prime);
    for (std::size_t i = 0; i < K; ++i)
      if (i != j) log_w += (alpha[i] - 1.0) * (log_p[i] + log_scale);
    if (log_w > best_log_w) {
      const double f = std::exp(best_log_w - log_w);  // rescale what was accumulated
      for (double& v : r) v *= f;
      total *= f;
      best_log_w = log_w;
    }
    const double w = std::exp(log_w - best_log_w);
    for (std::size_t i = 0; i < K; ++i) r[i] += w * (i == j ? m : p[i] * scale);
    total += w;
  }
  if (total > 0.0) {
    for (double& v : r) v /= total;
  } else {
    std::copy(p.begin(), p.end(), r.begin());  // measure zero: p on the boundary of the image
  }
}

GroundTruth monte_carlo_truth(const DirichletGenerator& gen, const TruthSettings& settings) {
  const auto& spec = gen.spec();
  const std::uint64_t key = hash64(gen.canonical_text());
  const bool pooled = classes_exchangeable(gen);
  const std::array<double, controls> mu = {expected_sum_squares(spec.alpha),
                                           expected_neg_entropy(spec.alpha),
                                           expected_max(spec.alpha).value};
  std::vector<GroupSampler> samplers;
  for (std::size_t g = 0; g < groups; ++g) samplers.emplace_back(gen, key, g, pooled);
  // Rounds of samples/8 vectors; stop once every error is within the tolerance.
  constexpr std::size_t rounds = 8;
  const std::size_t per_round =
      std::max<std::size_t>(1, (settings.samples + groups * rounds - 1) / (groups * rounds));
  GroundTruth t;
  for (std::size_t round = 0; round < rounds; ++round) {
    tbb::parallel_for(std::size_t{0}, groups, [&](std::size_t g) { samplers[g].draw(per_round); });
    t = summarise(gen, samplers, mu, pooled);
    double worst = 0.0;
    for (Quantity q : all_quantities) worst = std::max(worst, t[q].error);
    if (worst <= settings.tolerance) break;
  }
  return t;
}

namespace {

GroundTruth summarise(const DirichletGenerator& gen, const std::vector<GroupSampler>& samplers,
                      const std::array<double, controls>& mu, bool pooled) {
  const std::size_t K = gen.classes();
  const auto& spec = gen.spec();
  Moments M;
  for (const auto& s : samplers) M.merge(s.result().moments);  // fixed order
  const double N = M.n;
  GroundTruth t;
  t[Quantity::accuracy] = controlled_mean(M, t_acc, mu);
  TruthValue gap = controlled_mean(M, t_gap, mu);
  t[Quantity::overconfidence] = {-gap.value, TruthMethod::monte_carlo, gap.error};
  t[Quantity::brier] = controlled_mean(M, t_brier, mu);
  t[Quantity::nll] = controlled_mean(M, t_nll, mu);
  t[Quantity::canonical_l1] = controlled_mean(M, t_can_l1, mu);
  TruthValue l2sq = controlled_mean(M, t_can_l2sq, mu);
  const double l2 = std::sqrt(std::max(l2sq.value, 0.0));
  t[Quantity::canonical_l2] = {l2, TruthMethod::monte_carlo,
                               l2 > 0.0 ? l2sq.error / (2.0 * l2) : std::sqrt(l2sq.error)};

  // Top-label calibration error.
  const BinSums top_all = merge_bins(samplers, &GroupResult::top, -1);
  const BinSums top_a = merge_bins(samplers, &GroupResult::top, 0);
  const BinSums top_b = merge_bins(samplers, &GroupResult::top, 1);
  const bool z_determines_gap = std::holds_alternative<IdentityMap>(spec.map) ||
                                (std::holds_alternative<TopLabelMap>(spec.map) &&
                                 has_sign_constant_top_gap(spec.map, spec.classes));
  if (has_sign_constant_top_gap(spec.map, spec.classes)) {
    t[Quantity::ece_top_l1] = {std::abs(gap.value), TruthMethod::monte_carlo, gap.error};
  } else {
    t[Quantity::ece_top_l1] = abs_value(top_all, top_a, top_b, 1, N);
  }
  if (z_determines_gap) {
    // Z = g(max c) and c_top = max c: the gap is a function of Z, E[gap | Z] = gap.
    TruthValue sq = controlled_mean(M, t_gap_sq, mu);
    const double v = std::sqrt(std::max(sq.value, 0.0));
    t[Quantity::ece_top_l2] = {v, TruthMethod::monte_carlo,
                               v > 0.0 ? sq.error / (2.0 * v) : std::sqrt(sq.error)};
  } else {
    const auto fine = squared_conditional(top_all, 1, N);
    const auto coarse = squared_conditional(top_all, 2, N);
    const double v = std::sqrt(std::max(fine.value, 0.0));
    const double se = std::sqrt(fine.variance_if / N);
    // Binning bias shrinks with the square of the bin width: the fine partition's is about a
    // third of the difference to the partition with bins twice as wide.
    const double binning = std::abs(fine.value - coarse.value) / 3.0;
    const double err_sq = se + binning;
    t[Quantity::ece_top_l2] = {v, TruthMethod::monte_carlo,
                               v > 0.0 ? err_sq / (2.0 * v) : std::sqrt(err_sq)};
  }

  const BinSums cw_all = merge_bins(samplers, &GroupResult::classwise, -1);
  const BinSums cw_a = merge_bins(samplers, &GroupResult::classwise, 0);
  const BinSums cw_b = merge_bins(samplers, &GroupResult::classwise, 1);
  if (pooled) {
    // One channel holding all K classes: N K values, averaged = the mean over classes.
    TruthValue v = abs_value(cw_all, cw_a, cw_b, 1, N * static_cast<double>(K));
    t[Quantity::classwise_ece_l1] = v;
  } else {
    t[Quantity::classwise_ece_l1] = abs_value(cw_all, cw_a, cw_b, K, N);
  }
  return t;
}

}  // namespace

GroundTruth compute_truth(const DirichletGenerator& gen, const TruthSettings& settings) {
  const auto& spec = gen.spec();
  if (is_identity(spec.map)) return identity_truth(spec.alpha);
  GroundTruth t;
  if (binary_truth_by_quadrature(gen, t)) return t;
  t = monte_carlo_truth(gen, settings);
  if (preserves_argmax(spec.map, gen.classes())) {
    // Accuracy = E[max c] exactly; E[Z] - accuracy keeps its Monte Carlo error.
    t[Quantity::accuracy] = expected_max(spec.alpha);
  }
  return t;
}

const GroundTruth& TruthCache::get(const DirichletGenerator& generator,
                                   const TruthSettings& settings) {
  const std::string key =
      generator.canonical_text() + "|samples=" + std::to_string(settings.samples);
  std::lock_guard lock(mutex_);
  auto it = cache_.find(key);
  if (it == cache_.end())
    it = cache_.emplace(key, std::make_unique<GroundTruth>(compute_truth(generator, settings)))
             .first;
  return *it->second;
}

}  // namespace calbench
