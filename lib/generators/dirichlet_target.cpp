#include "generators/dirichlet_target.hpp"

#include <vector>

namespace calbench {
namespace {

MiscalibrationMap make_map(TargetMap map, double parameter) {
  if (map == TargetMap::temperature) return TemperatureMap{parameter};
  return TopLabelMap{parameter};
}

}  // namespace

DirichletSpec target_spec(const DirichletTarget& target, double alpha, double parameter) {
  return DirichletSpec{target.classes, std::vector<double>(target.classes, alpha),
                       make_map(target.map, parameter)};
}

std::string_view to_string(TargetDirection direction) {
  return direction == TargetDirection::overconfident ? "overconfident" : "underconfident";
}

std::string_view to_string(TargetMap map) {
  return map == TargetMap::temperature ? "temperature" : "top_label";
}

}  // namespace calbench
