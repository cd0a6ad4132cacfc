#include "truth/empirical_truth.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "generators/generator.hpp"
#include "truth/family_truth.hpp"
#include "truth/monte_carlo_sampler.hpp"

namespace calbench {
namespace {

// The per-draw statistics averaged by the stratified pass.
enum Stat {
  s_accuracy,   // c_top
  s_gap,        // c_top - z
  s_abs_gap,    // |c_top - z|: ece_top_l1 when K >= 3
  s_gap_sq,     // (c_top - z)^2: ece_top_l2^2 when K >= 3
  s_brier,      // sum p^2 - 2 sum p c + 1
  s_nll,        // -sum c log p
  s_l1,         // |c - p|_1
  s_l2sq,       // |c - p|_2^2
  s_class_one,  // |c_1 - p_1|: classwise_ece_l1 when K = 2
  stats
};
using Stats = std::array<double, stats>;

// Draws per row and batch: the truth's sample budget (a quarter of `samples`, since the
// stratification removes the between-row variance that dominates a plain Monte Carlo) spread
// over the rows, at least one.
std::size_t draws_per_row(const EmpiricalGenerator& gen, const TruthSettings& settings) {
  if (gen.spec().bandwidth == 0.0) return 1;
  const double budget = static_cast<double>(settings.samples) / 4.0;
  const double per = budget / (static_cast<double>(gen.rows()) * static_cast<double>(mc::groups));
  return std::max<std::size_t>(1, static_cast<std::size_t>(per));
}

Stats batch_stats(const EmpiricalGenerator& gen, Engine& engine, std::size_t per_row) {
  const std::size_t K = gen.classes(), n = gen.rows();
  std::vector<double> p(K), log_p(K), c(K);
  Stats sum{};
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < per_row; ++j) {
      gen.draw_confidence(engine, i, p, log_p);
      gen.calibrate(p, log_p, c);
      std::size_t top = 0;
      for (std::size_t k = 1; k < K; ++k)
        if (p[k] > p[top]) top = k;
      const double gap = c[top] - p[top];
      double sum_sq = 0.0, cross = 0.0, nll = 0.0, l1 = 0.0, l2 = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        sum_sq += p[k] * p[k];
        cross += p[k] * c[k];
        if (c[k] > 0.0) nll -= c[k] * log_p[k];
        const double d = c[k] - p[k];
        l1 += std::abs(d);
        l2 += d * d;
      }
      sum[s_accuracy] += c[top];
      sum[s_gap] += gap;
      sum[s_abs_gap] += std::abs(gap);
      sum[s_gap_sq] += gap * gap;
      sum[s_brier] += sum_sq - 2.0 * cross + 1.0;
      sum[s_nll] += nll;
      sum[s_l1] += l1;
      sum[s_l2sq] += l2;
      sum[s_class_one] += std::abs(c[K - 1] - p[K - 1]);
    }
  }
  const double draws = static_cast<double>(n) * static_cast<double>(per_row);
  for (double& v : sum) v /= draws;
  return sum;
}

}  // namespace

GroundTruth empirical_truth(const EmpiricalGenerator& gen, const TruthSettings& settings) {
  const std::size_t K = gen.classes();
  const bool exact = gen.spec().bandwidth == 0.0;
  const std::size_t per_row = draws_per_row(gen, settings);
  const std::uint64_t key = hash64(gen.canonical_text() + "|stratified");
  const std::uint64_t replica =
      settings.stream == 0
          ? key
          : hash64(std::to_string(key) + "|stream=" + std::to_string(settings.stream));
  const mc::KeyedBatches streams{replica, Purpose::truth, exact ? 1 : mc::groups};
  const auto batches = mc::draw_batches<Stats>(
      streams, [&](std::size_t, Engine& engine) { return batch_stats(gen, engine, per_row); });
  std::vector<double> flat;
  for (const Stats& b : batches) flat.insert(flat.end(), b.begin(), b.end());
  const auto value = [&](Stat s) -> TruthValue {
    if (exact) return {batches.front()[s], TruthMethod::closed_form, 0.0};
    const mc::BatchMean m = mc::batch_mean(flat, stats, s);
    return {m.value, TruthMethod::monte_carlo, m.error};
  };

  GroundTruth t;
  t[Quantity::accuracy] = value(s_accuracy);
  const TruthValue gap = value(s_gap);
  t[Quantity::overconfidence] = {-gap.value, gap.method, gap.error};
  t[Quantity::brier] = value(s_brier);
  t[Quantity::nll] = value(s_nll);
  t[Quantity::canonical_l1] = value(s_l1);
  t[Quantity::canonical_l2] = root_of(value(s_l2sq));
  const ClasswiseMap& classwise = gen.spec().classwise;
  if (is_identity(gen.spec().calibration) && is_identity(classwise)) {
    for (Quantity q : {Quantity::ece_top_l1, Quantity::ece_top_l2, Quantity::classwise_ece_l1})
      t[q] = {0.0, TruthMethod::closed_form, 0.0};
    return t;
  }
  std::vector<Quantity> binned;
  if (K >= 3 && has_top_deviations(classwise)) {
    // P(y = top | p) = sigmoid(s(t) + d_top(t)) depends on the top class too: the top-label
    // gap given Z averages over the classes that are top at Z, so it is binned like classwise.
    binned = {Quantity::ece_top_l1, Quantity::ece_top_l2, Quantity::classwise_ece_l1};
  } else if (K >= 3) {
    t[Quantity::ece_top_l1] = value(s_abs_gap);
    t[Quantity::ece_top_l2] = root_of(value(s_gap_sq));
    binned = {Quantity::classwise_ece_l1};
  } else {
    t[Quantity::classwise_ece_l1] = value(s_class_one);
    binned = {Quantity::ece_top_l1, Quantity::ece_top_l2};
  }
  const GroundTruth mc = family_monte_carlo(Generator(gen.spec()), settings, binned);
  for (Quantity q : binned) t[q] = mc[q];
  return t;
}

}  // namespace calbench
