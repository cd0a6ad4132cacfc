#include "core/task_kernel.hpp"

#include <algorithm>

namespace calbench {

TaskGrid::TaskGrid(const std::vector<std::size_t>& replicates_per_cell)
    : first_(replicates_per_cell.size() + 1, 0) {
  for (std::size_t c = 0; c < replicates_per_cell.size(); ++c)
    first_[c + 1] = first_[c] + replicates_per_cell[c];
}

TaskKey TaskGrid::key(std::size_t task) const {
  // The last cell whose first task is <= task (cells with no replicates are skipped).
  const auto cell = static_cast<std::size_t>(std::upper_bound(first_.begin(), first_.end(), task) -
                                             first_.begin() - 1);
  return {cell, task - first_[cell]};
}

}  // namespace calbench
