#pragma once
// The verdict of a requirement over a sweep of decision cells: one paragraph saying what
// accuracy the requirement needs at each level of miscalibration, what miscalibration costs,
// how large a test set must be to see it, and what a recalibrator leaves of the cost.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/value.hpp"
#include "decisions/frontier.hpp"
#include "decisions/requirement.hpp"

namespace calbench {

struct VerdictCell {
  std::size_t index = 0;
  double miscalibration_cost = 0.0;
  double realised_sd = 0.0;  // of the realised utility on a test set
  struct Recalibrated {
    std::string label;
    std::size_t fit_size = 0, fits = 0, failed_fits = 0;
    double cost_mean = 0.0, cost_sd = 0.0;
  };
  std::optional<Recalibrated> recalibrated;
};

struct VerdictFacts {
  Requirement requirement;
  std::string task;  // the first cell's task name
  Value params;      // and its parameters
  bool accuracy_swept = false;
  std::size_t sample_size = 0;  // the first cell's test-set size
  std::vector<FrontierRow> rows;
  std::vector<VerdictCell> cells;  // at least one
};

std::string requirement_verdict(const VerdictFacts& facts);

}  // namespace calbench
