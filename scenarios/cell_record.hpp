#pragma once
// The part of a cell's result record that every scenario fills alike: its index and swept
// values, replicates, the generator's canonical text, the solved target (when the generator
// gave one) and the generator's ground truth. Sizes are the scenario's own.
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "report/results.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

std::vector<TruthRecord> truth_records(const GroundTruth& truth);

CellRecord cell_record(const CellConfig& cell, const std::string& generator,
                       const GroundTruth& truth);

}  // namespace calbench
