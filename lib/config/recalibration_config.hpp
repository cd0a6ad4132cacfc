#pragma once
// The recalibrator registry — the table of method names, their parameters, defaults and
// documentation (`calbench list recalibrators`) — and the parser of one method object.
// Scenario recalibration's sections are its module's (scenarios/recalibration/config.cpp).
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

// The label of the uncalibrated model in results; reserved.
inline constexpr const char* uncalibrated_label = "uncalibrated";

// One method object {"name": ..., "label": ..., PARAMS...} at `pointer`, exactly as an item of
// `methods` (wrappers included): reports every problem, leaves the object with its defaults
// filled in `resolved`. Scenario decision's `recalibrator.method` uses it too.
std::optional<MethodConfig> parse_recalibration_method(const Json& entry,
                                                       const std::string& pointer,
                                                       Problems& problems, Json& resolved);

// `calbench list recalibrators`.
std::string format_recalibrators();
std::vector<std::string> recalibrator_names();

}  // namespace calbench
