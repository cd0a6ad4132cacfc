#include "estimators/uncertainty.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "core/task_kernel.hpp"

namespace calbench {
namespace {

constexpr std::uint64_t two_32 = std::uint64_t{1} << 32;

// Shapes the workspace's sample like `sample` (allocates only when it grows).
// A resample's rows carry labels, never truths (a jackknife may have left some in `out`).
void shape_like(const Sample& sample, Sample& out) {
  out.resize(sample.size, sample.classes);
  out.truth.clear();
}

void bootstrap_resample(const Sample& sample, Engine& engine, ResampleWorkspace& ws) {
  Sample& out = ws.sample;
  ws.rows_current = false;
  shape_like(sample, out);
  const std::size_t n = sample.size, K = sample.classes;
  ws.drawn.resize(n);
  const double scale = static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = std::min(n - 1, static_cast<std::size_t>(uniform_open01(engine) * scale));
    std::copy_n(sample.p.data() + j * K, K, out.p.data() + i * K);
    out.label[i] = sample.label[j];
    out.confidence[i] = sample.confidence[j];
    out.predicted[i] = sample.predicted[j];
    ws.drawn[i] = static_cast<std::uint32_t>(j);
  }
}

// y*_i = the first k with u < c_ik, c_ik = p_i0 + ... + p_ik summed left to right (the
// inverse-CDF draw of uncertainty.hpp), or the row's last class with p > 0 when rounding leaves
// c_i,K-1 <= u. The running sums are formed once per call, in that order, so each draw is the
// same class the walk over the row would find: most often the predicted one, found by one test
// of u against [c_i,pred-1, c_i,pred), else by counting the row's sums <= u.
void prepare_relabel(const Sample& sample, ResampleWorkspace& ws) {
  const std::size_t n = sample.size, K = sample.classes;
  Sample& out = ws.sample;
  shape_like(sample, out);
  std::copy(sample.p.begin(), sample.p.end(), out.p.begin());
  std::copy(sample.confidence.begin(), sample.confidence.end(), out.confidence.begin());
  std::copy(sample.predicted.begin(), sample.predicted.end(), out.predicted.begin());
  ws.cumulative.resize(n * K);
  ws.predicted_from.resize(n);
  ws.last_positive.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* row = sample.p.data() + i * K;
    double* sums = ws.cumulative.data() + i * K;
    double cumulative = 0.0;
    std::uint32_t last_positive = 0;
    for (std::size_t k = 0; k < K; ++k) {
      if (k == sample.predicted[i]) ws.predicted_from[i] = cumulative;
      if (row[k] > 0.0) last_positive = static_cast<std::uint32_t>(k);
      cumulative += row[k];
      sums[k] = cumulative;
    }
    ws.last_positive[i] = last_positive;
  }
  ws.rows_current = true;
}

void relabel(const Sample& sample, Engine& engine, ResampleWorkspace& ws) {
  if (!ws.rows_current) prepare_relabel(sample, ws);
  const std::size_t K = sample.classes;
  Sample& out = ws.sample;
  for (std::size_t i = 0; i < sample.size; ++i) {
    const double u = uniform_open01(engine);
    const double* sums = ws.cumulative.data() + i * K;
    const std::uint32_t predicted = sample.predicted[i];
    if (ws.predicted_from[i] <= u && u < sums[predicted]) {
      out.label[i] = predicted;
      continue;
    }
    // The first k with u < sums[k] is the number of sums <= u (they never decrease), counted
    // without a branch per class: a search's branches are mispredicted on random u.
    std::size_t y = 0;
    for (std::size_t k = 0; k < K; ++k) y += sums[k] <= u ? 1 : 0;
    out.label[i] = y < K ? static_cast<std::uint32_t>(y) : ws.last_positive[i];
  }
}

using Resampler = void (*)(const Sample&, Engine&, ResampleWorkspace&);

