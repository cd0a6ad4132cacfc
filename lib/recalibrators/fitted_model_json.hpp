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
  std::size_t zeros_raised = 0;  // fit_model: exact zeros of the data raised to zero_floor
};

// A user's probabilities are often rounded (4 decimals write every p < 5e-5 as 0) or exact
// vote fractions (a random forest's), so exact zeros are common; a method fitted on log p
// (temperature, vector, matrix, dirichlet; platt, logistic and beta on logit p_k) would see
// log 0 (clamped at -708), and one label on such a class pulls the fit far off. fit_model and
// apply_fitted_model therefore raise every exact 0 to this floor, for every method, so that
// fit and apply see the same inputs (rows then sum to 1 + m 1e-6: the log-p methods
// renormalise by their softmax, the others use p_k as a score). Nonzero entries are untouched,
// so data without exact zeros fit exactly as the recalibration scenario fits them.
inline constexpr double zero_floor = 1e-6;

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
