#pragma once
// The verdict of `calbench fit` (docs/fit.md): does the fitted fake behave like the model on
// rows the fit never saw? GOOD or POOR, with the checks that decided it.
//
// Cross-fitted (the default): the rows are cut into k folds (fit/held_out_split.hpp); fold f's
// m_f rows are judged against a fake fitted on the other rows, so every row is held out once.
// One split (k = 1) is the special case of a single fold. For each fold, R fake samples of m_f
// rows from that fold's fake (stream {seed, f, r, Purpose::test}, sample r) give the fake's own
// distribution of each statistic at the fold's size:
//   - accuracy, mean confidence and each requested estimator: the fold's value v_f, the fake
//     samples' mean mu_f and sd s_f;
//   - the confidence histogram (max p, equal-width bins): the total variation distance
//     D = (1/2) sum_b |f_b - F_b| between the fold's fractions f and its fake's F (pooled over
//     the R samples);
//   - the reliability curve (top label, equal-width bins of max p): the fake's curve a_b =
//     (correct rows) / (rows) in bin b pooled over the R samples, and
//     D = sum_b (m_b / m) |acc_b - a_b| over the bins where both have rows, the binned ECE
//     measured against the fake's curve instead of the diagonal.
//   A distance is > 0 even for a perfect fake; its null distribution is that of the R fake
//   samples' own distances, fake sample r against the pool of the q samples after it
//   (r + 1 .. r + q cyclically), q = round(fit rows / m_f) within [1, R - 1]: mean mu_f, sd s_f.
//   The reference is a sample of about the fit rows' size, not the fake itself, because the
//   held-out rows are compared with a fake that carries its fit rows' sampling noise (the
//   empirical family's confidence histogram is its fit rows', smoothed): the distance between
//   held-out rows and the fake is distributed as that between two independent samples of m_f
//   and of n_fit rows. Against the fake's own pool (until this version) the null's mean was too
//   small and a model the fake matches was POOR at a few hundred rows (docs/fit.md, "The verdict
//   at a few hundred rows"). For the reliability curve the fake's reference is a fitted smooth
//   curve, less noisy than q samples' binned accuracies, so this null is conservative there.
// Pooled over the folds with weights w_f = m_f / n: held-out value sum w_f v_f against the
// fake's sum w_f mu_f, z = (difference) / SE, two-sided p = P(|Z| >= |z|), with
//     SE^2 = (1 + 1/R) sum_f w_f^2 s_f^2
// for k >= 2 folds: the held-out values' own sampling error (the fake's sd stands in for the
// model's; the folds are disjoint, so independent) and the Monte Carlo error of the means.
// The fits' own sampling error is not added: cross-fitted, the held-out rows are all the rows
// the fakes were fitted on, and when the fake's value is an estimate at least as efficient as
// the held-out plug-in (a maximum-likelihood parametric fit, or the empirical family, which
// reproduces the rows), the variance of the difference is the difference of the variances
// (Hausman 1978), at most the held-out value's. docs/fit.md gives the measured false-POOR rate.
// With one fold (a single split, the held-out rows independent of the fit rows) the fit's
// error is added: SE^2 = s^2 (1 + 1/R + m / n_fit), the fit's sampling error taken as that of
// the statistic on n_fit rows. For a distance, SE^2 = (1 + 1/R) sum_f w_f^2 s_f^2 and
// p = P(Z >= z) one-sided.
// A check fails when its Holm-adjusted p-value (Holm 1979, over all checks) is below
// `family_alpha` AND its difference exceeds a practical floor: with many held-out rows a
// difference too small to matter is still significant, and the floors (VerdictFloors) say
// what matters. POOR when any check fails.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "core/task_kernel.hpp"
#include "estimators/estimator.hpp"
#include "generators/generator.hpp"

