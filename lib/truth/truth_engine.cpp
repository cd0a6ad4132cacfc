#include "truth/truth_engine.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/format.hpp"
#include "core/rng.hpp"
#include "truth/binary_quadrature.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/family_truth.hpp"
#include "truth/monte_carlo_core.hpp"

namespace calbench {
namespace {

using namespace mc;

bool classes_exchangeable(const DirichletGenerator& g) {
  return g.symmetric() && is_class_symmetric(g.spec().map);
}

// One group's stream and accumulators; `draw` continues where the previous call stopped.
class GroupSampler {
 public:
  GroupSampler(const DirichletGenerator& gen, std::uint64_t key, std::size_t group, bool pooled)
      : gen_(gen),
        engine_(make_engine({key, group, 0, Purpose::truth})),
        pooled_(pooled),
        injective_(is_injective(gen.spec().map, gen.classes())) {
    const std::size_t K = gen.classes();
    for (auto* v : {&c_, &log_c_, &p_, &log_p_, &tmp_, &r_}) v->resize(K);
    result_.top.resize(fine_bins);
    result_.classwise.resize(fine_bins * (pooled ? 1 : K));
    const auto& map = gen.spec().map;
    gamma_ = std::holds_alternative<TopLabelMap>(map) ? std::get<TopLabelMap>(map).gamma : 1.0;
  }

  void draw(std::size_t count) {
    const std::size_t K = gen_.classes();
    const auto& spec = gen_.spec();
    for (std::size_t i = 0; i < count; ++i) {
      gen_.draw_truth(engine_, c_, log_c_);
      apply(spec.map, c_, log_c_, p_, log_p_, tmp_);
      std::size_t top = 0;
      for (std::size_t k = 1; k < K; ++k)
        if (p_[k] > p_[top]) top = k;
      const double Z = p_[top];
      const double gap = c_[top] - Z;
      double sum_sq_p = 0.0, cross = 0.0, nll = 0.0, sum_sq_c = 0.0, neg_ent = 0.0, max_c = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        sum_sq_p += p_[k] * p_[k];
        cross += p_[k] * c_[k];
        if (c_[k] > 0.0) {
          nll -= c_[k] * log_p_[k];
          neg_ent += c_[k] * log_c_[k];
        }
        sum_sq_c += c_[k] * c_[k];
        max_c = std::max(max_c, c_[k]);
      }
      if (!injective_) top_label_posterior_mean(p_, log_p_, spec.alpha, gamma_, r_);
      const std::vector<double>& truth_p = injective_ ? c_ : r_;
      double l1 = 0.0, l2 = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        const double d = truth_p[k] - p_[k];
        l1 += std::abs(d);
        l2 += d * d;
      }
      result_.moments.add({c_[top], gap, gap * gap, sum_sq_p - 2.0 * cross + 1.0, nll, l1, l2},
                          {sum_sq_c, neg_ent, max_c});
      result_.top.add(fine_bin(Z), gap);
      for (std::size_t k = 0; k < K; ++k)
        result_.classwise.add((pooled_ ? 0 : k * fine_bins) + fine_bin(p_[k]), c_[k] - p_[k]);
    }
  }

  const GroupResult& result() const { return result_; }

 private:
  const DirichletGenerator& gen_;
  Engine engine_;
  bool pooled_, injective_;
  double gamma_ = 1.0;
  std::vector<double> c_, log_c_, p_, log_p_, tmp_, r_;
  GroupResult result_;
};

// The groups' results, in group order.
std::vector<const GroupResult*> results_of(const std::vector<GroupSampler>& samplers) {
  std::vector<const GroupResult*> out;
  for (const auto& s : samplers) out.push_back(&s.result());
  return out;
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
  const std::uint64_t key = hash64(gen.canonical_text());
  const bool pooled = classes_exchangeable(gen);
  const std::array<double, controls> mu = {expected_sum_squares(spec.alpha),
                                           expected_neg_entropy(spec.alpha),
                                           expected_max(spec.alpha).value};
  std::vector<GroupSampler> samplers;
  for (std::size_t g = 0; g < groups; ++g) samplers.emplace_back(gen, key, g, pooled);
  // Rounds of samples/8 vectors; stop once every error is within the tolerance.
  constexpr std::size_t rounds = 8;
  const std::size_t per_round =
      std::max<std::size_t>(1, (settings.samples + groups * rounds - 1) / (groups * rounds));
  GroundTruth t;
  for (std::size_t round = 0; round < rounds; ++round) {
    tbb::parallel_for(std::size_t{0}, groups, [&](std::size_t g) { samplers[g].draw(per_round); });
    t = mc::summarise(results_of(samplers), mu, shape_of(gen, pooled));
    double worst = 0.0;
    for (Quantity q : all_quantities) worst = std::max(worst, t[q].error);
    if (worst <= settings.tolerance) break;
  }
  return t;
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
