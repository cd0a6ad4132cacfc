#include "estimators/binned_ece.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "estimators/bin_gap_bias.hpp"

namespace calbench {

namespace {

// 1.0 or 0.0 from a table: GCC compiles the select to a branch, which in a loop over a row's
// classes mispredicts once a row, at the label's class (10 % of a classwise pass at K = 10).
inline double indicator(bool b) {
  static constexpr double values[2] = {0.0, 1.0};
  return values[b];
}

// Kumar et al. 2019's unbiased estimate of bin b's squared gap, weighted by n_b/n: m rows,
// score and outcome sums. A singleton bin has no variance estimate: it drops out (their
// `calibration` package) or keeps its biased term (torchmetrics).
double debiased_term(double m, double score_sum, double hits_sum, double n, bool keep_singleton) {
  const double gap = (score_sum - hits_sum) / m;
  if (m < 2.0) return keep_singleton ? m / n * gap * gap : 0.0;
  const double ybar = hits_sum / m;
  return m / n * (gap * gap - ybar * (1.0 - ybar) / (m - 1.0));
}

// The classwise paths' own scratch (EstimatorWorkspace::scratch): the one-pass path's K x B
// gap sums and its bin lookup table (binning.hpp), and the general path's kept rows of each
// gathered class.
struct ClasswiseScratch {
  std::vector<double> bin_sum;
  std::vector<std::uint32_t> cell_bin;
  std::vector<std::size_t> kept;
};

}  // namespace

BinnedEce::BinnedEce(BinnedEceSpec spec) : spec_(spec) {
  if (spec_.bins < 1) throw DomainError("bins = 0: must be >= 1");
  if (!(spec_.threshold >= 0.0 && spec_.threshold < 1.0))
    throw DomainError("threshold = " + std::to_string(spec_.threshold) + ": must be in [0, 1)");
  if (spec_.convention == nullptr) spec_.convention = &calbench_convention();
  if (spec_.norm == Norm::lp && !(spec_.power >= 1.0 && std::isfinite(spec_.power)))
    throw DomainError("p = " + std::to_string(spec_.power) + ": must be finite and >= 1");
  // MAPIE's linspace(0, 1, 1) is the edge 0 alone: every positive score would fall beyond it.
  if (spec_.convention->edges == EdgeRule::zero_bin && spec_.bins < 2)
    throw DomainError("convention " + std::string(spec_.convention->name) +
                      " needs bins >= 2 (a bin for the lowest edge, then B - 1 bins)");
  // The variants estimate() sends to binned_calibration_error with fixed bins.
  if (spec_.convention == &calbench_convention() && spec_.scope == Scope::top && !spec_.debiased &&
      spec_.binning == Binning::equal_width && spec_.norm != Norm::average &&
      spec_.norm != Norm::lp)
    top_bins_.emplace(spec_);
}

BinnedEce::TopBins::TopBins(const BinnedEceSpec& spec) : norm_(spec.norm) {
  equal_width_edges(spec.bins, edges_);
}

double BinnedEce::TopBins::from_bin_sums(const TopLabelBinSums& sums) const {
  if (sums.n == 0.0) return 0.0;
  // binned_calibration_error's combine.
  const double out = combine_bins_unrooted(sums.gap, sums.count, sums.n, norm_);
  return norm_ == Norm::l2 ? std::sqrt(out) : out;
}

std::optional<double> BinnedEce::TopBins::finite_sample_bias_from(
    const TopLabelBinSums& sums) const {
  if (norm_ != Norm::l1) return std::nullopt;
  // scope_error with `bias` under calbench's convention (weights n_b / n).
  double out = 0.0;
  for (std::size_t b = 0; b < sums.count.size(); ++b) {
    const double m = sums.count[b];
    if (m == 0.0) continue;
    out += m / sums.n * abs_gap_bias(m, sums.score[b], sums.hits[b]);
  }
  return out;
}

double BinnedEce::scope_error(std::span<const double> scores, std::span<const double> outcomes,
                              EstimatorWorkspace& ws, bool bias) const {
  const Convention& c = *spec_.convention;
  const std::size_t n = scores.size();
  if (n == 0) return 0.0;
  const std::size_t nb = bin_statistics(scores, outcomes, spec_.binning, spec_.bins, c, ws);
  const double nd = static_cast<double>(n);
  double out = 0.0;
  std::size_t nonempty = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    const double m = ws.bin_count[b];
    if (m == 0.0) continue;
    ++nonempty;
    const double gap = bias ? abs_gap_bias(m, ws.bin_score[b], ws.bin_hits[b])
                            : std::abs(ws.bin_score[b] - ws.bin_hits[b]) / m;
    if (spec_.debiased) {
      out += debiased_term(m, ws.bin_score[b], ws.bin_hits[b], nd, c.debias_keep_singleton);
      continue;
    }
    // Ranges weighted equally (the convention's unweighted_ranges): the l1 sum is divided by
    // the number of ranges below.
    const bool unweighted = spec_.norm == Norm::l1 && c.unweighted_ranges;
    add_bin_gap(out, spec_.norm, unweighted ? 1.0 : m / nd, gap, spec_.power);
  }
  if (!spec_.debiased && spec_.norm == Norm::average)
    return nonempty > 0 ? out / static_cast<double>(nonempty) : 0.0;
  if (!spec_.debiased && spec_.norm == Norm::l1 && c.unweighted_ranges)
    return out / static_cast<double>(spec_.bins);  // (1/R) sum_r |gap_r|, R = B ranges
  return out;
}