// Known confidence orders (ConfidenceOrdered). The sample's rows are sorted by
// confidence once per call (stable: ties by row); a resample's order then follows in O(n) from
// the ranks, instead of every estimator sorting every resample: a bootstrap resample's rows by
// the rank of the row each copies (a counting sort; a row drawn twice keeps its two copies in
// resample order), a label redraw's rows are the sample's, and a jackknife sample's are the
// sample's without those left out. Ties in confidence may come out in another order than an
// estimator's own sort would give: the values differ at most in the order in which tied rows
// are added (the last bits, and only where tied rows differ in outcome).
// Each estimator's ConfidenceOrdered (null for those without), or an empty vector when none has.
std::vector<const ConfidenceOrdered*> confidence_ordered(
    std::span<const Estimator* const> estimators) {
  std::vector<const ConfidenceOrdered*> out;
  for (const Estimator* e : estimators) out.push_back(e->capabilities().confidence_order);
  if (std::all_of(out.begin(), out.end(), [](const ConfidenceOrdered* o) { return !o; }))
    out.clear();
  return out;
}

// Every estimator's value on a resample into values[0, E): from `order`, the resample's rows by
// confidence, for the estimators `ordered` has (none when it is empty), by estimate() for the
// others.
void evaluate(std::span<const Estimator* const> estimators,
              std::span<const ConfidenceOrdered* const> ordered, const Sample& resample,
              std::span<const std::uint32_t> order, EstimatorWorkspace& ws, double* values) {
  for (std::size_t e = 0; e < estimators.size(); ++e)
    values[e] = !ordered.empty() && ordered[e] ? ordered[e]->estimate_in_order(resample, order, ws)
                                               : estimators[e]->estimate(resample, ws);
}

void prepare_confidence_order(const Sample& sample, ResampleWorkspace& ws) {
  const std::size_t n = sample.size;
  if (n >= two_32) throw DomainError("a sample to resample must have < 2^32 rows");
  ws.confidence_rows.resize(n);
  std::iota(ws.confidence_rows.begin(), ws.confidence_rows.end(), std::uint32_t{0});
  std::stable_sort(ws.confidence_rows.begin(), ws.confidence_rows.end(),
                   [&](std::uint32_t a, std::uint32_t b) {
                     return sample.confidence[a] < sample.confidence[b];
                   });
  ws.confidence_rank.resize(n);
  for (std::size_t r = 0; r < n; ++r)
    ws.confidence_rank[ws.confidence_rows[r]] = static_cast<std::uint32_t>(r);
}

// The bootstrap resample's rows (ws.drawn: the sample row each copies) by confidence.
void bootstrap_confidence_order(std::span<const std::uint32_t> rank, ResampleWorkspace& ws) {
  const std::size_t n = ws.drawn.size();
  ws.rank_start.assign(n + 1, 0);
  for (const std::uint32_t j : ws.drawn) ++ws.rank_start[rank[j] + 1];
  for (std::size_t r = 0; r < n; ++r) ws.rank_start[r + 1] += ws.rank_start[r];
  ws.order.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    ws.order[ws.rank_start[rank[ws.drawn[i]]]++] = static_cast<std::uint32_t>(i);
}

// Resampling from bin sums. When every estimator is a function of fixed top-label bins' sums
// (FixedTopLabelBins), a resample needs only each bin's count and sums of confidence, outcome
// and confidence - outcome over the drawn rows: no resampled sample is built (its K
// probabilities copied per row) and nothing is binned again. The draws are the ones
// bootstrap_resample and relabel make, from the same streams in the same order, and the sums
// add the same terms in the same (resample row) order as the estimator's own pass does, so every
// value is the same bits as Estimator::estimate on the built resample
// (tests/unit/test_uncertainty.cpp compares them). For calbench plan's default-interval width
// questions this is most of the time.

// The estimators' FixedTopLabelBins, or an empty vector when one of them has none.
std::vector<const FixedTopLabelBins*> bin_sum_forms(std::span<const Estimator* const> estimators) {
  std::vector<const FixedTopLabelBins*> forms;
  for (const Estimator* e : estimators) {
    const FixedTopLabelBins* form = e->capabilities().fixed_top_label_bins;
    if (!form) return {};
    forms.push_back(form);
  }
  return forms;
}

