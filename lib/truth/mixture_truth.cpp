#include "truth/mixture_truth.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "generators/generator.hpp"
#include "truth/family_truth.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {
namespace {

// The quantities that are expectations of a function of (c, p), the only ones the components
// are asked for (canonical_l2 through its square).
constexpr std::array<Quantity, 6> linear_quantities = {
    Quantity::accuracy, Quantity::overconfidence, Quantity::brier,
    Quantity::nll,      Quantity::canonical_l1,   Quantity::canonical_l2};

// A distinct component: its weight (summed over components with the same alpha, which would
// otherwise draw the same keyed streams and compute the same truth twice) and its truth.
struct Part {
  double weight;
  GroundTruth truth;
};

// sum_j w_j f(v_j) over the parts, with the least exact of their methods. f' is the slope of
// f, for the error. The errors combine by what they are: a closed-form or quadrature error is a
// deterministic bound on |v_j - truth_j|, so the bounds add, sum_j w_j |f'(v_j)| e_j; a Monte
// Carlo error is a standard error, and distinct components draw from independent streams
// (keyed by their own canonical text), so these add in quadrature,
// (sum_j (w_j f'(v_j) e_j)^2)^(1/2). Parts of both kinds give the sum of the two.
template <class F, class Slope>
TruthValue weighted_sum(const std::vector<Part>& parts, Quantity q, F f, Slope slope) {
  TruthValue out{0.0, TruthMethod::closed_form, 0.0};
  double bound = 0.0, variance = 0.0;
  for (const Part& part : parts) {
    const TruthValue& v = part.truth[q];
    out.value += part.weight * f(v.value);
    out.method = std::max(out.method, v.method);
    const double e = part.weight * std::abs(slope(v.value)) * v.error;
    if (v.method == TruthMethod::monte_carlo)
      variance += e * e;
    else
      bound += e;
  }
  out.error = bound + std::sqrt(variance);
  return out;
}

}  // namespace

GroundTruth dirichlet_mixture_truth(const DirichletMixtureGenerator& gen,
                                    const TruthSettings& settings) {
  const auto& spec = gen.spec();
  std::vector<Part> parts;
  std::vector<std::string> keys;
  for (std::size_t j = 0; j < spec.components.size(); ++j) {
    const std::string key = gen.component(j).canonical_text();
    const auto same = std::find(keys.begin(), keys.end(), key);
    if (same != keys.end()) {
      parts[static_cast<std::size_t>(same - keys.begin())].weight += spec.components[j].weight;
      continue;
    }
    keys.push_back(key);
    parts.push_back(
        {spec.components[j].weight, compute_truth(gen.component(j), settings, linear_quantities)});
  }
  GroundTruth t;
  const auto same = [](double v) { return v; };
  const auto one = [](double) { return 1.0; };
  for (Quantity q : {Quantity::accuracy, Quantity::overconfidence, Quantity::brier, Quantity::nll,
                     Quantity::canonical_l1})
    t[q] = weighted_sum(parts, q, same, one);
  // canonical_l2 = (sum_j w_j l2_j^2)^(1/2): the weighted sum of squares, then its root.
  t[Quantity::canonical_l2] = root_of(weighted_sum(
      parts, Quantity::canonical_l2, [](double v) { return v * v; },
      [](double v) { return 2.0 * v; }));

  if (is_identity(spec.map)) {
    for (Quantity q : {Quantity::ece_top_l1, Quantity::ece_top_l2, Quantity::classwise_ece_l1})
      t[q] = {0.0, TruthMethod::closed_form, 0.0};
    return t;
  }
  // The mixture's own Monte Carlo, drawn until the binned errors it supplies are within the
  // tolerance (ece_top_l1 too unless the temperature map's one-signed gap gives it).
  const bool one_signed_top = std::holds_alternative<TemperatureMap>(spec.map);
  std::vector<Quantity> binned = {Quantity::ece_top_l2, Quantity::classwise_ece_l1};
  if (!one_signed_top) binned.push_back(Quantity::ece_top_l1);
  const GroundTruth mc = family_monte_carlo(Generator(spec), settings, binned);
  for (Quantity q : binned) t[q] = mc[q];
  if (one_signed_top) {
    const TruthValue& over = t[Quantity::overconfidence];
    t[Quantity::ece_top_l1] = {std::abs(over.value), over.method, over.error};
  }
  return t;
}

}  // namespace calbench
