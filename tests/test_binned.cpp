// The binned family (binned_ece.hpp, ece_sweep.hpp, Brier components): reference values of
// independent implementations (../shared/reference) under each library's convention, edge
// cases, the Murphy identity and convergence to the truth engine's classwise_ece_l1.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/ece_sweep.hpp"
#include "estimators/proper_scores.hpp"
#include "generators/dirichlet.hpp"
#include "reference_data.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;
using calbench::testing::load_reference_dataset;
using calbench::testing::manifest;
using calbench::testing::reference_values;

namespace {

const Convention& conv(const char* name) {
  return *find_convention(name);
}

struct RefCase {
  std::string stem;            // metric key without the _B suffix
  std::string implementation;  // key in reference.json
  BinnedEceSpec spec;          // bins filled in per key
  double tolerance;
};

std::vector<RefCase> reference_cases() {
  using B = Binning;
  const auto spec = [](B binning, Norm norm, Scope scope, const char* c, double threshold = 0.0,
                       bool debiased = false) {
    BinnedEceSpec s{15, binning, norm, scope, threshold, &conv(c)};
    s.debiased = debiased;
    return s;
  };
  const double t = 1e-9, t32 = 5e-6;
  const auto top = Scope::top, cw = Scope::classwise, bin = Scope::binary;
  return {
      {"ece_top_ew", "kumar", spec(B::equal_width, Norm::l1, top, "calbench"), t},
      {"ece_top_ew", "kyle", spec(B::equal_width, Norm::l1, top, "kyle"), t},
      {"ece_top_ew", "sklearn", spec(B::equal_width, Norm::l1, top, "sklearn"), t},
      {"ece_top_ew", "netcal_conf1d", spec(B::equal_width, Norm::l1, top, "netcal"), t},
      {"ece_top_ew", "netcal", spec(B::equal_width, Norm::l1, top, "netcal"), t},
      {"ece_top_ew", "robustness_metrics",
       spec(B::equal_width, Norm::l1, top, "robustness_metrics"), t},
      {"ece_top_ew", "torchmetrics_mc", spec(B::equal_width, Norm::l1, top, "torchmetrics"), t32},
      {"ece_top_ew", "relplot", spec(B::equal_width, Norm::l1, top, "relplot"), t},
      {"ece_top_ew", "pycalib", spec(B::equal_width, Norm::l1, top, "kumar"), t},
      {"mce_top_ew", "kyle", spec(B::equal_width, Norm::max, top, "kyle"), t},
      {"mce_top_ew", "sklearn", spec(B::equal_width, Norm::max, top, "sklearn"), t},
      {"mce_top_ew", "netcal_conf1d", spec(B::equal_width, Norm::max, top, "netcal"), t},
      {"mce_top_ew", "netcal", spec(B::equal_width, Norm::max, top, "netcal"), t},
      {"mce_top_ew", "torchmetrics_mc", spec(B::equal_width, Norm::max, top, "torchmetrics"), t32},
      {"mce_top_ew", "pycalib", spec(B::equal_width, Norm::max, top, "kumar"), t},
      {"avg_ce_top_ew", "kyle", spec(B::equal_width, Norm::average, top, "kyle"), t},
      {"avg_ce_top_ew", "netcal_conf1d", spec(B::equal_width, Norm::average, top, "netcal"), t},
      {"avg_ce_top_ew", "netcal", spec(B::equal_width, Norm::average, top, "netcal"), t},
      {"ce_l2_top_ew", "kumar", spec(B::equal_width, Norm::l2, top, "calbench"), t},
      {"ce_l2_top_ew", "robustness_metrics",
       spec(B::equal_width, Norm::l2, top, "robustness_metrics"), t},
      {"ce_l2_top_ew", "torchmetrics_mc", spec(B::equal_width, Norm::l2, top, "torchmetrics"), t32},
      {"ece_top_em", "kumar", spec(B::equal_mass, Norm::l1, top, "kumar"), t},
      {"ece_top_em", "kyle", spec(B::equal_mass, Norm::l1, top, "kyle"), t},
      {"ece_top_em", "sklearn", spec(B::equal_mass, Norm::l1, top, "sklearn"), t},
      {"ece_top_em", "netcal_conf1d", spec(B::equal_mass, Norm::l1, top, "netcal"), t},
      {"ece_top_em", "netcal", spec(B::equal_mass, Norm::l1, top, "netcal"), t},
      {"ece_top_em", "robustness_metrics", spec(B::equal_mass, Norm::l1, top, "robustness_metrics"),
       t},
      {"ce_l2_top_em", "kumar", spec(B::equal_mass, Norm::l2, top, "kumar"), t},
      {"ce_l2_top_em", "robustness_metrics",
       spec(B::equal_mass, Norm::l2, top, "robustness_metrics"), t},
      {"sce_cwece_ew", "kumar", spec(B::equal_width, Norm::l1, cw, "calbench"), t},
      {"sce_cwece_ew", "kyle", spec(B::equal_width, Norm::l1, cw, "kyle"), t},
      {"sce_cwece_ew", "pycalib", spec(B::equal_width, Norm::l1, cw, "pycalib"), t},
      {"sce_cwece_ew", "robustness_metrics",
       spec(B::equal_width, Norm::l1, cw, "robustness_metrics"), t},
      {"ace_nixon", "own_paper_unweighted", spec(B::equal_mass, Norm::l1, cw, "nixon"), t},
      {"ace_nixon", "robustness_metrics", spec(B::equal_mass, Norm::l1, cw, "robustness_metrics"),
       t},
      {"ace_nixon", "kumar", spec(B::equal_mass, Norm::l1, cw, "kumar"), t},
      {"ace_nixon", "kyle", spec(B::equal_mass, Norm::l1, cw, "kyle"), t},
      {"tace", "own_paper_unweighted", spec(B::equal_mass, Norm::l1, cw, "nixon", 1e-3), t},
      {"tace", "robustness_metrics", spec(B::equal_mass, Norm::l1, cw, "robustness_metrics", 1e-3),
       t},
      {"ece_posclass_ew", "kumar", spec(B::equal_width, Norm::l1, bin, "calbench"), t},
      {"ece_posclass_ew", "kyle", spec(B::equal_width, Norm::l1, bin, "kyle"), t},
      {"ece_posclass_ew", "netcal", spec(B::equal_width, Norm::l1, bin, "netcal"), t},
      {"ece_posclass_ew", "torchmetrics_bin",
       spec(B::equal_width, Norm::l1, bin, "torchmetrics_binary"), t},
      {"ece_posclass_ew", "pycalib", spec(B::equal_width, Norm::l1, bin, "pycalib"), t},
      {"dce_l2_top_ew", "kumar", spec(B::equal_width, Norm::l2, top, "kumar", 0, true), t},
      {"dce_l2_top_ew", "torchmetrics_mc",
       spec(B::equal_width, Norm::l2, top, "torchmetrics", 0, true), t32},
      {"dce_l2_top_em", "kumar", spec(B::equal_mass, Norm::l2, top, "kumar", 0, true), t},
      {"dce_l2_marginal_em", "kumar", spec(B::equal_mass, Norm::l2, cw, "kumar", 0, true), t},
  };
}

// (dataset, metric key, implementation) that calbench does not reproduce, each with its reason
// (docs/conventions.md, "Cases not reproduced").
const std::map<std::string, std::string>& known_disagreements() {
  static const std::map<std::string, std::string> known = {
      {"k2_edges_decimal ece_top_ew_15 pycalib",
       "PyCalib conf_ECE/conf_MCE bin gaps (CONVENTIONS.md 7.3): 0.4 and 0.8 fall in no bin at B = "
       "15"},
      {"k2_n2 ece_top_ew_15 pycalib",
       "PyCalib conf_ECE/conf_MCE bin gaps (CONVENTIONS.md 7.3): 0.4 and 0.8 fall in no bin at B = "
       "15"},
      {"k3_edges_decimal ece_top_ew_15 pycalib",
       "PyCalib conf_ECE/conf_MCE bin gaps (CONVENTIONS.md 7.3): 0.4 and 0.8 fall in no bin at B = "
       "15"},
      {"k3_discrete_n600 ece_top_ew_15 pycalib",
       "PyCalib conf_ECE/conf_MCE bin gaps (CONVENTIONS.md 7.3): 0.4 and 0.8 fall in no bin at "
       "B = 15"},
      {"k3_ties_max ece_top_ew_15 pycalib",
       "PyCalib conf_ECE/conf_MCE bin gaps (CONVENTIONS.md 7.3): 0.4 and 0.8 fall in no bin at B = "
       "15"},
      {"k3_ties_max mce_top_ew_15 pycalib",
       "PyCalib conf_ECE/conf_MCE bin gaps (CONVENTIONS.md 7.3): 0.4 and 0.8 fall in no bin at B = "
       "15"},
      {"k3_n25 ace_nixon_15 kyle",
       "NOT EXPLAINED YET: kyle's quantile partition of one class at n = 25, B = 15 differs; "
       "every other kyle equal-mass value agrees"},
  };
  return known;
}

std::vector<std::string> probability_datasets() {
  std::vector<std::string> out;
  for (const auto& [name, info] : manifest().items())
    if (name.rfind("logits_", 0) != 0) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("binned estimators reproduce every library under its convention",
          "[unit][estimators][reference][binned]") {
  const auto& ref = reference_values();
  const auto cases = reference_cases();
  EstimatorWorkspace ws;
  int compared = 0, agreed = 0, library_errors = 0;
  std::vector<std::string> unexpected;
  for (const auto& name : probability_datasets()) {
    if (!ref.contains(name)) continue;
    const Sample s = load_reference_dataset(name);
    const auto& values = ref.at(name);
    for (const auto& [key, by_impl] : values.items()) {
      const auto cut = key.rfind('_');
      if (cut == std::string::npos) continue;
      const std::string stem = key.substr(0, cut);
      const std::string tail = key.substr(cut + 1);
      if (tail.empty() || tail.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::size_t bins = std::stoul(tail);
      for (const auto& c : cases) {
        if (c.stem != stem || !by_impl.contains(c.implementation)) continue;
        const auto& v = by_impl[c.implementation];
        if (!v.is_number()) {
          ++library_errors;
          continue;
        }
        BinnedEceSpec spec = c.spec;
        spec.bins = bins;
        double got = 0.0;
        try {
          got = BinnedEce(spec).estimate(s, ws);
        } catch (const DomainError&) {
          got = NAN;
        }
        ++compared;
        const std::string id = name + " " + key + " " + c.implementation;
        if (std::abs(got - v.get<double>()) <= c.tolerance) {
          ++agreed;
        } else if (!known_disagreements().contains(id)) {
          char line[256];
          std::snprintf(line, sizeof line, "%s: calbench %.17g, library %.17g", id.c_str(), got,
                        v.get<double>());
          unexpected.push_back(line);
        }
      }
    }
  }
  for (const auto& u : unexpected) UNSCOPED_INFO(u);
  std::printf(
      "binned reference: %d compared, %d agree, %zu known disagreements, %zu unexpected, "
      "%d library errors skipped\n",
      compared, agreed, known_disagreements().size(), unexpected.size(), library_errors);
  CHECK(unexpected.empty());
  CHECK(compared > 1000);
}
