#pragma once
// The gate file of `calbench gate` (docs/gates.md) -> GateSpec; the columns of an OC curve's
// points (the terminal table and the JSON of `--out` read the same table); a GateResult -> the
// JSON of `--out`. The only gate code that sees JSON.
#include <filesystem>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "plan/gate.hpp"
#include "report/columns.hpp"

namespace calbench {

struct GateConfig {
  std::string name;
  GateSpec spec;
  Json resolved;  // the gate file with every default filled in, its generator inline
};

// Validates a gate document; every problem is reported together as a ConfigError, each
// "SOURCE: /pointer: message". A generator named by a string is read relative to `file`'s
// folder; `file`'s stem is the default name.
GateConfig parse_gate(const Json& document, const std::string& source,
                      const std::filesystem::path& file);
// Reads and validates a gate file (parse_gate with the file as its source).
GateConfig load_gate(const std::filesystem::path& file);

// The columns of one OC-curve point (truth, scale, P(pass) and its standard error, and per
// clause its own pass rate and mean estimate).
std::vector<ColumnSpec<GatePoint>> gate_point_columns(const GateRule& rule);

// The columns of one sample size of the design search.
std::vector<ColumnSpec<GateDesignPoint>> gate_design_columns();

// The --out document: meta (schema calbench.gate/1, calbench version, git revision, config
// hash), the resolved gate, the generator's own truth, the points and the risks. A pure
// function of the gate file.
Json gate_result_json(const GateConfig& config, const GateResult& result);

}  // namespace calbench
