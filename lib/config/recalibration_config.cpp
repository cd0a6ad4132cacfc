#include "config/recalibration_config.hpp"

#include "config/json_support.hpp"
#include "config/registry.hpp"
#include "core/error.hpp"

namespace calbench {
namespace {

// The rows are in config/registry.cpp, defined in recalibrators/recalibrators_json.cpp.
std::optional<MethodConfig> parse_method(const Json& entry, const std::string& pointer,
                                         Problems& problems, Json& resolved, int depth) {
  return parse_registry_entry(entry, pointer, problems, resolved, "recalibration method",
                              recalibrator_registry(), depth);
}

}  // namespace

std::optional<MethodConfig> parse_recalibration_method(const Json& entry,
                                                       const std::string& pointer,
                                                       Problems& problems, Json& resolved) {
  return parse_method(entry, pointer, problems, resolved, 0);
}

}  // namespace calbench
