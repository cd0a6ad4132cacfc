// Registry row of the estimator `cross_fitted_ce`. It lives beside its recalibrators, one layer
// above lib/estimators, because it fits them; the estimator table (estimators_json.cpp) names
// this function as it names the rows of every other *_json.cpp file.
#include <memory>

#include "config/registry.hpp"
#include "core/error.hpp"
#include "estimators/estimators_json.hpp"
#include "recalibrators/cross_fitted_error.hpp"
#include "recalibrators/recalibrators_json.hpp"

namespace calbench {
namespace {

enum class RefitMethod { temperature, isotonic };

const std::vector<Choice<RefitMethod>> refit_method_choices = {
    {"temperature", RefitMethod::temperature}, {"isotonic", RefitMethod::isotonic}};
const std::vector<Choice<RefitLoss>> refit_loss_choices = {{"nll", RefitLoss::nll},
                                                           {"brier", RefitLoss::brier}};

std::optional<EstimatorConfig> build_cross_fitted(Args& a) {
  auto shown = [&](std::string_view key) { return std::get<std::string>(a.shown(key).data); };
  // The method as the recalibrator table builds it with its defaults (temperature scaling;
  // one-vs-rest isotonic regression, rows renormalised).
  Problems problems;
  Json resolved;
  const auto method =
      parse_recalibration_method(Json{{"name", shown("method")}}, "/method", problems, resolved);
  if (!method) throw DomainError("cross_fitted_ce: cannot build method " + shown("method"));
  CrossFittedSpec spec{.method = method->method,
                       .loss = a.get<RefitLoss>("loss"),
                       .folds = static_cast<std::size_t>(a.get<std::int64_t>("folds")),
                       .mixture = a.get<bool>("mixture")};
  EstimatorConfig out;
  out.label = "cross_fitted_ce_" + shown("method") + "_" + shown("loss");
  if (spec.folds != 5) out.label += "_k" + std::to_string(spec.folds);
  if (!spec.mixture) out.label += "_nomix";
  out.params = a.shown();
  out.estimator = std::make_shared<CrossFittedError>(std::move(spec));
  return out;
}

}  // namespace

EstimatorEntry cross_fitted_ce_estimator() {
  return {
      .summary =
          "cross-fitted (variational) calibration error of probmetrics: loss(f) - "
          "loss(g o f), g a recalibrator fitted on the other folds",
      .params = {param::choice("method", refit_method_choices, RefitMethod::temperature,
                               "the recalibrator g: temperature scaling or one-vs-rest isotonic "
                               "(as `calbench list recalibrators` describes them)"),
                 param::choice("loss", refit_loss_choices, RefitLoss::nll,
                               "the proper loss: NLL or the Brier score (sum over classes)"),
                 param::at_most(param::integer("folds", 2, 5, "k, the number of folds"), 100),
                 param::boolean("mixture", true,
                                "mix g's output with the uniform vector, weight 1/(m + 1) for m "
                                "training rows (probmetrics' -mix calibrators)")},
      .example = R"({"method": "isotonic", "loss": "brier", "folds": 3})",
      .notes =
          {{"target",
            R"(none: its own, the loss improvement under the true calibration function,
E L(p, y) - E L(r(p), y) (canonical_l2^2 for brier, E KL(r(p) || p) for nll), computed by the
truth engine with c in place of r(p) (exact for injective maps, an upper bound otherwise))"},
           {"convention",
            R"(Row i in fold i mod k; g fitted on the other folds by the named recalibrator with its
defaults, applied to the held-out fold; value (1/n) sum_i [L(p_i, y_i) - L(g(p_i), y_i)].
With mixture, q <- (1 - w) q + w/K, w = 1/(m + 1), m training rows (probmetrics' ts-mix and
isotonic-mix). NLL floors q_y at DBL_MIN. A fold whose fit fails (one class in its training
part) adds 0. probmetrics uses 5 random stratified folds and its own calibrators, so values
differ from calbench's by the fits.)"}},
      .build = build_cross_fitted,
      .extra = {.cost = Cost::refit, .interval = IntervalMethod::bca}};
}

}  // namespace calbench
