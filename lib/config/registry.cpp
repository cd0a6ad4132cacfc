#include "config/registry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "config/decision_registry.hpp"
#include "config/generator_config.hpp"
#include "config/recalibration_config.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/ece_sweep.hpp"
#include "estimators/kde_canonical.hpp"
#include "estimators/kde_ece.hpp"
#include "estimators/proper_scores.hpp"
#include "estimators/skce.hpp"
#include "estimators/smooth_ece.hpp"

namespace calbench {

std::vector<std::string> allowed_keys(std::vector<std::string> fixed,
                                      const std::vector<ParamDoc>& params) {
  for (const auto& p : params) fixed.push_back(p.key);
  return fixed;
}

namespace {

// ---- value shapes shared by several rows --------------------------------------------------

// A K x K matrix as an array of K rows, returned row-major.
std::optional<std::vector<double>> read_matrix(const Json& value, const std::string& pointer,
                                               std::optional<std::size_t> classes,
                                               Problems& problems) {
  const std::string shape =
      classes ? std::to_string(*classes) + " x " + std::to_string(*classes) : std::string("K x K");
  const std::string expected = "expected a " + shape + " matrix (an array of " +
                               count_text(classes) + "rows, one per class)";
  if (!value.is_array()) {
    problems.add(pointer, expected + ", found " + describe(value));
    return std::nullopt;
  }
  bool ok = true;
  if (classes && value.size() != *classes) {
    problems.add(pointer, expected + ", found an array of " + std::to_string(value.size()));
    ok = false;
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto row =
        read_vector(value[i], pointer_join(pointer, i), "weights", false, classes, problems);
    if (row)
      out.insert(out.end(), row->begin(), row->end());
    else
      ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

// ---- estimators ---------------------------------------------------------------------------

const std::vector<Choice<Binning>>& binning_choices() {
  static const std::vector<Choice<Binning>> choices = {{"equal_width", Binning::equal_width},
                                                       {"equal_mass", Binning::equal_mass}};
  return choices;
}

const std::vector<Choice<Norm>>& norm_choices() {
  static const std::vector<Choice<Norm>> choices = {
      {"l1", Norm::l1}, {"l2", Norm::l2}, {"max", Norm::max}, {"average", Norm::average}};
  return choices;
}

const std::vector<Choice<Norm>>& l1_l2_choices() {
  static const std::vector<Choice<Norm>> choices = {{"l1", Norm::l1}, {"l2", Norm::l2}};
  return choices;
}

const std::vector<Choice<Scope>>& scope_choices() {
  static const std::vector<Choice<Scope>> choices = {
      {"top", Scope::top}, {"classwise", Scope::classwise}, {"binary", Scope::binary}};
  return choices;
}

const std::vector<Choice<const Convention*>>& convention_choices() {
  static const std::vector<Choice<const Convention*>> choices = [] {
    std::vector<Choice<const Convention*>> out;
    for (const auto& c : conventions()) out.push_back({c.name, &c});
    return out;
  }();
  return choices;
}

template <typename E>
std::string choice_name(const std::vector<Choice<E>>& choices, E value) {
  for (const auto& c : choices)
    if (c.value == value) return std::string(c.name);
  return "?";
}

EstimatorConfig plain_estimator(std::string name, std::shared_ptr<const Estimator> estimator) {
  EstimatorConfig out;
  out.label = name;
  out.name = std::move(name);
  out.estimator = std::move(estimator);
  return out;
}

std::optional<EstimatorConfig> parse_accuracy(ObjectReader&) {
  return plain_estimator("accuracy", std::make_shared<AccuracyEstimator>());
}

const std::vector<Choice<BrierComponent>>& component_choices() {
  static const std::vector<Choice<BrierComponent>> choices = {
      {"total", BrierComponent::total},
      {"reliability", BrierComponent::reliability},
      {"resolution", BrierComponent::resolution},
      {"uncertainty", BrierComponent::uncertainty}};
  return choices;
}

std::optional<EstimatorConfig> parse_brier(ObjectReader& entry) {
  const auto component =
      entry.choice("component", "component", component_choices(), BrierComponent::total);
  const auto bins = entry.integer("bins", 1, 15);
  if (!component || !bins) return std::nullopt;
  EstimatorConfig out = plain_estimator(
      "brier", std::make_shared<BrierEstimator>(*component, static_cast<std::size_t>(*bins)));
  if (*component != BrierComponent::total)
    out.label = "brier_" + choice_name(component_choices(), *component);
  out.params = {{"component", choice_name(component_choices(), *component)}, {"bins", *bins}};
  return out;
}

std::optional<EstimatorConfig> parse_nll(ObjectReader&) {
  return plain_estimator("nll", std::make_shared<NllEstimator>());
}

// "ece_ew15", "classwise_ece_em10_l2", "ece_ew15_binary_sklearn": binning and bins always,
// then whatever is not the default.
std::string binned_label(std::string stem, const BinnedEceSpec& spec, Scope default_scope) {
  std::string label = stem + (spec.binning == Binning::equal_width ? "_ew" : "_em");
  label += std::to_string(spec.bins);
  if (!spec.debiased && spec.norm != Norm::l1)
    label += "_" + choice_name(norm_choices(), spec.norm);
  if (spec.scope != default_scope) label += "_" + choice_name(scope_choices(), spec.scope);
  if (spec.threshold > 0.0) label += "_t" + Json(spec.threshold).dump();
  if (spec.squared) label += "_sq";
  if (spec.convention != nullptr && spec.convention != &calbench_convention())
    label += "_" + std::string(spec.convention->name);
  return label;
}

// `threshold`: a number in [0, 1), 0 when absent.
constexpr auto unit_half_open = [](double x) { return x >= 0.0 && x < 1.0; };

// The parameters every binned estimator shares; the convention is read first because it
// sets the default number of bins.
struct BinnedKnobs {
  const Convention* convention;
  std::int64_t bins;
  Binning binning;
};

std::optional<BinnedKnobs> read_binned(ObjectReader& entry, const Convention& default_convention,
                                       Binning default_binning) {
  const auto convention =
      entry.choice("convention", "convention", convention_choices(), &default_convention);
  if (!convention) return std::nullopt;
  const auto bins =
      entry.integer("bins", 1, static_cast<std::int64_t>((*convention)->default_bins));
  const auto binning = entry.choice("binning", "binning", binning_choices(), default_binning);
  if (!bins || !binning) return std::nullopt;
  return BinnedKnobs{*convention, *bins, *binning};
}

std::optional<EstimatorConfig> binned_estimator(std::string name, std::string stem,
                                                BinnedEceSpec spec, Scope default_scope) {
  EstimatorConfig out;
  out.name = std::move(name);
  out.label = binned_label(std::move(stem), spec, default_scope);
  out.params = {{"bins", static_cast<std::int64_t>(spec.bins)},
                {"binning", choice_name(binning_choices(), spec.binning)}};
  if (!spec.debiased) out.params.push_back({"norm", choice_name(norm_choices(), spec.norm)});
  if (spec.scope != Scope::classwise || spec.debiased)
    out.params.push_back({"scope", choice_name(scope_choices(), spec.scope)});
  if (spec.scope == Scope::classwise && !spec.debiased)
    out.params.push_back({"threshold", spec.threshold});
  out.params.push_back({"convention", std::string(spec.convention->name)});
  if (spec.debiased) out.params.push_back({"squared", spec.squared});
  out.estimator = std::make_shared<BinnedEce>(spec);
  return out;
}

// `bandwidth`: "fixed_point" (default) or a number in (0, 1].
std::optional<EstimatorConfig> parse_smooth_ece(ObjectReader& entry) {
  SmoothEceSpec spec;
  ParamValue shown = std::string("fixed_point");
  if (const Json* value = entry.find("bandwidth")) {
    const bool fixed = value->is_string() && value->get<std::string>() == "fixed_point";
    const bool number = value->is_number() && std::isfinite(value->get<double>()) &&
                        value->get<double>() > 0.0 && value->get<double>() <= 1.0;
    if (!fixed && !number) {
      entry.problems().add(
          entry.pointer_to("bandwidth"),
          "expected \"fixed_point\" or a number in (0, 1], found " + describe(*value));
      return std::nullopt;
    }
    if (number) {
      spec.bandwidth = value->get<double>();
      shown = *spec.bandwidth;
    }
  } else {
    entry.add_default("bandwidth", "fixed_point");
  }
  EstimatorConfig out;
  out.name = "smooth_ece";
  out.label = "smooth_ece";
  if (spec.bandwidth) out.label.append("_s").append(format_double(*spec.bandwidth));
  out.params = {{"bandwidth", shown}};
  out.estimator = std::make_shared<SmoothEce>(spec);
  return out;
}

std::optional<EstimatorConfig> parse_kde_ece(ObjectReader&) {
  return plain_estimator("kde_ece", std::make_shared<KdeEce>());
}

// `bandwidth`: "loo" (default) or a number > 0.
std::optional<EstimatorConfig> parse_kde_canonical(ObjectReader& entry) {
  KdeCanonicalSpec spec;
  ParamValue shown = std::string("loo");
  if (const Json* value = entry.find("bandwidth")) {
    const bool loo = value->is_string() && value->get<std::string>() == "loo";
    const bool number =
        value->is_number() && std::isfinite(value->get<double>()) && value->get<double>() > 0.0;
    if (!loo && !number) {
      entry.problems().add(entry.pointer_to("bandwidth"),
                           "expected \"loo\" or a number > 0, found " + describe(*value));
      return std::nullopt;
    }
    if (number) {
      spec.bandwidth = value->get<double>();
      shown = *spec.bandwidth;
    }
  } else {
    entry.add_default("bandwidth", "loo");
  }
  const auto norm = entry.choice("norm", "norm", l1_l2_choices(), Norm::l1);
  const auto squared = entry.boolean("squared", false);
  if (!norm || !squared) return std::nullopt;
  if (*squared && *norm == Norm::l1) {
    entry.problems().add(entry.pointer_to("squared"), "applies to norm \"l2\" only");
    return std::nullopt;
  }
  spec.power = *norm == Norm::l1 ? 1 : 2;
  spec.squared = *squared;
  EstimatorConfig out;
  out.name = "kde_canonical";
  out.label = "kde_canonical";
  if (spec.power == 2) out.label.append(spec.squared ? "_l2sq" : "_l2");
  if (spec.bandwidth) out.label.append("_b").append(format_double(*spec.bandwidth));
  out.params = {{"bandwidth", shown},
                {"norm", choice_name(norm_choices(), *norm)},
                {"squared", spec.squared}};
  out.estimator = std::make_shared<KdeCanonical>(spec);
  return out;
}

const std::vector<Choice<SkceKernel>>& skce_kernel_choices() {
  static const std::vector<Choice<SkceKernel>> choices = {{"gaussian", SkceKernel::gaussian},
                                                          {"laplacian", SkceKernel::laplacian}};
  return choices;
}

const std::vector<Choice<SkceForm>>& skce_form_choices() {
  static const std::vector<Choice<SkceForm>> choices = {{"linear", SkceForm::linear},
                                                        {"quadratic", SkceForm::quadratic}};
  return choices;
}

std::optional<EstimatorConfig> parse_skce(ObjectReader& entry) {
  const SkceSpec defaults;
  const auto kernel = entry.choice("kernel", "kernel", skce_kernel_choices(), defaults.kernel);
  const auto bandwidth = entry.positive("bandwidth", defaults.bandwidth);
  const auto form = entry.choice("estimator", "estimator", skce_form_choices(), defaults.form);
  if (!kernel || !bandwidth || !form) return std::nullopt;
  const SkceSpec spec{*kernel, *bandwidth, *form};
  EstimatorConfig out;
  out.name = "skce";
  out.label = "skce_" + choice_name(skce_kernel_choices(), spec.kernel) + "_" +
              format_double(spec.bandwidth) +
              (spec.form == SkceForm::quadratic ? std::string("_uq") : std::string());
  out.params = {{"kernel", choice_name(skce_kernel_choices(), spec.kernel)},
                {"bandwidth", spec.bandwidth},
                {"estimator", choice_name(skce_form_choices(), spec.form)}};
  out.estimator = std::make_shared<Skce>(spec);
  return out;
}

std::optional<EstimatorConfig> parse_ece(ObjectReader& entry) {
  const auto knobs = read_binned(entry, calbench_convention(), Binning::equal_width);
  const auto norm = entry.choice("norm", "norm", norm_choices(), Norm::l1);
  const auto scope = entry.choice("scope", "scope", scope_choices(), Scope::top);
  if (!knobs || !norm || !scope) return std::nullopt;
  BinnedEceSpec spec{static_cast<std::size_t>(knobs->bins), knobs->binning, *norm, *scope};
  spec.convention = knobs->convention;
  return binned_estimator("ece", "ece", spec, Scope::top);
}

std::optional<EstimatorConfig> parse_classwise_ece(ObjectReader& entry) {
  const auto knobs = read_binned(entry, calbench_convention(), Binning::equal_width);
  const auto norm = entry.choice("norm", "norm", norm_choices(), Norm::l1);
  const auto threshold = entry.number("threshold", 0.0, unit_half_open, "in [0, 1)");
  if (!knobs || !norm || !threshold) return std::nullopt;
  BinnedEceSpec spec{static_cast<std::size_t>(knobs->bins), knobs->binning, *norm, Scope::classwise,
                     *threshold};
  spec.convention = knobs->convention;
  return binned_estimator("classwise_ece", "cwece", spec, Scope::classwise);
}

std::optional<EstimatorConfig> parse_ace(ObjectReader& entry) {
  const auto convention =
      entry.choice("convention", "convention", convention_choices(), find_convention("nixon"));
  const auto bins = entry.integer("bins", 1, 15);
  const auto threshold = entry.number("threshold", 0.0, unit_half_open, "in [0, 1)");
  if (!convention || !bins || !threshold) return std::nullopt;
  BinnedEceSpec spec{static_cast<std::size_t>(*bins), Binning::equal_mass, Norm::l1,
                     Scope::classwise, *threshold};
  spec.convention = *convention;
  auto out = binned_estimator("ace", "ace", spec, Scope::classwise);
  if (out) {
    std::erase_if(out->params, [](const NamedParam& p) {
      return p.key == "binning" || p.key == "scope" || p.key == "norm";
    });
    out->label = "ace" + out->label.substr(6);  // "ace_em15..." -> "ace15..."
  }
  return out;
}

std::optional<EstimatorConfig> parse_ece_debiased(ObjectReader& entry) {
  const auto knobs = read_binned(entry, calbench_convention(), Binning::equal_mass);
  const auto scope = entry.choice("scope", "scope", scope_choices(), Scope::top);
  const auto squared = entry.boolean("squared", false);
  if (!knobs || !scope || !squared) return std::nullopt;
  BinnedEceSpec spec{static_cast<std::size_t>(knobs->bins), knobs->binning, Norm::l2, *scope};
  spec.convention = knobs->convention;
  spec.debiased = true;
  spec.squared = *squared;
  return binned_estimator("ece_debiased", "dece", spec, Scope::top);
}

std::optional<EstimatorConfig> parse_ece_sweep(ObjectReader& entry) {
  const auto binning = entry.choice("binning", "binning", binning_choices(), Binning::equal_mass);
  const auto norm = entry.choice("norm", "norm", l1_l2_choices(), Norm::l1);
  if (!binning || !norm) return std::nullopt;
  EstimatorConfig out;
  out.name = "ece_sweep";
  out.label = std::string("ece_sweep") + (*binning == Binning::equal_width ? "_ew" : "_em") +
              (*norm == Norm::l2 ? "_l2" : "");
  out.params = {{"binning", choice_name(binning_choices(), *binning)},
                {"norm", choice_name(norm_choices(), *norm)}};
  out.estimator = std::make_shared<EceSweep>(EceSweepSpec{*binning, *norm});
  return out;
}

// Copied from lib/estimators/binning.hpp, which is the authority.
constexpr const char* binning_conventions =
    "equal_width: B bins over [0, 1] with edges e_i = i/B computed by division (so 0.3 is the\n"
    "double nearest 3/10, not linspace's 0.30000000000000004). Bins are right-closed\n"
    "(e_i, e_i+1] as in Guo et al. 2017; 0 goes to the first bin; values outside [0, 1] are\n"
    "clamped into the first or last bin.\n"
    "equal_mass: the sorted scores are split into B contiguous parts whose sizes differ by at\n"
    "most one, the first n mod B parts one larger (numpy.array_split); B := n when B > n. The\n"
    "edge between two parts is the midpoint of the last score of one and the first of the\n"
    "next, bins right-closed: a run of tied scores that straddles a split goes wholly to the\n"
    "lower bin, which may leave a bin empty. This is the partition of Kumar et al. 2019's\n"
    "`calibration` package.\n"
    "Empty bins contribute nothing (and are not counted by the max norm).\n"
    "Scores are the confidences max_k p_k, outcomes 1{argmax p = y} (lowest index on ties).\n"
    "l1: sum_b (n_b/n) |mean_b(o) - mean_b(s)|; l2: sqrt(sum_b (n_b/n) (mean_b(o) - "
    "mean_b(s))^2);\n"
    "max: max over non-empty b of |mean_b(o) - mean_b(s)|.";

// Shared by the binned rows: the conventions (estimators/convention.hpp, docs/conventions.md).
constexpr const char* convention_doc =
    "convention: calbench (default) or a library whose numbers to reproduce: kumar, sklearn,\n"
    "kyle, netcal, robustness_metrics, nixon, torchmetrics (float32 multiclass),\n"
    "torchmetrics_binary (float64), pycalib, relplot, caltrain (checked against a numpy\n"
    "evaluation of its rules, not against caltrain itself). A convention fixes the edge arithmetic "
    "(division i/B; numpy linspace i*(1/B);\n"
    "torch's symmetric linspace; PyCalib's linspace(0, 1+1e-8)), the closed side (right:\n"
    "calbench, kumar, sklearn, kyle; left: netcal, rm, torchmetrics, pycalib, caltrain), whether "
    "scores\n"
    ">= 1 get an extra bin (torchmetrics, robustness_metrics, relplot), the equal-mass rule\n"
    "(kumar split at midpoints; numpy.quantile: sklearn, kyle, netcal with 0 and 1 outer\n"
    "edges; Nixon: sort(s)[round_half_even(i n / B)], left-closed; caltrain: rank r in bin\n"
    "floor(r B / n)), classwise zero dropping\n"
    "(rm, nixon: p_k > threshold strictly), and the default bins (sklearn 5, kyle/netcal/\n"
    "relplot 10, others 15). Every library averages classwise errors over classes.";

std::vector<EstimatorEntry> make_estimator_rows() {
  const BinnedEceSpec ece_defaults;
  const auto bins_param = [](std::string fallback) {
    return ParamDoc{"bins", "integer", std::move(fallback), ">= 1", "number of bins B"};
  };
  const ParamDoc convention_param{"convention", "string", "\"calbench\"",
                                  "calbench | kumar | sklearn | kyle | netcal | ...",
                                  "whose binning conventions to follow (see convention)"};
  const ParamDoc binning_param{"binning", "string", "\"equal_width\"", "equal_width | equal_mass",
                               "how the scores are binned"};
  const ParamDoc scope_param{"scope", "string", "\"top\"", "top | classwise | binary",
                             "top label; every class; p_1 vs 1{y=1} (K = 2 only, else an error)"};
  const ParamDoc threshold_param{"threshold", "number", "0", "[0, 1)",
                                 "class k keeps rows with p_k > threshold (when > 0)"};
  return {
      {"accuracy",
       "fraction of rows whose predicted class (argmax p) is the label",
       {},
       "accuracy",
       "The predicted class is argmax_k p_k, the lowest index on ties.",
       parse_accuracy,
       Cost::n_log_n},
      {"ace",
       "adaptive calibration error, exactly as Nixon et al. 2019 print it",
       {bins_param("15"),
        {"threshold", "number", "0", "[0, 1)", "keep p_k > threshold; 1e-3 gives their TACE"},
        {"convention", "string", "\"nixon\"", "nixon | robustness_metrics | kumar | kyle | ...",
         "nixon: the paper; robustness_metrics: weights n_kb/n_k; others: that library's\n"
         "equal-mass classwise ECE"}},
       "none (its own population value)",
       "ACE = (1/(K R)) sum_k sum_r |acc(r, k) - conf(r, k)|, R = B ranges per class, built on\n"
       "the scores p_k > threshold of class k (strictly, so exact zeros drop out even at 0):\n"
       "range edges sort(p_k)[round_half_even(i n_k / B)], i < B, left-closed, scores >= 1 in\n"
       "an extra range; empty ranges count 0 and stay in R. Unweighted, so it collapses when\n"
       "ranges are empty (nixon_pathology: 0.094 where the weighted form gives 0.465).\n"
       "A class with no kept rows contributes 0 and is still divided by K. Not netcal's or\n"
       "kyle's \"ACE\" (average calibration error: ece with norm average).\n" +
           std::string(convention_doc),
       parse_ace,
       Cost::n_log_n},
      {"brier",
       "mean Brier score, summed over classes, or a component of its Murphy decomposition",
       {{"component", "string", "\"total\"", "total | reliability | resolution | uncertainty",
         "the score or one of Murphy's (1973) terms"},
        {"bins", "integer", "15", ">= 1", "equal-width bins of p_k for the components"}},
       "brier (component total); none for the components",
       "(1/n) sum_i sum_k (p_ik - 1{y_i = k})^2, in [0, 2]: the sum over classes, as Brier 1950\n"
       "and sklearn's one-vs-rest sum (PyCalib divides by K).\n"
       "Components, per class k binned on p_k (calbench equal-width bins):\n"
       "reliability = sum_k sum_b (n_kb/n)(pbar_kb - ybar_kb)^2; resolution = sum_k sum_b\n"
       "(n_kb/n)(ybar_kb - ybar_k)^2; uncertainty = sum_k ybar_k (1 - ybar_k). brier =\n"
       "reliability - resolution + uncertainty + W, W the within-bin term sum_k sum_b (n_kb/n)\n"
       "[var_b(p_k) - 2 cov_b(p_k, 1{y=k})], 0 when each bin holds one score value.",
       parse_brier,
       Cost::n_log_n},
      {"classwise_ece",
       "classwise ECE (Kull et al. 2019) = SCE (Nixon et al. 2019); TACE with a threshold",
       {bins_param("15 (the convention's default)"),
        binning_param,
        {"norm", "string", "\"l1\"", "l1 | l2 | max | average", "per-class combination of bins"},
        threshold_param,
        convention_param},
       "classwise_ece_l1 (norm l1, threshold 0, a convention that keeps zeros); none otherwise",
       "(1/K) sum_k CE_k, CE_k the binned error of the scores p_k against 1{y = k} over the\n"
       "n_k rows kept for class k (all n at threshold 0), weights n_kb / n_k; norm l2 reports\n"
       "sqrt((1/K) sum_k CE_k^2) (Kumar et al.'s marginal mode). Bins as ece.\n" +
           std::string(binning_conventions) + "\n" + convention_doc,
       parse_classwise_ece,
       Cost::n_log_n},
      {"ece",
       "top-label binned expected calibration error (Guo et al. 2017, eq. 3; norm max is MCE)",
       {{"bins", "integer", std::to_string(ece_defaults.bins), ">= 1", "number of bins B"},
        {"binning", "string", quote(choice_name(binning_choices(), ece_defaults.binning)),
         "equal_width | equal_mass", "how the confidences are binned"},
        {"norm", "string", quote(choice_name(norm_choices(), ece_defaults.norm)), "l1 | l2 | max",
         "how the per-bin gaps are combined"},
        scope_param,
        convention_param},
       "ece_top_l1 (norm l1), ece_top_l2 (norm l2), scope top, calbench-like convention; none\n"
       "for max, average, scope binary and conventions that drop zeros",
       std::string(binning_conventions) +
           "\naverage: the unweighted mean of |gap_b| over non-empty bins (netcal/kyle \"ACE\").\n"
           "scope binary (K = 2 only, a DomainError otherwise): scores p_1, outcomes 1{y = 1}.\n" +
           convention_doc,
       parse_ece,
       Cost::n_log_n},
      {"kde_ece",
       "kernel-density top-label ECE (Zhang, Kailkhura & Han 2020, Mix-n-Match ece_kde_binary)",
       {},
       "ece_top_l1",
       "Triweight kernel with sd h = std(confidences of correct rows) * (2n)^(-1/5); points below\n"
       "1/2 reflected at 0, the others at 1; KDEs of correct and of all confidences on the grid\n"
       "-0.6 + 2.2 j/(2^14-1) (linear binning, as KDEpy's FFTKDE); acc(x) = min(mean(o) f1/f, 1);\n"
       "value = trapz |x - acc| f / trapz f over [0, 1]. Fallbacks where theirs fails: h from all\n"
       "confidences when < 2 correct rows or zero spread, h >= 2 grid steps. O(n + grid*h).",
       parse_kde_ece,
       Cost::n_log_n},
      {"kde_canonical",
       "Dirichlet-kernel estimate of the canonical Lp error (Popordanoska et al. 2022)",
       {{"bandwidth", "string|number", "\"loo\"", "loo | > 0",
         "b: leave-one-out maximum likelihood over the authors' 20-point grid, or fixed"},
        {"norm", "string", "\"l1\"", "l1 | l2", "q = 1 or 2 in E ||r(p) - p||_q^q"},
        {"squared", "boolean", "false", "true | false",
         "norm l2: report the estimate of the square instead of its root"}},
       "canonical_l1 (l1), canonical_l2 (l2); none for l2 squared",
       "Kernel at p_j evaluated at p_i: Dir(p_i; p_j/b + 1). Leave-one-out Nadaraya-Watson\n"
       "r_i = sum_{j!=i} k(p_i;p_j) e_yj / sum_{j!=i} k(p_i;p_j), all in log space; S = (1/n)\n"
       "sum_i ||r_i - p_i||_q^q; l2 reports sqrt(S). log p floored at log(DBL_MIN). Bandwidth\n"
       "grid logspace(-5,-1,15) + linspace(0.2,1,5), maximising sum_i log mean_{j!=i} k (the\n"
       "authors also subtract log b). n < 2 gives 0. Cost O(n^2 K + 20 n^2), O(n) memory:\n"
       "quadratic, only when asked for.",
       parse_kde_canonical,
       Cost::quadratic},
      {"ece_debiased",
       "debiased plug-in estimate of the binned L2 calibration error (Kumar et al. 2019)",
       {bins_param("15"),
        {"binning", "string", "\"equal_mass\"", "equal_width | equal_mass",
         "how the scores are binned"},
        {"scope", "string", "\"top\"", "top | classwise | binary",
         "top label; classwise (Kumar's marginal mode); binary (K = 2)"},
        {"squared", "boolean", "false", "true | false",
         "report the unbiased estimate of the square (may be < 0) instead of its root"},
        convention_param},
       "ece_top_l2 (scope top, squared false); none otherwise",
       "S = sum_b (n_b/n) [(mean_b s - mean_b o)^2 - mean_b o (1 - mean_b o) / (n_b - 1)]\n"
       "(Kumar et al. 2019, Verified Uncertainty Calibration, sec. 5). A bin with n_b < 2 has\n"
       "no variance estimate: it contributes 0, its biased term included (Kumar's\n"
       "`calibration`); convention torchmetrics keeps the biased term. squared false reports\n"
       "sqrt(max(0, S)), biased for ece_top_l2 by the clipping and the root; squared true\n"
       "reports S, unbiased for the squared binned error. classwise: sqrt((1/K) sum_k\n"
       "max(0, S_k)) (squared: (1/K) sum_k S_k). Default bins: 15 equal-mass (Kumar's split).\n" +
           std::string(binning_conventions),
       parse_ece_debiased,
       Cost::n_log_n},
      {"ece_sweep",
       "ECE at the largest monotone number of bins (Roelofs et al. 2022)",
       {{"binning", "string", "\"equal_mass\"", "equal_mass | equal_width",
         "equal_mass: row of rank r in bin floor((r/n) b); equal_width: floor(s b)"},
        {"norm", "string", "\"l1\"", "l1 | l2", "how the per-bin gaps are combined"}},
       "ece_top_l1 (l1), ece_top_l2 (l2)",
       "Bins of the authors' code (google-research/caltrain): confidences sorted stably; the\n"
       "row of rank r in equal-mass bin min(b-1, floor((r/n) b)) (ties may split), or in\n"
       "equal-width bin min(b-1, floor(s b)) ([j/b, (j+1)/b), 1.0 in the last). b = 2, 3, ...\n"
       "scanned upward to n-1 as caltrain does, while the accuracies of the non-empty bins are\n"
       "non-decreasing; b* = the last monotone b (1 if b = 2 fails or n <= 2), no cap. Reports\n"
       "the l1 / l2 binned ECE at b*. One sort, then O(b) per b (equal width O(min(b log n, n)));\n"
       "all wrong rows below all correct ones: b* = n-1 without a scan.",
       parse_ece_sweep,
       Cost::n_log_n},
      {"nll",
       "mean negative log-likelihood of the label",
       {},
       "nll",
       "(1/n) sum_i -log max(p_{i,y_i}, DBL_MIN): a probability of exactly 0 on the true class\n"
       "scores -log(DBL_MIN) = 708.40 instead of +inf, so one row cannot turn the mean into inf\n"
       "(sklearn clips harder, at 2.2e-16).",
       parse_nll,
       Cost::n_log_n},
      {"skce",
       "squared kernel calibration error (Widmann, Lindsten & Zachariah 2019), kernel k(p,p') I_K",
       {{"kernel", "string", "\"gaussian\"", "gaussian | laplacian",
         "k(p,p') = exp(-|p-p'|^2/(2 l^2)) or exp(-|p-p'|/l), Euclidean on the simplex"},
        {"bandwidth", "number", "1", "> 0",
         "l (CalibrationErrors.jl has no default; 1 is its "
         "SqExponentialKernel's lengthscale)"},
        {"estimator", "string", "\"linear\"", "linear | quadratic",
         "linear: O(n) block estimator over pairs (2i, 2i+1); quadratic: O(n^2) U-statistic"}},
       "none: its own population value (SKCE, a squared quantity; both estimators are unbiased "
       "for\n"
       "it, the quadratic one's population value is computed with the linear form)",
       "h((p,y),(p',y')) = (e_y - p)^T k(p,p') (e_y' - p') = k(p,p')(1{y=y'} - p'_y - p_y' + "
       "<p,p'>);\n"
       "linear: mean of h over the disjoint pairs (X_2i, X_2i+1); quadratic: mean over all i < j.\n"
       "Values can be negative. n < 2 gives 0.",
       parse_skce,
       Cost::n_log_n},
      {"smooth_ece",
       "smooth ECE (Blasiok & Nakkiran 2023), relplot's smECE reproduced to 1e-9",
       {{"bandwidth", "string|number", "\"fixed_point\"", "fixed_point | (0, 1]",
         "sigma: the fixed point sigma = smECE_sigma (relplot's 10-step bisection), or fixed"}},
       "none: its own population value",
       "Top label: f = max p, o = 1{argmax p = y}, residual f - o. relplot 1.0.3 discretisation:\n"
       "masses split linearly onto max(2000, round(20/sigma))//2+1 nodes, Gaussian kernel sampled\n"
       "on linspace(0,1) - 1/2 (support |d| <= 1/2), reflection at 0 and 1 without repeating the\n"
       "end nodes (relplot's artefact: mass at exactly 0 or 1 gets about half weight), values\n"
       "interpolated at max(200, round(10/sigma)) points, sum|S_r| / sum(S_1 + 1e-4). The fixed\n"
       "point returns the upper end of the bisection bracket. Cost O(n + grid^2), grid ~1001.",
       parse_smooth_ece,
       Cost::n_log_n},
  };
}

// ---- miscalibration maps ------------------------------------------------------------------

std::optional<MiscalibrationMap> parse_identity(ObjectReader&, std::optional<std::size_t>) {
  return IdentityMap{};
}

std::optional<MiscalibrationMap> parse_temperature(ObjectReader& m, std::optional<std::size_t>) {
  const auto t = m.positive("temperature");
  if (!t) return std::nullopt;
  return TemperatureMap{*t};
}

std::optional<MiscalibrationMap> parse_power(ObjectReader& m, std::optional<std::size_t> classes) {
  const Json* value = m.require("exponents", "an array of numbers > 0, one per class");
  if (value == nullptr) return std::nullopt;
  auto exponents =
      read_vector(*value, m.pointer_to("exponents"), "exponents", true, classes, m.problems());
  if (!exponents) return std::nullopt;
  return PowerMap{std::move(*exponents)};
}

std::optional<MiscalibrationMap> parse_top_label(ObjectReader& m, std::optional<std::size_t>) {
  const auto gamma = m.positive("gamma");
  if (!gamma) return std::nullopt;
  return TopLabelMap{*gamma};
}

std::optional<MiscalibrationMap> parse_affine_logit(ObjectReader& m,
                                                    std::optional<std::size_t> classes) {
  const Json* weights_value = m.require("weights", "a K x K matrix, one row per class");
  std::optional<std::vector<double>> weights;
  if (weights_value != nullptr)
    weights = read_matrix(*weights_value, m.pointer_to("weights"), classes, m.problems());
  std::optional<std::vector<double>> bias;
  if (const Json* bias_value = m.find("bias")) {
    bias = read_vector(*bias_value, m.pointer_to("bias"), "bias", false, classes, m.problems());
  } else if (classes) {
    bias = std::vector<double>(*classes, 0.0);
    m.add_default("bias", *bias);
  }
  if (!weights || !bias) return std::nullopt;
  return AffineLogitMap{std::move(*weights), std::move(*bias)};
}

std::vector<MapEntry> make_map_rows() {
  return {
      {"identity", "p = c: perfectly calibrated", {}, parse_identity},
      {"temperature",
       "p_k proportional to c_k^(1/T): T < 1 overconfident, T > 1 underconfident; keeps argmax",
       {{"temperature", "number", "required", "> 0", "the temperature T"}},
       parse_temperature},
      {"power",
       "p_k proportional to c_k^(t_k): class-dependent miscalibration",
       {{"exponents", "array of numbers", "required", "one per class, each > 0",
         "the exponents t_1..t_K"}},
       parse_power},
      {"top_label",
       "kyle's max-component map: m = max c, u = (m - 1/K)/(1 - 1/K); the top component\n"
       "becomes g(m) = 1/K + (1 - 1/K) u^gamma, the others scale by (1 - g(m))/(1 - m).\n"
       "gamma < 1 overconfident; for gamma > 1 and K >= 3 the argmax can change",
       {{"gamma", "number", "required", "> 0", "the exponent gamma"}},
       parse_top_label},
      {"affine_logit",
       "p = softmax(W log c + b), the map Dirichlet calibration inverts",
       {{"weights", "array of arrays of numbers", "required", "K x K, finite",
         "W, one row per class"},
        {"bias", "array of numbers", "all 0", "one per class, finite", "b"}},
       parse_affine_logit},
  };
}

// The `miscalibration` object of a family; absent means {"map": "identity"}.
std::optional<MiscalibrationMap> parse_miscalibration(ObjectReader& family,
                                                      std::optional<std::size_t> classes) {
  static const Json identity = {{"map", "identity"}};
  const Json* value = family.find("miscalibration");
  ObjectReader m(value != nullptr ? *value : identity, family.pointer_to("miscalibration"),
                 family.problems());
  std::optional<MiscalibrationMap> map;
  if (m.is_object()) {
    if (const MapEntry* row = lookup(m, "map", "miscalibration map", map_registry())) {
      m.allow_only(allowed_keys({"map"}, row->params));
      map = row->parse(m, classes);
    }
  }
  family.set_resolved("miscalibration", m.take_resolved());
  return map;
}

// ---- families -----------------------------------------------------------------------------

std::optional<ParsedGenerator> parse_dirichlet(ObjectReader& g) {
  const auto classes = parse_classes(g);
  if (g.find("target") != nullptr) return parse_dirichlet_target(g, classes);
  const auto alpha = parse_alpha(g, classes);
  const auto map = parse_miscalibration(g, classes);
  if (!classes || !alpha || !map) return std::nullopt;
  DirichletSpec spec;
  spec.classes = *classes;
  spec.alpha = alpha->size() == 1 ? std::vector<double>(*classes, alpha->front()) : *alpha;
  spec.map = *map;
  return ParsedGenerator{std::move(spec), {}};
}

std::vector<FamilyEntry> make_family_rows() {
  return {
      {"dirichlet",
       "the kyle model: c ~ Dirichlet(alpha), y ~ Categorical(c), p = h(c) for a map h",
       {{"classes", "integer", "required", ">= 2", "the number of classes K"},
        {"alpha", "number or array", "1", "> 0, or one per class",
         "concentration: small alpha, confident and accurate"},
        {"miscalibration", "object", "{\"map\": \"identity\"}", "see `calbench list maps`",
         "the miscalibration map h"},
        {"target", "object", "none", "{accuracy, ece_top_l1, direction}; no alpha",
         "solved: symmetric alpha and the temperature or top_label parameter "
         "(docs/generators.md)"}},
       parse_dirichlet},
      {"class_conditional",
       "y ~ Categorical(prior), p | y = k ~ Dirichlet(alpha^(k)); c = r(p) in closed form",
       {{"classes", "integer", "required", ">= 2", "the number of classes K"},
        {"prior", "array of numbers", "uniform", "K numbers > 0 summing to 1", "pi"},
        {"concentration", "number", "none", "> 0, with correct_class",
         "a: alpha^(k) = a 1 + (b - a) e_k"},
        {"correct_class", "number", "none", "> 0, with concentration",
         "b: the concentration on the true class"},
        {"alpha", "array of arrays", "none", "K x K, > 0, instead of the pair",
         "row k is alpha^(k)"}},
       parse_class_conditional},
      {"label_noise",
       "p ~ Dirichlet(alpha), labels from c = (1 - w) p + w beta (Widmann et al. 2019)",
       {{"classes", "integer", "required", ">= 2", "the number of classes K"},
        {"alpha", "number or array", "1", "> 0, or one per class", "the Dirichlet of p"},
        {"weight", "number", "required", ">= 0 and < 1", "w"},
        {"beta", "integer or array", "0",
         "a class index j (beta = e_j), or K numbers >= 0 "
         "summing to 1",
         "the noise distribution"}},
       parse_label_noise},
      {"beta_binary",
       "K = 2, f = p_1 ~ Beta(a, b) (+ a point mass at 1), P(y = 1 | f) = phi(f) (Roelofs et al. "
       "2022)",
       {{"classes", "integer", "2", "2", "always 2"},
        {"a", "number", "required", "> 0", "Beta(a, b) of the score f"},
        {"b", "number", "required", "> 0", ""},
        {"point_mass", "number", "0", ">= 0 and < 1, needs phi(1) = 1", "P(f = 1)"},
        {"calibration", "object", "{\"curve\": \"identity\"}",
         "curve: identity | polynomial {d > 0} | logistic {a, b} | logit_logit {a, b}",
         "phi(f) = f, f^d, 1/(1 + exp(-(a + b f))), or logit phi = a + b logit f"}},
       parse_beta_binary},
  };
}

// ---- listing ------------------------------------------------------------------------------

// "LABEL  first line" with the continuation lines indented under the first.
std::string labelled(std::string_view indent, std::string_view label, std::string_view text) {
  const std::string head = std::string(indent) + std::string(label) + "  ";
  const std::string pad(head.size(), ' ');
  std::string out;
  std::size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += (first ? head : pad) + std::string(text.substr(start, end - start)) + '\n';
    first = false;
    start = end + 1;
  }
  return out;
}

std::string format_params(const std::vector<ParamDoc>& params) {
  if (params.empty()) return "    parameters:  none\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : params)
    rows.push_back({p.key, p.type,
                    p.fallback == "required" ? std::string("required") : "default " + p.fallback,
                    p.rule, p.doc});
  return "    parameters:\n" + aligned_columns(rows, "      ");
}

std::string format_estimators() {
  std::string out =
      "ESTIMATORS  (\"estimators\": [{\"name\": NAME, \"label\": LABEL, PARAMS...}])\n";
  for (const auto& e : estimator_registry()) {
    out += '\n';  // appended separately: GCC 12 reports a false -Wrestrict on "\n" + string
    out += labelled("  ", e.name, e.summary);
    out += format_params(e.params);
    out += labelled("    ", "target:    ", e.target);
    out += labelled("    ", "convention:", e.convention);
    out += labelled("    ", "cost:      ",
                    e.cost == Cost::quadratic
                        ? "O(n^2) per evaluation: calbench eval runs it only when asked for"
                        : "O(n log n) per evaluation at its defaults");
  }
  return out;
}

std::string format_maps() {
  std::string out =
      "MISCALIBRATION MAPS  (\"generator\": {\"miscalibration\": {\"map\": NAME, PARAMS...}})\n";
  for (const auto& m : map_registry()) {
    out.append(1, '\n');
    out += labelled("  ", m.name, m.summary);
    out += format_params(m.params);
  }
  return out;
}

std::string format_families() {
  std::string out = "FAMILIES  (\"generator\": {\"family\": NAME, PARAMS...})\n";
  for (const auto& f : family_registry()) {
    out.append(1, '\n');
    out += labelled("  ", f.name, f.summary);
    out += format_params(f.params);
  }
  return out;
}

std::string format_scenarios() {
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : scenario_registry()) rows.push_back({s.name, s.summary});
  return "SCENARIOS  (\"scenario\": NAME)\n\n" + aligned_columns(rows, "  ");
}

std::string format_quantities() {
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : quantity_registry())
    rows.push_back({std::string(to_string(q.quantity)), q.definition});
  return "QUANTITIES  (ground truth; an estimator's target)\n\n" + aligned_columns(rows, "  ");
}

}  // namespace

