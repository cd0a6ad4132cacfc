#include "truth/monte_carlo_sampler.hpp"

#include "core/running_stats.hpp"

namespace calbench::mc {

BatchMean batch_mean(std::span<const double> values, std::size_t stride, std::size_t offset) {
  RunningStats stats;  // batches in order: the same bits for any thread count
  for (std::size_t i = offset; i < values.size(); i += stride) stats.add(values[i]);
  return {stats.mean(), stats.standard_error()};
}

}  // namespace calbench::mc
