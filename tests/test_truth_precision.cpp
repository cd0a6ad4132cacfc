// The precision of the Monte Carlo truth at default settings, measured where an exact answer
// exists: at K = 3 the truth engine uses two-dimensional quadrature (error ~1e-9), so running
// its Monte Carlo path (monte_carlo_truth, the one K >= 4 uses) on the same generators with
// TruthSettings{} measures the whole error of the default Monte Carlo — noise, the binning bias
// of the conditional quantities and the bias of |.| — against a known answer
// (docs/truth.md, "Precision and stopping"). With CALBENCH_TRUTH_TABLE=FILE the rows are also
// written to FILE (scripts/truth-precision.sh puts them in the docs).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/format.hpp"
#include "truth/ternary_quadrature.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

struct Case {
  std::string name;
  DirichletSpec spec;
};

// An injective K = 3 affine_logit (that of tests/test_ternary_quadrature.cpp).
const AffineLogitMap injective_affine{{1.3, 0.0, 0.0, 0.3, 1.0, 0.0, 0.3, 0.0, 1.0},
                                      {0.2, -0.1, 0.0}};

std::vector<Case> cases(bool all) {
  std::vector<Case> out = {
      {"temperature 0.7, alpha (0.8, 1, 2)", {3, {0.8, 1.0, 2.0}, TemperatureMap{0.7}}},
      {"top_label 2, alpha 0.7", {3, {0.7}, TopLabelMap{2.0}}},
  };
  if (!all) return out;
  out.push_back({"power (0.5, 1, 2), alpha 1", {3, {1.0}, PowerMap{{0.5, 1.0, 2.0}}}});
  out.push_back({"temperature 1.4, alpha 0.5", {3, {0.5}, TemperatureMap{1.4}}});
  out.push_back({"power (0.8, 1, 1.3), alpha 0.3", {3, {0.3}, PowerMap{{0.8, 1.0, 1.3}}}});
  out.push_back({"top_label 0.5, alpha 0.6", {3, {0.6}, TopLabelMap{0.5}}});
  out.push_back({"top_label 2, alpha (0.5, 1, 2)", {3, {0.5, 1.0, 2.0}, TopLabelMap{2.0}}});
  out.push_back(
      {"affine_logit (injective), alpha (0.7, 1.1, 1.6)", {3, {0.7, 1.1, 1.6}, injective_affine}});
  return out;
}

// Every Monte Carlo quantity within 4 reported errors plus `bias` of the quadrature; the rows
// appended to the table file when one is named.
void check_against_quadrature(const std::vector<Case>& list, double bias) {
  const char* table = std::getenv("CALBENCH_TRUTH_TABLE");
  std::ofstream out;
  if (table != nullptr) out.open(table, std::ios::app);
  for (const Case& c : list) {
    const DirichletGenerator gen(c.spec);
    GroundTruth exact;
    REQUIRE(ternary_quadrature_truth(gen, exact));
    const GroundTruth mc = monte_carlo_truth(gen, TruthSettings{});
    for (Quantity q : all_quantities) {
      if (mc[q].method != TruthMethod::monte_carlo) continue;  // exact in the engine too
      const double diff = mc[q].value - exact[q].value;
      INFO(c.name << " " << to_string(q) << ": Monte Carlo " << mc[q].value << " +- " << mc[q].error
                  << ", quadrature " << exact[q].value);
      CHECK(std::abs(diff) <= 4.0 * mc[q].error + exact[q].error + bias);
      if (out)
        out << "| K = 3 " << c.name << " | " << to_string(q) << " | "
            << format_fixed(mc[q].value, 6) << " | " << format_fixed(exact[q].value, 6)
            << " (quadrature) | " << format_double(diff) << " | " << format_double(mc[q].error)
            << " |\n";
    }
  }
}

// A bias the reported error does not cover, allowed on top of 4 reported errors: half the
// 2e-4 bar. Measured (docs/truth.md): at most 7.6e-5 (classwise, top_label 2 with alpha
// (0.5, 1, 2), 11 reported errors; the quadrature's classwise value there has no independent
// check) and 1.0e-4 (ece_top_l2, temperature 0.7, 2.7 reported errors).
constexpr double unreported_bias = 1e-4;

}  // namespace

TEST_CASE("default Monte Carlo truth at K = 3 within 4 reported errors of the quadrature",
          "[stat][truth]") {
  check_against_quadrature(cases(false), unreported_bias);
}

TEST_CASE("default Monte Carlo truth at K = 3 on more maps, against the quadrature",
          "[slow][stat][truth]") {
  const auto all = cases(true);
  check_against_quadrature({all.begin() + 2, all.end()}, unreported_bias);
}
