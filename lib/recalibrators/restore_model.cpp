#include "recalibrators/restore_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"
#include "recalibrators/bbq.hpp"
#include "recalibrators/cdf_spline.hpp"
#include "recalibrators/classwise.hpp"
#include "recalibrators/ensemble_temperature.hpp"
#include "recalibrators/histogram_binning.hpp"
#include "recalibrators/isotonic.hpp"
#include "recalibrators/kernel_calibration.hpp"
#include "recalibrators/laplace_mixture.hpp"
#include "recalibrators/logistic_calibration.hpp"
#include "recalibrators/logit_scaling.hpp"
#include "recalibrators/one_vs_rest.hpp"
#include "recalibrators/scaling_binning.hpp"
#include "recalibrators/smoothing_spline.hpp"
#include "recalibrators/structured_scaling.hpp"
#include "recalibrators/temperature_scaling.hpp"
#include "recalibrators/top_label_reduced.hpp"
#include "recalibrators/venn_abers.hpp"
#include "recalibrators/xgboost_calibration.hpp"

namespace calbench {
namespace {

// Checks of one state, each failure a DomainError prefixed by the state's place.
class StateReader {
 public:
  StateReader(const FittedState& state, std::string where)
      : state_(state), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& what) const { throw DomainError(where_ + ": " + what); }
  // Exactly these scalar and array keys, and `parts` parts (any number when parts < 0).
  void expect(std::initializer_list<const char*> scalars, std::initializer_list<const char*> arrays,
              int parts) const {
    auto same = [](const auto& have, std::initializer_list<const char*> want) {
      if (have.size() != want.size()) return false;
      return std::all_of(want.begin(), want.end(), [&](const char* key) {
        return std::any_of(have.begin(), have.end(),
                           [&](const auto& kv) { return kv.first == key; });
      });
    };
    if (!same(state_.scalars, scalars) || !same(state_.arrays, arrays))
      fail("a \"" + state_.kind + "\" state has the values " + keys(scalars, arrays));
    if (parts >= 0 && state_.parts.size() != static_cast<std::size_t>(parts))
      fail("a \"" + state_.kind + "\" state has " + std::to_string(parts) + " part(s), found " +
           std::to_string(state_.parts.size()));
  }
  double scalar(const char* key) const {
    const double x = state_.scalar(key);
    if (!std::isfinite(x)) fail(std::string(key) + " must be finite");
    return x;
  }
  double positive(const char* key) const {
    const double x = scalar(key);
    if (!(x > 0.0)) fail(std::string(key) + " must be > 0");
    return x;
  }
  const std::vector<double>& array(const char* key, std::size_t size) const {
    const auto& a = state_.array(key);
    if (a.size() != size)
      fail(std::string(key) + " has " + std::to_string(a.size()) + " values, expected " +
           std::to_string(size));
    if (!std::all_of(a.begin(), a.end(), [](double x) { return std::isfinite(x); }))
      fail(std::string(key) + " must hold finite numbers");
    return a;
  }
  // Probabilities in [0, 1] (a binary map's outputs).
  const std::vector<double>& unit_array(const char* key, std::size_t size) const {
    const auto& a = array(key, size);
    if (!std::all_of(a.begin(), a.end(), [](double x) { return x >= 0.0 && x <= 1.0; }))
      fail(std::string(key) + " must lie in [0, 1]");
    return a;
  }
  void non_decreasing(const char* key, const std::vector<double>& a, bool strictly) const {
    for (std::size_t j = 1; j < a.size(); ++j)
      if (strictly ? !(a[j - 1] < a[j]) : !(a[j - 1] <= a[j]))
        fail(std::string(key) + " must be " + (strictly ? "increasing" : "non-decreasing"));
  }
  std::string part(std::size_t j) const { return where_ + "/parts/" + std::to_string(j); }
  const FittedState& state() const { return state_; }

