#pragma once
// Task `selective` (classification with a reject option): predict the top class a = argmax q
// (lowest index on ties) when its probability max q >= threshold, else defer (action K).
// Utilities: a correct prediction 0, a wrong one -1, a deferral -cost. So the expected utility
// is minus the expected cost P(predict and wrong) + cost P(defer).
// The default threshold 1 - cost is Chow's rule (Chow 1970): predicting is worth it exactly
// when the error probability 1 - max q is at most the deferral cost, so the oracle acting on
// the true r(p) is then the Bayes-optimal selective classifier.
// Figures: coverage = P(predict), selective_accuracy = P(correct | predict) (0 when coverage
// is 0), expected_cost = -expected utility.
#include "decisions/decision_task.hpp"

namespace calbench {

struct SelectiveSpec {
  std::size_t classes = 2;
  double threshold = 0.8;  // in [0, 1]
  double cost = 0.2;       // >= 0, finite
};

class SelectiveTask final : public DecisionTask {
 public:
  explicit SelectiveTask(SelectiveSpec spec);

  std::string_view name() const override { return "selective"; }
  std::size_t classes() const override { return spec_.classes; }
  std::vector<std::string> action_names() const override;
  Decision decide(std::span<const double> q, std::span<const double> log_q) const override;
  double utility(const Decision& d, std::size_t k) const override {
    if (d.action == spec_.classes) return -spec_.cost;
    return d.action == k ? 0.0 : -1.0;
  }
  std::vector<std::string> figure_names() const override {
    return {"coverage", "selective_accuracy", "expected_cost"};
  }
  std::size_t tally_count() const override { return 3; }
  void tally(const Decision& d, std::span<const double> w, std::span<double> out) const override;
  void figures(std::span<const double> tally_means, std::span<double> out) const override;

  const SelectiveSpec& spec() const { return spec_; }

 private:
  SelectiveSpec spec_;
};

}  // namespace calbench