void BinnedEce::single_scope(const Sample& s, EstimatorWorkspace& ws) const {
  if (const auto problem = classes_problem(s.classes)) throw DomainError(*problem);
  const bool float32 = spec_.convention->float32;
  const bool top = spec_.scope == Scope::top;
  ws.scores.resize(s.size);
  ws.outcomes.resize(s.size);
  for (std::size_t i = 0; i < s.size; ++i) {
    const double v = top ? s.confidence[i] : s.p[2 * i + 1];
    ws.scores[i] = float32 ? static_cast<double>(static_cast<float>(v)) : v;
    ws.outcomes[i] = s.outcome(i, top ? s.predicted[i] : 1);
  }
}

SquaredErrorEstimate BinnedEce::squared_error(const Sample& s, EstimatorWorkspace& ws) const {
  single_scope(s, ws);
  const Convention& c = *spec_.convention;
  const std::size_t nb =
      bin_statistics_with_squares(ws.scores, ws.outcomes, spec_.binning, spec_.bins, c, ws);
  const double n = static_cast<double>(s.size);
  SquaredErrorEstimate out;
  out.root = !spec_.squared;
  if (s.size == 0) return out;
  double first = 0.0, second = 0.0;
  for (std::size_t b = 0; b < nb; ++b) {
    const double m = ws.bin_count[b];
    if (m == 0.0) continue;
    const double term =
        debiased_term(m, ws.bin_score[b], ws.bin_hits[b], n, c.debias_keep_singleton);
    out.square += term;
    if (m < 2.0) continue;
    const double w = m / n;
    const double e = term / w;  // unbiased for d_b^2; clipping it would inflate V at d_b = 0
    const double mean = (ws.bin_score[b] - ws.bin_hits[b]) / m;
    const double v = std::max(0.0, (ws.bin_gap_squares[b] - m * mean * mean) / (m - 1.0));
    first += w * e * (4.0 * v + e);
    second += v * v;
  }
  out.variance = std::max(0.0, (first - out.square * out.square) / n + 2.0 * second / (n * n));
  return out;
}

double BinnedEce::finite_sample_bias(const Sample& s, EstimatorWorkspace& ws) const {
  return by_scope(s, ws, true);
}

std::optional<std::string> BinnedEce::classes_problem(std::size_t classes) const {
  if (spec_.scope == Scope::binary && classes != 2)
    return "scope binary needs K = 2 classes, found K = " + std::to_string(classes);
  return std::nullopt;
}

double BinnedEce::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  const Convention& c = *spec_.convention;
  // calbench's own top-label ECE keeps its single-pass path.
  if (&c == &calbench_convention() && spec_.scope == Scope::top && !spec_.debiased &&
      spec_.norm != Norm::average && spec_.norm != Norm::lp) {
    ws.outcomes.resize(s.size);
    for (std::size_t i = 0; i < s.size; ++i) ws.outcomes[i] = s.outcome(i, s.predicted[i]);
    return binned_calibration_error(s.confidence, ws.outcomes, spec_.binning, spec_.bins,
                                    spec_.norm, ws);
  }
  // calbench's classwise ECE with equal-width bins and no threshold: one pass over the rows
  // into K x B sums, instead of K passes that gather a class's column (3x faster at K = 10).
  if (&c == &calbench_convention() && spec_.scope == Scope::classwise && !spec_.debiased &&
      spec_.binning == Binning::equal_width && spec_.threshold == 0.0 &&
      (spec_.norm == Norm::l1 || spec_.norm == Norm::l2 || spec_.norm == Norm::max)) {
    const std::size_t K = s.classes, B = spec_.bins;
    ClasswiseScratch& classwise = ws.scratch<ClasswiseScratch>();
    std::vector<double>& bin_sum = classwise.bin_sum;
    equal_width_edges(B, ws.edges);
    equal_width_table(ws.edges, classwise.cell_bin);
    const std::span<const std::uint32_t> table(classwise.cell_bin);
    bin_sum.assign(K * B, 0.0);
    ws.bin_count.assign(K * B, 0.0);
    // One instantiation per kind of outcome, so the label case needs no branch per score.
    const auto accumulate = [&](auto outcome) {
      for (std::size_t i = 0; i < s.size; ++i) {
        const double* row = s.p.data() + i * K;
        for (std::size_t k = 0; k < K; ++k) {
          const std::size_t b = k * B + equal_width_bin(row[k], ws.edges, table);
          bin_sum[b] += row[k] - outcome(i, k);
          ws.bin_count[b] += 1.0;
        }
      }
    };
    if (s.truth.empty())
      accumulate([&](std::size_t i, std::size_t k) { return indicator(k == s.label[i]); });
    else
      accumulate([&](std::size_t i, std::size_t k) { return s.truth[i * K + k]; });
    const std::span<const double> sums(bin_sum), counts(ws.bin_count);
    double total = 0.0;
    for (std::size_t k = 0; k < K; ++k)
      total += combine_bins_unrooted(sums.subspan(k * B, B), counts.subspan(k * B, B),
                                     static_cast<double>(s.size), spec_.norm);
    const double mean = total / static_cast<double>(K);
    return spec_.norm == Norm::l2 ? std::sqrt(mean) : mean;
  }
  return by_scope(s, ws, false);
}

