#include "recalibrators/xgboost_calibration.hpp"

#include <algorithm>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"

namespace calbench {
namespace {

// The folds' stream: fixed, so a fit is a pure function of its sample (CalArena's
// StratifiedKFold has random_state = 42).
constexpr std::uint64_t fold_seed = 42;

// probmetrics' floor of a log-probability: log of float32's smallest normal number.
const double log_floor = std::log(static_cast<double>(std::numeric_limits<float>::min()));

double floored_log(double p) {
  return std::max(std::log(p), log_floor);
}

double sigmoid(double x) {
  return x >= 0.0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

std::size_t feature_columns(std::size_t classes) {
  return classes == 2 ? 1 : classes;
}

class XgboostModel : public CalibrationModel {
 public:
  XgboostModel(std::size_t classes, std::vector<BoostedTrees> folds)
      : classes_(classes), folds_(std::move(folds)) {}

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    const std::size_t rows = p.size() / classes, groups = folds_.front().groups;
    const std::vector<float> x = xgboost_features(p, classes);
    const std::size_t columns = feature_columns(classes);
    std::vector<float> margin(groups);
    std::vector<double> probability(classes);
    for (std::size_t i = 0; i < rows; ++i) {
      auto out = q.subspan(i * classes, classes);
      std::fill(out.begin(), out.end(), 0.0);
      for (const auto& booster : folds_) {
        booster.margins({x.data() + i * columns, columns}, margin);
        if (classes == 2) {
          const double s = sigmoid(margin[0]);
          out[0] += 1.0 - s;
          out[1] += s;
        } else {
          for (std::size_t k = 0; k < classes; ++k) probability[k] = margin[k];
          softmax_in_place(probability);
          for (std::size_t k = 0; k < classes; ++k) out[k] += probability[k];
        }
      }
      for (double& v : out) v /= static_cast<double>(folds_.size());
    }
  }
  FittedState state() const override {
    FittedState out{.kind = "xgboost", .scalars = {{"classes", static_cast<double>(classes_)}}};
    for (const auto& booster : folds_) {
      FittedState b{.kind = "boosted_trees",
                    .scalars = {{"base_margin", booster.base_margin},
                                {"groups", static_cast<double>(booster.groups)}}};
      for (const auto& tree : booster.trees)
        b.parts.push_back({.kind = "tree",
                           .scalars = {{"group", static_cast<double>(tree.group)}},
                           .arrays = {{"left", {tree.left.begin(), tree.left.end()}},
                                      {"right", {tree.right.begin(), tree.right.end()}},
                                      {"feature", {tree.feature.begin(), tree.feature.end()}},
                                      {"value", {tree.value.begin(), tree.value.end()}}}});
      out.parts.push_back(std::move(b));
    }
    return out;
  }

 private:
  std::size_t classes_;
  std::vector<BoostedTrees> folds_;
};

// fold[i] for every row: each class's rows in a shuffled order, dealt to folds 0, 1, ...
// in turn, continuing across classes, so that every fold holds each class's rows to within
// one and all folds' sizes differ by at most one.
std::vector<std::size_t> stratified_folds(const Sample& s, std::size_t folds, Engine& engine) {
  std::vector<std::size_t> fold(s.size, 0);
  std::size_t position = 0;
  for (std::size_t k = 0; k < s.classes; ++k) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < s.size; ++i)
      if (s.label[i] == k) members.push_back(i);
    for (std::size_t i = members.size(); i > 1; --i) {
      boost::random::uniform_int_distribution<std::size_t> pick(0, i - 1);
      std::swap(members[i - 1], members[pick(engine)]);
    }
    for (std::size_t i : members) fold[i] = position++ % folds;
  }
  return fold;
}

}  // namespace

