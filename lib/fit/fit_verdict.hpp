#pragma once
// The verdict of `calbench fit` (docs/fit.md): does the fitted fake behave like the model on
// rows the fit never saw? GOOD or POOR, with the checks that decided it.
//
// The fake was fitted on `fit_rows` rows; the model's m held-out rows are compared with the
// fake's own distribution of the same statistics at size m, from R fake samples of m rows
// (stream {seed, 0, r, Purpose::test}, sample r):
//   - accuracy, mean confidence and each requested estimator: the held-out value v against the
//     fake samples' mean, z = (v - mean) / SE with
//         SE^2 = sd^2 (1 + 1/R + m / fit_rows),
//     sd the fake samples' standard deviation: the held-out value's own sampling error (sd, the
//     fake's stand-in for the model's), the Monte Carlo error of the mean (sd^2 / R) and the
//     fit's sampling error, taken as that of a statistic on fit_rows rows (sd^2 m / fit_rows);
//     two-sided p = P(|Z| >= |z|);
//   - the confidence histogram (max p, equal-width bins): the total variation distance
//     D = (1/2) sum_b |f_b - F_b| between the held-out fractions f and the fake's F (pooled over
//     the R samples);
//   - the reliability curve (top label, equal-width bins of max p): the fake's curve a_b =
//     (correct rows) / (rows) in bin b pooled over the R samples, and
//     D = sum_b (m_b / m) |acc_b - a_b| over the bins where both have rows, the binned ECE
//     measured against the fake's curve instead of the diagonal.
//   A distance is > 0 even for a perfect fake; its null distribution is that of the R fake
//   samples' own distances (each against the pool of the other R - 1, leave one out), so
//   z = (D - mean_0) / (sd_0 sqrt(1 + 1/R)), one-sided p = P(Z >= z).
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
  double fake_sd = 0.0;   // the fake samples' sd (of the value or of the null distance)
  double se = 0.0;        // of held_out - fake (header)
  double z = 0.0;
  double p = 1.0;           // two-sided (difference) or one-sided (distance)
  double p_adjusted = 1.0;  // Holm over all checks
  double floor = 0.0;
  bool fails = false;
};

struct FitVerdict {
  bool good = true;
  std::size_t fit_rows = 0, held_out_rows = 0, replicates = 0;
  double family_alpha = 0.0;
  std::vector<VerdictCheck> checks;
  std::vector<std::string> reasons;  // one line per failing check, in check order
};

std::string_view to_string(CheckKind kind);

// Requires held_out.size >= 2, replicates >= 2, fit_rows >= 1. Deterministic for any thread
// count: sample r is keyed by r and the statistics are folded in r order.
FitVerdict judge_fit(const Generator& fake, const Sample& held_out, std::size_t fit_rows,
                     std::span<const LabelledEstimator> estimators,
                     const VerdictSettings& settings);

}  // namespace calbench
