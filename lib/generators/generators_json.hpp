#pragma once
// Generators as a config names them: the `generator` section (a family row) and its
// `miscalibration` object (a map row), the tables and the section parsers. The rows live in
// generators_json.cpp; the mechanism in config/registry.hpp.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "config/registry.hpp"
#include "generators/dirichlet_target.hpp"
#include "generators/generator.hpp"
#include "generators/miscalibration.hpp"

namespace calbench {

// A generator section as parsed: the spec and, when the dirichlet family was given a
// `target`, the request. Until the target is solved (scenarios/common.hpp) the spec holds
// placeholder parameters (alpha 1, map parameter 1).
struct ParsedGenerator {
  GeneratorSpec spec;
  std::optional<DirichletTarget> target;
};

using MapEntry = Row<MiscalibrationMap>;
using FamilyEntry = Row<ParsedGenerator>;

// The tables, in listing order.
const std::vector<MapEntry>& map_registry();
const std::vector<FamilyEntry>& family_registry();

// The generator section {"family": ..., params..., "miscalibration": {"map": ..., params...}}
// at `pointer`: reports every problem at its JSON pointer, writes the section with its defaults
// filled into `resolved`, and returns nullopt when it found problems. A generator given by
// `target` comes back unsolved (ParsedGenerator::target set, the spec a placeholder);
// scenarios/common.cpp solves it per cell.
std::optional<ParsedGenerator> parse_generator(const Json& generator, const std::string& pointer,
                                               Problems& problems, Json& resolved);
// The `miscalibration` object of a family (absent: default_miscalibration(), the identity),
// resolved into it.
const Json& default_miscalibration();
std::optional<MiscalibrationMap> parse_miscalibration(ObjectReader& family,
                                                      std::optional<std::size_t> classes);

}  // namespace calbench
