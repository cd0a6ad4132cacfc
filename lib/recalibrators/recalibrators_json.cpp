// Registry rows of the recalibration methods: parameters, documentation and construction from
// a method object {"name": ..., PARAMS...}.
#include "recalibrators/recalibrators_json.hpp"

#include <memory>

#include "config/registry.hpp"
#include "core/format.hpp"
#include "estimators/binning.hpp"
#include "recalibrators/bbq.hpp"
#include "recalibrators/cdf_spline.hpp"
#include "recalibrators/centred_isotonic.hpp"
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
#include "recalibrators/subsample.hpp"
#include "recalibrators/temperature_scaling.hpp"
#include "recalibrators/top_label_reduced.hpp"
#include "recalibrators/venn_abers.hpp"
#include "recalibrators/xgboost_calibration.hpp"

namespace calbench {
namespace {

// Nesting of wrappers (classwise of top_label_reduced of ...) beyond this is surely a mistake.
constexpr int max_depth = 4;

MethodConfig plain(const Args& a, std::shared_ptr<const Recalibrator> method) {
  MethodConfig out;
  out.label = a.name();
  out.params = a.shown();
  out.method = std::move(method);
  return out;
}

std::shared_ptr<const Recalibrator> one_vs_rest(const Args& a,
                                                std::shared_ptr<const BinaryCalibrator> binary) {
  return std::make_shared<OneVsRest>(a.name(), std::move(binary));
}

std::shared_ptr<const Recalibrator> logistic(const Args& a, LogisticKind kind) {
  return one_vs_rest(a, std::make_shared<LogisticCalibrator>(kind));
}

// scikit-learn's CalibratedClassifierCV rule (probmetrics' too): one map on p_1 when K = 2.
std::shared_ptr<const Recalibrator> binary_or_one_vs_rest(
    const Args& a, std::shared_ptr<const BinaryCalibrator> binary) {
  return std::make_shared<OneVsRest>(a.name(), std::move(binary), TwoClasses::single_map);
}

// Penalties: a number >= 0.
bool non_negative(double x) {
  return x >= 0.0;
}

// Named as the estimators' binnings (estimators/binning.hpp), whose conventions they follow.
const std::vector<Choice<ScoreBinning>> binning_choices = {
    {to_string(Binning::equal_width), ScoreBinning::equal_width},
    {to_string(Binning::equal_mass), ScoreBinning::equal_mass}};

std::optional<MethodConfig> build_temperature(Args& a) {
  return plain(a, std::make_shared<TemperatureScaling>());
}
std::optional<MethodConfig> build_vector(Args& a) {
  return plain(
      a, std::make_shared<LogitScaling>(a.name(), LogitScalingSpec{LogitScalingForm::vector}));
}
std::optional<MethodConfig> build_matrix(Args& a) {
  return plain(
      a, std::make_shared<LogitScaling>(a.name(), LogitScalingSpec{LogitScalingForm::matrix}));
}
std::optional<MethodConfig> build_dirichlet(Args& a) {
  const double lambda = a.get<double>("lambda"), mu = a.get<double>("mu");
  auto out = plain(a, std::make_shared<LogitScaling>(
                          a.name(), LogitScalingSpec{LogitScalingForm::matrix, lambda, mu}));
  out.label = "dirichlet_l" + format_double(lambda) + "_m" + format_double(mu);
  return out;
}
std::optional<MethodConfig> build_platt(Args& a) {
  return plain(a, logistic(a, LogisticKind::platt));
}
std::optional<MethodConfig> build_logistic(Args& a) {
  return plain(a, logistic(a, LogisticKind::logistic));
}
std::optional<MethodConfig> build_beta(Args& a) {
  return plain(a, logistic(a, LogisticKind::beta));
}
std::optional<MethodConfig> build_isotonic(Args& a) {
  return plain(a, one_vs_rest(a, std::make_shared<IsotonicCalibrator>()));
}
std::optional<MethodConfig> build_histogram_binning(Args& a) {
  const auto bins = a.get<std::int64_t>("bins");
  const auto binning = a.get<ScoreBinning>("binning");
  auto out = plain(a, one_vs_rest(a, std::make_shared<HistogramBinning>(
                                         static_cast<std::size_t>(bins), binning)));
  out.label = std::string("histogram_binning_") +
              (binning == ScoreBinning::equal_mass ? "em" : "ew") + std::to_string(bins);
  return out;
}
std::optional<MethodConfig> build_bbq(Args& a) {
  const double strength = a.get<double>("prior_strength");
  auto out =
      plain(a, std::make_shared<TopLabel>(a.name(), std::make_shared<BbqCalibrator>(strength)));
  if (strength != bbq_default_prior_strength) out.label = "bbq_n" + format_double(strength);
  return out;
}
std::optional<MethodConfig> build_ensemble_temperature(Args& a) {
  return plain(a, std::make_shared<EnsembleTemperature>());
}
std::optional<MethodConfig> build_scaling_binning(Args& a) {
  const auto bins = a.get<std::int64_t>("bins");
  auto out =
      plain(a, std::make_shared<TopLabel>(
                   a.name(), std::make_shared<ScalingBinning>(static_cast<std::size_t>(bins))));
  out.label = "scaling_binning_" + std::to_string(bins);
  return out;
}

std::optional<MethodConfig> build_platt_probability(Args& a) {
  return plain(a, binary_or_one_vs_rest(
                      a, std::make_shared<LogisticCalibrator>(LogisticKind::platt_probability)));
}
std::optional<MethodConfig> build_quadratic(Args& a) {
  return plain(
      a, binary_or_one_vs_rest(a, std::make_shared<LogisticCalibrator>(LogisticKind::quadratic)));
}
std::optional<MethodConfig> build_centred_isotonic(Args& a) {
  return plain(a, binary_or_one_vs_rest(a, std::make_shared<CentredIsotonicCalibrator>()));
}
std::optional<MethodConfig> build_venn_abers(Args& a) {
  return plain(a, binary_or_one_vs_rest(a, std::make_shared<VennAbersCalibrator>()));
}
std::optional<MethodConfig> build_kernel(Args& a) {
  const auto bandwidth = a.get<std::optional<double>>("bandwidth");
  auto out = plain(a, std::make_shared<KernelCalibration>(bandwidth));
  if (bandwidth) out.label.append("_b").append(format_double(*bandwidth));
  return out;
}
std::optional<MethodConfig> build_smoothing_spline(Args& a) {
  const auto lambda = a.get<std::optional<double>>("lambda");
  auto out =
      plain(a, binary_or_one_vs_rest(a, std::make_shared<SmoothingSplineCalibrator>(lambda)));
  if (lambda) out.label.append("_l").append(format_double(*lambda));
  return out;
}

// The authors' default (recalibrate.py: splines = 6, runout "natural").
constexpr std::int64_t cdf_spline_knots = 6;

std::optional<MethodConfig> build_cdf_spline(Args& a) {
  const auto knots = a.get<std::int64_t>("knots");
  auto out = plain(a, std::make_shared<TopLabel>(a.name(), std::make_shared<CdfSplineCalibrator>(
                                                               static_cast<std::size_t>(knots))));
  if (knots != cdf_spline_knots) out.label += "_" + std::to_string(knots);
  return out;
}

// CalArena's booster (probmetrics' XGBoostCalibrator): xgb.train's 10 rounds, max_depth 3,
// XGBoost's learning rate 0.3, StratifiedKFold's 5 folds.
const XgboostSettings xgboost_defaults;

std::optional<MethodConfig> build_xgboost(Args& a) {
  XgboostSettings s;
  s.rounds = static_cast<std::size_t>(a.get<std::int64_t>("rounds"));
  s.max_depth = static_cast<std::size_t>(a.get<std::int64_t>("max_depth"));
  s.learning_rate = a.get<double>("learning_rate");
  s.folds = static_cast<std::size_t>(a.get<std::int64_t>("folds"));
  auto out = plain(a, std::make_shared<XgboostCalibration>(s));
  if (s.rounds != xgboost_defaults.rounds) out.label += "_r" + std::to_string(s.rounds);
  if (s.max_depth != xgboost_defaults.max_depth) out.label += "_d" + std::to_string(s.max_depth);
  if (s.learning_rate != xgboost_defaults.learning_rate)
    out.label += "_lr" + format_double(s.learning_rate);
  if (s.folds != xgboost_defaults.folds) out.label += "_f" + std::to_string(s.folds);
  return out;
}

// probmetrics' default strengths (svs_lambda_*, sms_lambda_*).
constexpr double structured_lambda = 1.0;

std::optional<MethodConfig> build_structured(Args& a, LogitScalingForm form) {
  StructuredPenalty penalty;
  penalty.intercept = a.get<double>("lambda_intercept");
  penalty.diagonal = a.get<double>("lambda_diagonal");
  if (form == LogitScalingForm::matrix) penalty.off_diagonal = a.get<double>("lambda_off_diagonal");
  auto out = plain(a, std::make_shared<StructuredScaling>(a.name(), form, penalty));
  const bool defaults = penalty.intercept == structured_lambda &&
                        penalty.diagonal == structured_lambda &&
                        penalty.off_diagonal == structured_lambda;
  if (!defaults) {
    out.label += "_b" + format_double(penalty.intercept) + "_d" + format_double(penalty.diagonal);
    if (form == LogitScalingForm::matrix) out.label += "_o" + format_double(penalty.off_diagonal);
  }
  return out;
}
std::optional<MethodConfig> build_svs(Args& a) {
  return build_structured(a, LogitScalingForm::vector);
}
std::optional<MethodConfig> build_sms(Args& a) {
  return build_structured(a, LogitScalingForm::matrix);
}

// A wrapper's `method` object, parsed by the same rows; shown by its label.
bool read_inner(Args& a) {
  ObjectReader& entry = a.reader();
  const Json* value = entry.require("method", "a method object {\"name\": ..., ...}");
  if (value == nullptr) return false;
  if (a.depth() >= max_depth) {
    entry.problems().add(entry.pointer_to("method"),
                         "wrappers nested more than " + std::to_string(max_depth) + " deep");
    return false;
  }
  Json resolved;
  auto inner = parse_registry_entry(*value, entry.pointer_to("method"), entry.problems(), resolved,
                                    "recalibration method", recalibrator_registry(), a.depth() + 1);
  entry.set_resolved("method", std::move(resolved));
  if (!inner) return false;
  a.set("method", *inner, Value(inner->label));
  return true;
}

Param method_param() {
  return param::custom("method", "object", "required", "a method object", "the wrapped method",
                       read_inner, {Json(1.5), Json::object()});
}

std::optional<MethodConfig> build_classwise(Args& a) {
  const auto inner = a.get<MethodConfig>("method");
  auto out = plain(a, std::make_shared<Classwise>(inner.method));
  out.label = "classwise(" + inner.label + ")";
  return out;
}
// probmetrics' cal_mixture_output_constant.
constexpr double laplace_constant = 1.0;

std::optional<MethodConfig> build_laplace_mixture(Args& a) {
  const auto inner = a.get<MethodConfig>("method");
  const double constant = a.get<double>("constant");
  auto out = plain(a, std::make_shared<LaplaceMixture>(inner.method, constant));
  out.label = "laplace_mixture" +
              (constant == laplace_constant ? std::string() : "_c" + format_double(constant)) +
              "(" + inner.label + ")";
  return out;
}
std::optional<MethodConfig> build_subsample(Args& a) {
  const auto inner = a.get<MethodConfig>("method");
  const auto rows = static_cast<std::size_t>(a.get<std::int64_t>("rows"));
  auto out = plain(a, std::make_shared<Subsample>(inner.method, rows));
  out.label = "subsample_" + std::to_string(rows) + "(" + inner.label + ")";
  return out;
}
std::optional<MethodConfig> build_top_label_reduced(Args& a) {
  const auto inner = a.get<MethodConfig>("method");
  auto out = plain(a, std::make_shared<TopLabelReduced>(inner.method));
  out.label = "top_label_reduced(" + inner.label + ")";
  return out;
}

const char* const ovr =
    R"(One-vs-rest: a binary map per class on (p_k, 1{y=k}); q_k = g_k(p_k)/sum_j g_j(p_j),
a zero row uniform (scikit-learn's convention).)";
const char* const top =
    R"(Top label: a binary map g on (max p, 1{y = argmax p}); q_top = g(max p), the others
scaled by (1 - q_top)/(1 - max p). The argmax can change.)";

RecalibratorEntry row(std::string summary, std::vector<Param> params, std::string example,
                      std::string convention, std::optional<MethodConfig> (*build)(Args&)) {
  return {.summary = std::move(summary),
          .params = std::move(params),
          .example = std::move(example),
          .notes = {{"convention", std::move(convention)}},
          .build = build};
}

}  // namespace

RecalibratorEntry temperature_recalibrator() {
  return row(
      "temperature scaling (Guo et al. 2017): q = softmax(log p / T), T by NLL", {}, "{}",
      R"(Newton on log(1/T) with a bisection safeguard, to a step below 1e-9; T in [1e-3, 1e3]
(separable data gives the bound). Logits are log p, p clamped at 2.2e-308. Needs 2 classes present.)",
      build_temperature);
}

