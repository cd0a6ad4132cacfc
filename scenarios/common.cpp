#include "scenarios/common.hpp"

#include "config/generator_config.hpp"
#include "core/format.hpp"

namespace calbench {

Generators make_generators(const ExperimentConfig& config) {
  Generators out;
  for (const auto& cell : config.cells) out.push_back(std::make_unique<Generator>(cell.generator));
  return out;
}

std::vector<const GroundTruth*> cell_truths(const ExperimentConfig& config,
                                            const Generators& generators, TruthCache& cache) {
  std::vector<const GroundTruth*> out(config.cells.size());
  for (std::size_t c = 0; c < out.size(); ++c) {
    const auto& solution = config.cells[c].solution;
    out[c] = solution && solution->truth ? solution->truth.get()
                                         : &cache.get(*generators[c], config.cells[c].truth);
  }
  return out;
}

ResultSet result_set_header(const ExperimentConfig& config) {
  ResultSet out;
  out.name = config.name;
  out.scenario = config.scenario;
  out.seed = config.seed;
  out.config_hash = format_hash(hash64(config.resolved.dump()));
  out.sweep_keys = config.sweep_keys;
  return out;
}

std::vector<TruthRecord> truth_records(const GroundTruth& truth) {
  std::vector<TruthRecord> out;
  for (Quantity q : all_quantities)
    out.push_back({std::string(to_string(q)), truth[q].value,
                   std::string(to_string(truth[q].method)), truth[q].error});
  return out;
}

CellRecord cell_record(const CellConfig& cell, const std::string& generator,
                       const GroundTruth& truth) {
  CellRecord rec;
  rec.index = cell.index;
  for (const auto& [k, v] : cell.swept) rec.swept.emplace_back(k, v);
  rec.replicates = cell.replicates;
  rec.generator = generator;
  if (cell.target && cell.solution) rec.target = target_json(*cell.target, *cell.solution);
  rec.truth = truth_records(truth);
  return rec;
}

}  // namespace calbench
