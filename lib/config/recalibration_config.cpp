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

std::optional<std::vector<MethodConfig>> parse_methods(ObjectReader& top) {
  return parse_labelled_array<MethodConfig>(
      top, "methods", "methods",
      [](const Json& entry, const std::string& pointer, Problems& problems, Json& resolved) {
        return parse_method(entry, pointer, problems, resolved, 0);
      },
      uncalibrated_label, "the uncalibrated model");
}

}  // namespace

std::optional<MethodConfig> parse_recalibration_method(const Json& entry,
                                                       const std::string& pointer,
                                                       Problems& problems, Json& resolved) {
  return parse_method(entry, pointer, problems, resolved, 0);
}

const std::vector<std::string>& recalibration_keys() {
  static const std::vector<std::string> keys = {"fit_size", "test_size", "truth_samples",
                                                "methods"};
  return keys;
}

void reject_foreign_recalibration_keys(const ObjectReader& top, const std::string& scenario) {
  const bool own = scenario == "recalibration";
  const std::vector<std::string> others = {"sample_size", "intervals"};
  for (const auto& key : own ? others : recalibration_keys())
    if (top.find(key) != nullptr)
      top.problems().add(top.pointer_to(key),
                         own ? "key " + quote(key) +
                                   " is not used by scenario \"recalibration\" (it draws "
                                   "fit_size and test_size rows)"
                             : "key " + quote(key) +
                                   " belongs to scenario \"recalibration\", not " +
                                   quote(scenario));
}

std::optional<RecalibrationSettings> parse_recalibration_section(ObjectReader& top) {
  RecalibrationSettings settings;
  const auto fit_size = top.integer("fit_size", 2);
  const auto test_size = top.integer("test_size", 1);
  const auto truth_samples = top.unsigned_integer("truth_samples", 1000, settings.truth_samples);
  auto methods = parse_methods(top);
  if (!fit_size || !test_size || !truth_samples || !methods) return std::nullopt;
  settings.fit_size = static_cast<std::size_t>(*fit_size);
  settings.test_size = static_cast<std::size_t>(*test_size);
  settings.truth_samples = *truth_samples;
  settings.methods = std::move(*methods);
  return settings;
}

}  // namespace calbench
