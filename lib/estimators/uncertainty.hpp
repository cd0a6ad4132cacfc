#pragma once
// Uncertainty of estimates on one sample: bootstrap percentile intervals (Efron & Tibshirani
// 1993, ch. 13) and the consistency-resampling test of Bröcker & Smith 2007 ("Increasing the
// reliability of reliability diagrams", Weather and Forecasting 22(3)).
//
// Both evaluate a set of estimators on R resamples of the sample. Resample b draws from the
// stream resample_key(key, b, purpose): keyed by the resample index, never by thread, so the
// values, and hence the intervals and p-values, are the same bits for any thread count and for
// serial or parallel evaluation.
//
// - Bootstrap: rows (p_i, y_i) drawn uniformly with replacement, n of them. Row index
//   floor(u n) for u = uniform_open01 (bias below n 2^-53, far below any Monte Carlo error).
//   The interval is the percentile interval [q((1 - level)/2), q((1 + level)/2)] of the R
//   resampled values, q the linear-interpolation quantile (Hyndman & Fan 1996 type 7, numpy's
//   default): q(a) = v_(j) + (h - j)(v_(j+1) - v_(j)), h = a (R - 1), j = floor(h), v sorted.
// - Consistency test: under the null of perfect calibration the labels are y*_i ~
//   Categorical(p_i) with the p_i kept fixed (inverse-CDF draw over the classes, a row whose
//   running sum ends below u takes its last class with p > 0). The statistic is the
//   estimator's value, large meaning miscalibrated (one-sided), and
//       p = (1 + #{b : T*_b >= T_obs}) / (1 + R),
//   ties counted as exceedances, so the test is exact (size <= alpha at every n, Davison &
//   Hinkley 1997 eq. 4.11) also for discrete statistics. It is meaningful for error-type
//   statistics (ece, brier, nll); for accuracy large is not worse, and its p is reported as
//   computed, the upper-tail probability of the observed accuracy under calibration.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "core/sample.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

struct BootstrapSettings {
  std::size_t resamples = 1000;  // R >= 1
  double level = 0.95;           // in (0, 1)
};

struct Interval {
  double lo = 0.0, hi = 0.0;
};

// Where the resample streams of one sample come from: the sample's (seed, cell, replicate).
struct ResampleKey {
  std::uint64_t seed = 0, cell = 0, replicate = 0;
};

// The stream of resample b: {seed, cell, replicate * 2^32 + b, purpose}. Requires replicate
// and b below 2^32 (throws DomainError otherwise).
StreamKey resample_key(const ResampleKey& key, std::size_t resample, Purpose purpose);

// Scratch space of one thread: the resampled sample and the estimators' workspace, sized on
// first use and reused (no allocation per row or per resample after the first).
struct ResampleWorkspace {
  Sample sample;
  EstimatorWorkspace estimator;
  // The consistency test redraws labels only: `sample` keeps the rows (p, confidence,
  // predicted) it copied at the first redraw of a call, instead of copying them per resample.
  bool rows_current = false;
  // The rows' running sums of p, the running sum before each predicted class, and each row's
  // last class with p > 0: the label redraws' inverse CDF (uncertainty.cpp).
  std::vector<double> cumulative, predicted_from;
  std::vector<std::uint32_t> last_positive;
  // Resampling from bin sums (estimators whose value is a function of fixed top-label bins'
  // sums, FixedTopLabelBins): the rows as it reads them, formed once per call in the caller's
  // workspace, and each thread's sums of one resample (uncertainty.cpp, BinnedRows).
  struct BinnedRows {
    std::vector<std::size_t> binning_of;            // estimator -> its distinct binning
    std::vector<std::vector<std::uint32_t>> bin;    // binning -> each row's bin
    std::vector<std::size_t> bins;                  // binning -> its number of bins
    std::vector<double> confidence;                 // per row
    std::vector<std::uint8_t> hit;                  // per row, 1{y = predicted}
    std::vector<std::vector<double>> count, score;  // binning -> per bin (label redraws)
    std::vector<double> predicted_from, predicted_to, last_sum;  // label redraws (relabel)
    std::vector<std::uint8_t> last_is_predicted;
  } binned_rows;
  std::vector<std::vector<double>> bin_count, bin_score, bin_hits, bin_gap;  // per binning
  std::vector<std::vector<std::uint32_t>> bin_count_int, bin_hits_int;
  // For estimators that sort by confidence (ConfidenceOrdered): the sample's rows
  // by confidence and each row's rank there, formed once per call in the caller's workspace,
  // and each thread's resample order built from them in O(n) (uncertainty.cpp), with the
  // bootstrap's drawn rows and a count per rank.
  std::vector<std::uint32_t> confidence_rows, confidence_rank;
  std::vector<std::uint32_t> drawn, order, rank_start;
};

// Whether the R resamples run on TBB (eval) or serially in the calling task (estimator_bias,
// whose replicates are already parallel).
enum class Execution { serial, parallel };

// Called after each resample with (resamples finished, total), from any thread: a runner's
// progress line (the library prints nothing). Empty: not called. (core/task_kernel.hpp's
// ProgressFn, named here without its TBB headers.)
using ResampleCounter = std::function<void(std::size_t done, std::size_t total)>;

// values[b * E + e]: estimator e on bootstrap resample b (Purpose::bootstrap).
// `workspace` is used by the serial execution only.
std::vector<double> bootstrap_values(const Sample& sample,
                                     std::span<const Estimator* const> estimators,
                                     const ResampleKey& key, std::size_t resamples,
                                     Execution execution, ResampleWorkspace& workspace,
                                     const ResampleCounter& counter = {});

// values[b * E + e]: estimator e on the sample with labels redrawn from p (Purpose::labels).
std::vector<double> consistency_values(const Sample& sample,
                                       std::span<const Estimator* const> estimators,
                                       const ResampleKey& key, std::size_t resamples,
                                       Execution execution, ResampleWorkspace& workspace,
                                       const ResampleCounter& counter = {});

// values[g * E + e]: estimator e on the sample without the rows i with i mod G = g, for
// g < G = min(groups, n) (the grouped jackknife of BCa's acceleration, interval_methods.hpp).
// Interleaved groups need no random stream and stay representative when the rows are sorted
// (a real model's outputs grouped by class). Requires n >= 2 and groups >= 2.
std::vector<double> jackknife_values(const Sample& sample,
                                     std::span<const Estimator* const> estimators,
                                     std::size_t groups, Execution execution,
                                     ResampleWorkspace& workspace,
                                     const ResampleCounter& counter = {});

// The type-7 quantile of `values` at probability a in [0, 1]; sorts `values` in place.
double quantile_type7(std::vector<double>& values, double a);
// The same of values already sorted ascending (several quantiles of one sort).
double quantile_type7_sorted(std::span<const double> sorted, double a);

// Percentile intervals of each of the E estimators from values[b * E + e].
std::vector<Interval> percentile_intervals(const std::vector<double>& values,
                                           std::size_t estimators, double level);

// (1 + #{T*_b >= observed[e]}) / (1 + R) for each estimator, from values[b * E + e].
std::vector<double> consistency_p_values(const std::vector<double>& values,
                                         std::span<const double> observed);

}  // namespace calbench
