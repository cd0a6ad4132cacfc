#include "fit/fit_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/multiple_testing.hpp"
#include "core/rng.hpp"
#include "core/task_kernel.hpp"
#include "estimators/binning.hpp"

namespace calbench {
namespace {

// What one sample says: accuracy, mean confidence and each estimator (in that order), and the
// per-bin counts of the confidence histogram and of the reliability curve.
struct SampleStatistics {
  std::vector<double> values;
  std::vector<double> histogram;              // rows per confidence bin
  std::vector<double> bin_rows, bin_correct;  // rows and correct rows per reliability bin
};

struct SimulationScratch {
  Sample sample;
  GeneratorScratch generator;
  EstimatorWorkspace workspace;
  std::vector<double> edges;
};

std::vector<double> bin_counts(const Sample& s, std::size_t bins, std::vector<double>& edges,
                               const std::vector<double>* weights) {
  equal_width_edges(bins, edges);
  std::vector<double> out(bins, 0.0);
  for (std::size_t i = 0; i < s.size; ++i)
    out[equal_width_bin(s.confidence[i], edges)] += weights ? (*weights)[i] : 1.0;
  return out;
}

SampleStatistics statistics(const Sample& s, std::span<const LabelledEstimator> estimators,
                            const VerdictSettings& settings, SimulationScratch& scratch) {
  SampleStatistics out;
  const double n = static_cast<double>(s.size);
  std::vector<double> correct(s.size);
  double hits = 0.0, confidence = 0.0;
  for (std::size_t i = 0; i < s.size; ++i) {
    correct[i] = s.correct(i) ? 1.0 : 0.0;
    hits += correct[i];
    confidence += s.confidence[i];
  }
  out.values = {hits / n, confidence / n};
  for (const LabelledEstimator& e : estimators)
    out.values.push_back(e.estimator->estimate(s, scratch.workspace));
  out.histogram = bin_counts(s, settings.histogram_bins, scratch.edges, nullptr);
  out.bin_rows = bin_counts(s, settings.reliability_bins, scratch.edges, nullptr);
  out.bin_correct = bin_counts(s, settings.reliability_bins, scratch.edges, &correct);
  return out;
}

// (1/2) sum |a_b / |a| - b_b / |b||: total variation between two histograms of counts.
double total_variation(std::span<const double> a, std::span<const double> b) {
  double sa = 0.0, sb = 0.0, out = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sa += a[i], sb += b[i];
  for (std::size_t i = 0; i < a.size(); ++i) out += std::abs(a[i] / sa - b[i] / sb);
  return 0.5 * out;
}

// sum_b (m_b / m) |acc_b - a_b| over the bins where both the sample and the reference have
// rows: the sample's binned ECE against the reference curve.
double reliability_distance(const SampleStatistics& s, std::span<const double> ref_rows,
                            std::span<const double> ref_correct) {
  double m = 0.0, out = 0.0;
  for (double r : s.bin_rows) m += r;
  for (std::size_t b = 0; b < s.bin_rows.size(); ++b)
    if (s.bin_rows[b] > 0.0 && ref_rows[b] > 0.0)
      out += std::abs(s.bin_correct[b] - s.bin_rows[b] * ref_correct[b] / ref_rows[b]);
  return out / m;
}

struct MeanSd {
  double mean = 0.0, sd = 0.0;
};

MeanSd mean_sd(std::span<const double> x) {
  double mean = 0.0, ss = 0.0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) ss += (v - mean) * (v - mean);
  return {mean, std::sqrt(ss / static_cast<double>(x.size() - 1))};
}

// z and its p-value; a zero standard error gives z = +-inf (p = 0) for any difference and
// z = 0 (p = 1) for none.
void test(VerdictCheck& c, double difference) {
  if (c.se > 0.0)
    c.z = difference / c.se;
  else
    c.z = difference == 0.0 ? 0.0 : std::copysign(HUGE_VAL, difference);
  c.p = c.kind == CheckKind::difference ? two_sided_normal_p(c.z)
                                        : 0.5 * std::erfc(c.z / std::sqrt(2.0));
}

std::string reason(const VerdictCheck& c) {
  std::ostringstream p;
  p << std::setprecision(2) << c.p_adjusted;
  const std::string what = c.kind == CheckKind::difference
                               ? "held-out " + format_fixed(c.held_out, 4) + ", fake " +
                                     format_fixed(c.fake, 4) + " ± " + format_fixed(c.se, 4)
                               : "distance " + format_fixed(c.held_out, 4) + ", a fake sample's " +
                                     format_fixed(c.fake, 4) + " ± " + format_fixed(c.se, 4);
  return c.name + ": " + what + " (z = " + format_fixed(c.z, 1) + ", Holm-adjusted p = " + p.str() +
         ", beyond the floor " + format_fixed(c.floor, 3) + ")";
}

}  // namespace

