#include "config/recalibration_config.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "config/json_support.hpp"
#include "config/registry.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
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

// Reads a method's parameters (the reader has checked the keys), fills their defaults into
// the reader's resolved copy and builds the method and its default label. `depth` counts the
// wrappers around it.
using MethodParse = std::optional<MethodConfig> (*)(ObjectReader& entry, int depth);

struct RecalibratorEntry {
  std::string name;
  std::string summary;
  std::vector<ParamDoc> params;
  std::string convention;
  MethodParse parse;
};

const std::vector<RecalibratorEntry>& recalibrator_registry();

std::optional<MethodConfig> parse_method(const Json& entry, const std::string& pointer,
                                         Problems& problems, Json& resolved, int depth);

MethodConfig plain(std::string name, std::shared_ptr<const Recalibrator> method) {
  MethodConfig out;
  out.label = name;
  out.name = std::move(name);
  out.method = std::move(method);
  return out;
}

// Penalties: a number >= 0.
constexpr auto non_negative = [](double x) { return x >= 0.0; };

std::shared_ptr<const Recalibrator> one_vs_rest(const char* name,
                                                std::shared_ptr<const BinaryCalibrator> binary) {
  return std::make_shared<OneVsRest>(name, std::move(binary));
}

const std::vector<Choice<ScoreBinning>>& binning_choices() {
  static const std::vector<Choice<ScoreBinning>> choices = {
      {"equal_width", ScoreBinning::equal_width}, {"equal_mass", ScoreBinning::equal_mass}};
  return choices;
}

std::optional<MethodConfig> parse_temperature(ObjectReader&, int) {
  return plain("temperature", std::make_shared<TemperatureScaling>());
}
std::optional<MethodConfig> parse_vector(ObjectReader&, int) {
  return plain("vector", std::make_shared<LogitScaling>(
                             "vector", LogitScalingSpec{LogitScalingForm::vector}));
}
std::optional<MethodConfig> parse_matrix(ObjectReader&, int) {
  return plain("matrix", std::make_shared<LogitScaling>(
                             "matrix", LogitScalingSpec{LogitScalingForm::matrix}));
}
std::optional<MethodConfig> parse_dirichlet(ObjectReader& entry, int) {
  const auto lambda = entry.number("lambda", 0.01, non_negative, ">= 0");
  const auto mu = entry.number("mu", 0.01, non_negative, ">= 0");
  if (!lambda || !mu) return std::nullopt;
  MethodConfig out = plain(
      "dirichlet", std::make_shared<LogitScaling>(
                       "dirichlet", LogitScalingSpec{LogitScalingForm::matrix, *lambda, *mu}));
  out.label = "dirichlet_l" + format_double(*lambda) + "_m" + format_double(*mu);
  out.params = {{"lambda", *lambda}, {"mu", *mu}};
  return out;
}
std::optional<MethodConfig> parse_platt(ObjectReader&, int) {
  return plain("platt",
               one_vs_rest("platt", std::make_shared<LogisticCalibrator>(LogisticKind::platt)));
}
std::optional<MethodConfig> parse_logistic(ObjectReader&, int) {
  return plain(
      "logistic",
      one_vs_rest("logistic", std::make_shared<LogisticCalibrator>(LogisticKind::logistic)));
}
std::optional<MethodConfig> parse_beta(ObjectReader&, int) {
  return plain("beta",
               one_vs_rest("beta", std::make_shared<LogisticCalibrator>(LogisticKind::beta)));
}
std::optional<MethodConfig> parse_isotonic(ObjectReader&, int) {
  return plain("isotonic", one_vs_rest("isotonic", std::make_shared<IsotonicCalibrator>()));
}
std::optional<MethodConfig> parse_histogram_binning(ObjectReader& entry, int) {
  const auto bins = entry.integer("bins", 1, 10);
  const auto binning =
      entry.choice("binning", "binning", binning_choices(), ScoreBinning::equal_mass);
  if (!bins || !binning) return std::nullopt;
  MethodConfig out = plain(
      "histogram_binning",
      one_vs_rest("histogram_binning",
                  std::make_shared<HistogramBinning>(static_cast<std::size_t>(*bins), *binning)));
  const bool mass = *binning == ScoreBinning::equal_mass;
  out.label = std::string("histogram_binning_") + (mass ? "em" : "ew") + std::to_string(*bins);
  out.params = {{"bins", *bins}, {"binning", std::string(mass ? "equal_mass" : "equal_width")}};
  return out;
}
std::optional<MethodConfig> parse_bbq(ObjectReader& entry, int) {
  const auto strength = entry.positive("prior_strength", 2.0);
  if (!strength) return std::nullopt;
  MethodConfig out =
      plain("bbq", std::make_shared<TopLabel>("bbq", std::make_shared<BbqCalibrator>(*strength)));
  if (*strength != 2.0) out.label = "bbq_n" + format_double(*strength);
  out.params = {{"prior_strength", *strength}};
  return out;
}
std::optional<MethodConfig> parse_ensemble_temperature(ObjectReader&, int) {
  return plain("ensemble_temperature", std::make_shared<EnsembleTemperature>());
}
std::optional<MethodConfig> parse_scaling_binning(ObjectReader& entry, int) {
  const auto bins = entry.integer("bins", 1, 10);
  if (!bins) return std::nullopt;
  MethodConfig out = plain(
      "scaling_binning",
      std::make_shared<TopLabel>(
          "scaling_binning", std::make_shared<ScalingBinning>(static_cast<std::size_t>(*bins))));
  out.label = "scaling_binning_" + std::to_string(*bins);
  out.params = {{"bins", *bins}};
  return out;
}

