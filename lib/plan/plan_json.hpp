#pragma once
// The plan file of `calbench plan` (docs/plan.md) -> PlanSpec, and a PlanResult -> the JSON of
// `--out`. The only plan code that sees JSON.
#include <filesystem>
#include <string>

#include "config/json_support.hpp"
#include "plan/sample_size_plan.hpp"

namespace calbench {

struct PlanConfig {
  std::string name;
  PlanSpec spec;
  std::string estimator_label;
  Json resolved;  // the plan file with every default filled in, its generator inline
};

// Reads and validates a plan file. Throws ConfigError with every problem, each
// "FILE: /pointer: message"; a generator taken from another file ("generator": "fake.json")
// reports that file's problems under its own name.
PlanConfig load_plan(const std::filesystem::path& file);

// The --out document: meta (calbench version, git revision, config hash), the resolved plan,
// the alternative, every simulated n and the answer. A pure function of the plan file.
Json plan_result_json(const PlanConfig& config, const PlanResult& result);

}  // namespace calbench