RecalibratorEntry vector_recalibrator() {
  return row("vector scaling (Guo et al. 2017): q = softmax(a * log p + b), by NLL", {}, "{}",
             R"(L-BFGS (LBFGSpp) with analytic gradients on standardised logits, from a = 1, b = 0;
stops at gradient norm 1e-6 or a 1e-9 relative objective change over 10 steps. n >= 2K.)",
             build_vector);
}

RecalibratorEntry matrix_recalibrator() {
  return row(
      "matrix scaling (Guo et al. 2017): q = softmax(W log p + b), by NLL, no penalty", {}, "{}",
      R"(L-BFGS from W = I, b = 0. Needs n >= K^2 + K. Same model as dirichlet (logits = log p).)",
      build_matrix);
}

RecalibratorEntry dirichlet_recalibrator() {
  return row(
      "Dirichlet calibration with ODIR (Kull et al. 2019): q = softmax(W log p + b)",
      {param::number("lambda", 0.01, non_negative, ">= 0",
                     "off-diagonal penalty: lambda/(K(K-1)) sum W_ij^2"),
       param::number("mu", 0.01, non_negative, ">= 0", "intercept penalty: mu/K sum b_j^2")},
      R"({"lambda": 0.1, "mu": 0.1})",
      R"(Mean NLL + the ODIR penalty, L-BFGS from W = I, b = 0. The paper tunes lambda and mu by
cross-validation; here they are parameters (sweepable). Needs n >= the unpenalised
parameters (K with both penalties > 0).)",
      build_dirichlet);
}

