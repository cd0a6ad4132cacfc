#pragma once
// A decision task: what a deployed model does with its reported class probabilities, and what
// each outcome is worth (docs/decisions.md). The shared verbs are
//   decide(task, q)        the policy's decision when the class probabilities are q,
//   utility(task, d, k)    U(d, k), the value of decision d when the true class is k,
//   tally(task, d, w, out) per-case contributions to the task's own figures, linear in the
//                          class distribution w (the true c for exact values, the one-hot
//                          label for a test set), turned into figures by figures(task, means).
// Because every quantity is linear in w, E[sum_k c_k U(d(p), k)] over the generator equals the
// expected realised utility E[U(d(p), y)] (Rao-Blackwellisation), without label noise.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace calbench {

// What a policy did for one case. `action` indexes the task's actions (action_names()); the
// other fields are used only by tasks with a continuous part (betting: the stake and the
// logarithms of the bankroll factor after a win and after a loss).
struct Decision {
  std::size_t action = 0;
  double stake = 0.0;
  double log_win = 0.0;
  double log_lose = 0.0;
  friend bool operator==(const Decision&, const Decision&) = default;
};

class DecisionTask {
 public:
  virtual ~DecisionTask() = default;

  // The registry name ("cost_matrix", ...).
  virtual std::string_view name() const = 0;
  // The number of classes the task was built for.
  virtual std::size_t classes() const = 0;
  // The actions, by index; decisions with equal action (and equal continuous part) act alike.
  virtual std::vector<std::string> action_names() const = 0;

  // The policy acting on class probabilities q (a point of the simplex). log_q holds log q
  // (exact where q underflows) or is empty; tasks that need logarithms take them from it.
  virtual Decision decide(std::span<const double> q, std::span<const double> log_q) const = 0;
  // U(d, k).
  virtual double utility(const Decision& d, std::size_t k) const = 0;

  // The task's own figures: `tally_count()` per-case tallies, each linear in w, whose means
  // figures() turns into the reported figures (named by figure_names()).
  virtual std::vector<std::string> figure_names() const = 0;
  virtual std::size_t tally_count() const = 0;
  virtual void tally(const Decision& d, std::span<const double> w, std::span<double> out) const = 0;
  virtual void figures(std::span<const double> tally_means, std::span<double> out) const = 0;
};

// sum_k w_k U(d, k): the expected utility of d when the class distribution is w.
double expected_utility(const DecisionTask& task, const Decision& d, std::span<const double> w);

// The index of the largest entry, the lowest index on ties (the argmax convention of
// Sample::predicted).
std::size_t argmax_lowest(std::span<const double> q);

}  // namespace calbench
