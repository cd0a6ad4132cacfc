// The one file that talks to XGBoost's C API. The booster's JSON model is read here with
// nlohmann/json: it is the library's output format, read once per fit, and no JSON leaves
// this file.
#include "recalibrators/xgboost_booster.hpp"

#include <xgboost/c_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"

namespace calbench {
namespace {

// Every C API call returns 0 on success, -1 on failure with the reason in XGBGetLastError.
void check(int status, const char* call) {
  if (status != 0)
    throw DomainError(std::string("xgboost: ") + call + " failed: " + XGBGetLastError());
}

// A dense DMatrix, freed on scope exit; one thread, no missing values (NaN marks missing).
class DenseMatrix {
 public:
  DenseMatrix(std::span<const float> features, std::size_t columns) {
    check(XGDMatrixCreateFromMat_omp(features.data(), features.size() / columns, columns,
                                     std::numeric_limits<float>::quiet_NaN(), &handle_, 1),
          "XGDMatrixCreateFromMat_omp");
  }
  ~DenseMatrix() { XGDMatrixFree(handle_); }
  DenseMatrix(const DenseMatrix&) = delete;
  DenseMatrix& operator=(const DenseMatrix&) = delete;
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

// Decimal text that XGBoost's float parameters read back as the same float.
std::string text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

// Objective::ProbToMargin of XGBoost 1.7 (regression_loss.h, LogisticClassification): the
// logistic base margin is -log(1/base_score - 1) in float32; the softmax objective keeps the
// base score itself as every class's starting margin.
float base_margin(BoostObjective objective, float base_score) {
  if (objective == BoostObjective::binary_logistic) return -std::log(1.0f / base_score - 1.0f);
  return base_score;
}

template <typename T>
std::vector<T> numbers(const nlohmann::json& array) {
  std::vector<T> out;
  out.reserve(array.size());
  for (const auto& v : array) out.push_back(static_cast<T>(v.get<double>()));
  return out;
}

}  // namespace

float BoostedTree::leaf(std::span<const float> x) const {
  std::size_t j = 0;
  while (left[j] >= 0)
    j = static_cast<std::size_t>(x[static_cast<std::size_t>(feature[j])] < value[j] ? left[j]
                                                                                    : right[j]);
  return value[j];
}

void BoostedTrees::margins(std::span<const float> x, std::span<float> out) const {
  for (std::size_t g = 0; g < groups; ++g) out[g] = base_margin;
  for (const auto& tree : trees) out[tree.group] += tree.leaf(x);
}

XgboostBooster::XgboostBooster(std::span<const float> features, std::size_t columns,
                               std::span<const float> labels, const BoosterSettings& settings)
    : columns_(columns) {
  const DenseMatrix train(features, columns);
  check(XGDMatrixSetFloatInfo(train.get(), "label", labels.data(), labels.size()),
        "XGDMatrixSetFloatInfo");
  DMatrixHandle cache[] = {train.get()};
  check(XGBoosterCreate(cache, 1, &booster_), "XGBoosterCreate");
  const bool binary = settings.objective == BoostObjective::binary_logistic;
  const std::pair<const char*, std::string> params[] = {
      {"nthread", "1"},
      {"verbosity", "0"},
      {"tree_method", "hist"},
      {"objective", binary ? "binary:logistic" : "multi:softprob"},
      {"num_class", binary ? "0" : std::to_string(settings.classes)},
      {"max_depth", std::to_string(settings.max_depth)},
      {"eta", text(settings.learning_rate)},
      {"seed", std::to_string(settings.seed)},
      {"base_score", text(binary ? settings.base_score : 0.5)},
  };
  try {
    for (const auto& [name, value] : params)
      check(XGBoosterSetParam(booster_, name, value.c_str()), "XGBoosterSetParam");
    for (std::size_t i = 0; i < settings.rounds; ++i)
      check(XGBoosterUpdateOneIter(booster_, static_cast<int>(i), train.get()),
            "XGBoosterUpdateOneIter");
  } catch (...) {
    XGBoosterFree(booster_);
    throw;
  }
}

XgboostBooster::~XgboostBooster() {
  XGBoosterFree(booster_);
}

BoostedTrees XgboostBooster::trees() const {
  bst_ulong length = 0;
  const char* buffer = nullptr;
  check(XGBoosterSaveModelToBuffer(booster_, R"({"format": "json"})", &length, &buffer),
        "XGBoosterSaveModelToBuffer");
  const auto model = nlohmann::json::parse(buffer, buffer + length);
  const auto& learner = model.at("learner");
  const auto& param = learner.at("learner_model_param");
  const std::string objective = learner.at("objective").at("name").get<std::string>();
  const float base_score = std::strtof(param.at("base_score").get<std::string>().c_str(), nullptr);
  const auto num_class = std::stoul(param.at("num_class").get<std::string>());

  BoostedTrees out;
  out.groups = num_class > 1 ? num_class : 1;
  out.base_margin = base_margin(objective == "binary:logistic" ? BoostObjective::binary_logistic
                                                               : BoostObjective::multi_softprob,
                                base_score);
  const auto& booster = learner.at("gradient_booster").at("model");
  const auto& info = booster.at("tree_info");
  const auto& trees = booster.at("trees");
  for (std::size_t t = 0; t < trees.size(); ++t) {
    const auto& tree = trees[t];
    BoostedTree b;
    b.group = info.at(t).get<std::size_t>();
    b.left = numbers<std::int32_t>(tree.at("left_children"));
    b.right = numbers<std::int32_t>(tree.at("right_children"));
    b.feature = numbers<std::int32_t>(tree.at("split_indices"));
    b.value = numbers<float>(tree.at("split_conditions"));
    out.trees.push_back(std::move(b));
  }
  return out;
}

std::vector<float> XgboostBooster::library_margins(std::span<const float> features) const {
  const DenseMatrix data(features, columns_);
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  // type 1: the raw margin, before the sigmoid or softmax.
  check(
      XGBoosterPredictFromDMatrix(
          booster_, data.get(),
          R"({"type": 1, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})",
          &shape, &dims, &result),
      "XGBoosterPredictFromDMatrix");
  bst_ulong size = 1;
  for (bst_ulong d = 0; d < dims; ++d) size *= shape[d];
  return {result, result + size};
}

std::string xgboost_version() {
  int major = 0, minor = 0, patch = 0;
  XGBoostVersion(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace calbench
