#pragma once
#include <cstdint>

namespace calbench {

// Settings of the truth engine (config section `truth`).
struct TruthSettings {
  // Monte Carlo vectors for the quantities that have no exact method. The default reaches an
  // absolute error below 2e-4 on the design's examples (docs/truth.md gives the figures).
  std::uint64_t samples = 2'000'000;
};

}  // namespace calbench
