#pragma once
// The one Monte Carlo sampler behind every value computed by simulation rather than by a
// replicate: the truth engine's nine quantities (every family), the truth of recalibrated
// models, estimators' own population values, decision values and the target solver's common
// draws (docs/truth.md, "The sampler").
//
// Its one rule: the draws are split into a fixed number of batches, and batch b draws from its
// own stream make_engine({key, b, 0, purpose}), where key hashes the generator's canonical
// text (with a tag naming the computation) — never the run's seed or a thread. Batches run on
// the execution kernel (core/task_kernel.hpp), each into its own slot, and are combined in
// batch order, so every value has the same bits for any thread count, and is the same in every
// run (the truth cache relies on it).
//
// Two ways to draw:
//   - once: draw_batches / for_each_batch, every batch its whole share at once;
//   - in rounds: draw_in_rounds, for the truth engine, whose groups keep their streams and
//     accumulators and continue where they stopped, until the errors are within the
//     tolerance (TruthGroup, below, is such a group).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/stop_request.hpp"
#include "core/task_kernel.hpp"
#include "truth/ground_truth.hpp"
#include "truth/monte_carlo_core.hpp"
#include "truth/truth_settings.hpp"

namespace calbench::mc {

// The streams of one keyed Monte Carlo computation.
struct KeyedBatches {
  std::uint64_t key = 0;
  Purpose purpose = Purpose::truth;
  std::size_t batches = 0;
  Engine engine(std::size_t batch) const { return make_engine({key, batch, 0, purpose}); }
};

// fn(b, engine_b, scratch) (or fn(b, engine_b)) for every batch, in parallel; fn writes only
// batch b's own slot.
template <typename Scratch = NoScratch, typename Fn>
void for_each_batch(const KeyedBatches& streams, Fn&& fn) {
  for_each_index<Scratch>(streams.batches, [&](std::size_t b, Scratch& scratch) {
    throw_if_stop_requested();
    Engine engine = streams.engine(b);
    if constexpr (std::is_invocable_v<Fn&, std::size_t, Engine&, Scratch&>)
      fn(b, engine, scratch);
    else
      fn(b, engine);
  });
}

// out[b] = fn(b, engine_b, scratch) (or fn(b, engine_b)), in parallel.
template <typename T, typename Scratch = NoScratch, typename Fn>
std::vector<T> draw_batches(const KeyedBatches& streams, Fn&& fn) {
  std::vector<T> out(streams.batches);
  for_each_batch<Scratch>(streams, [&](std::size_t b, Engine& engine, Scratch& scratch) {
    if constexpr (std::is_invocable_v<Fn&, std::size_t, Engine&, Scratch&>)
      out[b] = fn(b, engine, scratch);
    else
      out[b] = fn(b, engine);
  });
  return out;
}

// The mean of independent batch values, in batch order, and its standard error from their
// spread (a batch is a sample of the value itself, so no model of the draws is needed).
struct BatchMean {
  double value = 0.0, error = 0.0;
};
BatchMean batch_mean(std::span<const double> values, std::size_t stride = 1,
                     std::size_t offset = 0);

// ---- drawing in rounds ----------------------------------------------------------------------

// Vectors over all groups in one round: `samples`/8 up to 2,000,000 samples, then fixed, so a
// computation that stops early has the same bits whatever the cap (`samples`) above 2,000,000.
constexpr std::size_t rounds = 8;
constexpr std::uint64_t round_budget = 2'000'000;

// Draws round after round into every group (in parallel: group.draw(n) continues the group's
// stream) and summarises all groups after each round, until every quantity in `needed` has an
// error within `tolerance` or the next round would pass `samples` (at least `rounds` rounds).
// Stopping depends only on the keyed streams, so it is deterministic.
template <typename Group, typename Summarise>
GroundTruth draw_in_rounds(std::vector<Group>& members, std::uint64_t samples, double tolerance,
                           std::span<const Quantity> needed, Summarise&& summarise) {
  const std::size_t G = members.size();
  const std::uint64_t pass = std::min(samples, round_budget);
  const std::size_t per_round =
      std::max<std::size_t>(1, static_cast<std::size_t>((pass + G * rounds - 1) / (G * rounds)));
  const std::uint64_t max_rounds =
      std::max<std::uint64_t>(rounds, samples / (static_cast<std::uint64_t>(per_round) * G));
  GroundTruth t;
  for (std::uint64_t round = 0; round < max_rounds; ++round) {
    for_each_index(G, [&](std::size_t g) { members[g].draw(per_round); });
    t = summarise();
    double worst = 0.0;
    for (Quantity q : needed) worst = std::max(worst, t[q].error);
    if (worst <= tolerance) break;
  }
  return t;
}

// One draw of a truth group: the true class distribution c (and log c where the family has
// it), the report p and log p, r = E[c | p] (left empty when it is c: p determines c), and the
// controls' values (zero without control variates).
struct Draw {
  std::vector<double> c, log_c, p, log_p, r;
  std::vector<double> control;  // m values: mc::control_values' three, then any the family adds
  bool r_is_c = true;
  Draw(std::size_t K, std::size_t m) : c(K), log_c(K), p(K), log_p(K), r(K), control(m, 0.0) {}
};

// One group of the truth engine: its stream (batch `group` of the truth streams), its
// accumulators, and the family's draw, fn(engine, draw). The per-draw statistics are those of
// the nine quantities (docs/truth.md): accuracy c_top, gap c_top - Z and its square, Brier
// sum p^2 - 2 sum p c + 1, NLL -sum c log p, the canonical errors |r - p|_1 and |r - p|_2^2,
// the top-label residual on Z's fine bin and each class's residual on p_k's bin (one set of
// bins for all classes when they are exchangeable: `pooled`). The binned residuals use
// r = E[c | p] where the family gives it (a non-injective map): E[r_top | Z] = E[c_top | Z] and
// E[r_k | p_k] = E[c_k | p_k] (tower property), with the noise of c around r averaged out
// (Rao-Blackwellisation); the moments keep c, whose controls are functions of c.
template <typename DrawFn>
class TruthGroup {
 public:
  // Without `classwise` the per-class bins are not kept (a family whose classwise error is
  // exact skips K bin updates per draw).
  TruthGroup(const KeyedBatches& streams, std::size_t group, std::size_t classes,
             std::size_t control_count, bool pooled, DrawFn draw_fn, bool classwise = true,
             double classwise_split = 0.0)
      : engine_(streams.engine(group)),
        pooled_(pooled),
        classwise_(classwise),
        bins_(classwise_split),
        draw_fn_(draw_fn),
        d_(classes, control_count) {
    result_.moments = Moments(control_count);
    result_.top.resize(fine_bins);
    result_.classwise.resize(classwise ? bins_.count() * (pooled ? 1 : classes) : 0);
  }

