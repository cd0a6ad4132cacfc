#include "truth/mixture_truth.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "generators/generator.hpp"
#include "truth/family_truth.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {

GroundTruth dirichlet_mixture_truth(const DirichletMixtureGenerator& gen,
                                    const TruthSettings& settings) {
  const auto& spec = gen.spec();
  std::vector<GroundTruth> parts;
  for (std::size_t j = 0; j < spec.components.size(); ++j)
    parts.push_back(compute_truth(gen.component(j), settings));
  GroundTruth t;
  // sum_j w_j v_j with error sum_j w_j e_j (a bound when the parts' errors are bounds, and at
  // least the standard error when they are independent standard errors) and the least exact
  // of the parts' methods.
  const auto weighted = [&](Quantity q, auto value_of) {
    TruthValue out{0.0, TruthMethod::closed_form, 0.0};
    for (std::size_t j = 0; j < parts.size(); ++j) {
      const double w = spec.components[j].weight;
      out.value += w * value_of(parts[j][q].value);
      out.error += w * parts[j][q].error;
      out.method = std::max(out.method, parts[j][q].method);
    }
    return out;
  };
  const auto same = [](double v) { return v; };
  for (Quantity q : {Quantity::accuracy, Quantity::overconfidence, Quantity::brier, Quantity::nll,
                     Quantity::canonical_l1})
    t[q] = weighted(q, same);
  // canonical_l2 = sqrt(sum_j w_j l2_j^2); its error by the derivative, sum_j w_j l2_j e_j / l2.
  TruthValue sq = weighted(Quantity::canonical_l2, [](double v) { return v * v; });
  const double l2 = std::sqrt(sq.value);
  double l2_error = 0.0;
  for (std::size_t j = 0; j < parts.size(); ++j)
    l2_error += spec.components[j].weight * parts[j][Quantity::canonical_l2].value *
                parts[j][Quantity::canonical_l2].error;
  t[Quantity::canonical_l2] = {l2, sq.method, l2 > 0.0 ? l2_error / l2 : 0.0};

  if (is_identity(spec.map)) {
    for (Quantity q : {Quantity::ece_top_l1, Quantity::ece_top_l2, Quantity::classwise_ece_l1})
      t[q] = {0.0, TruthMethod::closed_form, 0.0};
    return t;
  }
  const GroundTruth mc = family_monte_carlo(Generator(spec), settings);
  for (Quantity q : {Quantity::ece_top_l1, Quantity::ece_top_l2, Quantity::classwise_ece_l1})
    t[q] = mc[q];
  if (std::holds_alternative<TemperatureMap>(spec.map)) {
    const TruthValue& over = t[Quantity::overconfidence];
    t[Quantity::ece_top_l1] = {std::abs(over.value), over.method, over.error};
  }
  return t;
}

}  // namespace calbench