const std::vector<EstimatorEntry>& estimator_registry() {
  static const std::vector<EstimatorEntry> rows = make_estimator_rows();
  return rows;
}

const std::vector<MapEntry>& map_registry() {
  static const std::vector<MapEntry> rows = make_map_rows();
  return rows;
}

const std::vector<FamilyEntry>& family_registry() {
  static const std::vector<FamilyEntry> rows = make_family_rows();
  return rows;
}

const std::vector<ScenarioEntry>& scenario_registry() {
  static const std::vector<ScenarioEntry> rows = {
      {"estimator_bias",
       "bias, spread and error of each estimator against the exact value of its target, per "
       "cell"},
      {"decision",
       "exact expected utility of a decision task acting on p and on the true r(p), the cost of "
       "miscalibration, and the minimal accuracy meeting a requirement"},
      {"recalibration",
       "recalibration methods fitted on fit_size rows, judged by the truth of the composed "
       "model and by estimators on test_size rows"},
  };
  return rows;
}

const std::vector<QuantityEntry>& quantity_registry() {
  // Definitions of DESIGN.md §1; Z = max_k p_k, c the true class distribution, r(p) = E[c | p].
  static const std::vector<QuantityEntry> rows = {
      {Quantity::accuracy, "P(y = argmax p) = E[c_{argmax p}]"},
      {Quantity::ece_top_l1, "E_Z |P(y = argmax p | Z) - Z|, Z = max p"},
      {Quantity::ece_top_l2, "sqrt(E_Z (P(y = argmax p | Z) - Z)^2)"},
      {Quantity::classwise_ece_l1, "(1/K) sum_k E |P(y = k | p_k) - p_k|"},
      {Quantity::canonical_l1, "E ||r(p) - p||_1"},
      {Quantity::canonical_l2, "sqrt(E ||r(p) - p||_2^2)"},
      {Quantity::brier, "E sum_k (p_k - 1{y=k})^2 = E[sum p_k^2 - 2 sum p_k c_k + 1]"},
      {Quantity::nll, "E[-log p_y] = E[-sum c_k log p_k]"},
      {Quantity::overconfidence, "E[Z] - accuracy"},
  };
  return rows;
}

