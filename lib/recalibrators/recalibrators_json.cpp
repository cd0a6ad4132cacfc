// Registry rows of the recalibration methods: parameters, documentation and construction from
// a method object {"name": ..., PARAMS...}.
#include "recalibrators/recalibrators_json.hpp"

#include <memory>

#include "config/registry.hpp"
#include "core/format.hpp"
#include "estimators/binning.hpp"
#include "recalibrators/bbq.hpp"
#include "recalibrators/classwise.hpp"
#include "recalibrators/ensemble_temperature.hpp"
#include "recalibrators/histogram_binning.hpp"
#include "recalibrators/isotonic.hpp"
#include "recalibrators/logistic_calibration.hpp"
#include "recalibrators/logit_scaling.hpp"
#include "recalibrators/one_vs_rest.hpp"
#include "recalibrators/scaling_binning.hpp"
#include "recalibrators/temperature_scaling.hpp"
#include "recalibrators/top_label_reduced.hpp"

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

// Penalties: a number >= 0.
bool non_negative(double x) {
  return x >= 0.0;
}

const std::vector<Choice<ScoreBinning>> binning_choices = {
    {"equal_width", ScoreBinning::equal_width}, {"equal_mass", ScoreBinning::equal_mass}};

constexpr double bbq_prior_strength = 2.0;

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
  if (strength != bbq_prior_strength) out.label = "bbq_n" + format_double(strength);
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
std::optional<MethodConfig> build_top_label_reduced(Args& a) {
  const auto inner = a.get<MethodConfig>("method");
  auto out = plain(a, std::make_shared<TopLabelReduced>(inner.method));
  out.label = "top_label_reduced(" + inner.label + ")";
  return out;
}

const char* const ovr =
    "One-vs-rest: a binary map per class on (p_k, 1{y=k}); q_k = g_k(p_k)/sum_j g_j(p_j),\n"
    "a zero row uniform (scikit-learn's convention).";
const char* const top =
    "Top label: a binary map g on (max p, 1{y = argmax p}); q_top = g(max p), the others\n"
    "scaled by (1 - q_top)/(1 - max p). The argmax can change.";

RecalibratorEntry row(std::string summary, std::vector<Param> params, std::string example,
                      std::string convention, std::optional<MethodConfig> (*build)(Args&)) {
  return {{},
          std::move(summary),
          std::move(params),
          std::move(example),
          {{"convention", std::move(convention)}},
          build};
}

}  // namespace

RecalibratorEntry temperature_recalibrator() {
  return row("temperature scaling (Guo et al. 2017): q = softmax(log p / T), T by NLL", {}, "{}",
             "Newton on log(1/T) with a bisection safeguard, to a step below 1e-9; T in [1e-3, "
             "1e3]\n(separable data gives the bound). Logits are log p, p clamped at 2.2e-308. "
             "Needs 2 classes present.",
             build_temperature);
}

RecalibratorEntry vector_recalibrator() {
  return row("vector scaling (Guo et al. 2017): q = softmax(a * log p + b), by NLL", {}, "{}",
             "L-BFGS (LBFGSpp) with analytic gradients on standardised logits, from a = 1, b = 0;\n"
             "stops at gradient norm 1e-6 or a 1e-9 relative objective change over 10 steps. n "
             ">= 2K.",
             build_vector);
}

RecalibratorEntry matrix_recalibrator() {
  return row("matrix scaling (Guo et al. 2017): q = softmax(W log p + b), by NLL, no penalty", {},
             "{}",
             "L-BFGS from W = I, b = 0. Needs n >= K^2 + K. Same model as dirichlet (logits = log "
             "p).",
             build_matrix);
}

RecalibratorEntry dirichlet_recalibrator() {
  return row(
      "Dirichlet calibration with ODIR (Kull et al. 2019): q = softmax(W log p + b)",
      {param::number("lambda", 0.01, non_negative, ">= 0",
                     "off-diagonal penalty: lambda/(K(K-1)) sum W_ij^2"),
       param::number("mu", 0.01, non_negative, ">= 0", "intercept penalty: mu/K sum b_j^2")},
      R"({"lambda": 0.1, "mu": 0.1})",
      "Mean NLL + the ODIR penalty, L-BFGS from W = I, b = 0. The paper tunes lambda and mu by\n"
      "cross-validation; here they are parameters (sweepable). Needs n >= the unpenalised\n"
      "parameters (K with both penalties > 0).",
      build_dirichlet);
}

