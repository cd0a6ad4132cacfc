#include "decisions/decision_task.hpp"

namespace calbench {

double expected_utility(const DecisionTask& task, const Decision& d, std::span<const double> w) {
  double sum = 0.0;
  for (std::size_t k = 0; k < w.size(); ++k)
    if (w[k] != 0.0) sum += w[k] * task.utility(d, k);
  return sum;
}

std::size_t argmax_lowest(std::span<const double> q) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < q.size(); ++k)
    if (q[k] > q[best]) best = k;
  return best;
}

}  // namespace calbench
