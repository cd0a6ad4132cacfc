// Kernel and smooth estimators: smooth_ece against relplot (../shared/reference), SKCE known
// answers and unbiasedness, kde_ece convergence, edge cases.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/running_stats.hpp"
#include "estimators/kde_ece.hpp"
#include "estimators/skce.hpp"
#include "estimators/smooth_ece.hpp"
#include "generators/dirichlet.hpp"
#include "reference_data.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;
using calbench::testing::load_reference_dataset;
using calbench::testing::manifest;
using calbench::testing::reference_values;

namespace {

std::vector<std::string> probability_datasets() {
  std::vector<std::string> out;
  for (const auto& [name, info] : manifest().items())
    if (info.at("kind") == "probs") out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("smooth_ece matches relplot", "[unit][estimators][reference]") {
  EstimatorWorkspace ws;
  const SmoothEce fixed({});
  const SmoothEce at005({0.05});
  for (const auto& name : probability_datasets()) {
    const auto& ref = reference_values().at(name);
    if (!ref.contains("smece")) continue;
    const Sample s = load_reference_dataset(name);
    INFO(name);
    CHECK(fixed.bandwidth(s, ws) == ref.at("smece_sigma").at("relplot").get<double>());
    CHECK(fixed.estimate(s, ws) ==
          Approx(ref.at("smece").at("relplot").get<double>()).margin(1e-9).epsilon(0));
    CHECK(at005.estimate(s, ws) ==
          Approx(ref.at("smece_sigma0.05").at("relplot").get<double>()).margin(1e-9).epsilon(0));
  }
}
