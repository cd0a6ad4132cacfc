#pragma once
// Typed experiment configuration: what lib/config makes of a JSON file. Everything after the
// parser works on these structs; no JSON and no strings standing in for enums reach domain code.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "config/decision_config.hpp"
#include "config/param_value.hpp"
#include "config/recalibration_config.hpp"
#include "estimators/estimator.hpp"
#include "generators/dirichlet.hpp"
#include "generators/generator.hpp"
#include "truth/target_solver.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

struct EstimatorConfig {
  std::string name;                // registry name, e.g. "ece"
  std::string label;               // unique within the experiment, e.g. "ece_ew15"
  std::vector<NamedParam> params;  // every parameter, defaults filled, in registry order
  std::shared_ptr<const Estimator> estimator;
};

// One cell of the sweep, fully typed.
struct CellConfig {
  std::size_t index = 0;
  // The swept values of this cell, one per sweep key in the order the keys appear (integers
  // normalised: a swept 1e4 is 10000).
  std::vector<std::pair<std::string, nlohmann::ordered_json>> swept;
  std::size_t sample_size = 0;
  std::size_t replicates = 0;
  // Validated: Generator(generator) does not throw. Holds a DirichletSpec, ClassConditionalSpec,
  // LabelNoiseSpec or BetaBinarySpec (generators/generator.hpp); code written for the dirichlet
  // family reads std::get<DirichletSpec>(cell.generator) or makes a Generator.
  GeneratorSpec generator;
  // When the generator was given by a `target`: the request and its solution (the solved
  // parameters are in `generator`; summary.json reports target_json(*target, *solution)).
  std::optional<DirichletTarget> target;
  std::optional<TargetSolution> solution;
  std::vector<EstimatorConfig> estimators;  // empty in scenario decision
  std::optional<DecisionConfig> decision;   // scenario decision only
  // Scenario decision, when `recalibrator` is given: the method valued after recalibration.
  std::optional<DecisionRecalibratorConfig> recalibrator;
  TruthSettings truth;
  // Scenario `recalibration` only (then sample_size is 0): fit_size, test_size, methods.
  std::optional<RecalibrationSettings> recalibration;
};

struct OutputSettings {
  std::filesystem::path directory;  // default: results/<name>
  bool replicate_values = false;
  // Scenario `recalibration`: also write each method's fit time into summary.json (it is
  // always in run.json). Off by default: timings would break the byte-identical contract.
  bool timings = false;
};

// `intervals` (estimator_bias): per replicate, a bootstrap percentile interval of every
// estimator and the consistency-resampling test of calibration (estimators/uncertainty.hpp).
struct IntervalSettings {
  std::size_t resamples = 200;  // bootstrap and consistency resamples, each
  double level = 0.9;           // the intervals' nominal coverage
  double test_level = 0.05;     // reject calibration when p <= test_level
};

struct ExperimentConfig {
  std::string source;  // the file as given on the command line
  std::string name;
  std::string scenario;  // "estimator_bias", "recalibration"
  std::uint64_t seed = 0;
  OutputSettings output;
  std::optional<IntervalSettings> intervals;     // absent: no intervals, outputs as before
  std::optional<RequirementConfig> requirement;  // scenario decision, when given
  std::vector<std::string> sweep_keys;           // dotted paths, in the order they appear
  std::vector<CellConfig> cells;                 // Cartesian product, last key varying fastest
  // The config with every default filled in: the file's keys in the file's order, then the
  // defaults. ordered_json keeps that order (nlohmann::json would sort the keys).
  nlohmann::ordered_json resolved;
};

// Reads and validates a config file. Throws ConfigError carrying every problem found, each
// "FILE: POINTER: message" (a missing or unreadable file and invalid JSON are ConfigErrors too).
ExperimentConfig load_experiment(const std::filesystem::path& file);

// The same for an already-parsed document; `source` names it in messages, and its stem is the
// default `name` when it ends in ".json" ("experiment" otherwise). Parse with ordered_json:
// key order decides the order of the sweep cells, and nlohmann::json sorts keys.
ExperimentConfig parse_experiment(const nlohmann::ordered_json& document,
                                  const std::string& source);
// For a document parsed as nlohmann::json, whose keys are already sorted: sweep keys then
// vary in alphabetical order, not the file's.
ExperimentConfig parse_experiment(const nlohmann::json& document, const std::string& source);

// Human-readable list of the cells and their parameters (`calbench validate`).
std::string describe_cells(const ExperimentConfig& config);

}  // namespace calbench
