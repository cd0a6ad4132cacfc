#include "recalibrators/classwise.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace calbench {
namespace {

class ClasswiseModel : public CalibrationModel {
 public:
  explicit ClasswiseModel(std::vector<std::unique_ptr<const CalibrationModel>> models)
      : models_(std::move(models)) {}

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    const std::size_t rows = p.size() / classes;
    for (std::size_t i = 0; i < rows; ++i) {
      const auto row = p.subspan(i * classes, classes);
      const auto out = q.subspan(i * classes, classes);
      const auto& model = models_[argmax(row)];
      if (model)
        model->apply(row, classes, out);
      else
        std::copy(row.begin(), row.end(), out.begin());
    }
  }

  std::vector<FittedValue> parameters() const override {
    std::vector<FittedValue> out;
    std::size_t fitted = 0;
    for (const auto& m : models_) {
      if (!m) continue;
      const auto values = m->parameters();
      if (fitted == 0)
        for (const auto& v : values) out.push_back({v.name + "_mean", 0.0});
      for (std::size_t j = 0; j < std::min(values.size(), out.size()); ++j)
        out[j].value += values[j].value;
      ++fitted;
    }
    for (auto& v : out) v.value /= static_cast<double>(fitted);
    out.push_back({"classes_unfitted", static_cast<double>(models_.size() - fitted)});
    return out;
  }
  // One part per class; a class left unchanged is an "identity" part.
  FittedState state() const override {
    FittedState out{.kind = "classwise"};
    for (const auto& m : models_)
      out.parts.push_back(m ? m->state() : FittedState{.kind = "identity"});
    return out;
  }

 private:
  std::vector<std::unique_ptr<const CalibrationModel>> models_;  // null: left unchanged
};

}  // namespace

std::unique_ptr<const CalibrationModel> classwise_model(
    std::vector<std::unique_ptr<const CalibrationModel>> models) {
  return std::make_unique<ClasswiseModel>(std::move(models));
}

std::unique_ptr<const CalibrationModel> Classwise::fit(const Sample& sample) const {
  check_fit_sample(sample, name(), 1, "");
  const std::size_t K = sample.classes;
  std::vector<std::unique_ptr<const CalibrationModel>> models(K);
  Sample part;
  std::size_t fitted = 0;
  for (std::size_t k = 0; k < K; ++k) {
    std::vector<double> p;
    std::vector<std::uint32_t> labels;
    for (std::size_t i = 0; i < sample.size; ++i) {
      if (sample.predicted[i] != k) continue;
      const auto row = sample.row(i);
      p.insert(p.end(), row.begin(), row.end());
      labels.push_back(sample.label[i]);
    }
    if (labels.empty()) continue;
    try {
      models[k] = inner_->fit(make_sample(K, std::move(p), std::move(labels)));
      ++fitted;
    } catch (const DomainError&) {
      // Left unchanged (documented above).
    }
  }
  if (fitted == 0)
    throw DomainError(name() + ": no predicted class has a fit sample the wrapped method can fit");
  return std::make_unique<ClasswiseModel>(std::move(models));
}

}  // namespace calbench