RecalibratorEntry platt_recalibrator() {
  return row("Platt scaling one-vs-rest: sigma(a logit(p_k) + c) with Platt's smoothed targets", {},
             "{}",
             std::string(ovr) +
                 R"(
Targets (N+ + 1)/(N+ + 2) and 1/(N- + 2) (Platt 1999): the fit always exists.)",
             build_platt);
}

RecalibratorEntry logistic_recalibrator() {
  return row("logistic calibration one-vs-rest: sigma(a logit(p_k) + c) by maximum likelihood", {},
             "{}",
             std::string(ovr) +
                 R"(
A class separable by its score (or absent) has no MLE: DomainError.)",
             build_logistic);
}

RecalibratorEntry beta_recalibrator() {
  return row("beta calibration one-vs-rest (Kull et al. 2017): sigma(a log s - b log(1-s) + c)", {},
             "{}",
             std::string(ovr) +
                 R"(
a, b >= 0: a negative one is set to 0 and the fit repeated (betacal). Scores
clipped to [2^-52, 1 - 2^-52]. Separable classes: DomainError.)",
             build_beta);
}

RecalibratorEntry isotonic_recalibrator() {
  return row("isotonic regression one-vs-rest (pool-adjacent-violators)", {}, "{}",
             std::string(ovr) +
                 R"(
scikit-learn's conventions (reproduced to 1e-9): scores within 1e-15 pooled, linear
interpolation between fitted scores, clipped outside their range.)",
             build_isotonic);
}

