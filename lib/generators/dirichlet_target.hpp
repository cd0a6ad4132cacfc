#pragma once
// A target for the `dirichlet` family as a config states it: "accuracy A, ece_top_l1 E" with
// K, the direction of the miscalibration and the map whose parameter is solved (issue #5,
// docs/generators.md). The request only: truth/target_solver.hpp solves it.
#include <cstddef>
#include <string_view>

#include "generators/dirichlet.hpp"

namespace calbench {

enum class TargetDirection { overconfident, underconfident };
enum class TargetMap { temperature, top_label };

struct DirichletTarget {
  std::size_t classes = 2;
  double accuracy = 0.0;
  double ece_top_l1 = 0.0;
  TargetDirection direction = TargetDirection::overconfident;
  TargetMap map = TargetMap::temperature;
};

// The generator a target stands for at (alpha, T or gamma): symmetric alpha and the map.
DirichletSpec target_spec(const DirichletTarget& target, double alpha, double parameter);

std::string_view to_string(TargetDirection direction);
std::string_view to_string(TargetMap map);

}  // namespace calbench
