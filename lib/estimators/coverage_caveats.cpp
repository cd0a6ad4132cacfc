#include "estimators/coverage_caveats.hpp"

#include <array>

#include "core/format.hpp"

namespace calbench {
namespace {

using enum ClassRegion;
using enum SizeRegion;
using M = IntervalMethod;

// docs/intervals.md, "Where the defaults miss" (scripts/intervals_table.py --caveats --cpp
// docs/intervals.md prints these rows; tests/unit/test_doc_figures.cpp derives them again from the
// doc's coverage tables and checks this table and the doc's against them).
constexpr std::array misses{
    CoverageMiss{"accuracy", M::bca, two, below_5000, 0.82,
                 "overconfident (T = 0.7), K = 2, n = 1000"},
    CoverageMiss{"accuracy", M::bca, two, from_5000, 0.83, "gb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"accuracy", M::bca, over_ten, below_500, 0.84,
                 "underconfident (T = 1.4), K = 100, n = 100"},
    CoverageMiss{"brier", M::bca, two, below_500, 0.79, "nb_k2 fake, K = 2, n = 200"},
    CoverageMiss{"brier", M::bca, two, below_5000, 0.84, "gb_k2 fake, K = 2, n = 1000"},
    CoverageMiss{"brier", M::bca, two, from_5000, 0.84, "nb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"nll", M::bca, two, below_500, 0.84, "nb_k2 fake, K = 2, n = 200"},
    CoverageMiss{"nll", M::bca, three_to_ten, below_500, 0.83,
                 "digits_lr_k10 fake, K = 10, n = 200"},
    CoverageMiss{"ece_ew15", M::bias_corrected, two, below_5000, 0.84,
                 "overconfident (T = 0.7), K = 2, n = 1000"},
    CoverageMiss{"ece_ew15", M::bias_corrected, three_to_ten, below_500, 0.83,
                 "overconfident (T = 0.7), K = 10, n = 100"},
    CoverageMiss{"ece_ew15", M::bias_corrected, three_to_ten, below_5000, 0.78,
                 "digits_lr_k10 fake, K = 10, n = 1000"},
    CoverageMiss{"ece_ew15", M::bias_corrected, over_ten, below_500, 0.80,
                 "underconfident (T = 1.4), K = 100, n = 100"},
    CoverageMiss{"ece_ew15", M::bias_corrected, over_ten, below_5000, 0.84,
                 "underconfident (T = 1.4), K = 100, n = 1000"},
    CoverageMiss{"ece_sweep_em", M::consistency, two, below_500, 0.81,
                 "overconfident (T = 0.7), K = 2, n = 100"},
    CoverageMiss{"ece_sweep_em", M::consistency, two, below_5000, 0.76,
                 "gb_k2 fake, K = 2, n = 1000"},
    CoverageMiss{"ece_sweep_em", M::consistency, two, from_5000, 0.84,
                 "gb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"ece_sweep_em", M::consistency, three_to_ten, below_500, 0.77,
                 "digits_lr_k10 fake, K = 10, n = 200"},
    CoverageMiss{"ece_sweep_em", M::consistency, three_to_ten, below_5000, 0.78,
                 "digits_lr_k10 fake, K = 10, n = 1000"},
    CoverageMiss{"ece_sweep_em", M::consistency, over_ten, below_500, 0.73,
                 "overconfident (T = 0.7), K = 100, n = 100"},
    CoverageMiss{"ece_sweep_em", M::consistency, over_ten, below_5000, 0.75,
                 "underconfident (T = 1.4), K = 100, n = 1000"},
    CoverageMiss{"dece_em15", M::analytic, two, below_500, 0.53,
                 "underconfident (T = 1.4), K = 2, n = 100"},
    CoverageMiss{"dece_em15", M::analytic, two, below_5000, 0.60, "gb_k2 fake, K = 2, n = 1000"},
    CoverageMiss{"dece_em15", M::analytic, two, from_5000, 0.58, "gb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"dece_em15", M::analytic, three_to_ten, below_500, 0.40,
                 "digits_lr_k10 fake, K = 10, n = 200"},
    CoverageMiss{"dece_em15", M::analytic, three_to_ten, below_5000, 0.68,
                 "digits_lr_k10 fake, K = 10, n = 1000"},
    CoverageMiss{"dece_em15", M::analytic, over_ten, below_500, 0.27,
                 "overconfident (T = 0.7), K = 100, n = 100"},
    CoverageMiss{"dece_em15", M::analytic, over_ten, below_5000, 0.83,
                 "overconfident (T = 0.7), K = 100, n = 1000"},
    CoverageMiss{"cwece_ew15", M::consistency, two, below_500, 0.65,
                 "overconfident (T = 0.7), K = 2, n = 100"},
    CoverageMiss{"cwece_ew15", M::consistency, two, below_5000, 0.61,
                 "gb_k2 fake, K = 2, n = 1000"},
    CoverageMiss{"cwece_ew15", M::consistency, two, from_5000, 0.66, "gb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"cwece_ew15", M::consistency, three_to_ten, below_500, 0.48,
                 "overconfident (T = 0.7), K = 10, n = 100"},
    CoverageMiss{"cwece_ew15", M::consistency, three_to_ten, below_5000, 0.70,
                 "overconfident (T = 0.7), K = 10, n = 1000"},
    CoverageMiss{"cwece_ew15", M::consistency, three_to_ten, from_5000, 0.47,
                 "digits_lr_k10 fake, K = 10, n = 5000"},
    CoverageMiss{"cwece_ew15", M::consistency, over_ten, below_5000, 0.13,
                 "underconfident (T = 1.4), K = 100, n = 1000"},
    CoverageMiss{"ace15_nixon", M::bias_corrected, two, below_5000, 0.82,
                 "underconfident (T = 1.4), K = 2, n = 1000"},
    CoverageMiss{"ace15_nixon", M::bias_corrected, three_to_ten, below_500, 0.66,
                 "overconfident (T = 0.7), K = 10, n = 100"},
    CoverageMiss{"ace15_nixon", M::bias_corrected, three_to_ten, below_5000, 0.59,
                 "underconfident (T = 1.4), K = 10, n = 1000"},
    CoverageMiss{"ace15_nixon", M::bias_corrected, three_to_ten, from_5000, 0.39,
                 "digits_lr_k10 fake, K = 10, n = 5000"},
    CoverageMiss{"ace15_nixon", M::bias_corrected, over_ten, below_500, 0.08,
                 "overconfident (T = 0.7), K = 100, n = 100"},
    CoverageMiss{"ace15_nixon", M::bias_corrected, over_ten, below_5000, 0.02,
                 "overconfident (T = 0.7), K = 100, n = 1000"},
    CoverageMiss{"smooth_ece", M::consistency, two, below_500, 0.78, "gb_k2 fake, K = 2, n = 200"},
    CoverageMiss{"smooth_ece", M::consistency, two, below_5000, 0.50,
                 "gb_k2 fake, K = 2, n = 1000"},
    CoverageMiss{"smooth_ece", M::consistency, two, from_5000, 0.50, "gb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"smooth_ece", M::consistency, three_to_ten, below_5000, 0.67,
                 "digits_lr_k10 fake, K = 10, n = 1000"},
    CoverageMiss{"smooth_ece", M::consistency, three_to_ten, from_5000, 0.84,
                 "digits_lr_k10 fake, K = 10, n = 5000"},
    CoverageMiss{"kde_ece", M::consistency, two, below_500, 0.77, "nb_k2 fake, K = 2, n = 200"},
    CoverageMiss{"kde_ece", M::consistency, two, below_5000, 0.77, "nb_k2 fake, K = 2, n = 1000"},
    CoverageMiss{"kde_ece", M::consistency, two, from_5000, 0.55, "nb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"kde_ece", M::consistency, three_to_ten, below_500, 0.72,
                 "digits_lr_k10 fake, K = 10, n = 200"},
    CoverageMiss{"kde_ece", M::consistency, three_to_ten, below_5000, 0.47,
                 "digits_lr_k10 fake, K = 10, n = 1000"},
    CoverageMiss{"kde_ece", M::consistency, three_to_ten, from_5000, 0.05,
                 "digits_lr_k10 fake, K = 10, n = 5000"},
    CoverageMiss{"ks_calibration", M::consistency, two, below_5000, 0.65,
                 "gb_k2 fake, K = 2, n = 1000"},
    CoverageMiss{"ks_calibration", M::consistency, two, from_5000, 0.78,
                 "gb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"ks_calibration", M::consistency, three_to_ten, below_500, 0.77,
                 "digits_lr_k10 fake, K = 10, n = 200"},
    CoverageMiss{"ks_calibration", M::consistency, three_to_ten, below_5000, 0.67,
                 "digits_lr_k10 fake, K = 10, n = 1000"},
    CoverageMiss{"kuiper_calibration", M::consistency, two, below_5000, 0.80,
                 "gb_k2 fake, K = 2, n = 1000"},
    CoverageMiss{"kuiper_calibration", M::consistency, three_to_ten, below_5000, 0.74,
                 "digits_lr_k10 fake, K = 10, n = 1000"},
    CoverageMiss{"kuiper_calibration", M::consistency, three_to_ten, from_5000, 0.84,
                 "mlp_k3 fake, K = 3, n = 5000"},
    CoverageMiss{"spiegelhalter", M::bca, three_to_ten, below_500, 0.84,
                 "digits_lr_k10 fake, K = 10, n = 200"},
    CoverageMiss{"calib_err_b100", M::basic, two, below_500, 0.70, "gb_k2 fake, K = 2, n = 200"},
    CoverageMiss{"calib_err_b100", M::basic, two, below_5000, 0.84, "gb_k2 fake, K = 2, n = 1000"},
    CoverageMiss{"calib_err_b100", M::basic, two, from_5000, 0.80, "gb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"calib_err_b100", M::basic, three_to_ten, below_500, 0.68,
                 "digits_lr_k10 fake, K = 10, n = 200"},
    CoverageMiss{"calib_err_b100", M::basic, three_to_ten, below_5000, 0.78,
                 "digits_lr_k10 fake, K = 10, n = 1000"},
    CoverageMiss{"calib_err_b100", M::basic, three_to_ten, from_5000, 0.81,
                 "digits_lr_k10 fake, K = 10, n = 5000"},
    CoverageMiss{"corp_mcb_brier", M::consistency, two, from_5000, 0.84,
                 "gb_k2 fake, K = 2, n = 5000"},
    CoverageMiss{"corp_mcb_brier", M::consistency, three_to_ten, from_5000, 0.70,
                 "digits_lr_k10 fake, K = 10, n = 5000"},
};

// eval's default fake interval on real models (real_model_misses(): docs/intervals.md, "The
// done-when table"; tests/unit/test_doc_figures.cpp derives these rows from
// tests/golden/fake_interval_study/done_when/cells.csv and checks them).
constexpr std::array fake_misses{
    CoverageMiss{"kde_ece", M::fake, three_to_ten, below_500, 0.82,
                 "8 real models, K = 10, n = 200, 56 replicates"},
    CoverageMiss{"kde_ece", M::fake, over_ten, below_500, 0.79,
                 "2 real models, K = 26 and 100, n = 200, 14 replicates"},
    CoverageMiss{"cwece_ew15", M::fake, over_ten, below_500, 0.43,
                 "2 real models, K = 26 and 100, n = 200, 14 replicates"},
    CoverageMiss{"cwece_ew15", M::fake, over_ten, below_5000, 0.14,
                 "2 real models, K = 26 and 100, n = 1000, 14 replicates"},
    CoverageMiss{"cwece_ew15", M::fake, over_ten, from_5000, 0.00,
                 "2 real models, K = 26 and 100, n = 5000, 14 replicates"},
    CoverageMiss{"ace15_nixon", M::fake, three_to_ten, below_500, 0.82,
                 "8 real models, K = 10, n = 200, 56 replicates"},
    CoverageMiss{"ace15_nixon", M::fake, over_ten, below_5000, 0.71,
                 "2 real models, K = 26 and 100, n = 1000, 14 replicates"},
    CoverageMiss{"ace15_nixon", M::fake, over_ten, from_5000, 0.71,
                 "2 real models, K = 26 and 100, n = 5000, 14 replicates"},
};

}  // namespace

ClassRegion class_region(std::size_t classes) {
  if (classes <= 2) return two;
  return classes <= 10 ? three_to_ten : over_ten;
}

SizeRegion size_region(std::size_t n) {
  if (n < 500) return below_500;
  return n < 5000 ? below_5000 : from_5000;
}

std::string_view to_string(ClassRegion region) {
  switch (region) {
    case two:
      return "2";
    case three_to_ten:
      return "3-10";
    case over_ten:
      return ">10";
  }
  return "";
}

std::string_view to_string(SizeRegion region) {
  switch (region) {
    case below_500:
      return "<500";
    case below_5000:
      return "500-4999";
    case from_5000:
      return ">=5000";
  }
  return "";
}

std::span<const CoverageMiss> coverage_misses() {
  return misses;
}

std::span<const CoverageMiss> real_model_misses() {
  return fake_misses;
}

std::optional<CoverageMiss> coverage_miss(std::string_view label, IntervalMethod method,
                                          std::size_t classes, std::size_t n) {
  const ClassRegion k = class_region(classes);
  const SizeRegion s = size_region(n);
  for (const auto table : {coverage_misses(), real_model_misses()})
    for (const CoverageMiss& m : table)
      if (m.label == label && m.method == method && m.classes == k && m.size == s) return m;
  return std::nullopt;
}

std::string coverage_note(const CoverageMiss& miss) {
  return "coverage " + format_fixed(miss.coverage, 2) + " at nominal " +
         format_fixed(measured_level, 2) + " measured for K " +
         std::string(to_string(miss.classes)) + ", n " + std::string(to_string(miss.size)) + " (" +
         std::string(miss.setting) + "; docs/intervals.md)";
}

}  // namespace calbench
