#pragma once
// A fitted calibration model's parameters as plain data, so that a model fitted once can be
// saved and applied later (`calbench recalibrate fit|apply`, calbench.Recalibrator.save/load;
// docs/recalibration.md, "Recalibrating your own model"). Each model and binary map writes its
// state (CalibrationModel::state, BinaryMap::state) and restore_model() rebuilds the same
// object from it (recalibrators/restore_model.hpp), so a restored model gives the same bits as
// the fitted one. The file format lives in recalibrators/fitted_model_json.cpp (state_json,
// read_state): JSON stays at the edge.
//
// A state is a tree: a `kind` naming the model ("temperature", "one_vs_rest", "isotonic",
// ...), named scalars, named arrays and the states of its parts (a one-vs-rest model's K
// binary maps, a wrapper's inner models). An absent part (a classwise class left unchanged)
// has kind "identity".
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace calbench {

struct FittedState {
  std::string kind{};
  std::vector<std::pair<std::string, double>> scalars{};
  std::vector<std::pair<std::string, std::vector<double>>> arrays{};
  std::vector<FittedState> parts{};

  // The named value; throws DomainError naming the kind and the key when it is absent.
  double scalar(const std::string& key) const;
  const std::vector<double>& array(const std::string& key) const;
};

// A state whose kind is `kind` and whose parts all satisfy `part` (any number of parts when
// parts < 0): the shape Recalibrator::gives checks.
template <typename Part>
bool has_form(const FittedState& state, const std::string& kind, long parts, Part part) {
  if (state.kind != kind) return false;
  if (parts >= 0 && state.parts.size() != static_cast<std::size_t>(parts)) return false;
  for (const auto& p : state.parts)
    if (!part(p)) return false;
  return true;
}
// A state of that kind whose parts are not looked at (a map's own parts, such as bbq's).
inline bool has_kind(const FittedState& state, const std::string& kind) {
  return state.kind == kind;
}

}  // namespace calbench