// The rows as the bin-sum resampling reads them. Estimators with the same bins share one set
// of sums (bias_corrected's beta is binned as its estimator is).
void prepare_binned_rows(const Sample& sample, std::span<const FixedTopLabelBins* const> forms,
                         bool relabel, ResampleWorkspace::BinnedRows& rows) {
  const std::size_t n = sample.size, K = sample.classes;
  rows.binning_of.clear();
  rows.bin.clear();
  rows.bins.clear();
  std::vector<std::uint32_t> bins(n);
  for (const FixedTopLabelBins* form : forms) {
    for (std::size_t i = 0; i < n; ++i)
      bins[i] = static_cast<std::uint32_t>(form->bin_of(sample.confidence[i]));
    std::size_t g = 0;
    while (g < rows.bin.size() && !(rows.bins[g] == form->bins() && rows.bin[g] == bins)) ++g;
    rows.binning_of.push_back(g);
    if (g < rows.bin.size()) continue;
    rows.bin.push_back(bins);
    rows.bins.push_back(form->bins());
  }
  rows.confidence.assign(sample.confidence.begin(), sample.confidence.end());
  rows.hit.resize(n);
  for (std::size_t i = 0; i < n; ++i) rows.hit[i] = sample.correct(i) ? 1 : 0;
  if (!relabel) return;
  // Every label redraw has these rows in these bins: their counts and confidence sums, added in
  // row order as the estimator adds them.
  rows.count.resize(rows.bin.size());
  rows.score.resize(rows.bin.size());
  for (std::size_t g = 0; g < rows.bin.size(); ++g) {
    rows.count[g].assign(rows.bins[g], 0.0);
    rows.score[g].assign(rows.bins[g], 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      rows.count[g][rows.bin[g][i]] += 1.0;
      rows.score[g][rows.bin[g][i]] += rows.confidence[i];
    }
  }
  // relabel's draw gives the predicted class exactly when c_i,pred-1 <= u < c_i,pred (the
  // running sums of p), or when u >= c_i,K-1 and the row's last class with p > 0 is the
  // predicted one.
  rows.predicted_from.resize(n);
  rows.predicted_to.resize(n);
  rows.last_sum.resize(n);
  rows.last_is_predicted.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* row = sample.p.data() + i * K;
    double cumulative = 0.0;
    std::uint32_t last_positive = 0;
    for (std::size_t k = 0; k < K; ++k) {
      if (k == sample.predicted[i]) rows.predicted_from[i] = cumulative;
      if (row[k] > 0.0) last_positive = static_cast<std::uint32_t>(k);
      cumulative += row[k];
      if (k == sample.predicted[i]) rows.predicted_to[i] = cumulative;
    }
    rows.last_sum[i] = cumulative;
    rows.last_is_predicted[i] = last_positive == sample.predicted[i] ? 1 : 0;
  }
}

