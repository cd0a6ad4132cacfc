#include "estimators/convention.hpp"

namespace calbench {

const std::vector<Convention>& conventions() {
  using E = EdgeRule;
  using C = Closed;
  using M = MassRule;
  // name, bins, edges, closed, mass, mass_closed, outer01, own1, f32, drop0, unweighted,
  // keep_singleton, verified
  static const std::vector<Convention> table = {
      {"calbench", 15, E::division, C::right, M::split_midpoint, C::right, false, false, false,
       false, false, false, true},
      {"kumar", 15, E::division, C::right, M::split_midpoint, C::right, false, false, false, false,
       false, false, true},
      {"sklearn", 5, E::linspace, C::right, M::quantile, C::right, false, false, false, false,
       false, false, true},
      {"kyle", 10, E::linspace, C::right, M::quantile, C::right, false, false, false, false, false,
       false, true},
      {"netcal", 10, E::linspace, C::left, M::quantile, C::left, true, false, false, false, false,
       false, true},
      {"robustness_metrics", 15, E::linspace, C::left, M::nixon, C::left, false, true, false, true,
       false, false, true},
      // Nixon et al. 2019's printed ACE/TACE formula on robustness_metrics' partition.
      {"nixon", 15, E::linspace, C::left, M::nixon, C::left, false, true, false, true, true, false,
       true},
      {"torchmetrics", 15, E::torch_linspace, C::left, M::split_midpoint, C::right, false, true,
       true, false, false, true, true},
      {"torchmetrics_binary", 15, E::torch_linspace, C::left, M::split_midpoint, C::right, false,
       true, false, false, false, true, true},
      {"pycalib", 15, E::stretched, C::left, M::split_midpoint, C::right, false, false, false,
       false, false, false, true},
      {"relplot", 10, E::truncation, C::left, M::split_midpoint, C::right, false, true, false,
       false, false, false, true},
      // caltrain (Roelofs et al. 2022, google-research/caltrain bin_methods.py): equal width
      // by np.digitize(s, linspace(0, 1, B + 1), right=False), i.e. [e_i, e_i+1), with 1.0 in
      // the last bin; equal mass by rank, floor((r / n) * B). The reference set has no caltrain
      // values: tests/test_binned.cpp checks it against tests/reference/caltrain_ref.py, a
      // numpy evaluation of those rules.
      {"caltrain", 15, E::linspace, C::left, M::rank_floor, C::right, false, false, false, false,
       false, false, true},
  };
  return table;
}

const Convention& calbench_convention() {
  return conventions().front();
}

const Convention* find_convention(std::string_view name) {
  for (const auto& c : conventions())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace calbench