RecalibratorEntry platt_recalibrator() {
  return row("Platt scaling one-vs-rest: sigma(a logit(p_k) + c) with Platt's smoothed targets", {},
             "{}",
             std::string(ovr) +
                 "\nTargets (N+ + 1)/(N+ + 2) and 1/(N- + 2) (Platt 1999): the fit always exists.",
             build_platt);
}

RecalibratorEntry logistic_recalibrator() {
  return row("logistic calibration one-vs-rest: sigma(a logit(p_k) + c) by maximum likelihood", {},
             "{}",
             std::string(ovr) +
                 "\nA class separable by its score (or absent) has no MLE: "
                 "DomainError.",
             build_logistic);
}

RecalibratorEntry beta_recalibrator() {
  return row("beta calibration one-vs-rest (Kull et al. 2017): sigma(a log s - b log(1-s) + c)", {},
             "{}",
             std::string(ovr) +
                 "\na, b >= 0: a negative one is set to 0 and the fit repeated (betacal). Scores\n"
                 "clipped to [2^-52, 1 - 2^-52]. Separable classes: DomainError.",
             build_beta);
}

RecalibratorEntry isotonic_recalibrator() {
  return row(
      "isotonic regression one-vs-rest (pool-adjacent-violators)", {}, "{}",
      std::string(ovr) +
          "\nscikit-learn's conventions (reproduced to 1e-9): scores within 1e-15 pooled, linear\n"
          "interpolation between fitted scores, clipped outside their range.",
      build_isotonic);
}

RecalibratorEntry histogram_binning_recalibrator() {
  return row("histogram binning one-vs-rest (Zadrozny & Elkan 2001): mean outcome per score bin",
             {param::at_most(param::integer("bins", 1, 10, "the number of bins B"), max_bins),
              param::choice("binning", binning_choices, ScoreBinning::equal_mass, "bin edges")},
             R"({"bins": 15, "binning": "equal_width"})",
             std::string(ovr) +
                 "\nEqual-mass edges: midpoints between array_split parts (Kumar et al.'s "
                 "package);\nbins right-closed; an empty bin maps to its midpoint.",
             build_histogram_binning);
}

RecalibratorEntry bbq_recalibrator() {
  return row("Bayesian binning into quantiles (Naeini et al. 2015), top label",
             {param::positive("prior_strength", bbq_prior_strength,
                              "N', the Beta prior's equivalent sample size")},
             R"({"prior_strength": 4})",
             std::string(top) +
                 "\nModels B = ceil(n^(1/3)/10) .. floor(10 n^(1/3)) equal-mass bins, Beta prior "
                 "per\nbin centred on its midpoint, averaged by marginal likelihood.",
             build_bbq);
}

RecalibratorEntry ensemble_temperature_recalibrator() {
  return row("ensemble temperature scaling (Zhang et al. 2020): w1 softmax(z/T) + w2 p + w3/K", {},
             "{}",
             "T by temperature scaling, then the weights by maximum likelihood (EM for mixture\n"
             "proportions; the paper's experiments use a squared loss).",
             build_ensemble_temperature);
}

RecalibratorEntry scaling_binning_recalibrator() {
  return row(
      "scaling-binning (Kumar et al. 2019), top label: Platt, then equal-mass bins of its outputs",
      {param::at_most(param::integer("bins", 1, 10, "the number of bins B"), max_bins)},
      R"({"bins": 15})",
      std::string(top) +
          "\nEach bin outputs the mean of the Platt outputs in it; one fit sample for all\n"
          "three steps, as the authors' package does.",
      build_scaling_binning);
}

RecalibratorEntry classwise_recalibrator() {
  return row("wrapper: one model of `method` per predicted class (Panchenko et al. 2021)",
             {method_param()}, R"({"method": {"name": "histogram_binning", "bins": 5}})",
             "Each fitted on the rows predicted as its class; a class that cannot be fitted keeps "
             "p.",
             build_classwise);
}

RecalibratorEntry top_label_reduced_recalibrator() {
  return row("wrapper: `method` fitted on the top label's binary problem (Panchenko et al. 2021)",
             {method_param()}, R"({"method": {"name": "platt"}})",
             "Rows (1 - max p, max p), label 1 when argmax p = y; q_top from the binary model, "
             "the\nothers rescaled.",
             build_top_label_reduced);
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
