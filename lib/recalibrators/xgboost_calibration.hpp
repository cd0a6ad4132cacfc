#pragma once
// Gradient-boosting calibration as CalArena runs it (probmetrics' XGBoostCalibrator, its
// default use_cv = True): an XGBoost classifier on the model's logits, one per fold of a
// stratified 5-fold split, each trained on the other four fifths; q is the mean of the folds'
// probabilities.
// - Features: K = 2, one, the log-odds log p_1 - log(1 - p_1); K > 2, the K log-probabilities
//   log p_k. Each log is floored at log(FLT_MIN) = -87.34, probmetrics' floor
//   (binary_probs_to_logits, multiclass_probs_to_logits), not calbench's log(DBL_MIN): the
//   trees split float32 features, and the floor is part of CalArena's feature. Computed in
//   double, rounded to float32 (XGBoost's input type).
// - Booster: binary:logistic (K = 2) or multi:softprob with num_class = K; max_depth 3,
//   learning rate 0.3, 10 rounds (xgb.train's default: CalArena's early stopping, patience 50
//   on the held-out fold, cannot stop 10 rounds, so the held-out fold is never used),
//   tree_method "hist" (XGBoost 2's default), nthread 1, every other parameter the
//   library's default. K = 2 starts from XGBoost 2's estimated intercept, one Newton step
//   from margin 0: base margin 4 (mean label - 1/2) of the fold's training rows (Debian's 1.7
//   would start at 0); K > 2 from the constant base score, which the softmax cancels.
// - Folds: each class's rows shuffled by a fixed calbench stream and dealt in turn, so every
//   fold holds each class's rows to within one (scikit-learn's StratifiedKFold, seed 42,
//   draws other folds of the same kind). `folds` 1 is probmetrics' use_cv = False: one booster
//   on every row.
// The fitted model keeps its trees and walks them itself (recalibrators/xgboost_booster.hpp):
// applying it, saving and restoring it need no XGBoost, and its margins are the library's bit
// for bit; the sigmoid or softmax and the mean over folds are taken in double.
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "recalibrators/recalibrator.hpp"
#include "recalibrators/xgboost_booster.hpp"

namespace calbench {

struct XgboostSettings {
  std::size_t rounds = 10;
  std::size_t max_depth = 3;
  double learning_rate = 0.3;
  std::size_t folds = 5;
};

class XgboostCalibration : public Recalibrator {
 public:
  // Checks rounds >= 1, max_depth >= 1, learning_rate in (0, 1], folds >= 1.
  explicit XgboostCalibration(XgboostSettings settings);
  // Needs at least `folds` rows (each fold holds one out) and two classes.
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return "xgboost"; }
  bool gives(const FittedState& state, std::size_t classes) const override;

 private:
  XgboostSettings settings_;
};

// The features of `rows` rows of K probabilities (row-major): K = 2, one per row; K > 2, K.
std::vector<float> xgboost_features(std::span<const double> p, std::size_t classes);

// The fitted model from its boosters (one per fold; groups 1 for K = 2, K otherwise);
// recalibrators/restore_model.hpp.
std::unique_ptr<const CalibrationModel> xgboost_model(std::size_t classes,
                                                      std::vector<BoostedTrees> folds);

}  // namespace calbench
