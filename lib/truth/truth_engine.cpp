#include "truth/truth_engine.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/format.hpp"
#include "core/rng.hpp"
#include "truth/binary_quadrature.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/family_truth.hpp"
#include "truth/map_preimage.hpp"
#include "truth/mixture_truth.hpp"
#include "truth/monte_carlo_sampler.hpp"
#include "truth/ternary_quadrature.hpp"

namespace calbench {
namespace {

using namespace mc;

bool classes_exchangeable(const DirichletGenerator& g) {
  return g.symmetric() && is_class_symmetric(g.spec().map);
}

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

}  // namespace

GroundTruth monte_carlo_truth(const DirichletGenerator& gen, const TruthSettings& settings) {
  const auto& spec = gen.spec();
  const std::size_t K = gen.classes();
  const bool pooled = classes_exchangeable(gen);
  const std::array<double, controls> mu = {expected_sum_squares(spec.alpha),
                                           expected_neg_entropy(spec.alpha),
                                           expected_max(spec.alpha).value};
  const MapPreimages preimages(spec);
  const bool continuum = preimages.fibres() == MapPreimages::Fibres::continuum;
  const bool r_is_c = preimages.injective() || continuum;
  // c from the Dirichlet, p = h(c); r = E[c | p] by the posterior over h's preimages when h is
  // not injective (map_preimage.hpp). The controls sum c^2, sum c log c and max c have exact
  // means `mu`.
  const auto draw = [&gen, &spec, &preimages, r_is_c, tmp = std::vector<double>(3 * K)](
                        Engine& engine, mc::Draw& d) mutable {
    gen.draw_truth(engine, d.c, d.log_c);
    apply(spec.map, d.c, d.log_c, d.p, d.log_p, tmp);
    double sum_sq_c = 0.0, neg_ent = 0.0, max_c = 0.0;
    for (std::size_t k = 0; k < d.c.size(); ++k) {
      if (d.c[k] > 0.0) neg_ent += d.c[k] * d.log_c[k];
      sum_sq_c += d.c[k] * d.c[k];
      max_c = std::max(max_c, d.c[k]);
    }
    d.control = {sum_sq_c, neg_ent, max_c};
    d.r_is_c = r_is_c;
    if (!r_is_c) posterior_mean(preimages, d.c, d.log_p, d.r, tmp);
  };
  GroundTruth t = mc::truth_monte_carlo(hash64(gen.canonical_text()), K, shape_of(gen, pooled), mu,
                                        settings, all_quantities, draw);
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
  const auto& spec = gen.spec();
  if (is_identity(spec.map)) return identity_truth(spec.alpha);
  GroundTruth t;
  if (binary_truth_by_quadrature(gen, t) || binary_quadrature_truth(gen, t) ||
      ternary_quadrature_truth(gen, t))
    return t;
  t = monte_carlo_truth(gen, settings);
  if (preserves_argmax(spec.map, gen.classes())) {
    // Accuracy = E[max c] exactly; E[Z] - accuracy keeps its Monte Carlo error.
    t[Quantity::accuracy] = expected_max(spec.alpha);
  }
  return t;
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
