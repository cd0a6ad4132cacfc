#include "estimators/convention.hpp"

namespace calbench {

const std::vector<Convention>& conventions() {
  using E = EdgeRule;
  using C = Closed;
  using M = MassRule;
  // Each row names the enums and the rules it turns on; a rule left out is off.
  static const std::vector<Convention> table = {
      {.name = "calbench",
       .default_bins = 15,
       .edges = E::division,
       .closed = C::right,
       .mass = M::split_midpoint,
       .mass_closed = C::right,
       .verified = true},
      {.name = "kumar",
       .default_bins = 15,
       .edges = E::division,
       .closed = C::right,
       .mass = M::split_midpoint,
       .mass_closed = C::right,
       .verified = true},
      {.name = "sklearn",
       .default_bins = 5,
       .edges = E::linspace,
       .closed = C::right,
       .mass = M::quantile,
       .mass_closed = C::right,
       .verified = true},
      {.name = "kyle",
       .default_bins = 10,
       .edges = E::linspace,
       .closed = C::right,
       .mass = M::quantile,
       .mass_closed = C::right,
       .verified = true},
      {.name = "netcal",
       .default_bins = 10,
       .edges = E::linspace,
       .closed = C::left,
       .mass = M::quantile,
       .mass_closed = C::left,
       .mass_outer_edges_01 = true,
       .verified = true},
      {.name = "robustness_metrics",
       .default_bins = 15,
       .edges = E::linspace,
       .closed = C::left,
       .mass = M::nixon,
       .mass_closed = C::left,
       .own_bin_for_one = true,
       .drop_zero_scores = true,
       .verified = true},
      // Nixon et al. 2019's printed ACE/TACE formula on robustness_metrics'
      // partition.
      {.name = "nixon",
       .default_bins = 15,
       .edges = E::linspace,
       .closed = C::left,
       .mass = M::nixon,
       .mass_closed = C::left,
       .own_bin_for_one = true,
       .drop_zero_scores = true,
       .unweighted_ranges = true,
       .verified = true},
      {.name = "torchmetrics",
       .default_bins = 15,
       .edges = E::torch_linspace,
       .closed = C::left,
       .mass = M::split_midpoint,
       .mass_closed = C::right,
       .own_bin_for_one = true,
       .float32 = true,
       .debias_keep_singleton = true,
       .verified = true},
      {.name = "torchmetrics_binary",
       .default_bins = 15,
       .edges = E::torch_linspace,
       .closed = C::left,
       .mass = M::split_midpoint,
       .mass_closed = C::right,
       .own_bin_for_one = true,
       .debias_keep_singleton = true,
       .verified = true},
      {.name = "pycalib",
       .default_bins = 15,
       .edges = E::stretched,
       .closed = C::left,
       .mass = M::split_midpoint,
       .mass_closed = C::right,
       .verified = true},
      {.name = "relplot",
       .default_bins = 10,
       .edges = E::truncation,
       .closed = C::left,
       .mass = M::split_midpoint,
       .mass_closed = C::right,
       .own_bin_for_one = true,
       .verified = true},
      // caltrain (Roelofs et al. 2022, google-research/caltrain
      // bin_methods.py): equal width by np.digitize(s, linspace(0, 1, B + 1),
      // right=False), i.e. [e_i, e_i+1), with 1.0 in the last bin; equal mass
      // by rank, floor((r / n) * B). The reference set has no caltrain values:
      // tests/unit/test_binned.cpp checks it against
      // tests/reference/caltrain_ref.py, a numpy evaluation of those rules.
      {.name = "caltrain",
       .default_bins = 15,
       .edges = E::linspace,
       .closed = C::left,
       .mass = M::rank_floor,
       .mass_closed = C::right,
       .verified = true},
      // TensorFlow's tf.histogram_fixed_width_bins(s, [0, 1], B): floor(B s) clipped to
      // [0, B - 1] (uncertainty_metrics/tensorflow/calibration.py ExpectedCalibrationError,
      // robustness_metrics' TF ECE, tfp.stats.expected_calibration_error); equal mass:
      // tfp.stats.expected_calibration_error_quantiles' buckets. TF is not in Debian:
      // checked against tests/reference/conventions_ref.py, a numpy transcription.
      {.name = "tensorflow",
       .default_bins = 15,
       .edges = E::floor_product,
       .closed = C::left,
       .mass = M::nearest_rank,
       .mass_closed = C::left,
       .verified = true},
      // tensorflow with TFP's default of 20 quantile buckets.
      {.name = "tfp",
       .default_bins = 20,
       .edges = E::floor_product,
       .closed = C::left,
       .mass = M::nearest_rank,
       .mass_closed = C::left,
       .verified = true},
      // MAPIE (mapie/metrics/calibration.py _calc_bins): B edges, linspace(0, 1, B)
      // (strategy "uniform") or np.percentile(s, linspace(0, 1, B) * 100) ("quantile"), and
      // np.digitize(right=True), so scores at the lowest edge (exactly 0, or the minimum) have
      // a bin of their own.
      {.name = "mapie",
       .default_bins = 50,
       .edges = E::zero_bin,
       .closed = C::right,
       .mass = M::percentile_digitize,
       .mass_closed = C::right,
       .verified = true},
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