RecalibratorEntry histogram_binning_recalibrator() {
  return row("histogram binning one-vs-rest (Zadrozny & Elkan 2001): mean outcome per score bin",
             {param::at_most(param::integer("bins", 1, 10, "the number of bins B"), max_bins),
              param::choice("binning", binning_choices, ScoreBinning::equal_mass, "bin edges")},
             R"({"bins": 15, "binning": "equal_width"})",
             std::string(ovr) +
                 R"(
Equal-mass edges: midpoints between array_split parts (Kumar et al.'s package);
bins right-closed; an empty bin maps to its midpoint.)",
             build_histogram_binning);
}

RecalibratorEntry bbq_recalibrator() {
  return row("Bayesian binning into quantiles (Naeini et al. 2015), top label",
             {param::positive("prior_strength", bbq_default_prior_strength,
                              "N', the Beta prior's equivalent sample size")},
             R"({"prior_strength": 4})",
             std::string(top) +
                 R"(
Models B = ceil(n^(1/3)/10) .. floor(10 n^(1/3)) equal-mass bins, Beta prior per
bin centred on its midpoint, averaged by marginal likelihood.)",
             build_bbq);
}

RecalibratorEntry ensemble_temperature_recalibrator() {
  return row("ensemble temperature scaling (Zhang et al. 2020): w1 softmax(z/T) + w2 p + w3/K", {},
             "{}",
             R"(T by temperature scaling, then the weights by maximum likelihood (EM for mixture
proportions; the paper's experiments use a squared loss).)",
             build_ensemble_temperature);
}