std::string_view to_string(CheckKind kind) {
  return kind == CheckKind::difference ? "difference" : "distance";
}

namespace {

// One fold's comparison for one check: the held-out value (or distance), the fake samples'
// mean and sd of it (or of the null distance).
struct FoldCheck {
  double held_out = 0.0, mean = 0.0, sd = 0.0;
};

// Each check of one fold: accuracy, mean confidence, the estimators, then the histogram and
// reliability distances. `reference_samples` (q): how many fake samples stand for the rows the
// fold's fake was fitted on in the null of a distance (header).
std::vector<FoldCheck> fold_checks(const SampleStatistics& observed,
                                   std::span<const SampleStatistics> sims,
                                   std::size_t reference_samples) {
  const std::size_t R = sims.size();
  std::vector<FoldCheck> out;
  std::vector<double> column(R);
  for (std::size_t v = 0; v < observed.values.size(); ++v) {
    for (std::size_t r = 0; r < R; ++r) column[r] = sims[r].values[v];
    const MeanSd s = mean_sd(column);
    out.push_back({observed.values[v], s.mean, s.sd});
  }
  // Distances: the held-out sample's against the pool of all R; the null's, fake sample r's
  // against the pool of the q samples after it (r + 1 .. r + q, cyclically): an independent
  // sample of about the fit rows' size, as the fake carries its fit rows' sampling noise.
  const auto pooled = [&](std::vector<double> SampleStatistics::*member, std::size_t first,
                          std::size_t count) {
    std::vector<double> sum((sims.front().*member).size(), 0.0);
    for (std::size_t j = 0; j < count; ++j)
      for (std::size_t b = 0; b < sum.size(); ++b) sum[b] += (sims[(first + j) % R].*member)[b];
    return sum;
  };
  const std::size_t q = reference_samples;
  const std::vector<double> histogram = pooled(&SampleStatistics::histogram, 0, R);
  const std::vector<double> rows = pooled(&SampleStatistics::bin_rows, 0, R);
  const std::vector<double> correct = pooled(&SampleStatistics::bin_correct, 0, R);
  const auto distance = [&](double observed_distance, auto&& null_distance) {
    for (std::size_t r = 0; r < R; ++r) column[r] = null_distance(r);
    const MeanSd s = mean_sd(column);
    out.push_back({observed_distance, s.mean, s.sd});
  };
  distance(total_variation(observed.histogram, histogram), [&](std::size_t r) {
    return total_variation(sims[r].histogram, pooled(&SampleStatistics::histogram, r + 1, q));
  });
  distance(reliability_distance(observed, rows, correct), [&](std::size_t r) {
    return reliability_distance(sims[r], pooled(&SampleStatistics::bin_rows, r + 1, q),
                                pooled(&SampleStatistics::bin_correct, r + 1, q));
  });
  return out;
}

}  // namespace

