#pragma once
// The --estimators value of `calbench eval` and `calbench fit`: which estimators to compute.
#include <string>
#include <vector>

#include "estimators/estimators_json.hpp"

namespace calbench {

// One of three forms, tried in this order:
//   - a JSON array like a config's "estimators", inline (the value starts with '[');
//   - the name of a file holding such an array;
//   - registry names separated by commas ("ece,smooth_ece"), each with its defaults, when no
//     file of that name exists.
// Throws ConfigError naming the source and the JSON pointer of every problem (duplicate
// labels included), or InputError for a missing file.
std::vector<EstimatorConfig> requested_estimators(const std::string& value);

}  // namespace calbench
