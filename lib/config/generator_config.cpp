#include "config/generator_config.hpp"

#include "core/format.hpp"

namespace calbench {

// ---- reporting a solved target ----------------------------------------------------------------

Json target_json(const DirichletTarget& target, const TargetSolution& solution) {
  auto truth = [](const TruthValue& v) {
    return Json{
        {"value", v.value}, {"method", std::string(to_string(v.method))}, {"error", v.error}};
  };
  Json solved = Json::object();
  solved["alpha"] = solution.alpha;
  solved[target.map == TargetMap::temperature ? "temperature" : "gamma"] = solution.parameter;
  return Json{
      {"accuracy", target.accuracy},
      {"ece_top_l1", target.ece_top_l1},
      {"direction", std::string(to_string(target.direction))},
      {"map", std::string(to_string(target.map))},
      {"solved", solved},
      {"achieved",
       {{"accuracy", truth(solution.accuracy)}, {"ece_top_l1", truth(solution.ece_top_l1)}}}};
}

}  // namespace calbench