// One resample's values from its bins' sums: `draw(i)` gives the resample's row i as (the
// source row whose bin and confidence it has, whether it is a hit). Counts and hits are added
// as integers (the same values as the estimator's sums of 1.0 and 0.0, which are exact below
// 2^53, with a shorter dependency chain from row to row). A label redraw keeps every row and
// its bin, so its counts and confidence sums are the call's own (BinnedRows::count, score),
// and only its hits and gaps are added per resample.
template <bool Relabel, typename Draw>
void values_from_bin_sums(std::span<const FixedTopLabelBins* const> forms,
                          const ResampleWorkspace::BinnedRows& rows, std::size_t n, Draw&& draw,
                          ResampleWorkspace& ws, double* values) {
  const std::size_t G = rows.bin.size();
  ws.bin_count.resize(G);
  ws.bin_score.resize(G);
  ws.bin_hits.resize(G);
  ws.bin_gap.resize(G);
  ws.bin_count_int.resize(G);
  ws.bin_hits_int.resize(G);
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t B = rows.bins[g];
    ws.bin_score[g].assign(B, 0.0);
    ws.bin_gap[g].assign(B, 0.0);
    ws.bin_count_int[g].assign(B, 0);
    ws.bin_hits_int[g].assign(B, 0);
  }
  const double* const confidence = rows.confidence.data();
  const auto add = [&](std::size_t g, std::size_t j, bool hit) {
    const std::uint32_t b = rows.bin[g][j];
    const double c = confidence[j];
    if constexpr (!Relabel) {
      ws.bin_count_int[g][b] += 1;
      ws.bin_score[g][b] += c;
    }
    // 1.0 or 0.0 from a table: GCC compiles the select to a branch, mispredicted on hits.
    static constexpr double outcome[2] = {0.0, 1.0};
    ws.bin_hits_int[g][b] += static_cast<std::uint32_t>(hit);
    ws.bin_gap[g][b] += c - outcome[hit];
  };
  if (G == 1) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto [j, hit] = draw(i);
      add(0, j, hit);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const auto [j, hit] = draw(i);
      for (std::size_t g = 0; g < G; ++g) add(g, j, hit);
    }
  }
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t B = rows.bins[g];
    ws.bin_count[g].resize(B);
    ws.bin_hits[g].resize(B);
    for (std::size_t b = 0; b < B; ++b) {
      ws.bin_count[g][b] = Relabel ? rows.count[g][b] : static_cast<double>(ws.bin_count_int[g][b]);
      ws.bin_hits[g][b] = static_cast<double>(ws.bin_hits_int[g][b]);
    }
  }
  for (std::size_t e = 0; e < forms.size(); ++e) {
    const std::size_t g = rows.binning_of[e];
    values[e] = forms[e]->from_bin_sums({ws.bin_count[g],
                                         Relabel ? std::span<const double>(rows.score[g])
                                                 : std::span<const double>(ws.bin_score[g]),
                                         ws.bin_hits[g], ws.bin_gap[g], static_cast<double>(n)});
  }
}

void bootstrap_bin_sums(const Sample& sample, std::span<const FixedTopLabelBins* const> forms,
                        const ResampleWorkspace::BinnedRows& rows, Engine& engine,
                        ResampleWorkspace& ws, double* values) {
  const std::size_t n = sample.size;
  const double scale = static_cast<double>(n);
  const std::uint8_t* const hit = rows.hit.data();
  // A local engine stays in registers; the caller's would be stored back on every draw, as the
  // compiler cannot tell it apart from the sums written in the loop.
  Engine local = std::move(engine);
  values_from_bin_sums<false>(
      forms, rows, n,
      [&](std::size_t) {
        // bootstrap_resample's row index.
        const std::size_t j =
            std::min(n - 1, static_cast<std::size_t>(uniform_open01(local) * scale));
        return std::pair{j, hit[j] != 0};
      },
      ws, values);
  engine = std::move(local);
}

void relabel_bin_sums(const Sample& sample, std::span<const FixedTopLabelBins* const> forms,
                      const ResampleWorkspace::BinnedRows& rows, Engine& engine,
                      ResampleWorkspace& ws, double* values) {
  const double* const from = rows.predicted_from.data();
  const double* const to = rows.predicted_to.data();
  const double* const last = rows.last_sum.data();
  const std::uint8_t* const last_is_predicted = rows.last_is_predicted.data();
  Engine local = std::move(engine);  // in registers, as in bootstrap_bin_sums
  values_from_bin_sums<true>(
      forms, rows, sample.size,
      [&](std::size_t i) {
        const double u = uniform_open01(local);
        // Bitwise, not short-circuit, operators: GCC compiles && and || here to branches,
        // mispredicted as often as a hit is uncertain (they were half of a plan's time).
        const bool in_predicted = (from[i] <= u) & (u < to[i]);
        const bool past_last = (u >= last[i]) & (last_is_predicted[i] != 0);
        return std::pair{i, in_predicted | past_last};
      },
      ws, values);
  engine = std::move(local);
}

