#pragma once
// Recalibration methods as a config names them: the labelled entry a row builds
// (MethodConfig), the table and the section parser. The rows live in recalibrators_json.cpp;
// the mechanism in config/registry.hpp.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/json_support.hpp"
#include "config/registry.hpp"
#include "core/value.hpp"
#include "recalibrators/recalibrator.hpp"

namespace calbench {

// A labelled entry of `methods`: the row's name, the label results use (unique within the
// experiment), every parameter in row order with defaults filled, and the built method.
struct MethodConfig {
  std::string name;
  std::string label;  // never "uncalibrated"
  std::vector<NamedParam> params;
  std::shared_ptr<const Recalibrator> method;
};

// The label of the uncalibrated model in results; reserved.
inline constexpr const char* uncalibrated_label = "uncalibrated";

using RecalibratorEntry = Row<MethodConfig>;

// The table, in listing order.
const std::vector<RecalibratorEntry>& recalibrator_registry();

// One method object at `pointer`, exactly as an item of `methods` (wrappers included); scenario
// decision's `recalibrator.method` uses it too. Reports every problem at its JSON pointer,
// writes the entry with its defaults filled into `resolved`, and returns nullopt after problems.
std::optional<MethodConfig> parse_recalibration_method(const Json& entry,
                                                       const std::string& pointer,
                                                       Problems& problems, Json& resolved);

}  // namespace calbench
