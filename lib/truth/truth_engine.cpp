#include "truth/truth_engine.hpp"

#include <boost/math/special_functions/digamma.hpp>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "core/format.hpp"
#include "core/rng.hpp"
#include "truth/binary_quadrature.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/empirical_truth.hpp"
#include "truth/family_truth.hpp"
#include "truth/map_preimage.hpp"
#include "truth/mixture_truth.hpp"
#include "truth/monte_carlo_sampler.hpp"
#include "truth/quantize_truth.hpp"
#include "truth/ternary_quadrature.hpp"

namespace calbench {
namespace {

using namespace mc;

mc::SummaryShape shape_of(const DirichletGenerator& gen, bool pooled) {
  const auto& spec = gen.spec();
  mc::SummaryShape shape;
  shape.classes = gen.classes();
  shape.pooled = pooled;
  shape.sign_constant_top = has_sign_constant_top_gap(spec.map, spec.classes);
  shape.z_determines_gap = std::holds_alternative<IdentityMap>(spec.map) ||
                           (std::holds_alternative<TopLabelMap>(spec.map) &&
                            has_sign_constant_top_gap(spec.map, spec.classes));
  // A non-injective top_label map: class k has a candidate preimage only where p_k > 1/K, so
  // E[c_k - p_k | p_k] jumps there.
  if (std::holds_alternative<TopLabelMap>(spec.map) && !is_injective(spec.map, spec.classes))
    shape.classwise_split = 1.0 / static_cast<double>(spec.classes);
  return shape;
}

// affine_logit: log p = l - LSE(l) with l = W log c + b, so the NLL of a draw is
// -sum_k c_k l_k + LSE(l) (sum c = 1), and the first part has an exact mean:
// E[c_k log c_j] = (alpha_k/alpha_0)(psi(alpha_j + [j = k]) - psi(alpha_0 + 1)) (size biasing,
// c_k Dir(alpha) = (alpha_k/alpha_0) Dir(alpha + e_k)), so
// E[-sum_k c_k l_k] = -sum_kj W_kj E[c_k log c_j] - sum_k b_k alpha_k/alpha_0.
// It is a control variate of every quantity (the last control), not subtracted from the NLL:
// where LSE(l) nearly cancels it (a two-preimage map, l_i = log c_i + log c_K, l_K = 0: LSE in
// [0, log 2] while c_i log c_K has tails no other control follows) the fitted coefficient is
// about 1 and the NLL's residual spread falls from 7.3 to 0.04 (K = 3, alpha 0.1); where the
// NLL itself is small and the linear part is not (an injective map at alpha 0.02, log c in
// the thousands), the coefficient is about 0, where subtracting it had left a spread of 12
// instead of 4e-4 (an NLL error of 3e-3 at the 16M cap).
double affine_linear_nll(const AffineLogitMap& m, std::span<const double> c,
                         std::span<const double> log_c) {
  const std::size_t K = c.size();
  double out = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    if (!(c[k] > 0.0)) continue;
    double l = m.bias[k];
    for (std::size_t j = 0; j < K; ++j) l += m.weights[k * K + j] * log_c[j];
    out -= c[k] * l;
  }
  return out;
}

double affine_linear_nll_mean(const AffineLogitMap& m, std::span<const double> alpha) {
  using boost::math::digamma;
  const std::size_t K = alpha.size();
  double a0 = 0.0;
  for (double a : alpha) a0 += a;
  const double psi0 = digamma(a0 + 1.0);
  double out = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    double e = m.bias[k];
    for (std::size_t j = 0; j < K; ++j)
      e += m.weights[k * K + j] * (digamma(alpha[j] + (j == k ? 1.0 : 0.0)) - psi0);
    out -= alpha[k] / a0 * e;
  }
  return out;
}

// Linear controls c_1 .. c_{K-1} (means alpha_k/alpha_0) for a map that treats the classes
// differently (affine_logit; power with unequal exponents), where the nine quantities' integrands
// depend on which vertex c is near, which sum c^2, sum c log c and max c cannot tell. For the
// two-preimage map l_i = log c_i + log c_K (i < K), l_K = 0, p_K is always the largest, so
// accuracy is E[c_K] = alpha_K/alpha_0: at K = 3, alpha 0.1 the three controls left accuracy's
// standard error at 1.0e-4 and Brier's at 2.1e-4 after 16M draws (the cap); with c_1, c_2 the
// accuracy is exact and Brier's residual spread falls 9-fold (0.83 -> 0.094; docs/truth.md).
// A class-symmetric map with symmetric alpha gains nothing (its integrands are symmetric in c),
// and a symmetric map keeps its bits. Up to K = 16 only: each draw adds m^2 products to the
// moments (m = K + 2 controls).
constexpr std::size_t linear_control_classes = 16;

std::size_t linear_controls(const DirichletGenerator& gen) {
  const std::size_t K = gen.classes();
  if (is_class_symmetric(gen.spec().map) || K > linear_control_classes) return 0;
  return K - 1;  // c_K = 1 - sum of the others: a K-th would be collinear
}

}  // namespace

