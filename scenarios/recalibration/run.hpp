#pragma once
// Scenario `recalibration` (docs/recalibration.md): per cell and replicate, a fit sample of
// fit_size rows and a test sample of test_size rows are drawn from the generator; every
// method is fitted on the fit sample; each calibrated model q = g(p) — and the uncalibrated
// model — is judged two ways: by the truth of the composed map c -> q
// (truth/composed_truth.hpp, the same Monte Carlo rows for every model of the cell) and by
// the estimators on the test sample. Per (cell, method): mean and sd over replicates of every
// true quantity and every estimate, the improvement over the uncalibrated model, the
// disagreement between test-set and true rankings, the fitted scalars and the fit time.
#include <string>

#include "scenarios/recalibration/config.hpp"
#include "scenarios/recalibration/record.hpp"
#include "scenarios/scenario.hpp"

namespace calbench {

// The cells' targets must be solved (solve_targets, scenarios/common.hpp).
RecalibrationResults run_recalibration(const RecalibrationConfig& config,
                                       const RunControl& control);
void report_recalibration(const RecalibrationResults& results, Reporter& reporter);
std::string describe_recalibration(const RecalibrationConfig& config);

}  // namespace calbench