 private:
  static std::string keys(std::initializer_list<const char*> scalars,
                          std::initializer_list<const char*> arrays) {
    std::string out;
    for (const char* key : scalars) out += (out.empty() ? "" : ", ") + std::string(key);
    for (const char* key : arrays) out += (out.empty() ? "" : ", ") + std::string(key) + " (array)";
    return out.empty() ? "none" : out;
  }
  const FittedState& state_;
  std::string where_;
};

// A step map's edges (B - 1, non-decreasing, in [0, 1]) and values (B, in [0, 1]).
std::pair<std::vector<double>, std::vector<double>> steps(const StateReader& r) {
  const std::size_t bins = r.state().array("values").size();
  if (bins == 0) r.fail("values must not be empty");
  auto edges = r.unit_array("edges", bins - 1);
  r.non_decreasing("edges", edges, false);
  return {edges, r.unit_array("values", bins)};
}

// A whole number in [low, high] (a node index, a feature, a count saved as a double).
long whole(const StateReader& r, const char* key, double x, long low, long high) {
  if (!(x >= static_cast<double>(low) && x <= static_cast<double>(high) && x == std::floor(x)))
    r.fail(std::string(key) + " = " + format_double(x) + ": must be a whole number in [" +
           std::to_string(low) + ", " + std::to_string(high) + "]");
  return static_cast<long>(x);
}

// One tree of a boosted model (recalibrators/xgboost_booster.hpp): a leaf has left = right =
// -1; an inner node's children come after it, so a walk from node 0 ends; features index the
// booster's columns; values are float32 numbers.
BoostedTree boosted_tree(const StateReader& r, std::size_t groups, std::size_t columns) {
  r.expect({"group"}, {"left", "right", "feature", "value"}, 0);
  BoostedTree t;
  t.group = static_cast<std::size_t>(
      whole(r, "group", r.scalar("group"), 0, static_cast<long>(groups) - 1));
  const std::size_t m = r.state().array("value").size();
  if (m == 0) r.fail("value must not be empty");
  const auto& left = r.array("left", m);
  const auto& right = r.array("right", m);
  const auto& feature = r.array("feature", m);
  const auto& value = r.array("value", m);
  const auto last = static_cast<long>(m) - 1;
  for (std::size_t j = 0; j < m; ++j) {
    const auto self = static_cast<long>(j);
    const bool leaf = left[j] == -1.0;
    if (leaf != (right[j] == -1.0)) r.fail("left and right must both be -1 at a leaf");
    t.left.push_back(
        static_cast<std::int32_t>(leaf ? -1 : whole(r, "left", left[j], self + 1, last)));
    t.right.push_back(
        static_cast<std::int32_t>(leaf ? -1 : whole(r, "right", right[j], self + 1, last)));
    t.feature.push_back(static_cast<std::int32_t>(
        whole(r, "feature", feature[j], 0, static_cast<long>(columns) - 1)));
    const auto v = static_cast<float>(value[j]);
    if (static_cast<double>(v) != value[j] || !std::isfinite(v))
      r.fail("value must hold finite float32 numbers");
    t.value.push_back(v);
  }
  return t;
}

}  // namespace

double FittedState::scalar(const std::string& key) const {
  for (const auto& [name, value] : scalars)
    if (name == key) return value;
  throw DomainError("a \"" + kind + "\" state lacks " + key);
}

const std::vector<double>& FittedState::array(const std::string& key) const {
  for (const auto& [name, values] : arrays)
    if (name == key) return values;
  throw DomainError("a \"" + kind + "\" state lacks the array " + key);
}

