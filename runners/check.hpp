#pragma once
// `calbench check RESULTS --baseline FILE`: a statistical regression check of an estimator_bias
// run against a baseline run of the same experiment (docs/check.md). Per (cell, estimator) the
// bias (or the mean, without a truth) and the sd are compared by z-tests with the Monte Carlo
// standard errors of both runs; Holm's correction over all of them; what moved is printed.
#include <ostream>
#include <string>

namespace calbench {

struct CheckOptions {
  std::string results;   // a result directory, or its summary.json
  std::string baseline;  // a summary.json (results/baselines/NAME.json are copies of them)
  double alpha = 0.01;   // family-wise error rate of the Holm procedure
};

// Writes the report to `out`; returns 0 when nothing moved, 1 on a regression. Unreadable
// files and results of another experiment are InputErrors (exit status 2).
int run_check(const CheckOptions& options, std::ostream& out);

}  // namespace calbench
