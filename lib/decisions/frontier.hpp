#pragma once
// The requirement frontier over a sweep (docs/decisions.md): the cells are grouped by every
// swept value but the one that sets accuracy (groups in order of first appearance), and each
// group's minimal accuracy meeting the requirement is found by minimal_accuracy
// (decisions/requirement.hpp).
#include <cstddef>
#include <optional>
#include <vector>

#include "core/value.hpp"
#include "decisions/requirement.hpp"

namespace calbench {

struct FrontierCell {
  std::size_t cell = 0;           // its index in the results
  std::vector<SweptValue> group;  // its swept values but the accuracy key
  double accuracy = 0.0;          // the generator's exact accuracy
  double ece_top_l1 = 0.0;        // and its ece_top_l1
  double value = 0.0;             // the requirement's metric
  bool calibrated = false;        // the generator is calibrated (identity map)
};

struct FrontierRow {
  std::vector<SweptValue> group;
  std::vector<std::size_t> cells;  // their indices, in order
  FrontierStatus status = FrontierStatus::unreachable;
  std::optional<double> minimal_accuracy;
  // reached: the bracketing cells (the last failing one, the next one); unreachable: the
  // closest cell as `lower`; met_everywhere: the lowest-accuracy cell as `upper`.
  std::optional<FrontierPoint> lower, upper;
  // ece_top_l1 of the generator at the frontier, interpolated like the accuracy
  // (met_everywhere: at the lowest-accuracy cell).
  std::optional<double> ece_top_l1;
  bool monotone = true;
  bool calibrated = false;  // every cell of the group is calibrated
};

// One row per group, in order of first appearance.
std::vector<FrontierRow> requirement_frontier(const std::vector<FrontierCell>& cells,
                                              const Requirement& requirement);

}  // namespace calbench