namespace calbench {

// Differences smaller than these never make a fit POOR (docs/fit.md).
struct VerdictFloors {
  double accuracy = 0.01;     // |held-out accuracy - fake's|
  double confidence = 0.01;   // |held-out mean max p - fake's|
  double estimator = 0.005;   // |held-out estimate - fake's mean|, the bias tolerance
  double histogram = 0.02;    // total variation distance beyond the null's mean
  double reliability = 0.01;  // reliability-curve distance beyond the null's mean
};

struct VerdictSettings {
  std::size_t replicates = 200;  // R fake samples at the held-out size
  // Family-wise error rate: 0.0027 is the two-sided 3-sigma level, so one check alone fails
  // at |z| > 3 and m checks at Holm's stricter thresholds.
  double family_alpha = 0.0027;
  std::size_t histogram_bins = 10;
  std::size_t reliability_bins = 15;
  VerdictFloors floors;
  std::uint64_t seed = 0;
};

// An estimator of the verdict, under its results label.
struct LabelledEstimator {
  std::string label;
  const Estimator* estimator = nullptr;
};

enum class CheckKind {
  difference,  // a value compared two-sided with the fake's mean
  distance,    // a distance compared one-sided with the null distribution's mean
};

struct VerdictCheck {
  std::string name;  // "accuracy", "mean confidence", "confidence histogram",
                     // "reliability curve", or an estimator's label
  CheckKind kind = CheckKind::difference;
  double held_out = 0.0;  // the value (difference) or the distance (distance) on held-out rows
  double fake = 0.0;      // the fake's mean at the held-out size, or the null's mean distance
  double fake_sd = 0.0;   // sd of the fake's pooled value, sqrt(sum w_f^2 s_f^2) (header)
  double se = 0.0;        // of held_out - fake (header)
  double z = 0.0;
  double p = 1.0;           // two-sided (difference) or one-sided (distance)
  double p_adjusted = 1.0;  // Holm over all checks
  double floor = 0.0;
  bool fails = false;
};

struct FitVerdict {
  bool good = true;
  std::size_t folds = 1;
  std::size_t held_out_rows = 0;  // every fold's rows: the data's n when cross-fitted
  std::size_t fit_rows = 0;       // rows each fold's fake was fitted on (mean over the folds)
  std::size_t replicates = 0;     // fake samples per fold
  double family_alpha = 0.0;
  std::vector<VerdictCheck> checks;
  std::vector<std::string> reasons;  // one line per failing check, in check order
  // Classes that never occur among the data's labels (judge_absent_classes).
  std::vector<std::size_t> absent_classes;
};

// The verdict's word, as fit and eval print it and write it in JSON.
inline const char* verdict_word(const FitVerdict& v) {
  return v.good ? "GOOD" : "POOR";
}

std::string_view to_string(CheckKind kind);

// One fold: its fake (fitted without the fold's rows), the fold's rows and the rows the fake
// was fitted on.
struct VerdictFold {
  const Generator* fake = nullptr;
  const Sample* held_out = nullptr;
  std::size_t fit_rows = 0;
};

// Requires at least one fold, each with held_out->size >= 2 and fit_rows >= 1, and
// replicates >= 2. Deterministic for any thread count: sample (f, r) is keyed by (f, r) and the
// statistics are folded in (f, r) order.
// `progress` (optional) is told how many of the F x R fake samples are done.
FitVerdict judge_fit(std::span<const VerdictFold> folds,
                     std::span<const LabelledEstimator> estimators, const VerdictSettings& settings,
                     const ProgressFn& progress = {});

// A class that never occurs among the labels of the rows the fake is fitted to (issue #35):
// nothing is known of its calibration (the fake draws it as often as the model's probabilities
// say, with no label to check them against), so the fit is not GOOD whatever its checks say.
// Records the classes, appends one reason naming them and sets good = false.
void judge_absent_classes(FitVerdict& verdict, const Sample& data);

// One split: a single fold.
FitVerdict judge_fit(const Generator& fake, const Sample& held_out, std::size_t fit_rows,
                     std::span<const LabelledEstimator> estimators,
                     const VerdictSettings& settings);

}  // namespace calbench