  void draw(std::size_t count) {
    const std::size_t K = d_.p.size();
    const auto& c = d_.c;
    const auto& p = d_.p;
    for (std::size_t i = 0; i < count; ++i) {
      // A round at K = 300 takes seconds: look for a stop request every 1,024 draws.
      if (i % 1024 == 0) throw_if_stop_requested();
      draw_fn_(engine_, d_);
      std::size_t top = 0;
      for (std::size_t k = 1; k < K; ++k)
        if (p[k] > p[top]) top = k;
      const double Z = p[top];
      const double gap = c[top] - Z;
      double sum_sq_p = 0.0, cross = 0.0, nll = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        sum_sq_p += p[k] * p[k];
        cross += p[k] * c[k];
        if (c[k] > 0.0) nll -= c[k] * d_.log_p[k];
      }
      const std::vector<double>& r = d_.r_is_c ? c : d_.r;
      double l1 = 0.0, l2 = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        const double diff = r[k] - p[k];
        l1 += std::abs(diff);
        l2 += diff * diff;
      }
      result_.moments.add({c[top], gap, gap * gap, sum_sq_p - 2.0 * cross + 1.0, nll, l1, l2},
                          d_.control);
      result_.top.add(fine_bin(Z), r[top] - Z);
      if (!classwise_) continue;
      for (std::size_t k = 0; k < K; ++k)
        result_.classwise.add((pooled_ ? 0 : k * bins_.count()) + bins_.of(p[k]), r[k] - p[k]);
    }
  }

  const GroupResult& result() const { return result_; }

 private:
  Engine engine_;
  bool pooled_, classwise_;
  ClasswiseBins bins_;
  DrawFn draw_fn_;
  Draw d_;
  GroupResult result_;
};

// Groups' results in group order (summarise's input).
template <typename Group>
std::vector<const GroupResult*> results_of(const std::vector<Group>& members) {
  std::vector<const GroupResult*> out;
  for (const auto& g : members) out.push_back(&g.result());
  return out;
}

// The truth engine's Monte Carlo: `groups` TruthGroups on the truth streams of `key`, drawn
// in rounds and summarised with the controls' exact means `mu` (zeros without controls; its
// size is the number of controls each draw writes).
template <typename DrawFn>
GroundTruth truth_monte_carlo(std::uint64_t key, std::size_t classes, const SummaryShape& shape,
                              std::span<const double> mu, const TruthSettings& settings,
                              std::span<const Quantity> needed, const DrawFn& draw_fn) {
  const std::uint64_t replica =
      settings.stream == 0
          ? key
          : hash64(std::to_string(key) + "|stream=" + std::to_string(settings.stream));
  const KeyedBatches streams{replica, Purpose::truth, groups};
  std::vector<TruthGroup<DrawFn>> members;
  members.reserve(groups);
  for (std::size_t g = 0; g < groups; ++g)
    members.emplace_back(streams, g, classes, mu.size(), shape.pooled, draw_fn, shape.classwise,
                         shape.classwise_split);
  const auto results = results_of(members);
  return draw_in_rounds(members, settings.samples, settings.tolerance, needed,
                        [&] { return summarise(results, mu, shape); });
}

}  // namespace calbench::mc