std::vector<std::string> estimator_names() {
  return names_of(estimator_registry());
}
std::vector<std::string> scenario_names() {
  return names_of(scenario_registry());
}

std::optional<EstimatorConfig> parse_estimator(const Json& entry, const std::string& pointer,
                                               Problems& problems, Json& resolved) {
  return parse_registry_entry<EstimatorConfig>(
      entry, pointer, problems, resolved, "estimator", estimator_registry(),
      [](const EstimatorEntry& row, ObjectReader& e) { return row.parse(e); });
}

std::optional<ParsedGenerator> parse_generator(const Json& generator, const std::string& pointer,
                                               Problems& problems, Json& resolved) {
  ObjectReader g(generator, pointer, problems);
  std::optional<ParsedGenerator> parsed;
  const std::size_t before = problems.size();
  if (g.is_object()) {
    if (const FamilyEntry* row = lookup(g, "family", "family", family_registry())) {
      g.allow_only(allowed_keys({"family"}, row->params));
      parsed = row->parse(g);
    }
  }
  resolved = g.take_resolved();
  if (problems.size() != before) return std::nullopt;
  // The generator's own checks are the authority; ours above only give precise pointers.
  try {
    Generator check(parsed->spec);
  } catch (const DomainError& error) {
    problems.add(pointer, error.what());
    return std::nullopt;
  }
  return parsed;
}

std::string format_registry(std::string_view kind) {
  using Formatter = std::string (*)();
  const std::vector<std::pair<std::string, Formatter>> sections = {
      {"estimators", format_estimators},      {"maps", format_maps},
      {"families", format_families},          {"scenarios", format_scenarios},
      {"quantities", format_quantities},      {"decisions", format_decisions},
      {"recalibrators", format_recalibrators}};
  std::string out;
  for (const auto& [name, format] : sections) {
    if (kind.empty()) {
      out += (out.empty() ? "" : "\n") + format();
    } else if (kind == name) {
      return format();
    }
  }
  if (!kind.empty()) {
    std::vector<std::string> valid;
    for (const auto& section : sections) valid.push_back(section.first);
    throw ConfigError(
        {"calbench list: unknown kind " + quote(kind) + "; valid: " + join(valid, ", ")});
  }
  return out;
}

}  // namespace calbench