std::vector<double> resampled_values(const Sample& sample,
                                     std::span<const Estimator* const> estimators,
                                     const ResampleKey& key, std::size_t resamples,
                                     Execution execution, ResampleWorkspace& workspace,
                                     Purpose purpose, Resampler resample,
                                     const ResampleCounter& counter) {
  if (resamples == 0) throw DomainError("resamples = 0: must be >= 1");
  if (resamples >= two_32) throw DomainError("resamples must be < 2^32");
  if (key.replicate >= two_32) throw DomainError("replicate index must be < 2^32");
  const std::size_t E = estimators.size();
  std::vector<double> values(resamples * E);
  const auto forms =
      sample.size > 0 ? bin_sum_forms(estimators) : std::vector<const FixedTopLabelBins*>();
  const bool relabelling = purpose == Purpose::labels;
  if (!forms.empty()) prepare_binned_rows(sample, forms, relabelling, workspace.binned_rows);
  const ResampleWorkspace::BinnedRows& rows = workspace.binned_rows;
  const auto ordered = forms.empty() && sample.size > 0 ? confidence_ordered(estimators)
                                                        : std::vector<const ConfidenceOrdered*>();
  if (!ordered.empty()) prepare_confidence_order(sample, workspace);
  const std::span<const std::uint32_t> sorted_rows = workspace.confidence_rows;
  const std::span<const std::uint32_t> rank = workspace.confidence_rank;
  const auto one = [&](std::size_t b, ResampleWorkspace& ws) {
    Engine engine = make_engine(resample_key(key, b, purpose));
    if (!forms.empty()) {
      (relabelling ? relabel_bin_sums : bootstrap_bin_sums)(sample, forms, rows, engine, ws,
                                                            values.data() + b * E);
      return;
    }
    resample(sample, engine, ws);
    std::span<const std::uint32_t> order;
    if (!ordered.empty()) {
      if (!relabelling) bootstrap_confidence_order(rank, ws);
      order = relabelling ? sorted_rows : std::span<const std::uint32_t>(ws.order);
    }
    evaluate(estimators, ordered, ws.sample, order, ws.estimator, values.data() + b * E);
  };
  // The caller's workspace may hold another sample's rows (parallel ones start empty).
  workspace.rows_current = false;
  if (execution == Execution::serial) {
    for (std::size_t b = 0; b < resamples; ++b) {
      one(b, workspace);
      if (counter) counter(b + 1, resamples);
    }
  } else {
    for_each_index<ResampleWorkspace>(resamples, one, counter);
  }
  return values;
}

}  // namespace

StreamKey resample_key(const ResampleKey& key, std::size_t resample, Purpose purpose) {
  if (key.replicate >= two_32 || resample >= two_32)
    throw DomainError("replicate " + std::to_string(key.replicate) + ", resample " +
                      std::to_string(resample) + ": both must be < 2^32");
  return {key.seed, key.cell, key.replicate * two_32 + resample, purpose};
}

std::vector<double> bootstrap_values(const Sample& sample,
                                     std::span<const Estimator* const> estimators,
                                     const ResampleKey& key, std::size_t resamples,
                                     Execution execution, ResampleWorkspace& workspace,
                                     const ResampleCounter& counter) {
  return resampled_values(sample, estimators, key, resamples, execution, workspace,
                          Purpose::bootstrap, bootstrap_resample, counter);
}

std::vector<double> consistency_values(const Sample& sample,
                                       std::span<const Estimator* const> estimators,
                                       const ResampleKey& key, std::size_t resamples,
                                       Execution execution, ResampleWorkspace& workspace,
                                       const ResampleCounter& counter) {
  return resampled_values(sample, estimators, key, resamples, execution, workspace, Purpose::labels,
                          relabel, counter);
}

