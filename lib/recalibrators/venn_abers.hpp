#pragma once
// Inductive Venn-Abers prediction (IVAP; Vovk & Petej 2014, Vovk, Petej & Fedorova 2015) as a
// binary calibrator, with the conventions of the reference `venn-abers` package
// (ip200/venn-abers, which probmetrics/CalArena call "ivap"): for a score s,
//   p0(s) = the isotonic fit at s of the fit sample plus the row (s, 0),
//   p1(s) = the same with the row (s, 1),
//   g(s)  = p1 / (1 - p0 + p1)
// (the log-loss-optimal merge of the multiprobability pair [p0, p1]). The isotonic fits pool
// tied scores (isotonic.hpp). Between two neighbouring distinct fit scores c_{i-1} < s < c_i the
// pair does not depend on s, so the fit stores p0 and p1 for each of the m + 1 gaps; a score
// tied with c_j takes p0 from the gap above c_j and p1 from the gap below (the package's
// searchsorted 'right' and 'left'; the same values as pooling s with c_j).
//
// Each gap's pair comes from the pool-adjacent-violators solutions of the prefix and the
// suffix, kept as persistent stacks of blocks: the new row's block is pooled with its
// neighbouring blocks while they violate the order, which gives the isotonic fit because PAV's
// result does not depend on the order in which violators are pooled. Typically a few pools per
// gap; the worst case is O(m) per gap. (The package's algorithm is Vovk et al.'s GCM
// construction in numpy; hand-written here because no C++ library has it.)
#include "recalibrators/binary_calibrator.hpp"

namespace calbench {

class VennAbersCalibrator : public BinaryCalibrator {
 public:
  std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                       std::span<const double> outcomes,
                                       const std::string& what) const override;
  std::string name() const override { return "venn_abers"; }
  std::string map_kind() const override { return "venn_abers"; }
};

// The pairs per gap: c (m distinct scores, increasing), p0 and p1 (m + 1 each).
struct VennAbersPairs {
  std::vector<double> c{}, p0{}, p1{};
};
VennAbersPairs venn_abers_pairs(std::span<const double> scores, std::span<const double> outcomes);

// The fitted map, rebuilt from its pairs; recalibrators/restore_model.hpp.
std::unique_ptr<const BinaryMap> venn_abers_map(VennAbersPairs pairs);

}  // namespace calbench
