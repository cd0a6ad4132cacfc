#include "scenarios/cell_record.hpp"

#include "config/generator_config.hpp"

namespace calbench {

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