RecalibratorEntry scaling_binning_recalibrator() {
  return row(
      "scaling-binning (Kumar et al. 2019), top label: Platt, then equal-mass bins of its outputs",
      {param::at_most(param::integer("bins", 1, 10, "the number of bins B"), max_bins)},
      R"({"bins": 15})",
      std::string(top) +
          R"(
Each bin outputs the mean of the Platt outputs in it; one fit sample for all
three steps, as the authors' package does.)",
      build_scaling_binning);
}

RecalibratorEntry classwise_recalibrator() {
  return row(
      "wrapper: one model of `method` per predicted class (Panchenko et al. 2021)",
      {method_param()}, R"({"method": {"name": "histogram_binning", "bins": 5}})",
      R"(Each fitted on the rows predicted as its class; a class that cannot be fitted keeps p.)",
      build_classwise);
}

RecalibratorEntry top_label_reduced_recalibrator() {
  return row("wrapper: `method` fitted on the top label's binary problem (Panchenko et al. 2021)",
             {method_param()}, R"({"method": {"name": "platt"}})",
             R"(Rows (1 - max p, max p), label 1 when argmax p = y; q_top from the binary model, the
others rescaled.)",
             build_top_label_reduced);
}

RecalibratorEntry platt_probability_recalibrator() {
  return row("Platt scaling on probabilities, scikit-learn's sigmoid calibration: sigma(a p + c)",
             {}, "{}",
             R"(K = 2: one map on p_1, q = (1 - g(p_1), g(p_1)); K > 2: one-vs-rest, renormalised
(scikit-learn's CalibratedClassifierCV on predict_proba; probmetrics' "platt"). Platt's
targets (N+ + 1)/(N+ + 2), 1/(N- + 2); exact maximum likelihood by Newton (scikit-learn
stops BFGS at a gradient norm of 1e-5).)",
             build_platt_probability);
}

RecalibratorEntry quadratic_recalibrator() {
  return row(
      "quadratic scaling (CalArena): sigma(c + a f + b f^2), f = logit(p), by maximum likelihood",
      {}, "{}",
      R"(K = 2: one map on p_1 (probmetrics' BinaryLogisticCalibrator(type="quadratic"), no
penalty); K > 2: one-vs-rest, renormalised (calbench's extension). b = 0 is logistic
calibration. Separable data (no MLE): DomainError.)",
      build_quadratic);
}

RecalibratorEntry centred_isotonic_recalibrator() {
  return row("centred isotonic regression (Oron & Flournoy 2017; cir-model, CalArena's cir)", {},
             "{}",
             R"(K = 2: one map on p_1; K > 2: one-vs-rest, renormalised. Each flat step of the
isotonic fit becomes one point at its rows' mean score (steps at 0 or 1, and the outer ends
of the first and last steps, keep their end scores); linear interpolation between them,
clamped outside.)",
             build_centred_isotonic);
}

RecalibratorEntry venn_abers_recalibrator() {
  return row("inductive Venn-Abers (Vovk et al. 2015; the venn-abers package, CalArena's ivap)", {},
             "{}",
             R"(K = 2: one map on p_1; K > 2: one-vs-rest, renormalised (the package's one_vs_all).
p0, p1: isotonic fits at s with the row (s, 0) or (s, 1) added; g = p1/(1 - p0 + p1).)",
             build_venn_abers);
}

