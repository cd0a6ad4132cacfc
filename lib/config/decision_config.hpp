#pragma once
// The config sections of scenario `decision` (docs/decisions.md): `decision` {task, params...}
// (per cell, sweepable) and `requirement` {metric, at_least | at_most | regret, accuracy_key}
// (fixed for the experiment). Kept apart from experiment.cpp so that each scenario's sections
// live in their own file.
#include <optional>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "config/recalibration_config.hpp"
#include "decisions/decision_spec.hpp"
#include "decisions/requirement.hpp"

namespace calbench {

struct DecisionConfig {
  std::string task;                  // registry name
  DecisionSpec spec;                 // validated: make_task(spec) does not throw
  Json params;                       // the task's parameters, defaults filled (no "task")
  std::vector<std::string> figures;  // the task's figure names
};

// `recalibrator` (optional, per cell, sweepable): per replicate, `method` is fitted on
// `fit_size` cases drawn from the stream (seed, cell, replicate, fit) and the policy acting on
// q = g(p) is valued over `samples` draws of c (decisions/decision_value.hpp).
struct DecisionRecalibratorConfig {
  MethodConfig method;  // parsed exactly as an item of scenario recalibration's `methods`
  std::size_t fit_size = 0;
  std::uint64_t samples = 200'000;
};

struct RequirementConfig {
  Requirement requirement;
  // The sweep key that sets accuracy; cells are grouped by every other swept key. Empty when
  // none is swept (each cell is then its own group).
  std::string accuracy_key;
};

// The metrics every task has, besides its own figures.
const std::vector<std::string>& common_decision_metrics();

// Top-level `decision` of a cell; `classes` is the generator's K when it is known.
std::optional<DecisionConfig> parse_decision_section(ObjectReader& top,
                                                     std::optional<std::size_t> classes);

// Top-level `recalibrator` {"method": {...}, "fit_size": n, "samples": N} (optional). `ok` is
// set false when it is present and has a problem.
std::optional<DecisionRecalibratorConfig> parse_recalibrator_section(ObjectReader& top, bool& ok);

// Top-level `requirement` (optional: nullopt without a problem when absent). The metric is
// checked against `figures` (the task's) and accuracy_key against `sweep_keys`.
std::optional<RequirementConfig> parse_requirement_section(
    ObjectReader& top, const std::vector<std::string>& sweep_keys,
    const std::vector<std::string>& figures);

// Reports each top-level key that belongs to another scenario than `scenario` ("decision",
// "requirement" and "recalibrator" outside scenario decision; "estimators" and "intervals" in it).
void reject_foreign_sections(const ObjectReader& top, const std::string& scenario);

}  // namespace calbench
