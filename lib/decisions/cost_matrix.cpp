#include "decisions/cost_matrix.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {
namespace {

void require_finite(double v, const std::string& name) {
  if (!std::isfinite(v)) throw DomainError(name + " = " + format_double(v) + ": must be finite");
}

}  // namespace

CostMatrixTask::CostMatrixTask(CostMatrixSpec spec) : spec_(std::move(spec)) {
  classes_ = spec_.utility.size();
  if (classes_ < 2)
    throw DomainError("utility has " + std::to_string(classes_) +
                      " rows: must be K x K with K >= 2 (one row per action = class)");
  for (std::size_t a = 0; a < classes_; ++a) {
    if (spec_.utility[a].size() != classes_)
      throw DomainError("utility[" + std::to_string(a) + "] has " +
                        std::to_string(spec_.utility[a].size()) + " entries: must have " +
                        std::to_string(classes_) + " (one per true class)");
    for (std::size_t k = 0; k < classes_; ++k)
      require_finite(spec_.utility[a][k],
                     "utility[" + std::to_string(a) + "][" + std::to_string(k) + "]");
  }
  if (spec_.abstain) {
    if (spec_.abstain->size() != classes_)
      throw DomainError("abstain utility has " + std::to_string(spec_.abstain->size()) +
                        " entries: must be one number or " + std::to_string(classes_));
    for (std::size_t k = 0; k < classes_; ++k)
      require_finite((*spec_.abstain)[k], "abstain utility[" + std::to_string(k) + "]");
  }
  actions_ = classes_ + (spec_.abstain ? 1 : 0);
  for (const auto& row : spec_.utility) table_.insert(table_.end(), row.begin(), row.end());
  if (spec_.abstain) table_.insert(table_.end(), spec_.abstain->begin(), spec_.abstain->end());
}

std::vector<std::string> CostMatrixTask::action_names() const {
  std::vector<std::string> out;
  for (std::size_t a = 0; a < classes_; ++a) out.push_back("class_" + std::to_string(a));
  if (spec_.abstain) out.emplace_back("abstain");
  return out;
}

Decision CostMatrixTask::decide(std::span<const double> q, std::span<const double>) const {
  Decision best;
  double best_value = -INFINITY;
  for (std::size_t a = 0; a < actions_; ++a) {
    double v = 0.0;
    for (std::size_t k = 0; k < classes_; ++k) v += q[k] * table_[a * classes_ + k];
    if (v > best_value) {  // strict: ties keep the lower index
      best_value = v;
      best.action = a;
    }
  }
  return best;
}

std::vector<std::string> CostMatrixTask::figure_names() const {
  if (spec_.abstain) return {"abstention_rate"};
  return {};
}

void CostMatrixTask::tally(const Decision& d, std::span<const double> w,
                           std::span<double> out) const {
  if (!spec_.abstain) return;
  double mass = 0.0;
  for (double v : w) mass += v;
  out[0] = d.action == classes_ ? mass : 0.0;
}

void CostMatrixTask::figures(std::span<const double> tally_means, std::span<double> out) const {
  if (spec_.abstain) out[0] = tally_means[0];
}

}  // namespace calbench
