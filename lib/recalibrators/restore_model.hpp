#pragma once
// A fitted model rebuilt from its state (recalibrators/fitted_state.hpp): the inverse of
// CalibrationModel::state and BinaryMap::state, one case per kind of state.
#include <memory>
#include <string>

#include "recalibrators/binary_calibrator.hpp"
#include "recalibrators/fitted_state.hpp"
#include "recalibrators/recalibrator.hpp"

namespace calbench {

// Rebuilds the model a state describes. Throws DomainError, prefixed by `where` (the place
// of the state in its file, e.g. "/model/parts/2"), when the state is not one a fit can
// produce: an unknown kind, a missing or extra value, arrays of inconsistent lengths, edges
// or scores out of order, weights off the simplex.
std::unique_ptr<const CalibrationModel> restore_model(const FittedState& state,
                                                      const std::string& where);
std::unique_ptr<const BinaryMap> restore_binary_map(const FittedState& state,
                                                    const std::string& where);

}  // namespace calbench
