#include "config/decision_config.hpp"

#include <algorithm>
#include <cmath>

#include "config/decision_registry.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

const std::vector<std::string>& common_decision_metrics() {
  static const std::vector<std::string> names = {"expected_utility", "oracle_expected_utility",
                                                 "miscalibration_cost"};
  return names;
}

}  // namespace calbench
