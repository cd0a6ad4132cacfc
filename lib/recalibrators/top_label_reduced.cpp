#include "recalibrators/top_label_reduced.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace calbench {
namespace {

class TopLabelReducedModel : public CalibrationModel {
 public:
  explicit TopLabelReducedModel(std::unique_ptr<const CalibrationModel> binary)
      : binary_(std::move(binary)) {}

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    const std::size_t rows = p.size() / classes;
    std::vector<double> pair(2 * rows), out(2 * rows);
    std::vector<std::size_t> top(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      top[i] = argmax(p.subspan(i * classes, classes));
      const double z = p[i * classes + top[i]];
      pair[2 * i] = 1.0 - z;
      pair[2 * i + 1] = z;
    }
    binary_->apply(pair, 2, out);
    for (std::size_t i = 0; i < rows; ++i)
      rescale_to_top(p.subspan(i * classes, classes), top[i], out[2 * i + 1],
                     q.subspan(i * classes, classes));
  }
  std::vector<FittedValue> parameters() const override { return binary_->parameters(); }
  FittedState state() const override {
    return {.kind = "top_label_reduced", .parts = {binary_->state()}};
  }

 private:
  std::unique_ptr<const CalibrationModel> binary_;
};

}  // namespace

std::unique_ptr<const CalibrationModel> top_label_reduced_model(
    std::unique_ptr<const CalibrationModel> binary) {
  return std::make_unique<TopLabelReducedModel>(std::move(binary));
}

std::unique_ptr<const CalibrationModel> TopLabelReduced::fit(const Sample& sample) const {
  check_fit_sample(sample, name(), 1, "");
  std::vector<double> pair(2 * sample.size);
  std::vector<std::uint32_t> correct(sample.size);
  for (std::size_t i = 0; i < sample.size; ++i) {
    pair[2 * i] = 1.0 - sample.confidence[i];
    pair[2 * i + 1] = sample.confidence[i];
    correct[i] = sample.correct(i) ? 1u : 0u;
  }
  if (std::all_of(correct.begin(), correct.end(), [&](auto c) { return c == correct.front(); }))
    throw DomainError(name() + ": every top label in the fit sample is " +
                      (correct.front() == 1u ? "correct" : "wrong") +
                      "; the binary problem has a single class");
  return std::make_unique<TopLabelReducedModel>(
      inner_->fit(make_sample(2, std::move(pair), std::move(correct))));
}

}  // namespace calbench
