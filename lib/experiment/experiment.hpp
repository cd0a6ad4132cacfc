#pragma once
// Typed experiment configuration, the part every scenario shares: the header (name, seed,
// output, sweep) and each cell's common part (swept values, replicates, generator, target,
// truth settings). A scenario's own keys are read by its module (scenarios/*/config.cpp),
// through the ScenarioSections interface below, into its own structs that contain these.
// Everything after the parser works on typed structs; no JSON reaches domain code.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/json_support.hpp"
#include "core/value.hpp"
#include "generators/generator.hpp"
#include "generators/generators_json.hpp"
#include "truth/target_solver.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

// One cell of the sweep: what every scenario's cell has. Scenario cells derive from it.
struct CellBase {
  virtual ~CellBase() = default;
  std::size_t index = 0;
  // The swept values of this cell, one per sweep key in the order the keys appear (integers
  // normalised: a swept 1e4 is 10000).
  std::vector<SweptValue> swept;
  std::vector<std::size_t> sweep_position;  // per sweep key, the index of the cell's value
  std::size_t replicates = 0;
  // Validated: Generator(generator) does not throw. While `target` is unsolved it holds
  // placeholder parameters; solve_targets (scenarios/common.hpp) puts the solution in.
  GeneratorSpec generator;
  std::optional<DirichletTarget> target;   // the generator was given by a target
  std::optional<TargetSolution> solution;  // set when the target is solved, before a run
  TruthSettings truth;
};

// Hears (targets solved, targets to solve) while the cells' targets are solved
// (scenarios/common.hpp solve_targets): the runners show it as progress.
using TargetProgress = std::function<void(std::size_t done, std::size_t total)>;

struct OutputSettings {
  std::filesystem::path directory;  // default: results/<name>
};

// What every scenario's experiment has. Scenario configs derive from it and add their cells.
struct ExperimentBase {
  virtual ~ExperimentBase() = default;
  std::string source;  // the file as given on the command line
  std::string name;
  std::string scenario;  // the scenario's name as the config gave it (for results' meta)
  std::uint64_t seed = 0;
  OutputSettings output;
  std::vector<std::string> sweep_keys;  // dotted paths, in the order they appear
  // Per sweep key: where it points in the config and where its values are (/sweep/KEY).
  std::vector<std::pair<std::string, std::string>> sweep_pointers;
  // The config with every default filled in: the file's keys in the file's order, then the
  // defaults. ordered_json keeps that order (nlohmann::json would sort the keys).
  Json resolved;
};

// ---- what a scenario adds to the parser -----------------------------------------------------

// Reads a scenario's own sections. The parser makes one per document and calls, in this order:
// parse_cell on the base document, parse_output, parse_after_sweep, parse_cell on
// every sweep cell, check, finish. Each reports problems through the reader it is given.
class ScenarioSections {
 public:
  virtual ~ScenarioSections() = default;
  // Every key a sweep may vary, in the order the scenario reads them (defaults enter the
  // resolved config in that order): the common ones through parse_replicates,
  // parse_generator_section and parse_truth_section, its own itself. nullptr after problems.
  virtual std::unique_ptr<CellBase> parse_cell(ObjectReader& top) = 0;
  // Its keys of `output` (the ScenarioSyntax lists them); the parser reads `directory`.
  virtual void parse_output(ObjectReader& output) = 0;
  // Its keys fixed for the whole experiment, given the sweep keys and the base document's cell
  // (null when it had problems).
  virtual void parse_after_sweep(ObjectReader& /*top*/, const std::vector<std::string>& /*keys*/,
                                 const CellBase* /*base*/) {}
  // Checks across all cells.
  virtual void check(const std::vector<std::unique_ptr<CellBase>>& /*cells*/,
                     Problems& /*problems*/) {}
  // The scenario's config: `header` plus the cells, which parse_cell made.
  virtual std::unique_ptr<ExperimentBase> finish(ExperimentBase header,
                                                 std::vector<std::unique_ptr<CellBase>> cells) = 0;
};

// What the parser knows of a scenario before reading its sections (a row of the scenario table,
// scenarios/registry.cpp).
struct ScenarioSyntax {
  std::string_view name;
  std::vector<std::string> keys;         // its top-level keys besides the common ones
  std::vector<std::string> fixed;        // its keys a sweep may not vary
  std::vector<std::string> output_keys;  // its keys of `output` besides directory
  std::string unused_note;               // after "key K is not used by scenario S" (may be empty)
  std::unique_ptr<ScenarioSections> (*sections)();
};

// Reads and validates a config file. Throws ConfigError carrying every problem found, each
// "FILE: POINTER: message" (a missing or unreadable file and invalid JSON are ConfigErrors too).
// `scenarios` are the scenarios the config may name.
std::unique_ptr<ExperimentBase> load_experiment(const std::filesystem::path& file,
                                                const std::vector<ScenarioSyntax>& scenarios);

// The same for an already-parsed document; `source` names it in messages, and its stem is the
// default `name` when it ends in ".json" ("experiment" otherwise). Parse with ordered_json:
// key order decides the order of the sweep cells, and nlohmann::json sorts keys.
std::unique_ptr<ExperimentBase> parse_experiment(const nlohmann::ordered_json& document,
                                                 const std::string& source,
                                                 const std::vector<ScenarioSyntax>& scenarios);

// ---- the common cell sections, for ScenarioSections::parse_cell ------------------------------

// A count >= 1 (replicates, sample_size).
std::optional<std::size_t> parse_count(ObjectReader& top, std::string_view key);
std::optional<ParsedGenerator> parse_generator_section(ObjectReader& top);
std::optional<TruthSettings> parse_truth_section(ObjectReader& top);
// Fills the common part of a cell whose sections all parsed.
void set_cell_base(CellBase& cell, std::size_t replicates, ParsedGenerator generator,
                   const TruthSettings& truth);

// Where a cell's problem at `pointer` is reported: at the swept value's place in `sweep`
// (/sweep/KEY/i...) when the pointer is under a swept path, else at `pointer`.
std::string cell_pointer(const ExperimentBase& experiment, const CellBase& cell,
                         const std::string& pointer);

// A JSON value as a typed Value (numbers keep their kind).
Value to_value(const Json& json);

}  // namespace calbench
