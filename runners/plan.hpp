#pragma once
// `calbench plan PLAN.json` (docs/plan.md): how many labelled samples an estimator needs on a
// fake classifier, for an interval width or for a power to detect a given miscalibration.
#include <ostream>
#include <string>

namespace calbench {

struct PlanOptions {
  std::string file;    // the plan file
  std::string out;     // the result file to write (atomically), or empty
  bool quiet = false;  // no progress lines on stderr
};

// Computes everything, then prints the table (and writes --out): on an error nothing is written.
int run_plan(const PlanOptions& options, std::ostream& out);

}  // namespace calbench
