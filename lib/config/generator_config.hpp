#pragma once
// The `generator` section: the families' parse functions (their registry rows are in
// registry.cpp), the `target` of the dirichlet family, and the JSON that reports a solved
// target. Kept apart from registry.cpp so that families change in one place.
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

// ---- value shapes shared by the family and map rows ---------------------------------------

// "K " when the length is known, else "".
std::string count_text(std::optional<std::size_t> length);
// An array of `length` (when known) numbers; positive ones when `positive`. Elements are
// named "NAME[i]" in messages and have pointer POINTER/i.
std::optional<std::vector<double>> read_vector(const Json& value, const std::string& pointer,
                                               std::string_view name, bool positive,
                                               std::optional<std::size_t> length,
                                               Problems& problems);
// `classes`: an integer >= 2 (and below a memory bound).
std::optional<std::size_t> parse_classes(ObjectReader& g);
// `alpha`: a number (symmetric; kept a number in the resolved config) or one per class;
// default 1.
std::optional<std::vector<double>> parse_alpha(ObjectReader& g, std::optional<std::size_t> classes);

// ---- families -------------------------------------------------------------------------------

// dirichlet with `target` (called by the dirichlet row when the key is present): reads the
// target object and the `miscalibration` object, which names the map (temperature or
// top_label) without its parameter. Reports `alpha` or a map parameter given as well.
std::optional<ParsedGenerator> parse_dirichlet_target(ObjectReader& g,
                                                      std::optional<std::size_t> classes);
std::optional<ParsedGenerator> parse_class_conditional(ObjectReader& g);
std::optional<ParsedGenerator> parse_label_noise(ObjectReader& g);
std::optional<ParsedGenerator> parse_beta_binary(ObjectReader& g);

// {"accuracy", "ece_top_l1", "direction", "map", "solved": {"alpha", "temperature"|"gamma"},
//  "achieved": {"accuracy": {value, method, error}, "ece_top_l1": {...}}}: what summary.json
// and config.resolved.json report for a cell whose generator was given by a target.
Json target_json(const DirichletTarget& target, const TargetSolution& solution);

}  // namespace calbench
