#pragma once
// `calbench eval DATA`: every estimator (or those asked for) on a real model's outputs, with a
// bootstrap percentile interval and the consistency-resampling p-value of perfect calibration
// (docs/eval.md); with --advice or --interval fake, what the fake fitted to the rows predicts of
// each estimator, and the interval calibrated on it (docs/intervals.md).
#include <cstdint>
#include <ostream>
#include <string>

#include "estimators/interval_methods.hpp"

namespace calbench {

struct EvalOptions {
  std::string data;                  // CSV, or NPY with `labels`
  std::string labels;                // NPY labels (required for NPY data)
  bool logits = false;               // the values are logits
  bool renormalize = false;          // rounded probability rows divided by their sum
  std::string estimators;            // JSON array, inline or a file; empty: the whole registry
  std::string interval = "default";  // an interval_choices() name (docs/intervals.md)
  std::size_t jackknife_groups = eval_default_jackknife_groups;
  std::size_t resamples = eval_default_resamples;
  double level = 0.95;
  std::uint64_t seed = 0;
  bool json = false;
  std::string plot;  // --plot DIR: reliability.csv there (the renderer draws it, runners/report)
  // The fake `calbench fit` fits to the rows, sampled at their n (fit/fake_advice.hpp): asked by
  // --advice (each estimator's predicted bias, sd and RMSE, and the one to report) and by the
  // fake interval, which prints the advice too. fake_samples: R samples of n rows.
  bool advice = false;
  std::size_t fake_samples = 200;
};

// Computes everything, then writes the table (or JSON) to `out`: on an error (InputError,
// ConfigError) nothing has been written. With `plot`, first writes PLOT/reliability.csv: the
// model's binned reliability curves (top label and per class, equal-width and equal-mass, 15
// bins; the columns of a run's reliability.csv after its key columns, docs/eval.md).
int run_eval(const EvalOptions& options, std::ostream& out);

// The --interval help: "default" and every method of interval_methods().
std::string interval_help();

}  // namespace calbench
