#pragma once
// The recalibration interface (post-hoc calibration): a Recalibrator is fitted on a sample
// {(p_i, y_i)} and gives a CalibrationModel, a map g from confidence vectors p to calibrated
// vectors q = g(p) on the simplex. The shared verbs are fit(method, sample) and
// apply(model, p, q); domain code never sees JSON (lib/config builds these from configs).
//
// Conventions every method shares (docs/recalibration.md):
// - Logits are log p, with each p_k clamped below at the smallest normal double (2.2e-308)
//   so that a confidence of exactly 0 gives a finite logit (-708.4) instead of -inf.
// - Outputs are always on the simplex: q_k >= 0, sum q_k = 1 (to rounding).
// - Degenerate fits throw DomainError naming the method and the rule: an empty sample, a
//   sample in which a single class occurs, and a sample smaller than the method's number of
//   free parameters. They never return NaN.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "recalibrators/fitted_state.hpp"

namespace calbench {

// A scalar fitted value as reported in results ("temperature": 1.43).
struct FittedValue {
  std::string name;
  double value = 0.0;
};

class CalibrationModel {
 public:
  virtual ~CalibrationModel() = default;
  // q = g(p) for `rows` rows of K = p.size() / rows values each, row-major; q has the shape
  // of p. Batched so that matrix methods can use matrix products; thread-safe (const).
  virtual void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const = 0;
  // Scalar fitted values (the temperature, the ensemble weights, ...); may be empty.
  virtual std::vector<FittedValue> parameters() const { return {}; }
  // True when g is injective on the open simplex, so that for an injective miscalibration map
  // the composed map c -> q is injective and r(q) = E[c | q] = c (canonical_l1 is then exact).
  virtual bool injective() const { return false; }
  // Everything apply() uses, for save and load (recalibrators/restore_model.hpp rebuilds it).
  virtual FittedState state() const = 0;
};

class Recalibrator {
 public:
  virtual ~Recalibrator() = default;
  // Fits on the sample's p and labels; throws DomainError on a degenerate fit.
  virtual std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const = 0;
  // The registry name, for messages ("temperature").
  virtual std::string name() const = 0;
  // Whether `state` has the form of a model this method fits on `classes` classes: its kind
  // and its parts' kinds. A fitted-model file whose method and model disagree (edited, or put
  // together from two files) is refused by it (recalibrators/fitted_model_json.hpp).
  virtual bool gives(const FittedState& state, std::size_t classes) const = 0;
};

// The shared verbs.
inline std::unique_ptr<const CalibrationModel> fit(const Recalibrator& method,
                                                   const Sample& sample) {
  return method.fit(sample);
}
inline void apply(const CalibrationModel& model, std::span<const double> p, std::size_t classes,
                  std::span<double> q) {
  model.apply(p, classes, q);
}

// g(p) of every row of a sample into `out` (resized, labels copied, summarised).
void apply_to_sample(const CalibrationModel& model, const Sample& in, Sample& out);

// ---- helpers shared by the methods --------------------------------------------------------

// log(max(p, smallest normal double)): the logit convention above.
double safe_log(double p);

// In-place softmax of one row of logits (max subtracted first); the row sums to 1.
void softmax_in_place(std::span<double> z);

// Throws DomainError unless the sample has at least `min_rows` rows and at least two distinct
// labels; `method` names the method and `parameters` explains min_rows in the message.
void check_fit_sample(const Sample& sample, const std::string& method, std::size_t min_rows,
                      const std::string& parameters);

// Rescales q so it sums to 1; a row whose sum is 0 (every one-vs-rest map gave 0) becomes
// uniform, as scikit-learn's CalibratedClassifierCV does.
void normalise_row(std::span<double> q);

// The top-label reduction (Guo et al. 2017, Panchenko et al. 2021): the top component p_t
// becomes `top`, the others are scaled by (1 - top)/(1 - p_t), 1 - p_t computed as the
// others' sum; when that is 0 the remainder 1 - top is shared equally among them.
void rescale_to_top(std::span<const double> p, std::size_t top_index, double top,
                    std::span<double> q);

// Index of the largest component, the lowest on ties (as Sample::summarise).
std::size_t argmax(std::span<const double> p);

}  // namespace calbench
