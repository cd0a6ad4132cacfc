#pragma once
// Task `cost_matrix`: K actions, one per class, with utility[a][k] the value of action a when
// the true class is k, and optionally an `abstain` action (index K) with utility abstain[k].
// Policy: the action of highest expected utility sum_k q_k U[a][k] under q; ties go to the
// lowest index, so a class action wins a tie with abstaining.
// Figures: abstention_rate = P(abstain) (only when abstaining is allowed).
#include <optional>
#include <vector>

#include "decisions/decision_task.hpp"

namespace calbench {

struct CostMatrixSpec {
  std::vector<std::vector<double>> utility;    // K rows (actions) of K columns (true classes)
  std::optional<std::vector<double>> abstain;  // K utilities, one per true class
};

class CostMatrixTask final : public DecisionTask {
 public:
  // Throws DomainError unless utility is K x K with K >= 2 finite entries and abstain (when
  // given) has K finite entries.
  explicit CostMatrixTask(CostMatrixSpec spec);

  std::string_view name() const override { return "cost_matrix"; }
  std::size_t classes() const override { return classes_; }
  std::vector<std::string> action_names() const override;
  Decision decide(std::span<const double> q, std::span<const double> log_q) const override;
  double utility(const Decision& d, std::size_t k) const override {
    return table_[d.action * classes_ + k];
  }
  std::vector<std::string> figure_names() const override;
  std::size_t tally_count() const override { return spec_.abstain ? 1 : 0; }
  void tally(const Decision& d, std::span<const double> w, std::span<double> out) const override;
  void figures(std::span<const double> tally_means, std::span<double> out) const override;

  const CostMatrixSpec& spec() const { return spec_; }

 private:
  CostMatrixSpec spec_;
  std::size_t classes_;
  std::size_t actions_;
  std::vector<double> table_;  // actions x classes, row-major
};

}  // namespace calbench
