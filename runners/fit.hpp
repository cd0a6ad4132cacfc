#pragma once
// `calbench fit DATA` (docs/fit.md): fits a dirichlet-family fake classifier to a real model's
// outputs and reports how well it matches; with --out, writes a runnable config using it.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "fit/fake_classifier_fit.hpp"
#include "fit/fit_verdict.hpp"

namespace calbench {

struct FitOptions {
  std::string data;    // CSV, or NPY with `labels`
  std::string labels;  // NPY labels (required for NPY data)
  bool logits = false;
  bool renormalize = false;     // rounded probability rows divided by their sum
  std::string map = "auto";     // auto | identity | temperature | power
  std::string family = "auto";  // auto | dirichlet | dirichlet_mixture | beta_binary
  std::size_t components = 4;   // the most mixture components tried (1: a single Dirichlet)
  std::uint64_t seed = 0;       // of the split, the fake samples, the bootstrap, the config
  std::string out;              // a config file to write (estimator_bias on the fitted generator)
  bool json = false;
  // The verdict (lib/fit/fit_verdict.hpp): cross-fitted over `folds` folds, or, when `holdout`
  // is set (> 0), on one split holding out that fraction; fake samples per fold.
  std::size_t folds = 5;
  double holdout = 0.0;
  std::size_t verdict_replicates = 200;
  // Predictions beside the bootstrap (lib/fit/fit_predictions.hpp): the estimators (empty: the
  // written config's), the sample sizes (empty: 200, 1000, n and 4 n), fake samples and
  // bootstrap resamples per size.
  std::string estimators;
  std::vector<std::size_t> sizes;
  std::size_t replicates = 200;
  std::size_t resamples = 200;
  // The empirical curve's finite penalties, cross-validated against the identity (empty: the
  // default of lib/fit/empirical_fit.hpp).
  std::vector<double> penalties;
  // false: the empirical family without its classwise map (the top-label construction alone,
  // the family before issue #35), for comparisons.
  bool classwise = true;
  bool force = false;  // write --out even when the verdict is POOR
};

// The exit status of a POOR fit that --out would have written without --force.
inline constexpr int fit_refused_status = 3;

// The fake `calbench fit` fits to `data` with the options `o` (its defaults: FitOptions{}), and
// its verdict on the estimators fit judges by default; bad data or a failed fit is an
// InputError naming o.data. calbench eval's fake-calibrated intervals and advice rest on it.
struct JudgedFake {
  FakeClassifierFit fit;
  FitVerdict verdict;
};
JudgedFake fit_judged_fake(const Sample& data, const FitOptions& o);

// Computes everything, then prints (and writes --out atomically): on an error nothing is written.
// Returns 0, or fit_refused_status when the verdict is POOR, --out was asked and --force was not
// (the tables are printed, the file is not written).
int run_fit(const FitOptions& options, std::ostream& out);

}  // namespace calbench