GroundTruth monte_carlo_truth(const DirichletGenerator& gen, const TruthSettings& settings,
                              std::span<const Quantity> needed) {
  const auto& spec = gen.spec();
  const std::size_t K = gen.classes();
  const bool pooled = gen.exchangeable_classes();
  std::vector<double> mu = {expected_sum_squares(spec.alpha), expected_neg_entropy(spec.alpha),
                            expected_max(spec.alpha).value};
  const std::size_t linear = linear_controls(gen);
  const double a0 = std::accumulate(spec.alpha.begin(), spec.alpha.end(), 0.0);
  for (std::size_t k = 0; k < linear; ++k) mu.push_back(spec.alpha[k] / a0);
  const auto* affine = std::get_if<AffineLogitMap>(&spec.map);
  if (affine != nullptr) mu.push_back(affine_linear_nll_mean(*affine, spec.alpha));
  const MapPreimages preimages(spec);
  const bool continuum = preimages.fibres() == MapPreimages::Fibres::continuum;
  const bool r_is_c = preimages.injective() || continuum;
  // c from the Dirichlet, p = h(c); r = E[c | p] by the posterior over h's preimages when h is
  // not injective (map_preimage.hpp). The controls sum c^2, sum c log c and max c (and
  // c_1 .. c_{K-1} for a map that treats classes differently, and affine_logit's linear NLL
  // part) have exact means `mu`.
  const auto draw = [&gen, &spec, &preimages, r_is_c, affine, linear,
                     tmp = std::vector<double>(3 * K)](Engine& engine, mc::Draw& d) mutable {
    gen.draw_truth(engine, d.c, d.log_c);
    apply(spec.map, d.c, d.log_c, d.p, d.log_p, tmp);
    control_values(d.c, d.log_c, d.control);
    for (std::size_t k = 0; k < linear; ++k) d.control[controls + k] = d.c[k];
    if (affine != nullptr) d.control.back() = affine_linear_nll(*affine, d.c, d.log_c);
    d.r_is_c = r_is_c;
    if (!r_is_c) posterior_mean(preimages, d.c, d.log_p, d.r, tmp);
  };
  mc::SummaryShape shape = shape_of(gen, pooled);
  shape.classwise = is_needed(needed, Quantity::classwise_ece_l1);
  GroundTruth t =
      mc::truth_monte_carlo(hash64(gen.canonical_text()), K, shape, mu, settings, needed, draw);
  if (continuum) {
    // Each p has a continuum of preimages: r(p) has no formula here, so the canonical errors
    // are unknown (not E|c - p|, which only bounds them from above).
    for (Quantity q : {Quantity::canonical_l1, Quantity::canonical_l2})
      t[q] = {std::numeric_limits<double>::quiet_NaN(), TruthMethod::monte_carlo,
              std::numeric_limits<double>::infinity()};
  }
  return t;
}

GroundTruth compute_truth(const DirichletGenerator& gen, const TruthSettings& settings) {
  return compute_truth(gen, settings, all_quantities);
}

GroundTruth compute_truth(const DirichletGenerator& gen, const TruthSettings& settings,
                          std::span<const Quantity> needed) {
  const auto& spec = gen.spec();
  if (is_identity(spec.map)) return identity_truth(spec.alpha);
  if (std::holds_alternative<QuantizeMap>(spec.map)) return quantize_truth(gen, settings, needed);
  GroundTruth t;
  // K = 2 integrates all nine in one dimension (nothing to spare); K = 3 skips the classwise
  // passes unless they are needed.
  TernaryQuadratureOptions ternary;
  ternary.classwise = is_needed(needed, Quantity::classwise_ece_l1);
  if (binary_truth_by_quadrature(gen, t) || binary_quadrature_truth(gen, t) ||
      ternary_quadrature_truth(gen, t, ternary))
    return t;
  t = monte_carlo_truth(gen, settings, needed);
  if (preserves_argmax(spec.map, gen.classes())) {
    // Accuracy = E[max c] exactly; E[Z] - accuracy keeps its Monte Carlo error.
    t[Quantity::accuracy] = expected_max(spec.alpha);
  }
  return t;
}

bool truth_without_monte_carlo(const Generator& generator) {
  if (std::holds_alternative<BetaBinaryGenerator>(generator.family_generator())) return true;
  const auto* dirichlet = std::get_if<DirichletGenerator>(&generator.family_generator());
  if (dirichlet == nullptr) return false;
  const auto& map = dirichlet->spec().map;
  // The order of compute_truth's shortcuts: identity, then quantize (Monte Carlo), then
  // quadrature for K = 2 and K = 3.
  if (is_identity(map)) return true;
  return !std::holds_alternative<QuantizeMap>(map) && dirichlet->classes() <= 3;
}

GroundTruth compute_truth(const Generator& generator, const TruthSettings& settings) {
  return std::visit(
      [&](const auto& g) -> GroundTruth {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, DirichletGenerator>)
          return compute_truth(g, settings);
        else if constexpr (std::is_same_v<G, LabelNoiseGenerator>)
          return label_noise_truth(g, settings);
        else if constexpr (std::is_same_v<G, ClassConditionalGenerator>)
          return class_conditional_truth(g, settings);
        else if constexpr (std::is_same_v<G, DirichletMixtureGenerator>)
          return dirichlet_mixture_truth(g, settings);
        else if constexpr (std::is_same_v<G, EmpiricalGenerator>)
          return empirical_truth(g, settings);
        else
          return beta_binary_truth(g);
      },
      generator.family_generator());
}

const GroundTruth& TruthCache::get(const Generator& generator, const TruthSettings& settings) {
  const std::string key =
      generator.canonical_text() + "|samples=" + std::to_string(settings.samples) +
      "|tolerance=" + format_double(settings.tolerance) +
      (settings.stream == 0 ? "" : "|stream=" + std::to_string(settings.stream));
  std::lock_guard lock(mutex_);
  auto it = cache_.find(key);
  if (it == cache_.end())
    it = cache_.emplace(key, std::make_unique<GroundTruth>(compute_truth(generator, settings)))
             .first;
  return *it->second;
}

const GroundTruth& TruthCache::get(const DirichletGenerator& generator,
                                   const TruthSettings& settings) {
  return get(Generator(generator.spec()), settings);
}

}  // namespace calbench