RecalibratorEntry kernel_recalibrator() {
  return row(
      "kernel calibration: Nadaraya-Watson with the Dirichlet kernel (Beta for K = 2)",
      {param::literal_or_number(
          // As the kde_canonical estimator's bandwidth (estimators_json.cpp): below 1e-5 the
          // log kernel loses digits, above 1e3 it is flat.
          "bandwidth", "loo", [](double x) { return x >= 1e-5 && x <= 1e3; }, "in [1e-5, 1e3]",
          "b: the smallest leave-one-out log loss of the fit labels over kde_canonical's grid, "
          "or fixed")},
      R"({"bandwidth": 0.05})",
      R"(q(p) = sum_j Dir(p; p_j/b + 1) e_{y_j} / sum_j Dir(p; p_j/b + 1) over the fit rows
(Popordanoska et al. 2022's kernel). The bandwidth search costs O(n^2 (K + 20)), applying
O(n K) per row; the model keeps the fit rows.)",
      build_kernel);
}

RecalibratorEntry smoothing_spline_recalibrator() {
  return row(
      "smoothing-spline calibration (Lucena 2018; splinecalib's SplineCalib, CalArena's spline)",
      {param::literal_or_number(
          "lambda", "cv", [](double x) { return x >= 0.0 && x <= 1e8; }, "in [0, 1e8]",
          "ridge strength: chosen on a held-out fifth over logspace(-4, 4, 17), or fixed")},
      R"({"lambda": 0.1})",
      R"(K = 2: one map on p_1; K > 2: one-vs-rest, renormalised. Penalised logistic regression on
a natural cubic spline basis of the log-odds: 30 knots at distinct scores plus 0.1..0.9, a
unity prior of 20 synthetic rows on y = x, lambda/d ||beta||^2.)",
      build_smoothing_spline);
}

RecalibratorEntry cdf_spline_recalibrator() {
  return row(
      "spline calibration (Gupta et al. 2021), top label: the slope of a spline fit to the KS "
      "curve",
      {param::at_most(param::integer("knots", 3, cdf_spline_knots, "equally spaced spline knots"),
                      100)},
      R"({"knots": 8})",
      std::string(top) +
          R"(
A natural cubic spline, least squares, fitted to cumulative (accuracy - score) over the
sorted fit fraction; g(s_i) = its slope + s_i, interpolated linearly, clipped to [0, 1].)",
      build_cdf_spline);
}

RecalibratorEntry svs_recalibrator() {
  return row(
      "structured vector scaling (CalArena): ts-mix, then softmax(a * log q0 + b), ridge to a = 1, "
      "b = 0",
      {param::number("lambda_intercept", structured_lambda, non_negative, ">= 0",
                     "penalty lambda_b K/n sum b_j^2"),
       param::number("lambda_diagonal", structured_lambda, non_negative, ">= 0",
                     "penalty lambda_d K/n sum (a_j - 1)^2")},
      R"({"lambda_intercept": 0.1, "lambda_diagonal": 0.1})",
      R"(Step 1: temperature scaling mixed with uniform, eps = 1/(n + 1) (probmetrics' ts-mix).
Step 2: mean NLL + penalty by L-BFGS from the identity (probmetrics uses torchmin BFGS).)",
      build_svs);
}

RecalibratorEntry sms_recalibrator() {
  return row(
      "structured matrix scaling (CalArena): ts-mix, then softmax(W log q0 + b), ridge to W = I, b "
      "= 0",
      {param::number("lambda_intercept", structured_lambda, non_negative, ">= 0",
                     "penalty lambda_b K/n sum b_j^2"),
       param::number("lambda_diagonal", structured_lambda, non_negative, ">= 0",
                     "penalty lambda_d K/n sum (W_jj - 1)^2"),
       param::number("lambda_off_diagonal", structured_lambda, non_negative, ">= 0",
                     "penalty lambda_o K(K-1)/n sum_{i!=j} W_ij^2")},
      R"({"lambda_off_diagonal": 10})",
      R"(Step 1: temperature scaling mixed with uniform, eps = 1/(n + 1) (probmetrics' ts-mix).
Step 2: mean NLL + penalty by L-BFGS from the identity (probmetrics uses torchmin BFGS).
Infinite penalties give ts-mix.)",
      build_sms);
}

