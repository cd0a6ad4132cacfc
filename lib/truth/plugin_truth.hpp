#pragma once
// The plug-in truth of a finite sample (calbench export-cases, docs/cases.md).
#include <array>
#include <optional>

#include "core/quantity.hpp"
#include "core/sample.hpp"

namespace calbench {

// The nine design quantities of the empirical distribution of (p, y): the sample taken as the
// population, conditional probabilities given a statistic estimated by grouping rows with
// exactly equal values of it (confidence, p_k, or the whole vector p). The limit every
// consistent estimator has on this distribution. nullopt: infinite (nll with some p_y = 0).
std::array<std::optional<double>, all_quantities.size()> plugin_truth(const Sample& sample);

}  // namespace calbench
