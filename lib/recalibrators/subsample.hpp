#pragma once
// The row-cap wrapper: `method` fitted on the first `rows` rows of the fit sample (all of them
// when the sample is smaller). The fit rows are independent draws, so the first m of them are a
// simple random sample of m rows; taking a prefix (rather than drawing) keeps the fit a pure
// function of the sample. It exists for costly methods in large studies (kernel's bandwidth
// search is O(n^2), docs/arena.md): a method capped this way is a different method, named so
// by its label (`subsample_2000(kernel)`), and its fitted model is the wrapped method's.
#include <cstddef>
#include <memory>

#include "recalibrators/recalibrator.hpp"

namespace calbench {

class Subsample : public Recalibrator {
 public:
  // Checks rows >= 1.
  Subsample(std::shared_ptr<const Recalibrator> inner, std::size_t rows);
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override {
    return "subsample_" + std::to_string(rows_) + "(" + inner_->name() + ")";
  }
  // The fitted model is the wrapped method's.
  bool gives(const FittedState& state, std::size_t classes) const override {
    return inner_->gives(state, classes);
  }

 private:
  std::shared_ptr<const Recalibrator> inner_;
  std::size_t rows_;
};

// The first `rows` rows of `sample` (p, labels, kept truths), summarised.
Sample first_rows(const Sample& sample, std::size_t rows);

}  // namespace calbench