std::unique_ptr<const BinaryMap> restore_binary_map(const FittedState& state,
                                                    const std::string& where) {
  const StateReader r(state, where);
  if (state.kind == "logit_linear") {
    r.expect({"slope", "intercept"}, {}, 0);
    return logit_linear_map(r.scalar("slope"), r.scalar("intercept"));
  }
  if (state.kind == "beta") {
    r.expect({"a", "b", "c"}, {}, 0);
    const double a = r.scalar("a"), b = r.scalar("b");
    if (a < 0.0 || b < 0.0) r.fail("a and b must be >= 0");
    return beta_map(a, b, r.scalar("c"));
  }
  if (state.kind == "probability_linear") {
    r.expect({"slope", "intercept"}, {}, 0);
    return probability_linear_map(r.scalar("slope"), r.scalar("intercept"));
  }
  if (state.kind == "logit_quadratic") {
    r.expect({"intercept", "linear", "quadratic"}, {}, 0);
    return logit_quadratic_map(r.scalar("intercept"), r.scalar("linear"), r.scalar("quadratic"));
  }
  if (state.kind == "isotonic") {
    r.expect({}, {"x", "y"}, 0);
    const std::size_t m = state.array("x").size();
    if (m == 0) r.fail("x must not be empty");
    const auto& x = r.array("x", m);
    const auto& y = r.unit_array("y", m);
    r.non_decreasing("x", x, true);
    r.non_decreasing("y", y, false);
    return isotonic_map(x, y);
  }
  if (state.kind == "smoothing_spline") {
    r.expect({"eps", "lambda"}, {"knots", "coefficients"}, 0);
    const double eps = r.scalar("eps"), lambda = r.scalar("lambda");
    if (!(eps > 0.0 && eps < 0.5)) r.fail("eps must lie in (0, 0.5)");
    if (!(lambda >= 0.0)) r.fail("lambda must be >= 0");
    const std::size_t m = state.array("knots").size();
    if (m < 2) r.fail("knots must hold at least 2 values");
    auto knots = r.array("knots", m);
    r.non_decreasing("knots", knots, true);
    return smoothing_spline_map(eps, std::move(knots), r.array("coefficients", m), lambda);
  }
  if (state.kind == "cdf_spline") {
    r.expect({}, {"x", "y"}, 0);
    const std::size_t m = state.array("x").size();
    if (m == 0) r.fail("x must not be empty");
    auto x = r.array("x", m);
    r.non_decreasing("x", x, true);
    return cdf_spline_map(std::move(x), r.array("y", m));
  }
  if (state.kind == "venn_abers") {
    r.expect({}, {"c", "p0", "p1"}, 0);
    const std::size_t m = state.array("c").size();
    if (m == 0) r.fail("c must not be empty");
    VennAbersPairs pairs{r.array("c", m), r.unit_array("p0", m + 1), r.unit_array("p1", m + 1)};
    r.non_decreasing("c", pairs.c, true);
    for (std::size_t i = 0; i <= m; ++i)
      if (pairs.p0[i] > pairs.p1[i]) r.fail("p0 must not exceed p1");
    return venn_abers_map(std::move(pairs));
  }
  if (state.kind == "steps") {
    r.expect({}, {"edges", "values"}, 0);
    auto [edges, values] = steps(r);
    return std::make_unique<StepMap>(std::move(edges), std::move(values));
  }
  if (state.kind == "bbq") {
    r.expect({}, {}, -1);
    if (state.parts.empty()) r.fail("a \"bbq\" state has at least one part");
    std::vector<std::vector<double>> edges, values;
    std::vector<double> weights;
    double total = 0.0;
    for (std::size_t j = 0; j < state.parts.size(); ++j) {
      const StateReader part(state.parts[j], r.part(j));
      if (state.parts[j].kind != "weighted_steps") part.fail("expected a \"weighted_steps\" part");
      part.expect({"weight"}, {"edges", "values"}, 0);
      auto [e, v] = steps(part);
      edges.push_back(std::move(e));
      values.push_back(std::move(v));
      weights.push_back(part.positive("weight"));
      total += weights.back();
    }
    if (std::fabs(total - 1.0) > 1e-9) r.fail("the parts' weights must sum to 1");
    return bbq_map(std::move(edges), std::move(values), std::move(weights));
  }
  if (state.kind == "scaling_binning") {
    r.expect({}, {"edges", "values"}, 1);
    auto [edges, values] = steps(r);
    return scaling_binning_map(restore_binary_map(state.parts[0], r.part(0)), std::move(edges),
                               std::move(values));
  }
  r.fail("unknown binary map \"" + state.kind +
         "\": expected logit_linear, probability_linear, logit_quadratic, beta, isotonic, "
         "venn_abers, smoothing_spline, cdf_spline, steps, bbq or scaling_binning");
}

