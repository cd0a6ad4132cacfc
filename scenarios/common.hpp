#pragma once
// What every scenario does alike: one generator per cell, the generators' ground truth (once
// per distinct generator), and the parts of the result records that do not depend on the
// scenario (the result set's header; a cell's index, swept values, replicates, generator,
// solved target and truth). Sizes and results are the scenario's own.
#include <memory>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "generators/generator.hpp"
#include "report/results.hpp"
#include "truth/ground_truth.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {

using Generators = std::vector<std::unique_ptr<Generator>>;

Generators make_generators(const ExperimentConfig& config);

// The truth of each cell's generator: a solved target's (the solver computed it under the
// same settings), else the cache's, computed once per distinct generator and settings. The
// pointers live as long as the cells' solutions and `cache`.
std::vector<const GroundTruth*> cell_truths(const ExperimentConfig& config,
                                            const Generators& generators, TruthCache& cache);

// name, scenario, seed, config hash and sweep keys.
ResultSet result_set_header(const ExperimentConfig& config);

std::vector<TruthRecord> truth_records(const GroundTruth& truth);

CellRecord cell_record(const CellConfig& cell, const std::string& generator,
                       const GroundTruth& truth);

}  // namespace calbench
