#include "truth/truth_engine.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/format.hpp"
#include "core/rng.hpp"
#include "truth/binary_quadrature.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/family_truth.hpp"
#include "truth/monte_carlo_sampler.hpp"

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
  return shape;
}

}  // namespace

void top_label_posterior_mean(std::span<const double> p, std::span<const double> log_p,
                              std::span<const double> alpha, double gamma, std::span<double> r) {
  const std::size_t K = p.size();
  const double Kd = static_cast<double>(K);
  // The largest and second-largest components of p.
  std::size_t first = 0, second = 1;
  if (p[second] > p[first]) std::swap(first, second);
  for (std::size_t k = 2; k < K; ++k) {
    if (p[k] > p[first]) {
      second = first;
      first = k;
    } else if (p[k] > p[second]) {
      second = k;
    }
  }
  double best_log_w = -INFINITY;
  std::fill(r.begin(), r.end(), 0.0);
  // Weighted sum accumulated relative to the largest log weight seen so far.
  double total = 0.0;
  for (std::size_t j = 0; j < K; ++j) {
    if (p[j] < 1.0 / Kd || p[j] >= 1.0) continue;
    const double m = top_label_g_inverse(p[j], gamma, K);
    const double scale = (1.0 - m) / (1.0 - p[j]);  // c_i = p_i * scale for i != j
    const double other_max = p[j == first ? second : first];
    if (other_max * scale > m) continue;  // c^(j) would not have j as its argmax
    const double g_prime = top_label_g_prime(m, gamma, K);
    if (!(g_prime > 0.0)) continue;
    const double log_scale = std::log(scale);
    double log_w = (alpha[j] - 1.0) * std::log(m) + (Kd - 2.0) * log_scale - std::log(g_prime);
    for (std::size_t i = 0; i < K; ++i)
      if (i != j) log_w += (alpha[i] - 1.0) * (log_p[i] + log_scale);
    if (log_w > best_log_w) {
      const double f = std::exp(best_log_w - log_w);  // rescale what was accumulated
      for (double& v : r) v *= f;
      total *= f;
      best_log_w = log_w;
    }
    const double w = std::exp(log_w - best_log_w);
    for (std::size_t i = 0; i < K; ++i) r[i] += w * (i == j ? m : p[i] * scale);
    total += w;
  }
  if (total > 0.0) {
    for (double& v : r) v /= total;
  } else {
    std::copy(p.begin(), p.end(), r.begin());  // measure zero: p on the boundary of the image
  }
}

GroundTruth monte_carlo_truth(const DirichletGenerator& gen, const TruthSettings& settings) {
  const auto& spec = gen.spec();
  const std::size_t K = gen.classes();
  const bool pooled = classes_exchangeable(gen);
  const std::array<double, controls> mu = {expected_sum_squares(spec.alpha),
                                           expected_neg_entropy(spec.alpha),
                                           expected_max(spec.alpha).value};
  const bool injective = is_injective(spec.map, K);
  const double gamma =
      std::holds_alternative<TopLabelMap>(spec.map) ? std::get<TopLabelMap>(spec.map).gamma : 1.0;
  // c from the Dirichlet, p = h(c); r = E[c | p] by the posterior over h's preimages when h is
  // not injective. The controls sum c^2, sum c log c and max c have exact means `mu`.
  const auto draw = [&gen, &spec, injective, gamma, tmp = std::vector<double>(K)](
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
    d.r_is_c = injective;
    if (!injective) top_label_posterior_mean(d.p, d.log_p, spec.alpha, gamma, d.r);
  };
  return mc::truth_monte_carlo(hash64(gen.canonical_text()), K, shape_of(gen, pooled), mu,
                               settings.samples, settings.tolerance, all_quantities, draw);
}

GroundTruth compute_truth(const DirichletGenerator& gen, const TruthSettings& settings) {
  const auto& spec = gen.spec();
  if (is_identity(spec.map)) return identity_truth(spec.alpha);
  GroundTruth t;
  if (binary_truth_by_quadrature(gen, t) || binary_quadrature_truth(gen, t)) return t;
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
        else
          return beta_binary_truth(g);
      },
      generator.family_generator());
}

const GroundTruth& TruthCache::get(const Generator& generator, const TruthSettings& settings) {
  const std::string key =
      generator.canonical_text() + "|samples=" + std::to_string(settings.samples);
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
