#pragma once
// The plan file of `calbench plan` (docs/plan.md) -> PlanSpec; the columns of a simulated n
// (the terminal table and the JSON of `--out` read the same table); a PlanResult -> the JSON of
// `--out`. The only plan code that sees JSON.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "generators/generators_json.hpp"
#include "plan/sample_size_plan.hpp"
#include "report/columns.hpp"

namespace calbench {

struct PlanConfig {
  std::string name;
  PlanSpec spec;
  std::string estimator_label;
  Json resolved;  // the plan file with every default filled in, its generator inline
};

// The quantities a family of scaled fakes may be indexed by (a power question's `detect`, a
// gate's `family.quantity`): those that are 0 exactly for a calibrated generator.
const std::vector<Choice<Quantity>>& detectable_quantities();
// "overconfident", "underconfident".
const std::vector<Choice<Direction>>& direction_choices();

// The `generator` of a plan or gate file: a generator object, or the name of a config file
// (relative to `file`'s folder) whose "generator" is used, as `calbench fit --out` writes one. A
// problem of that other file is thrown at once as a ConfigError under its own name.
std::optional<ParsedGenerator> parse_generator_or_file(ObjectReader& top,
                                                       const std::filesystem::path& file);

// The generator's spec, its "target" (if any) solved with `truth`; a target the solver cannot
// reach is a problem at /generator/target/FIELD and gives no spec.
std::optional<GeneratorSpec> solved_generator(const ParsedGenerator& generator,
                                              const TruthSettings& truth, Problems& problems);

// Reads and validates a plan file. Throws ConfigError with every problem, each
// "FILE: /pointer: message"; a generator taken from another file ("generator": "fake.json")
// reports that file's problems under its own name.
PlanConfig load_plan(const std::filesystem::path& file);

// The columns of one simulated n: n, the question's figure (width or power) and its standard
// error, the estimates' mean and sd, and a width question's coverage and its standard error
// (left empty on the terminal, absent in the JSON, at an n that measured none).
std::vector<ColumnSpec<PlanPoint>> plan_point_columns(bool power);

// The --out document: meta (calbench version, git revision, config hash), the resolved plan,
// the alternative, every simulated n and the answer. A pure function of the plan file.
Json plan_result_json(const PlanConfig& config, const PlanResult& result);

}  // namespace calbench