double BinnedEce::by_scope(const Sample& s, EstimatorWorkspace& ws, bool bias) const {
  const Convention& c = *spec_.convention;
  const auto finish = [&](double e) {
    if (bias) return e;
    if (spec_.debiased) return spec_.squared ? e : std::sqrt(std::max(0.0, e));
    if (spec_.norm == Norm::lp) return std::pow(e, 1.0 / spec_.power);
    return spec_.norm == Norm::l2 ? std::sqrt(e) : e;
  };
  if (spec_.scope == Scope::top || spec_.scope == Scope::binary) {
    single_scope(s, ws);
    return finish(scope_error(ws.scores, ws.outcomes, ws, bias));
  }
  // classwise: mean over classes of CE_k (of CE_k^2 for l2 and the debiased estimator, whose
  // per-class estimate is clipped at 0 first, as Kumar et al.'s marginal mode).
  const bool drop = spec_.threshold > 0.0 || c.drop_zero_scores;
  const std::size_t K = s.classes, n = s.size;
  // The columns of `group` classes at a time, gathered in one pass over the rows: a pass per
  // class would read the whole row-major matrix K times. Columns are compacted to the kept
  // rows: every row is written and its column's end advances only past kept ones, as whether a
  // score passes the threshold is not predictable (a branch per score cost 2.5x the gathering
  // on W1). At most about 2^18 scores (2 MB) at a time, so large samples need no K x n copy;
  // W2 (K = 100) runs as fast as with 2^20.
  const std::size_t group =
      std::clamp<std::size_t>((std::size_t{1} << 18) / std::max<std::size_t>(n, 1), 1, K);
  ws.scores.resize(group * n);
  ws.outcomes.resize(group * n);
  std::vector<std::size_t>& kept_of = ws.scratch<ClasswiseScratch>().kept;
  kept_of.resize(group);
  double total = 0.0;
  for (std::size_t k0 = 0; k0 < K; k0 += group) {
    const std::size_t g = std::min(group, K - k0);
    std::fill(kept_of.begin(), kept_of.end(), 0);
    double* const scores = ws.scores.data();
    double* const outcomes = ws.outcomes.data();
    std::size_t* const kept = kept_of.data();
    const double threshold = spec_.threshold;
    // One instantiation per kind of outcome and of score, so the loop tests neither.
    const auto gather = [&](auto outcome, auto score) {
      for (std::size_t i = 0; i < n; ++i) {
        const double* row = s.p.data() + i * K + k0;
        for (std::size_t j = 0; j < g; ++j) {
          const double v = score(row[j]);
          const std::size_t at = j * n + kept[j];
          scores[at] = v;
          outcomes[at] = outcome(i, k0 + j);
          kept[j] += static_cast<std::size_t>(!drop | (v > threshold));
        }
      }
    };
    const auto as_double = [](double v) { return v; };
    const auto as_float = [](double v) { return static_cast<double>(static_cast<float>(v)); };
    const auto label = [&](std::size_t i, std::size_t k) { return indicator(s.label[i] == k); };
    const auto truth = [&](std::size_t i, std::size_t k) { return s.truth[i * K + k]; };
    if (s.truth.empty() && !c.float32)
      gather(label, as_double);
    else if (s.truth.empty())
      gather(label, as_float);
    else if (!c.float32)
      gather(truth, as_double);
    else
      gather(truth, as_float);
    for (std::size_t j = 0; j < g; ++j) {
      const double e = scope_error({ws.scores.data() + j * n, kept_of[j]},
                                   {ws.outcomes.data() + j * n, kept_of[j]}, ws, bias);
      total += spec_.debiased && !spec_.squared ? std::max(0.0, e) : e;
    }
  }
  return finish(total / static_cast<double>(s.classes));
}

std::optional<Quantity> BinnedEce::target() const {
  const bool calbench_like = spec_.threshold == 0.0 && !spec_.convention->drop_zero_scores &&
                             !spec_.convention->unweighted_ranges;
  if (spec_.debiased) {
    if (spec_.squared || spec_.scope != Scope::top) return std::nullopt;
    return Quantity::ece_top_l2;
  }
  if (!calbench_like) return std::nullopt;
  switch (spec_.scope) {
    case Scope::top:
      if (spec_.norm == Norm::l1) return Quantity::ece_top_l1;
      if (spec_.norm == Norm::l2) return Quantity::ece_top_l2;
      return std::nullopt;
    case Scope::classwise:
      if (spec_.norm == Norm::l1) return Quantity::classwise_ece_l1;
      return std::nullopt;
    case Scope::binary:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace calbench