// A wrapper's `method` object, parsed by the same rows.
std::optional<MethodConfig> parse_inner(ObjectReader& entry, int depth) {
  const Json* value = entry.require("method", "a method object {\"name\": ..., ...}");
  if (value == nullptr) return std::nullopt;
  if (depth >= max_depth) {
    entry.problems().add(entry.pointer_to("method"),
                         "wrappers nested more than " + std::to_string(max_depth) + " deep");
    return std::nullopt;
  }
  Json resolved;
  auto inner =
      parse_method(*value, entry.pointer_to("method"), entry.problems(), resolved, depth + 1);
  entry.set_resolved("method", std::move(resolved));
  return inner;
}

std::optional<MethodConfig> parse_classwise(ObjectReader& entry, int depth) {
  auto inner = parse_inner(entry, depth);
  if (!inner) return std::nullopt;
  MethodConfig out = plain("classwise", std::make_shared<Classwise>(inner->method));
  out.label = "classwise(" + inner->label + ")";
  out.params = {{"method", inner->label}};
  return out;
}
std::optional<MethodConfig> parse_top_label_reduced(ObjectReader& entry, int depth) {
  auto inner = parse_inner(entry, depth);
  if (!inner) return std::nullopt;
  MethodConfig out = plain("top_label_reduced", std::make_shared<TopLabelReduced>(inner->method));
  out.label = "top_label_reduced(" + inner->label + ")";
  out.params = {{"method", inner->label}};
  return out;
}

