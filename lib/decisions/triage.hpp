#pragma once
// Task `triage` (the medical example): class `disease` is the condition, every other class is
// healthy. Treating a diseased patient is worth `benefit`, treating a healthy one costs
// `harm`, not treating is worth 0. Treating has expected utility q_d benefit - (1 - q_d) harm,
// positive exactly when q_d > t* = harm / (benefit + harm) (Pauker & Kassirer 1980, the
// treatment threshold). Policy: treat when q_d > t* (strictly; a tie does not treat).
// Figures, per patient: treated = P(treat), helped = P(treat and diseased),
// harmed = P(treat and healthy), missed = P(not treated and diseased).
// Expected utility = benefit helped - harm harmed.
#include "decisions/decision_task.hpp"

namespace calbench {

struct TriageSpec {
  std::size_t classes = 2;
  std::size_t disease = 1;  // index of the disease class
  double benefit = 1.0;     // > 0
  double harm = 1.0;        // > 0
};

class TriageTask final : public DecisionTask {
 public:
  explicit TriageTask(TriageSpec spec);

  std::string_view name() const override { return "triage"; }
  std::size_t classes() const override { return spec_.classes; }
  std::vector<std::string> action_names() const override { return {"wait", "treat"}; }
  Decision decide(std::span<const double> q, std::span<const double> log_q) const override;
  double utility(const Decision& d, std::size_t k) const override {
    if (d.action == 0) return 0.0;
    return k == spec_.disease ? spec_.benefit : -spec_.harm;
  }
  std::vector<std::string> figure_names() const override {
    return {"treated", "helped", "harmed", "missed"};
  }
  std::size_t tally_count() const override { return 4; }
  void tally(const Decision& d, std::span<const double> w, std::span<double> out) const override;
  void figures(std::span<const double> tally_means, std::span<double> out) const override;

  // t* = harm / (benefit + harm).
  double threshold() const { return threshold_; }
  const TriageSpec& spec() const { return spec_; }

 private:
  TriageSpec spec_;
  double threshold_;
};

}  // namespace calbench
