#pragma once
// `calbench recalibrate fit DATA --method SPEC --out MODEL.json` and `calbench recalibrate apply
// MODEL.json DATA --out CALIBRATED.csv|.npy`: a registry recalibration method fitted on a
// user's own outputs, saved, and applied to new outputs (docs/recalibration.md, "Recalibrating
// your own model"; the file format is recalibrators/fitted_model_json.hpp).
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

namespace calbench {

struct RecalibrateOptions {
  std::string model;   // apply: the fitted model file
  std::string data;    // CSV, or NPY with `labels`
  std::string labels;  // NPY labels
  bool logits = false;
  bool renormalize = false;
  std::string method;  // fit: a method object (JSON) or a bare registry name
  std::string out;     // fit: the model file; apply: .csv or .npy
  bool json = false;   // fit: print the model file instead of the summary
};

// Runs the subcommand the command line named. Errors are ConfigError (method or model file,
// with the JSON pointer), InputError (data) or DomainError (a degenerate fit, mapped to an
// InputError naming the data); on any of them nothing is written.
int run_recalibrate(const CLI::App& recalibrate, const RecalibrateOptions& options,
                    std::ostream& out);

}  // namespace calbench
