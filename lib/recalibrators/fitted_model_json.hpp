#pragma once
// A recalibration method fitted on a user's data, and its file (`calbench recalibrate fit`
// writes it, `calbench recalibrate apply` and calbench.Recalibrator.load read it; docs/
// recalibration.md, "Recalibrating your own model"). The fit is the registry method's own,
// the code path the recalibration scenario uses, so the same method on the same rows gives
// the same model everywhere.
//
// The file is one JSON object:
//   {"format": "calbench.fitted_model", "format_version": 1, "calbench_version": "...",
//    "method": {the method object with its defaults filled}, "label": "...",
//    "classes": K, "fit_rows": n, "parameters": {summary values, for people},
//    "model": {"kind": "...", scalars..., arrays..., "parts": [...]}}
// `model` is the FittedState tree (recalibrators/fitted_state.hpp): each node's keys other than
// "kind" and "parts" are its values, a number for a scalar and an array for an array. Doubles
// are written in their shortest round-trip form, so a loaded model gives the fitted model's
// bits. Reading validates everything (unknown keys, types, shapes, the state's own rules) and
// reports each problem with its JSON pointer, as a config error.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "core/sample.hpp"
#include "recalibrators/recalibrator.hpp"

namespace calbench {

struct FittedModel {
  Json method;  // the method object, defaults filled (as config.resolved.json shows it)
  std::string label;
  std::size_t classes = 0;
  std::size_t fit_rows = 0;
  std::unique_ptr<const CalibrationModel> model;
};

// The method SPEC of the command line: a JSON object like an item of a config's `methods`
// (starts with '{') or a bare registry name ("temperature"). A ConfigError names `source`
// and the JSON pointer.
Json method_spec(const std::string& spec, const std::string& source);

// Parses the method object and fits it on the sample (DomainError on a degenerate fit, e.g.
// a single class). A bad method object is a ConfigError naming `source` and the pointer.
FittedModel fit_model(const Json& method, const std::string& source, const Sample& sample);

// The file's JSON, and back. read_fitted_model throws ConfigError, every problem with its
// pointer and `source`.
Json fitted_model_json(const FittedModel& fitted);
FittedModel read_fitted_model(const Json& document, const std::string& source);
FittedModel read_fitted_model_file(const std::filesystem::path& file);

// q = g(p) for every row of `p` (rows x K, row-major); K must be the model's (InputError
// naming `data` otherwise).
std::vector<double> apply_fitted_model(const FittedModel& fitted, std::span<const double> p,
                                       std::size_t classes, const std::string& data);

}  // namespace calbench
