#include <cstdint>
#include <memory>
#include <string>

#include "config/registry.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/mce.hpp"

namespace calbench {
namespace {

std::optional<EstimatorConfig> build(Args& a) {
  const auto bins = static_cast<std::size_t>(a.get<std::int64_t>("bins"));
  return EstimatorConfig{.label = "mce_" + std::to_string(bins),  // the label in results
                         .params = a.shown(),                     // {"bins": B}
                         .estimator = std::make_shared<Mce>(bins)};
}

}  // namespace

EstimatorEntry mce_estimator() {
  return {.summary = "maximum calibration error over equal-width bins of the confidence",
          .params = {param::integer("bins", 1, 15, "number of bins B")},
          .example = R"({"bins": 10})",
          .notes = {{"target", "none (its own population value)"},
                    {"convention", R"(max over non-empty bins b of |acc_b - conf_b|;
bin of s: min(B - 1, floor(B s)).)"}},
          .build = build,
          .extra = {.cost = Cost::n_log_n}};
}

}  // namespace calbench