std::vector<RecalibratorEntry> make_rows() {
  const std::string ovr =
      "One-vs-rest: a binary map per class on (p_k, 1{y=k}); q_k = g_k(p_k)/sum_j g_j(p_j),\n"
      "a zero row uniform (scikit-learn's convention).";
  const std::string top =
      "Top label: a binary map g on (max p, 1{y = argmax p}); q_top = g(max p), the others\n"
      "scaled by (1 - q_top)/(1 - max p). The argmax can change.";
  return {
      {"temperature",
       "temperature scaling (Guo et al. 2017): q = softmax(log p / T), T by NLL",
       {},
       "Newton on log(1/T) with a bisection safeguard, to a step below 1e-9; T in [1e-3, "
       "1e3]\n(separable "
       "data gives the bound). Logits are log p, p clamped at 2.2e-308. Needs 2 classes present.",
       parse_temperature},
      {"vector",
       "vector scaling (Guo et al. 2017): q = softmax(a * log p + b), by NLL",
       {},
       "L-BFGS (LBFGSpp) with analytic gradients on standardised logits, from a = 1, b = 0;\n"
       "stops at gradient norm 1e-6 or a 1e-9 relative objective change over 10 steps. n >= 2K.",
       parse_vector},
      {"matrix",
       "matrix scaling (Guo et al. 2017): q = softmax(W log p + b), by NLL, no penalty",
       {},
       "L-BFGS from W = I, b = 0. Needs n >= K^2 + K. Same model as dirichlet (logits = log p).",
       parse_matrix},
      {"dirichlet",
       "Dirichlet calibration with ODIR (Kull et al. 2019): q = softmax(W log p + b)",
       {{"lambda", "number", "0.01", ">= 0", "off-diagonal penalty: lambda/(K(K-1)) sum W_ij^2"},
        {"mu", "number", "0.01", ">= 0", "intercept penalty: mu/K sum b_j^2"}},
       "Mean NLL + the ODIR penalty, L-BFGS from W = I, b = 0. The paper tunes lambda and mu by\n"
       "cross-validation; here they are parameters (sweepable). Needs n >= the unpenalised\n"
       "parameters (K with both penalties > 0).",
       parse_dirichlet},
      {"platt",
       "Platt scaling one-vs-rest: sigma(a logit(p_k) + c) with Platt's smoothed targets",
       {},
       ovr + "\nTargets (N+ + 1)/(N+ + 2) and 1/(N- + 2) (Platt 1999): the fit always exists.",
       parse_platt},
      {"logistic",
       "logistic calibration one-vs-rest: sigma(a logit(p_k) + c) by maximum likelihood",
       {},
       ovr + "\nA class separable by its score (or absent) has no MLE: DomainError.",
       parse_logistic},
      {"beta",
       "beta calibration one-vs-rest (Kull et al. 2017): sigma(a log s - b log(1-s) + c)",
       {},
       ovr + "\na, b >= 0: a negative one is set to 0 and the fit repeated (betacal). Scores\n"
             "clipped to [2^-52, 1 - 2^-52]. Separable classes: DomainError.",
       parse_beta},
      {"isotonic",
       "isotonic regression one-vs-rest (pool-adjacent-violators)",
       {},
       ovr +
           "\nscikit-learn's conventions (reproduced to 1e-9): scores within 1e-15 pooled, linear\n"
           "interpolation between fitted scores, clipped outside their range.",
       parse_isotonic},
      {"histogram_binning",
       "histogram binning one-vs-rest (Zadrozny & Elkan 2001): mean outcome per score bin",
       {{"bins", "integer", "10", ">= 1", "the number of bins B"},
        {"binning", "string", "\"equal_mass\"", "equal_width | equal_mass", "bin edges"}},
       ovr + "\nEqual-mass edges: midpoints between array_split parts (Kumar et al.'s package);\n"
             "bins right-closed; an empty bin maps to its midpoint.",
       parse_histogram_binning},
      {"bbq",
       "Bayesian binning into quantiles (Naeini et al. 2015), top label",
       {{"prior_strength", "number", "2", "> 0", "N', the Beta prior's equivalent sample size"}},
       top + "\nModels B = ceil(n^(1/3)/10) .. floor(10 n^(1/3)) equal-mass bins, Beta prior per\n"
             "bin centred on its midpoint, averaged by marginal likelihood.",
       parse_bbq},
      {"ensemble_temperature",
       "ensemble temperature scaling (Zhang et al. 2020): w1 softmax(z/T) + w2 p + w3/K",
       {},
       "T by temperature scaling, then the weights by maximum likelihood (EM for mixture\n"
       "proportions; the paper's experiments use a squared loss).",
       parse_ensemble_temperature},
      {"scaling_binning",
       "scaling-binning (Kumar et al. 2019), top label: Platt, then equal-mass bins of its "
       "outputs",
       {{"bins", "integer", "10", ">= 1", "the number of bins B"}},
       top + "\nEach bin outputs the mean of the Platt outputs in it; one fit sample for all\n"
             "three steps, as the authors' package does.",
       parse_scaling_binning},
      {"classwise",
       "wrapper: one model of `method` per predicted class (Panchenko et al. 2021)",
       {{"method", "object", "required", "a method object", "the wrapped method"}},
       "Each fitted on the rows predicted as its class; a class that cannot be fitted keeps p.",
       parse_classwise},
      {"top_label_reduced",
       "wrapper: `method` fitted on the top label's binary problem (Panchenko et al. 2021)",
       {{"method", "object", "required", "a method object", "the wrapped method"}},
       "Rows (1 - max p, max p), label 1 when argmax p = y; q_top from the binary model, the\n"
       "others rescaled.",
       parse_top_label_reduced},
  };
}

const std::vector<RecalibratorEntry>& recalibrator_registry() {
  static const std::vector<RecalibratorEntry> rows = make_rows();
  return rows;
}

std::optional<MethodConfig> parse_method(const Json& entry, const std::string& pointer,
                                         Problems& problems, Json& resolved, int depth) {
  return parse_registry_entry<MethodConfig>(
      entry, pointer, problems, resolved, "recalibration method", recalibrator_registry(),
      [depth](const RecalibratorEntry& row, ObjectReader& e) { return row.parse(e, depth); });
}

}  // namespace

std::optional<MethodConfig> parse_recalibration_method(const Json& entry,
                                                       const std::string& pointer,
                                                       Problems& problems, Json& resolved) {
  return parse_method(entry, pointer, problems, resolved, 0);
}

std::vector<std::string> recalibrator_names() {
  return names_of(recalibrator_registry());
}

std::string format_recalibrators() {
  std::string out =
      "RECALIBRATORS  (\"methods\": [{\"name\": NAME, \"label\": LABEL, PARAMS...}]; scenario "
      "recalibration)\n";
  for (const auto& r : recalibrator_registry()) {
    out.append(1, '\n');
    out += "  " + r.name + "  " + r.summary + "\n";
    if (r.params.empty()) {
      out += "    parameters:  none\n";
    } else {
      std::vector<std::vector<std::string>> rows;
      for (const auto& p : r.params)
        rows.push_back(
            {p.key, p.type,
             p.fallback == "required" ? std::string("required") : "default " + p.fallback, p.rule,
             p.doc});
      out += "    parameters:\n" + aligned_columns(rows, "      ");
    }
    std::string text = r.convention;
    std::string indented = "    convention:  ";
    for (char ch : text) {
      indented += ch;
      if (ch == '\n') indented += "                 ";
    }
    out += indented + "\n";
  }
  return out;
}

}  // namespace calbench