RecalibratorEntry xgboost_recalibrator() {
  const XgboostSettings d;
  return row(
      "gradient-boosted trees on the logits (CalArena's XGBoost calibrator), the mean of a "
      "booster per fold",
      {param::at_most(param::integer("rounds", 1, static_cast<std::int64_t>(d.rounds),
                                     "boosting rounds of each booster"),
                      10000),
       param::at_most(param::integer("max_depth", 1, static_cast<std::int64_t>(d.max_depth),
                                     "the trees' depth"),
                      16),
       param::number(
           "learning_rate", d.learning_rate, [](double x) { return x > 0.0 && x <= 1.0; },
           "in (0, 1]", "XGBoost's eta"),
       param::at_most(param::integer("folds", 1, static_cast<std::int64_t>(d.folds),
                                     "stratified folds, a booster trained on all but each; 1: "
                                     "one booster on every row"),
                      100)},
      R"({"rounds": 20, "folds": 1})",
      R"(XGBoost (Debian's libxgboost, C API), binary:logistic on log p_1 - log(1 - p_1) when K = 2,
multi:softprob on the K log p_k otherwise; logs floored at log(FLT_MIN) as probmetrics does.
tree_method hist, nthread 1, other parameters the library's. K = 2 starts from XGBoost 2's
intercept, one Newton step from 0. Folds: a fixed calbench stream. q = the folds' mean
probability. The model keeps its trees and applies them without XGBoost.)",
      build_xgboost);
}

RecalibratorEntry laplace_mixture_recalibrator() {
  return row(
      "wrapper: (1 - eps) q + eps/K around `method`, eps = constant/(n + 1) (probmetrics' -mix)",
      {method_param(), param::number("constant", laplace_constant, non_negative, ">= 0",
                                     "eps = constant/(n + 1), n the fit rows")},
      R"({"method": {"name": "isotonic"}, "constant": 2})",
      R"(The wrapped method is fitted as usual; its outputs are mixed with the uniform
vector, so no confidence is 0 and the true NLL stays finite.)",
      build_laplace_mixture);
}

RecalibratorEntry subsample_recalibrator() {
  return row(
      "wrapper: `method` fitted on the first `rows` rows of the fit sample (a row cap for costly "
      "methods)",
      {method_param(), param::integer("rows", 1, 10000, "the most fit rows the method sees")},
      R"({"method": {"name": "kernel"}, "rows": 500})",
      R"(The fit rows are independent draws, so their first `rows` are a simple random sample;
all rows when the sample is smaller. The fitted model is the wrapped method's.)",
      build_subsample);
}

// ---- the table ------------------------------------------------------------------------------

// The methods a config can name, in listing order: a new method is its row and a line here.
const std::vector<RecalibratorEntry>& recalibrator_registry() {
  static const std::vector<RecalibratorEntry> rows = {
      named("temperature", temperature_recalibrator()),
      named("vector", vector_recalibrator()),
      named("matrix", matrix_recalibrator()),
      named("dirichlet", dirichlet_recalibrator()),
      named("platt", platt_recalibrator()),
      named("logistic", logistic_recalibrator()),
      named("beta", beta_recalibrator()),
      named("isotonic", isotonic_recalibrator()),
      named("histogram_binning", histogram_binning_recalibrator()),
      named("bbq", bbq_recalibrator()),
      named("ensemble_temperature", ensemble_temperature_recalibrator()),
      named("scaling_binning", scaling_binning_recalibrator()),
      named("classwise", classwise_recalibrator()),
      named("top_label_reduced", top_label_reduced_recalibrator()),
      named("platt_probability", platt_probability_recalibrator()),
      named("quadratic", quadratic_recalibrator()),
      named("centred_isotonic", centred_isotonic_recalibrator()),
      named("venn_abers", venn_abers_recalibrator()),
      named("kernel", kernel_recalibrator()),
      named("smoothing_spline", smoothing_spline_recalibrator()),
      named("cdf_spline", cdf_spline_recalibrator()),
      named("svs", svs_recalibrator()),
      named("sms", sms_recalibrator()),
      named("xgboost", xgboost_recalibrator()),
      named("laplace_mixture", laplace_mixture_recalibrator()),
      named("subsample", subsample_recalibrator()),
  };
  return rows;
}

// ---- the section parser ------------------------------------------------------------------

std::optional<MethodConfig> parse_recalibration_method(const Json& entry,
                                                       const std::string& pointer,
                                                       Problems& problems, Json& resolved) {
  return parse_registry_entry(entry, pointer, problems, resolved, "recalibration method",
                              recalibrator_registry());
}

}  // namespace calbench
