#include "recalibrators/one_vs_rest.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace calbench {
namespace {

class OneVsRestModel : public CalibrationModel {
 public:
  explicit OneVsRestModel(std::vector<std::unique_ptr<const BinaryMap>> maps)
      : maps_(std::move(maps)) {}

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    const std::size_t rows = p.size() / classes;
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t k = 0; k < classes; ++k)
        q[i * classes + k] = (*maps_[k])(p[i * classes + k]);
      normalise_row(q.subspan(i * classes, classes));
    }
  }

  FittedState state() const override {
    FittedState out{.kind = "one_vs_rest"};
    for (const auto& map : maps_) out.parts.push_back(map->state());
    return out;
  }

  // The mean over classes of each binary parameter ("slope_mean").
  std::vector<FittedValue> parameters() const override {
    std::vector<FittedValue> out;
    for (std::size_t k = 0; k < maps_.size(); ++k) {
      const auto values = maps_[k]->parameters();
      if (k == 0)
        for (const auto& v : values) out.push_back({v.name + "_mean", 0.0});
      for (std::size_t j = 0; j < std::min(values.size(), out.size()); ++j)
        out[j].value += values[j].value / static_cast<double>(maps_.size());
    }
    return out;
  }

 private:
  std::vector<std::unique_ptr<const BinaryMap>> maps_;
};

class BinaryModel : public CalibrationModel {
 public:
  explicit BinaryModel(std::unique_ptr<const BinaryMap> map) : map_(std::move(map)) {}

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    if (classes != 2) throw DomainError("a binary model applied to K = " + std::to_string(classes));
    const std::size_t rows = p.size() / 2;
    for (std::size_t i = 0; i < rows; ++i) {
      const double g = std::clamp((*map_)(p[2 * i + 1]), 0.0, 1.0);
      q[2 * i] = 1.0 - g;
      q[2 * i + 1] = g;
    }
  }
  std::vector<FittedValue> parameters() const override { return map_->parameters(); }
  // p -> p_1 is injective on the K = 2 simplex.
  bool injective() const override { return map_->strictly_increasing(); }
  FittedState state() const override { return {.kind = "binary", .parts = {map_->state()}}; }

 private:
  std::unique_ptr<const BinaryMap> map_;
};

class TopLabelModel : public CalibrationModel {
 public:
  explicit TopLabelModel(std::unique_ptr<const BinaryMap> map) : map_(std::move(map)) {}

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    const std::size_t rows = p.size() / classes;
    for (std::size_t i = 0; i < rows; ++i) {
      const auto row = p.subspan(i * classes, classes);
      const std::size_t top = argmax(row);
      rescale_to_top(row, top, std::clamp((*map_)(row[top]), 0.0, 1.0),
                     q.subspan(i * classes, classes));
    }
  }

  std::vector<FittedValue> parameters() const override { return map_->parameters(); }
  FittedState state() const override { return {.kind = "top_label", .parts = {map_->state()}}; }

 private:
  std::unique_ptr<const BinaryMap> map_;
};

}  // namespace

std::unique_ptr<const CalibrationModel> one_vs_rest_model(
    std::vector<std::unique_ptr<const BinaryMap>> maps) {
  return std::make_unique<OneVsRestModel>(std::move(maps));
}

std::unique_ptr<const CalibrationModel> binary_model(std::unique_ptr<const BinaryMap> map) {
  return std::make_unique<BinaryModel>(std::move(map));
}

std::unique_ptr<const CalibrationModel> top_label_model(std::unique_ptr<const BinaryMap> map) {
  return std::make_unique<TopLabelModel>(std::move(map));
}

OneVsRest::OneVsRest(std::string name, std::shared_ptr<const BinaryCalibrator> binary,
                     TwoClasses two_classes)
    : name_(std::move(name)), binary_(std::move(binary)), two_classes_(two_classes) {}

bool OneVsRest::gives(const FittedState& state, std::size_t classes) const {
  const auto map = [&](const FittedState& part) { return has_kind(part, binary_->map_kind()); };
  if (classes == 2 && two_classes_ == TwoClasses::single_map)
    return has_form(state, "binary", 1, map);
  return has_form(state, "one_vs_rest", static_cast<long>(classes), map);
}

std::unique_ptr<const CalibrationModel> OneVsRest::fit(const Sample& sample) const {
  check_fit_sample(sample, name_, 1, "");
  const std::size_t K = sample.classes, n = sample.size;
  std::vector<double> scores(n), outcomes(n);
  std::vector<std::unique_ptr<const BinaryMap>> maps;
  if (K == 2 && two_classes_ == TwoClasses::single_map) {
    for (std::size_t i = 0; i < n; ++i) {
      scores[i] = sample.p[2 * i + 1];
      outcomes[i] = sample.label[i] == 1 ? 1.0 : 0.0;
    }
    return std::make_unique<BinaryModel>(binary_->fit(scores, outcomes, name_ + ", class 1"));
  }
  for (std::size_t k = 0; k < K; ++k) {
    for (std::size_t i = 0; i < n; ++i) {
      scores[i] = sample.p[i * K + k];
      outcomes[i] = sample.label[i] == k ? 1.0 : 0.0;
    }
    maps.push_back(binary_->fit(scores, outcomes, name_ + ", class " + std::to_string(k)));
  }
  return std::make_unique<OneVsRestModel>(std::move(maps));
}

TopLabel::TopLabel(std::string name, std::shared_ptr<const BinaryCalibrator> binary)
    : name_(std::move(name)), binary_(std::move(binary)) {}

std::unique_ptr<const CalibrationModel> TopLabel::fit(const Sample& sample) const {
  check_fit_sample(sample, name_, 1, "");
  const std::size_t n = sample.size;
  std::vector<double> scores(n), outcomes(n);
  for (std::size_t i = 0; i < n; ++i) {
    scores[i] = sample.confidence[i];
    outcomes[i] = sample.correct(i) ? 1.0 : 0.0;
  }
  return std::make_unique<TopLabelModel>(binary_->fit(scores, outcomes, name_ + ", top label"));
}

}  // namespace calbench
