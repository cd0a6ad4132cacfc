#pragma once
// Gradient-boosted trees trained by XGBoost (its C API, Debian's libxgboost-dev) and kept as
// plain trees, so that applying a fitted model needs neither the library nor its thread
// safety: the trees are read back from the booster's JSON model once, after training, and
// walked here. A booster's margin for a row is XGBoost's own, bit for bit (the margin is a
// float32 sum of leaf values in tree order, started at the base margin; tested against the
// library's prediction): recalibrators/xgboost_calibration.hpp turns margins into
// probabilities.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace calbench {

// One regression tree as XGBoost stores it (RegTree's JSON arrays): node j is a leaf when
// left[j] < 0, with weight value[j]; otherwise a row goes to left[j] when its feature
// feature[j] (a float32) is < value[j], else to right[j]. Children come after their parent
// (XGBoost appends them), so a walk from node 0 ends. The rows calbench feeds have no missing
// values, so XGBoost's default direction is never taken and not kept.
struct BoostedTree {
  std::size_t group = 0;  // the output (class) whose margin it adds to; 0 for a binary model
  std::vector<std::int32_t> left{}, right{}, feature{};
  std::vector<float> value{};

  float leaf(std::span<const float> x) const;
};

// One booster: out[g] = base_margin + the sum, in tree order and in float32, of the leaf
// weights of the trees of group g.
struct BoostedTrees {
  float base_margin = 0.0f;
  std::size_t groups = 1;
  std::vector<BoostedTree> trees{};

  void margins(std::span<const float> x, std::span<float> out) const;
};

enum class BoostObjective { binary_logistic, multi_softprob };

// XGBoost's parameters as calbench sets them; everything else is the library's default
// (lambda 1, min_child_weight 1, no subsampling, max_bin 256).
struct BoosterSettings {
  BoostObjective objective = BoostObjective::binary_logistic;
  std::size_t classes = 2;  // num_class for multi_softprob
  std::size_t rounds = 10;
  std::size_t max_depth = 3;
  double learning_rate = 0.3;
  // binary_logistic only: XGBoost's base_score (a probability in (0, 1)); multi_softprob
  // starts every class at the library's constant base score, which the softmax cancels.
  double base_score = 0.5;
  std::uint64_t seed = 0;
};

// A booster trained by XGBoost on `rows` rows of `columns` float32 features (row-major) with
// labels 0 .. classes - 1, one thread (`nthread` 1: bits independent of the machine's cores),
// tree_method "hist". Throws DomainError with the library's message when it fails.
class XgboostBooster {
 public:
  XgboostBooster(std::span<const float> features, std::size_t columns,
                 std::span<const float> labels, const BoosterSettings& settings);
  ~XgboostBooster();
  XgboostBooster(const XgboostBooster&) = delete;
  XgboostBooster& operator=(const XgboostBooster&) = delete;

  // The trained trees, read from the booster's JSON model.
  BoostedTrees trees() const;
  // XGBoost's own margins for `features` (row-major, `columns` per row; rows x groups
  // values), for the tests that check BoostedTrees::margins against the library.
  std::vector<float> library_margins(std::span<const float> features) const;

 private:
  void* booster_ = nullptr;
  std::size_t columns_;
};

// The library's version, "major.minor.patch" (run.json-style provenance, docs).
std::string xgboost_version();

}  // namespace calbench
