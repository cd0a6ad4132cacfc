#pragma once
// The `generator` section as parsed (the family rows are defined in
// generators/generators_json.cpp) and the JSON that reports a solved target.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "generators/generator.hpp"
#include "truth/target_solver.hpp"

namespace calbench {

// A generator section as parsed: the spec and, when the dirichlet family was given a
// `target`, the request. Until the target is solved (config/experiment.cpp) the spec holds
// placeholder parameters (alpha 1, map parameter 1).
struct ParsedGenerator {
  GeneratorSpec spec;
  std::optional<DirichletTarget> target;
};

// {"accuracy", "ece_top_l1", "direction", "map", "solved": {"alpha", "temperature"|"gamma"},
//  "achieved": {"accuracy": {value, method, error}, "ece_top_l1": {...}}}: what summary.json
// and config.resolved.json report for a cell whose generator was given by a target.
Json target_json(const DirichletTarget& target, const TargetSolution& solution);

}  // namespace calbench