std::vector<double> jackknife_values(const Sample& sample,
                                     std::span<const Estimator* const> estimators,
                                     std::size_t groups, Execution execution,
                                     ResampleWorkspace& workspace, const ResampleCounter& counter) {
  const std::size_t n = sample.size, K = sample.classes, E = estimators.size();
  if (n < 2) throw DomainError("the jackknife needs n >= 2 rows, found " + std::to_string(n));
  if (groups < 2)
    throw DomainError("jackknife groups = " + std::to_string(groups) + ": must be >= 2");
  const std::size_t G = std::min(groups, n);
  std::vector<double> values(G * E);
  const auto ordered = confidence_ordered(estimators);
  if (!ordered.empty()) prepare_confidence_order(sample, workspace);
  const std::span<const std::uint32_t> sorted_rows = workspace.confidence_rows;
  const auto one = [&](std::size_t g, ResampleWorkspace& ws) {
    // Rows g, g + G, g + 2G, ... left out.
    const std::size_t left_out = (n - g + G - 1) / G;
    ws.rows_current = false;
    ws.sample.resize(n - left_out, K);
    const bool truth = !sample.truth.empty();
    if (truth)
      ws.sample.truth.resize((n - left_out) * K);
    else
      ws.sample.truth.clear();
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % G == g) continue;
      std::copy_n(sample.p.data() + i * K, K, ws.sample.p.data() + at * K);
      if (truth) std::copy_n(sample.truth.data() + i * K, K, ws.sample.truth.data() + at * K);
      ws.sample.label[at] = sample.label[i];
      ws.sample.confidence[at] = sample.confidence[i];
      ws.sample.predicted[at] = sample.predicted[i];
      ++at;
    }
    if (!ordered.empty()) {
      // Row i > g of the sample is row i - ceil((i - g) / G) here (the rows left out before it).
      ws.order.clear();
      for (const std::uint32_t i : sorted_rows) {
        if (i % G == g) continue;
        const std::size_t before = i > g ? (i - g + G - 1) / G : 0;
        ws.order.push_back(static_cast<std::uint32_t>(i - before));
      }
    }
    evaluate(estimators, ordered, ws.sample, ws.order, ws.estimator, values.data() + g * E);
  };
  if (execution == Execution::serial) {
    for (std::size_t g = 0; g < G; ++g) {
      one(g, workspace);
      if (counter) counter(g + 1, G);
    }
  } else {
    for_each_index<ResampleWorkspace>(G, one, counter);
  }
  return values;
}

double quantile_type7(std::vector<double>& values, double a) {
  std::sort(values.begin(), values.end());
  return quantile_type7_sorted(values, a);
}

double quantile_type7_sorted(std::span<const double> sorted, double a) {
  if (sorted.empty()) throw DomainError("quantile of no values");
  const double h = a * static_cast<double>(sorted.size() - 1);
  const auto j = static_cast<std::size_t>(std::floor(h));
  if (j + 1 >= sorted.size()) return sorted.back();
  return sorted[j] + (h - static_cast<double>(j)) * (sorted[j + 1] - sorted[j]);
}

std::vector<Interval> percentile_intervals(const std::vector<double>& values,
                                           std::size_t estimators, double level) {
  if (!(level > 0.0 && level < 1.0)) throw DomainError("level must be in (0, 1)");
  const std::size_t R = estimators == 0 ? 0 : values.size() / estimators;
  std::vector<Interval> out(estimators);
  std::vector<double> column(R);
  for (std::size_t e = 0; e < estimators; ++e) {
    for (std::size_t b = 0; b < R; ++b) column[b] = values[b * estimators + e];
    std::sort(column.begin(), column.end());
    out[e].lo = quantile_type7_sorted(column, (1.0 - level) / 2.0);
    out[e].hi = quantile_type7_sorted(column, (1.0 + level) / 2.0);
  }
  return out;
}

std::vector<double> consistency_p_values(const std::vector<double>& values,
                                         std::span<const double> observed) {
  const std::size_t E = observed.size();
  const std::size_t R = E == 0 ? 0 : values.size() / E;
  std::vector<double> out(E);
  for (std::size_t e = 0; e < E; ++e) {
    std::size_t exceed = 0;
    for (std::size_t b = 0; b < R; ++b)
      if (values[b * E + e] >= observed[e]) ++exceed;
    out[e] = static_cast<double>(1 + exceed) / static_cast<double>(1 + R);
  }
  return out;
}

}  // namespace calbench
