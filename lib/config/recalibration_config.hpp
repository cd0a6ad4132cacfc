#pragma once
// The config sections of scenario `recalibration` (docs/recalibration.md): `fit_size`,
// `test_size`, `truth_samples` and `methods`, and the recalibrator registry — the table of
// method names, their parameters, defaults and documentation (`calbench list recalibrators`).
// Kept apart from config/experiment.cpp and config/registry.cpp so that the estimator_bias
// config and other scenarios' additions do not touch it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "config/param_value.hpp"
#include "recalibrators/recalibrator.hpp"

namespace calbench {

class ObjectReader;
class Problems;

struct MethodConfig {
  std::string name;                // registry name, e.g. "histogram_binning"
  std::string label;               // unique within the experiment, never "uncalibrated"
  std::vector<NamedParam> params;  // every parameter, defaults filled, in registry order
  std::shared_ptr<const Recalibrator> method;
};

struct RecalibrationSettings {
  std::size_t fit_size = 0;               // rows the methods are fitted on, per replicate
  std::size_t test_size = 0;              // rows the estimators are computed on, per replicate
  std::uint64_t truth_samples = 200'000;  // Monte Carlo rows of the composed truth
  std::vector<MethodConfig> methods;
};

// The label of the uncalibrated model in results; reserved.
inline constexpr const char* uncalibrated_label = "uncalibrated";

// Reads fit_size, test_size, truth_samples and methods from the top-level object; reports
// every problem and fills the defaults into the reader's resolved copy.
std::optional<RecalibrationSettings> parse_recalibration_section(ObjectReader& top);

// One method object {"name": ..., "label": ..., PARAMS...} at `pointer`, exactly as an item of
// `methods` (wrappers included): reports every problem, leaves the object with its defaults
// filled in `resolved`. Scenario decision's `recalibrator.method` uses it too.
std::optional<MethodConfig> parse_recalibration_method(const Json& entry,
                                                       const std::string& pointer,
                                                       Problems& problems, Json& resolved);

// The top-level keys scenario `recalibration` adds.
const std::vector<std::string>& recalibration_keys();

// Reports each top-level key that belongs to scenario `recalibration` in another scenario,
// and sample_size and intervals (estimator_bias's) in scenario recalibration.
void reject_foreign_recalibration_keys(const ObjectReader& top, const std::string& scenario);

// `calbench list recalibrators`.
std::string format_recalibrators();
std::vector<std::string> recalibrator_names();

}  // namespace calbench
