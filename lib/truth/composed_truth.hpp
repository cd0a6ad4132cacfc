#pragma once
// Ground truth of a recalibrated model: the population values of q = g(p) = g(h(c)) for a
// fitted calibration map g (lib/recalibrators) applied to a generator's p = h(c).
//
// Method: Rao-Blackwellised Monte Carlo over c (never over sampled labels). N truth rows
// (c_i, p_i) are drawn from a stream keyed by the generator's canonical parameters alone, so
// every model of a cell — every method, every replicate, and the uncalibrated model — is
// evaluated on the same rows (common random numbers: differences between methods carry far
// less noise than the values). Per row, with t = argmax q and Z = q_t:
//   accuracy   E[c_t]
//   brier      E[sum q_k^2 - 2 sum q_k c_k + 1]
//   nll        E[-sum c_k log q_k], log q clamped at log(2.2e-308) (a method that outputs an
//              exact 0 where c_k > 0 gets a huge but finite NLL)
//   canonical_l1  E||c - q||_1, only when r(q) = E[c | q] = c: g injective and either a
//              dirichlet map h that is injective or class_conditional (where c = r(p))
//   ece_top_l1       E_Z |E[c_t - Z | Z]|
//   classwise_ece_l1 (1/K) sum_k E |E[c_k - q_k | q_k]|
// The plain expectations are sample means with standard error sd/sqrt(N). The two
// conditional ones are estimated on fine bins of the statistic, log-scale towards 0 and 1
// (8 per octave for Z, 4 per octave for q_k, over 40 octaves; values that are equal fall in one
// bin, so a binning method's atoms are never split): the plug-in sum_b |S_b|/N is biased up
// by the noise within bins and the cross-fitted sum_b (sgn(S_b^even) S_b^odd + sgn(S_b^odd)
// S_b^even)/N (rows split by parity) down; the value is their midpoint and the error the
// influence-function standard error plus half the bracket — the truth engine's treatment
// (truth/truth_engine.hpp), with coarser bins for the smaller N used here.
// Serial and deterministic: the caller parallelises over models or replicates.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/quantity.hpp"
#include "generators/generator.hpp"
#include "recalibrators/recalibrator.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

// The quantities computed, in this order; canonical_l1 only for injective compositions.
inline constexpr std::array<Quantity, 6> composed_quantities = {
    Quantity::accuracy,         Quantity::brier,       Quantity::nll, Quantity::ece_top_l1,
    Quantity::classwise_ece_l1, Quantity::canonical_l1};

struct ComposedTruth {
  // One entry per composed_quantities; canonical_l1 empty when the composition is not known
  // to be injective.
  std::array<std::optional<TruthValue>, composed_quantities.size()> values;
  const std::optional<TruthValue>& operator[](Quantity q) const;
};

// The truth of each model (nullptr: the uncalibrated model q = p) on `samples` rows.
std::vector<ComposedTruth> composed_truth(const Generator& generator,
                                          std::span<const CalibrationModel* const> models,
                                          std::uint64_t samples);

}  // namespace calbench
