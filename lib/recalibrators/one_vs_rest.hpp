#pragma once
// Multiclass methods composed from a binary calibrator (recalibrators/binary_calibrator.hpp).
//
// OneVsRest: one binary map g_k per class, fitted on (p_k, 1{y = k}); q_k = g_k(p_k) / sum_j
// g_j(p_j), a zero row becoming uniform (scikit-learn's CalibratedClassifierCV convention).
// A class that never occurs in the fit sample is fitted like any other (its outcomes are all
// 0; isotonic and binning then map it to 0, logistic fits reject it as separable).
//
// With TwoClasses::single_map a K = 2 sample gets one map g on (p_1, 1{y = 1}) and
// q = (1 - g(p_1), g(p_1)), as scikit-learn's CalibratedClassifierCV (and so probmetrics)
// does for binary problems; K > 2 is one-vs-rest as above.
//
// TopLabel: one binary map g fitted on (max p, 1{y = argmax p}); q_top = g(max p) and the
// other components are scaled by (1 - q_top)/(1 - max p) (rescale_to_top). The argmax can
// change when g(max p) falls below a rescaled runner-up.
#include <memory>

#include "recalibrators/binary_calibrator.hpp"
#include "recalibrators/recalibrator.hpp"

namespace calbench {

enum class TwoClasses { one_vs_rest, single_map };

class OneVsRest : public Recalibrator {
 public:
  // `name` is the registry name ("isotonic").
  OneVsRest(std::string name, std::shared_ptr<const BinaryCalibrator> binary,
            TwoClasses two_classes = TwoClasses::one_vs_rest);
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return name_; }
  bool gives(const FittedState& state, std::size_t classes) const override;

 private:
  std::string name_;
  std::shared_ptr<const BinaryCalibrator> binary_;
  TwoClasses two_classes_;
};

class TopLabel : public Recalibrator {
 public:
  TopLabel(std::string name, std::shared_ptr<const BinaryCalibrator> binary);
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return name_; }
  bool gives(const FittedState& state, std::size_t) const override {
    return has_form(state, "top_label", 1,
                    [&](const FittedState& map) { return has_kind(map, binary_->map_kind()); });
  }

 private:
  std::string name_;
  std::shared_ptr<const BinaryCalibrator> binary_;
};

// The fitted models, rebuilt from their maps (recalibrators/restore_model.hpp).
std::unique_ptr<const CalibrationModel> one_vs_rest_model(
    std::vector<std::unique_ptr<const BinaryMap>> maps);
// K = 2 only: q = (1 - g(p_1), g(p_1)).
std::unique_ptr<const CalibrationModel> binary_model(std::unique_ptr<const BinaryMap> map);
std::unique_ptr<const CalibrationModel> top_label_model(std::unique_ptr<const BinaryMap> map);

}  // namespace calbench