std::vector<float> xgboost_features(std::span<const double> p, std::size_t classes) {
  const std::size_t rows = p.size() / classes;
  std::vector<float> x(rows * feature_columns(classes));
  for (std::size_t i = 0; i < rows; ++i) {
    const auto row = p.subspan(i * classes, classes);
    if (classes == 2) {
      // probmetrics: log p - log1p(-p), each floored at -87.34, p = p_1.
      const double log_p = floored_log(row[1]);
      const double log_rest = std::max(std::log1p(-row[1]), log_floor);
      x[i] = static_cast<float>(log_p - log_rest);
    } else {
      for (std::size_t k = 0; k < classes; ++k)
        x[i * classes + k] = static_cast<float>(floored_log(row[k]));
    }
  }
  return x;
}

std::unique_ptr<const CalibrationModel> xgboost_model(std::size_t classes,
                                                      std::vector<BoostedTrees> folds) {
  return std::make_unique<XgboostModel>(classes, std::move(folds));
}

XgboostCalibration::XgboostCalibration(XgboostSettings settings) : settings_(settings) {
  if (settings_.rounds < 1) throw DomainError("xgboost: rounds must be >= 1");
  if (settings_.max_depth < 1) throw DomainError("xgboost: max_depth must be >= 1");
  if (!(settings_.learning_rate > 0.0 && settings_.learning_rate <= 1.0))
    throw DomainError("xgboost: learning_rate = " + format_double(settings_.learning_rate) +
                      ": must be in (0, 1]");
  if (settings_.folds < 1) throw DomainError("xgboost: folds must be >= 1");
}

bool XgboostCalibration::gives(const FittedState& state, std::size_t classes) const {
  const auto recorded = std::find_if(state.scalars.begin(), state.scalars.end(),
                                     [](const auto& kv) { return kv.first == "classes"; });
  return has_form(state, "xgboost", -1,
                  [](const FittedState& part) { return has_kind(part, "boosted_trees"); }) &&
         recorded != state.scalars.end() && recorded->second == static_cast<double>(classes);
}

std::unique_ptr<const CalibrationModel> XgboostCalibration::fit(const Sample& sample) const {
  check_fit_sample(sample, name(), settings_.folds, "each of its folds holds out a row");
  const std::size_t K = sample.classes, n = sample.size, columns = feature_columns(K);
  const std::vector<float> x = xgboost_features(sample.p, K);
  Engine engine = make_engine({fold_seed, 0, 0, Purpose::split});
  const std::vector<std::size_t> fold =
      settings_.folds > 1 ? stratified_folds(sample, settings_.folds, engine)
                          : std::vector<std::size_t>(n, 1);  // no row is ever held out
  BoosterSettings booster{
      .objective = K == 2 ? BoostObjective::binary_logistic : BoostObjective::multi_softprob,
      .classes = K,
      .rounds = settings_.rounds,
      .max_depth = settings_.max_depth,
      .learning_rate = settings_.learning_rate,
      // XGBoost draws only when it subsamples, which these settings never do; the seed is
      // set from the fold stream all the same, so that no draw is left to the library.
      .seed = engine() >> 33};

  std::vector<BoostedTrees> boosters;
  std::vector<float> train_x, train_y;
  for (std::size_t f = 0; f < settings_.folds; ++f) {
    train_x.clear();
    train_y.clear();
    double positives = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (fold[i] == f) continue;
      train_x.insert(train_x.end(), x.begin() + static_cast<std::ptrdiff_t>(i * columns),
                     x.begin() + static_cast<std::ptrdiff_t>((i + 1) * columns));
      train_y.push_back(static_cast<float>(sample.label[i]));
      positives += sample.label[i] == 1 ? 1.0 : 0.0;
    }
    if (K == 2) {
      // XGBoost 2's intercept: one Newton step of the log loss from margin 0, where every
      // gradient is 1/2 - y and every hessian 1/4: w = 4 (mean y - 1/2), base_score = σ(w).
      const double mean = positives / static_cast<double>(train_y.size());
      booster.base_score = sigmoid(4.0 * (mean - 0.5));
    }
    boosters.push_back(XgboostBooster(train_x, columns, train_y, booster).trees());
  }
  return std::make_unique<XgboostModel>(K, std::move(boosters));
}

}  // namespace calbench
