#pragma once
// The Monte Carlo core of the truth engine, shared by every generator family: fine bins for
// conditional expectations given a 1-D statistic, moments with control variates, and the
// summary of independent groups into the nine quantities (docs/truth.md).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "truth/ground_truth.hpp"

namespace calbench::mc {

// Independent groups of the Monte Carlo sample: each has its own stream and accumulators, so
// the result does not depend on the thread count; even and odd groups form the two halves of
// the cross-fitted |.| estimate.
constexpr std::size_t groups = 8;

// ---------------------------------------------------------------------------------------------
// Fine bins on [0, 1] for conditional expectations given a score v: log-scale towards 0 and
// towards 1, read straight off the bits of min(v, 1 - v): 2^sub_bits bins per octave (relative
// width 2^-sub_bits) over 40 octaves, and one bin each for the last 2^-40 at either end, where
// |E[c | v] - v| contributes at most about 2^-40. The index is monotone in v; equal values
// share a bin.
constexpr int octaves = 40;

template <int sub_bits>
struct FineBins {
  static constexpr std::size_t per_side = 1 + (std::size_t{octaves} << sub_bits);
  static constexpr std::size_t count = 2 * per_side;
  static std::size_t of(double v) {
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
    return upper ? count - 1 - index : index;
  }
};

// The truth engine's bins: 32 per octave.
using TruthBins = FineBins<5>;
constexpr std::size_t fine_bins = TruthBins::count;
inline std::size_t fine_bin(double v) {
  return TruthBins::of(v);
}

// The classwise bins of one class when E[c_k - p_k | p_k] jumps at `split` (non-injective
// top_label: class k's candidate preimage appears at p_k = 1/K) and varies like
// sqrt(p_k - split) just above it (the candidate's weight has the factor 1/g'(m), singular
// there). The fine bins, except that [split, split + span) gets `refined` bins of its own,
// uniform in sqrt(v - split) (narrow at the jump, wider above), span = 8 fine bins of split's
// octave. The split alone was not enough: at K = 3, alpha (0.5, 1, 2), gamma 2, class 3's
// conditional gap changes sign within the fine bin above 1/3 (width 1/128) and |.| of that bin
// lost 1.4e-4 of its class error (7.6e-5 of classwise_ece_l1, 11 reported errors; docs/truth.md).
// Every bin is still one interval of v, so this is a partition and |.| per bin a lower bound.
struct ClasswiseBins {
  static constexpr std::size_t refined = 128;
  double split = 0.0, span = 0.0;  // split 0: the plain fine bins
  explicit ClasswiseBins(double split_at = 0.0) : split(split_at) {
    if (split > 0.0) {
      int exponent = 0;
      std::frexp(split, &exponent);  // split in [2^(e-1), 2^e): fine bins of 2^(e-1)/32
      span = 8.0 * std::ldexp(1.0, exponent - 1) / static_cast<double>(1u << 5);
    }
  }
  std::size_t count() const { return split > 0.0 ? TruthBins::count + refined : TruthBins::count; }
  std::size_t of(double v) const {
    if (split > 0.0 && v >= split && v < split + span) {
      const auto i =
          static_cast<std::size_t>(static_cast<double>(refined) * std::sqrt((v - split) / span));
      return TruthBins::count + std::min(i, refined - 1);
    }
    return TruthBins::of(v);
  }
};

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

inline AbsConditional abs_conditional(const BinSums& all, const BinSums& a, const BinSums& b,
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

inline SquaredConditional squared_conditional(const BinSums& all, std::size_t merge, double N) {
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
// The three controls every family with controls has, first in every draw's control values;
// a family may append more whose means it knows (the `dirichlet` engine's linear controls:
// truth_engine.cpp), so the number of controls m is a run-time value.
enum Control { c_sum_sq, c_neg_entropy, c_max, controls };

// The three controls' values at one draw, written to out[0..3): sum x^2, sum x log x (a zero
// x adds nothing, x log x -> 0) and max x. x is c where its law has these means in closed form
// (the `dirichlet` family) and p where c is a function of p (the other families).
inline void control_values(std::span<const double> x, std::span<const double> log_x,
                           std::span<double> out) {
  double sum_sq = 0.0, x_log_x = 0.0, max_x = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    sum_sq += x[k] * x[k];
    if (x[k] > 0.0) x_log_x += x[k] * log_x[k];
    max_x = std::max(max_x, x[k]);
  }
  out[c_sum_sq] = sum_sq;
  out[c_neg_entropy] = x_log_x;
  out[c_max] = max_x;
}

// Sums of the targets, the m controls and their cross products. Every loop runs in a fixed
// order (and the build has no FMA contraction), so a sum has the same bits whatever m is.
struct Moments {
  std::size_t m = controls;
  std::array<double, targets> x{}, xx{};
  std::vector<double> y, xy, yy;  // m; targets x m; m x m, row-major
  double n = 0.0;
  explicit Moments(std::size_t control_count = controls)
      : m(control_count), y(m, 0.0), xy(targets * m, 0.0), yy(m * m, 0.0) {}
  void add(const std::array<double, targets>& xs, std::span<const double> ys) {
    n += 1.0;
    for (std::size_t i = 0; i < targets; ++i) {
      x[i] += xs[i];
      xx[i] += xs[i] * xs[i];
      for (std::size_t j = 0; j < m; ++j) xy[i * m + j] += xs[i] * ys[j];
    }
    for (std::size_t j = 0; j < m; ++j) {
      y[j] += ys[j];
      for (std::size_t l = 0; l < m; ++l) yy[j * m + l] += ys[j] * ys[l];
    }
  }
  void merge(const Moments& o) {
    n += o.n;
    for (std::size_t i = 0; i < targets; ++i) {
      x[i] += o.x[i];
      xx[i] += o.xx[i];
      for (std::size_t j = 0; j < m; ++j) xy[i * m + j] += o.xy[i * m + j];
    }
    for (std::size_t j = 0; j < m; ++j) {
      y[j] += o.y[j];
      for (std::size_t l = 0; l < m; ++l) yy[j * m + l] += o.yy[j * m + l];
    }
  }
};

// Solves the m x m system A b = r (A row-major) by Gaussian elimination with partial pivoting;
// m is at most a few dozen, and a linear-algebra dependency is not worth one small solve. A
// singular system (a control that is constant) gives b = 0 for the affected coefficient.
inline std::vector<double> solve(std::vector<double> A, std::vector<double> r) {
  const std::size_t m = r.size();
  std::vector<std::size_t> order(m);
  for (std::size_t i = 0; i < m; ++i) order[i] = i;
  constexpr double tiny = 1e-300;
  for (std::size_t col = 0; col < m; ++col) {
    std::size_t pivot = col;
    for (std::size_t row = col + 1; row < m; ++row)
      if (std::abs(A[order[row] * m + col]) > std::abs(A[order[pivot] * m + col])) pivot = row;
    std::swap(order[col], order[pivot]);
    const double d = A[order[col] * m + col];
    if (std::abs(d) < tiny) continue;
    for (std::size_t row = col + 1; row < m; ++row) {
      const double f = A[order[row] * m + col] / d;
      for (std::size_t k = col; k < m; ++k) A[order[row] * m + k] -= f * A[order[col] * m + k];
      r[order[row]] -= f * r[order[col]];
    }
  }
  std::vector<double> b(m, 0.0);
  for (std::size_t col = m; col-- > 0;) {
    const double d = A[order[col] * m + col];
    double v = r[order[col]];
    for (std::size_t k = col + 1; k < m; ++k) v -= A[order[col] * m + k] * b[k];
    b[col] = std::abs(d) < tiny ? 0.0 : v / d;
  }
  return b;
}

// Control-variate estimate of E[X_i] and its standard error (Glasserman 2004, §4.1), with the
// regression coefficients estimated from the whole sample (bias O(m/N)).
inline TruthValue controlled_mean(const Moments& M, int i, std::span<const double> mu) {
  const double N = M.n;
  const std::size_t m = M.m;
  std::vector<double> cov_yy(m * m), cov_xy(m);
  for (std::size_t j = 0; j < m; ++j) {
    cov_xy[j] = M.xy[i * m + j] / N - M.x[i] / N * M.y[j] / N;
    for (std::size_t l = 0; l < m; ++l)
      cov_yy[j * m + l] = M.yy[j * m + l] / N - M.y[j] / N * M.y[l] / N;
  }
  const auto beta = solve(cov_yy, cov_xy);
  double value = M.x[i] / N;
  double var = M.xx[i] / N - value * value;
  for (std::size_t j = 0; j < m; ++j) {
    value -= beta[j] * (M.y[j] / N - mu[j]);
    var -= 2.0 * beta[j] * cov_xy[j];
    for (std::size_t l = 0; l < m; ++l) var += beta[j] * beta[l] * cov_yy[j * m + l];
  }
  return {value, TruthMethod::monte_carlo, std::sqrt(std::max(var, 0.0) / N)};
}

struct GroupResult {
  Moments moments;
  BinSums top, classwise;
};

// The bin sums of several parts added in order into zeros (so two parts pool to exactly
// a + b, whichever code pools them).
inline BinSums merge_bins(std::span<const BinSums* const> parts) {
  BinSums out;
  out.resize(parts.front()->n.size());
  for (const BinSums* b : parts)
    for (std::size_t i = 0; i < b->n.size(); ++i) {
      out.n[i] += b->n[i];
      out.s[i] += b->s[i];
      out.ss[i] += b->ss[i];
    }
  return out;
}

// The groups' bins of one kind, all groups (parity -1) or the even (0) or odd (1) ones.
inline BinSums merge_bins(const std::vector<const GroupResult*>& groups_,
                          BinSums GroupResult::*member, int parity) {
  std::vector<const BinSums*> parts;
  for (std::size_t g = 0; g < groups_.size(); ++g)
    if (parity < 0 || static_cast<int>(g % 2) == parity) parts.push_back(&(groups_[g]->*member));
  return merge_bins(parts);
}

// A cross-fitted |.| estimate: the plug-in is biased up and the cross-fit down, so the value
// is their midpoint and the error the standard error plus half the bracket.
inline TruthValue bracketed(double plug_in, double cross_fit, double standard_error) {
  return {0.5 * (plug_in + cross_fit), TruthMethod::monte_carlo,
          standard_error + 0.5 * std::abs(plug_in - cross_fit)};
}

// Combines a cross-fitted |.| estimate over channels into a TruthValue; the channels are
// averaged (classwise) and their influence variances added as if independent.
inline TruthValue abs_value(const BinSums& all, const BinSums& a, const BinSums& b,
                            std::size_t channels, double N_per_channel) {
  double plug = 0.0, cross = 0.0, var = 0.0;
  const std::size_t width = all.n.size() / channels;  // each channel's bins
  for (std::size_t ch = 0; ch < channels; ++ch) {
    const auto r = abs_conditional(all, a, b, ch * width, (ch + 1) * width, N_per_channel);
    plug += r.plug_in;
    cross += r.cross_fit;
    var += r.variance_if;
  }
  const double C = static_cast<double>(channels);
  return bracketed(plug / C, cross / C, std::sqrt(var / N_per_channel) / C);
}

// What the summary needs to know of the generator.
struct SummaryShape {
  std::size_t classes = 2;
  bool pooled = false;             // classes exchangeable: one set of classwise bins
  bool sign_constant_top = false;  // ece_top_l1 = |E[Z - c_top]|, no binning
  bool z_determines_gap = false;   // c_top - Z is a function of Z: ece_top_l2 unconditional
  bool classwise = true;           // per-class bins kept (else classwise_ece_l1 is unknown)
  // Where E[c_k - p_k | p_k] jumps (0: nowhere): no classwise bin mixes both sides of it
  // (|.| of a mixed bin is biased towards 0), and the range above it has finer bins
  // (ClasswiseBins).
  double classwise_split = 0.0;
};

// The nine quantities from the groups' accumulators (merged in the given order) and the
// controls' exact means (one per control of the moments).
GroundTruth summarise(const std::vector<const GroupResult*>& samplers, std::span<const double> mu,
                      const SummaryShape& shape);

}  // namespace calbench::mc