FitVerdict judge_fit(std::span<const VerdictFold> folds,
                     std::span<const LabelledEstimator> estimators, const VerdictSettings& settings,
                     const ProgressFn& progress) {
  if (folds.empty()) throw DomainError("the verdict needs at least one fold");
  for (const VerdictFold& f : folds) {
    if (f.held_out->size < 2)
      throw DomainError("the verdict needs at least 2 held-out rows per fold, found " +
                        std::to_string(f.held_out->size));
    if (f.fit_rows < 1) throw DomainError("the verdict needs at least 1 fitted row per fold");
  }
  if (settings.replicates < 2) throw DomainError("the verdict needs at least 2 fake samples");
  const std::size_t R = settings.replicates, F = folds.size();
  const std::vector<SampleStatistics> sims = map_batches<SampleStatistics, SimulationScratch>(
      F * R,
      [&](std::size_t t, SimulationScratch& scratch) {
        const std::size_t f = t / R, r = t % R;
        Engine engine = make_engine({settings.seed, f, r, Purpose::test});
        folds[f].fake->sample(engine, folds[f].held_out->size, scratch.sample, scratch.generator);
        return statistics(scratch.sample, estimators, settings, scratch);
      },
      progress);

  FitVerdict out;
  out.folds = F;
  out.replicates = R;
  out.family_alpha = settings.family_alpha;
  std::vector<std::vector<FoldCheck>> per_fold;
  SimulationScratch scratch;
  for (std::size_t f = 0; f < F; ++f) {
    out.held_out_rows += folds[f].held_out->size;
    out.fit_rows += folds[f].fit_rows;
    const SampleStatistics observed = statistics(*folds[f].held_out, estimators, settings, scratch);
    // q = the fit rows over the held-out rows, rounded, within [1, R - 1].
    const double ratio =
        static_cast<double>(folds[f].fit_rows) / static_cast<double>(folds[f].held_out->size);
    const auto q = std::clamp<std::size_t>(static_cast<std::size_t>(std::llround(ratio)), 1, R - 1);
    per_fold.push_back(fold_checks(observed, std::span(sims).subspan(f * R, R), q));
  }
  out.fit_rows /= F;

  // Pooled over the folds with weights w_f = m_f / m (module comment).
  const VerdictFloors& floors = settings.floors;
  const std::size_t values = 2 + estimators.size();
  const double Rd = static_cast<double>(R);
  for (std::size_t i = 0; i < per_fold.front().size(); ++i) {
    VerdictCheck c;
    c.kind = i < values ? CheckKind::difference : CheckKind::distance;
    c.name = i == 0        ? "accuracy"
             : i == 1      ? "mean confidence"
             : i < values  ? estimators[i - 2].label
             : i == values ? "confidence histogram"
                           : "reliability curve";
    c.floor = i == 0        ? floors.accuracy
              : i == 1      ? floors.confidence
              : i < values  ? floors.estimator
              : i == values ? floors.histogram
                            : floors.reliability;
    double sampling = 0.0, fit = 0.0;
    for (std::size_t f = 0; f < F; ++f) {
      const double w =
          static_cast<double>(folds[f].held_out->size) / static_cast<double>(out.held_out_rows);
      const FoldCheck& k = per_fold[f][i];
      c.held_out += w * k.held_out;
      c.fake += w * k.mean;
      sampling += w * w * k.sd * k.sd;
      fit += w * k.sd *
             std::sqrt(static_cast<double>(folds[f].held_out->size) /
                       static_cast<double>(folds[f].fit_rows));
    }
    c.fake_sd = std::sqrt(sampling);
    // The fits' error counts only when the held-out rows are not the rows fitted on (one fold):
    // cross-fitted, every row is both, and the difference of the fakes' estimate and the
    // held-out one has variance at most the held-out one's (header).
    const bool fit_error = c.kind == CheckKind::difference && F == 1;
    c.se = std::sqrt(sampling * (1.0 + 1.0 / Rd) + (fit_error ? fit * fit : 0.0));
    test(c, c.held_out - c.fake);
    out.checks.push_back(c);
  }

  std::vector<double> p;
  for (const auto& c : out.checks) p.push_back(c.p);
  const std::vector<double> adjusted = holm_adjusted(p);
  for (std::size_t i = 0; i < out.checks.size(); ++i) {
    VerdictCheck& c = out.checks[i];
    c.p_adjusted = adjusted[i];
    const double difference = c.held_out - c.fake;
    const double beyond = c.kind == CheckKind::difference ? std::abs(difference) : difference;
    c.fails = c.p_adjusted < settings.family_alpha && beyond > c.floor;
    if (c.fails) {
      out.good = false;
      out.reasons.push_back(reason(c));
    }
  }
  return out;
}

void judge_absent_classes(FitVerdict& verdict, const Sample& data) {
  std::vector<std::size_t> count(data.classes, 0);
  std::vector<double> expected(data.classes, 0.0);
  for (std::size_t i = 0; i < data.size; ++i) {
    ++count[data.label[i]];
    for (std::size_t k = 0; k < data.classes; ++k) expected[k] += data.p[i * data.classes + k];
  }
  std::string named;
  for (std::size_t k = 0; k < data.classes; ++k) {
    if (count[k] > 0) continue;
    verdict.absent_classes.push_back(k);
    if (verdict.absent_classes.size() <= 5)
      named += (named.empty() ? "" : ", ") + std::to_string(k) + " (the model's probabilities " +
               "expect " + format_fixed(expected[k], 1) + " labels)";
  }
  if (verdict.absent_classes.empty()) return;
  const std::size_t more =
      verdict.absent_classes.size() > 5 ? verdict.absent_classes.size() - 5 : 0;
  verdict.good = false;
  verdict.reasons.push_back("class" + std::string(verdict.absent_classes.size() > 1 ? "es " : " ") +
                            named + (more > 0 ? " and " + std::to_string(more) + " more" : "") +
                            " never occur" + (verdict.absent_classes.size() > 1 ? "" : "s") +
                            " among the " + std::to_string(data.size) +
                            " labels: nothing is known of " +
                            (verdict.absent_classes.size() > 1 ? "their" : "its") + " calibration");
}

FitVerdict judge_fit(const Generator& fake, const Sample& held_out, std::size_t fit_rows,
                     std::span<const LabelledEstimator> estimators,
                     const VerdictSettings& settings) {
  const VerdictFold fold{.fake = &fake, .held_out = &held_out, .fit_rows = fit_rows};
  return judge_fit(std::span(&fold, 1), estimators, settings);
}

}  // namespace calbench