std::unique_ptr<const CalibrationModel> restore_model(const FittedState& state,
                                                      const std::string& where) {
  const StateReader r(state, where);
  if (state.kind == "temperature") {
    r.expect({"temperature"}, {}, 0);
    return std::make_unique<TemperatureModel>(r.positive("temperature"));
  }
  if (state.kind == "logit_affine") {
    r.expect({}, {"weights", "bias"}, 0);
    const std::size_t K = state.array("bias").size();
    if (K < 2) r.fail("bias must have K >= 2 values");
    LogitScalingParameters p;
    p.classes = K;
    p.weights = r.array("weights", K * K);
    p.bias = r.array("bias", K);
    return std::make_unique<LogitScalingModel>(std::move(p));
  }
  if (state.kind == "ensemble_temperature") {
    r.expect({"temperature"}, {"weights"}, 0);
    const auto& w = r.unit_array("weights", 3);
    if (std::fabs(w[0] + w[1] + w[2] - 1.0) > 1e-9) r.fail("weights must sum to 1");
    return ensemble_temperature_model(r.positive("temperature"), {w[0], w[1], w[2]});
  }
  if (state.kind == "one_vs_rest") {
    r.expect({}, {}, -1);
    if (state.parts.size() < 2) r.fail("a \"one_vs_rest\" state has a part per class, K >= 2");
    std::vector<std::unique_ptr<const BinaryMap>> maps;
    for (std::size_t j = 0; j < state.parts.size(); ++j)
      maps.push_back(restore_binary_map(state.parts[j], r.part(j)));
    return one_vs_rest_model(std::move(maps));
  }
  if (state.kind == "binary") {
    r.expect({}, {}, 1);
    return binary_model(restore_binary_map(state.parts[0], r.part(0)));
  }
  if (state.kind == "top_label") {
    r.expect({}, {}, 1);
    return top_label_model(restore_binary_map(state.parts[0], r.part(0)));
  }
  if (state.kind == "classwise") {
    r.expect({}, {}, -1);
    if (state.parts.size() < 2) r.fail("a \"classwise\" state has a part per class, K >= 2");
    std::vector<std::unique_ptr<const CalibrationModel>> models;
    for (std::size_t j = 0; j < state.parts.size(); ++j) {
      if (state.parts[j].kind == "identity") {
        StateReader(state.parts[j], r.part(j)).expect({}, {}, 0);
        models.emplace_back();
      } else {
        models.push_back(restore_model(state.parts[j], r.part(j)));
      }
    }
    if (std::none_of(models.begin(), models.end(), [](const auto& m) { return m != nullptr; }))
      r.fail("a \"classwise\" state has at least one fitted class");
    return classwise_model(std::move(models));
  }
  if (state.kind == "top_label_reduced") {
    r.expect({}, {}, 1);
    return top_label_reduced_model(restore_model(state.parts[0], r.part(0)));
  }
  if (state.kind == "kernel") {
    r.expect({"bandwidth"}, {"p", "labels"}, 0);
    const double bandwidth = r.positive("bandwidth");
    const std::size_t n = state.array("labels").size();
    if (n == 0 || state.array("p").size() % n != 0 || state.array("p").size() / n < 2)
      r.fail("p must hold K >= 2 values per label");
    const std::size_t K = state.array("p").size() / n;
    const auto& p = r.unit_array("p", n * K);
    const auto& labels = r.array("labels", n);
    std::vector<std::uint32_t> y(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (!(labels[i] >= 0.0 && labels[i] < static_cast<double>(K)) ||
          labels[i] != std::floor(labels[i]))
        r.fail("labels must be integers in [0, K)");
      y[i] = static_cast<std::uint32_t>(labels[i]);
    }
    return kernel_model(bandwidth, K, p, std::move(y));
  }
  if (state.kind == "laplace_mixture") {
    r.expect({"epsilon"}, {}, 1);
    const double epsilon = r.scalar("epsilon");
    if (!(epsilon >= 0.0 && epsilon <= 1.0)) r.fail("epsilon must lie in [0, 1]");
    return laplace_mixture_model(restore_model(state.parts[0], r.part(0)), epsilon);
  }
  if (state.kind == "structured_scaling") {
    r.expect({}, {}, 2);
    return structured_scaling_model(restore_model(state.parts[0], r.part(0)),
                                    restore_model(state.parts[1], r.part(1)));
  }
  if (state.kind == "xgboost") {
    r.expect({"classes"}, {}, -1);
    const auto K = static_cast<std::size_t>(whole(r, "classes", r.scalar("classes"), 2, 100000));
    if (state.parts.empty()) r.fail("an \"xgboost\" state has at least one booster");
    const std::size_t groups = K == 2 ? 1 : K, columns = K == 2 ? 1 : K;
    std::vector<BoostedTrees> boosters;
    for (std::size_t j = 0; j < state.parts.size(); ++j) {
      const StateReader b(state.parts[j], r.part(j));
      if (state.parts[j].kind != "boosted_trees") b.fail("expected a \"boosted_trees\" part");
      b.expect({"base_margin", "groups"}, {}, -1);
      if (whole(b, "groups", b.scalar("groups"), 1, 100000) != static_cast<long>(groups))
        b.fail("groups must be " + std::to_string(groups) + " for K = " + std::to_string(K));
      BoostedTrees trees;
      trees.groups = groups;
      trees.base_margin = static_cast<float>(b.scalar("base_margin"));
      if (static_cast<double>(trees.base_margin) != b.scalar("base_margin"))
        b.fail("base_margin must be a float32 number");
      for (std::size_t t = 0; t < state.parts[j].parts.size(); ++t)
        trees.trees.push_back(
            boosted_tree(StateReader(state.parts[j].parts[t], b.part(t)), groups, columns));
      boosters.push_back(std::move(trees));
    }
    return xgboost_model(K, std::move(boosters));
  }
  r.fail("unknown model \"" + state.kind +
         "\": expected temperature, logit_affine, ensemble_temperature, one_vs_rest, binary, "
         "top_label, classwise, top_label_reduced, kernel, laplace_mixture, "
         "structured_scaling or xgboost");
}

}  // namespace calbench
