// Registry rows of the unbinned estimators (accuracy, brier, nll, smooth_ece, kde_ece,
// kde_canonical, skce): parameters, documentation and construction from a config entry.
#include "estimators/estimators_json.hpp"

#include <memory>

#include "config/registry.hpp"
#include "core/format.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/binning.hpp"
#include "estimators/calib_err.hpp"
#include "estimators/kde_canonical.hpp"
#include "estimators/kde_ece.hpp"
#include "estimators/probmetrics_ece.hpp"
#include "estimators/proper_scores.hpp"
#include "estimators/skce.hpp"
#include "estimators/smooth_ece.hpp"

namespace calbench {
namespace {

EstimatorConfig plain(const Args& a, std::shared_ptr<const Estimator> estimator) {
  EstimatorConfig out;
  out.label = a.name();
  out.params = a.shown();
  out.estimator = std::move(estimator);
  return out;
}

std::string shown_text(const Args& a, std::string_view key) {
  return std::get<std::string>(a.shown(key).data);
}

const std::vector<Choice<BrierComponent>> component_choices = {
    {"total", BrierComponent::total},
    {"reliability", BrierComponent::reliability},
    {"resolution", BrierComponent::resolution},
    {"uncertainty", BrierComponent::uncertainty}};
const std::vector<Choice<BrierScope>> brier_scope_choices = {{"all", BrierScope::all},
                                                             {"top", BrierScope::top}};
const std::vector<Choice<Norm>> l1_l2_choices = {{"l1", Norm::l1}, {"l2", Norm::l2}};
const std::vector<Choice<Scope>> smooth_scope_choices = {{"top", Scope::top},
                                                         {"binary", Scope::binary}};
const std::vector<Choice<Norm>> calib_err_norms = {
    {"l1", Norm::l1}, {"l2", Norm::l2}, {"max", Norm::max}};
const std::vector<Choice<SkceKernel>> skce_kernel_choices = {{"gaussian", SkceKernel::gaussian},
                                                             {"laplacian", SkceKernel::laplacian}};
const std::vector<Choice<SkceForm>> skce_form_choices = {{"linear", SkceForm::linear},
                                                         {"quadratic", SkceForm::quadratic}};

std::optional<EstimatorConfig> build_accuracy(Args& a) {
  return plain(a, std::make_shared<AccuracyEstimator>());
}

std::optional<EstimatorConfig> build_nll(Args& a) {
  return plain(a, std::make_shared<NllEstimator>());
}

std::optional<EstimatorConfig> build_kde_ece(Args& a) {
  return plain(a, std::make_shared<KdeEce>());
}

std::optional<EstimatorConfig> build_brier(Args& a) {
  const auto component = a.get<BrierComponent>("component");
  const auto scope = a.get<BrierScope>("scope");
  auto out = plain(a, std::make_shared<BrierEstimator>(
                          component, static_cast<std::size_t>(a.get<std::int64_t>("bins")), scope));
  // scope is reported only when not the default, so results written before it existed (the
  // golden files) keep their bytes.
  if (scope != BrierScope::all)
    out.label += "_" + shown_text(a, "scope");
  else
    std::erase_if(out.params, [](const NamedParam& p) { return p.key == "scope"; });
  if (component != BrierComponent::total) out.label += "_" + shown_text(a, "component");
  return out;
}

std::optional<EstimatorConfig> build_calib_err(Args& a) {
  const CalibErrSpec spec = a.typed<CalibErrSpec>();
  auto out = plain(a, std::make_shared<CalibErr>(spec));
  out.label += "_b" + std::to_string(spec.beta);
  if (spec.norm != Norm::l2) out.label += "_" + shown_text(a, "norm");
  return out;
}

std::optional<EstimatorConfig> build_probmetrics_ece(Args& a) {
  const ProbmetricsEceSpec spec = a.typed<ProbmetricsEceSpec>();
  auto out = plain(a, std::make_shared<ProbmetricsEce>(spec));
  out.label += "_" + std::to_string(spec.bins);
  if (spec.norm != Norm::l1) out.label += "_" + shown_text(a, "norm");
  return out;
}

std::optional<EstimatorConfig> build_smooth_ece(Args& a) {
  const SmoothEceSpec spec{a.get<std::optional<double>>("bandwidth"),
                           a.get<Scope>("scope") == Scope::binary};
  auto out = plain(a, std::make_shared<SmoothEce>(spec));
  if (spec.bandwidth) out.label.append("_s").append(format_double(*spec.bandwidth));
  if (spec.binary)
    out.label.append("_binary");
  else  // reported only when not the default (results written before it keep their bytes)
    std::erase_if(out.params, [](const NamedParam& p) { return p.key == "scope"; });
  return out;
}

std::optional<EstimatorConfig> build_kde_canonical(Args& a) {
  KdeCanonicalSpec spec;
  spec.bandwidth = a.get<std::optional<double>>("bandwidth");
  spec.power = a.get<Norm>("norm") == Norm::l1 ? 1 : 2;
  spec.squared = a.get<bool>("squared");
  if (spec.squared && spec.power == 1) {
    a.reader().problems().add(a.reader().pointer_to("squared"), "applies to norm \"l2\" only");
    return std::nullopt;
  }
  auto out = plain(a, std::make_shared<KdeCanonical>(spec));
  if (spec.power == 2) out.label.append(spec.squared ? "_l2sq" : "_l2");
  if (spec.bandwidth) out.label.append("_b").append(format_double(*spec.bandwidth));
  return out;
}

std::optional<EstimatorConfig> build_skce(Args& a) {
  const SkceSpec spec = a.typed<SkceSpec>();
  auto out = plain(a, std::make_shared<Skce>(spec));
  out.label = "skce_" + shown_text(a, "kernel") + "_" + format_double(spec.bandwidth) +
              (spec.form == SkceForm::quadratic ? std::string("_uq") : std::string());
  return out;
}

}  // namespace

EstimatorEntry accuracy_estimator() {
  return {
      .summary = "fraction of rows whose predicted class (argmax p) is the label",
      .example = "{}",
      .notes = {{"target", "accuracy"},
                {"convention", "The predicted class is argmax_k p_k, the lowest index on ties."}},
      .build = build_accuracy,
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::bca}};
}

EstimatorEntry brier_estimator() {
  return {
      .summary =
          "mean Brier score, summed over classes, or a component of its Murphy decomposition",
      .params = {param::choice("component", component_choices, BrierComponent::total,
                               "the score or one of Murphy's (1973) terms"),
                 param::choice("scope", brier_scope_choices, BrierScope::all,
                               "all: summed over classes; top: the top-class Brier score"),
                 param::at_most(param::integer("bins", 1, BrierEstimator::default_bins,
                                               "equal-width bins of p_k for the components"),
                                max_bins)},
      .example = R"({"component": "reliability", "bins": 10})",
      .notes =
          {{"target", "brier (component total, scope all); none for the components and scope top"},
           {"convention",
            R"((1/n) sum_i sum_k (p_ik - 1{y_i = k})^2, in [0, 2]: the sum over classes, as Brier 1950
and sklearn's one-vs-rest sum (PyCalib divides by K).
Components, per class k binned on p_k (calbench equal-width bins):
reliability = sum_k sum_b (n_kb/n)(pbar_kb - ybar_kb)^2; resolution = sum_k sum_b
(n_kb/n)(ybar_kb - ybar_k)^2; uncertainty = sum_k ybar_k (1 - ybar_k). brier =
reliability - resolution + uncertainty + W, W the within-bin term sum_k sum_b (n_kb/n)
[var_b(p_k) - 2 cov_b(p_k, 1{y=k})], 0 when each bin holds one score value.
scope top: the top-class Brier score (1/n) sum_i (max_k p_ik - 1{y_i = argmax_k p_ik})^2,
the confidence's squared error against correctness (component total only).)"}},
      .build = build_brier,
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::bca}};
}

EstimatorEntry calib_err_estimator() {
  const CalibErrSpec defaults;
  return {
      .summary =
          "calib_err of hendrycks/outlier-exposure (LLM harnesses): beta-row sorted bins, "
          "the last skipped",
      .params = {param::into(
                     param::at_most(
                         param::integer("beta", 1, static_cast<std::int64_t>(defaults.beta),
                                        "rows per bin (the library's target bin size)"),
                         max_bins),
                     &CalibErrSpec::beta),
                 param::into(param::choice("norm", calib_err_norms, defaults.norm,
                                           "its p: '1' (l1), '2' (l2, its default) or 'infty' (max)"),
                             &CalibErrSpec::norm)},
      .example = R"({"beta": 100, "norm": "l1"})",
      .notes =
          {{"target",
            "ece_top_l2 (norm l2), ece_top_l1 (l1), none (max); bias against it does not vanish "
            "as n grows"},
           {"convention",
            R"(utils/calibration_tools.py calib_err(confidence, correct, p, beta) of
hendrycks/outlier-exposure @e6ede98: confidences max_k p_k sorted (stably; numpy's
argsort is not), cut into m = floor(n / beta) bins of beta rows, the last extended to row
n; the last bin is skipped (range(len(bins) - 1)) but the weights stay beta / n, so at n =
830, beta = 100 it ignores 130 rows (15.7 %). l2: sqrt(sum_b (beta/n) gap_b^2); l1:
sum_b (beta/n) |gap_b|; max: max_b |gap_b|. n < 2 beta: 0 (the library returns 0 for
beta <= n < 2 beta and raises for n < beta). No population value: beta-row bins keep
label noise of sd about sqrt(acc (1 - acc) / beta) however large n is.)"}},
      .build = build_calib_err,
      // basic, not bca: on the realistic fakes of docs/intervals.md bca covered 0.00-0.89 of
      // ece_top_l2 (0.00 at n = 5,000, K = 2), basic 0.68-0.91.
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::basic}};
}

EstimatorEntry probmetrics_ece_estimator() {
  const ProbmetricsEceSpec defaults;
  return {
      .summary =
          "probmetrics' ece-B / rmsce-B / mce-B: absent classes dropped, p clamped to "
          "[1e-7, 1 - 1e-7] and renormalised, torchmetrics' float32 bins",
      .params = {param::into(param::at_most(
                                 param::integer("bins", 1, static_cast<std::int64_t>(defaults.bins),
                                                "number of bins B (its name ece-B)"),
                                 max_bins),
                             &ProbmetricsEceSpec::bins),
                 param::into(param::choice("norm", calib_err_norms, defaults.norm,
                                           "l1 (ece-B), l2 (rmsce-B) or max (mce-B)"),
                             &ProbmetricsEceSpec::norm)},
      .example = R"({"bins": 15, "norm": "l1"})",
      .notes = {{"target",
                 R"(its own population value (the truth engine's Rao-Blackwellised large sample): at
K >= 3 the top-label error of torchmetrics' multiclass bins, at K = 2 the binary error on
p_1 (whose limit is classwise_ece_l1's binned form); which of the two it computes depends on
the number of classes present in the labels, so no single design quantity is its target)"},
                {"convention",
                 R"(probmetrics @34123ba metrics.py CalibrationError via
TorchmetricsClassificationMetric._compute_mean: remove_missing_classes (columns of classes
absent from the labels dropped, labels renumbered), clamp(1e-7, 1 - 1e-7), rows divided by
their sums; K' = 2 columns left: torchmetrics' binary error on the second (float64); K' >= 3:
its multiclass top-label error with max q cast to float32, float32 edges
torch.linspace(0, 1, B + 1), bins [e_i, e_(i+1)) and 1 alone in bin B, float32 per-bin sums;
the result cast to float32. One class left: NaN (the library raises ValueError).)"}},
      .build = build_probmetrics_ece,
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::bca}};
}

EstimatorEntry nll_estimator() {
  return {
      .summary = "mean negative log-likelihood of the label",
      .example = "{}",
      .notes =
          {{"target", "nll"},
           {"convention",
            R"((1/n) sum_i -log max(p_{i,y_i}, DBL_MIN): a probability of exactly 0 on the true class
scores -log(DBL_MIN) = 708.40 instead of +inf, so one row cannot turn the mean into inf
(sklearn clips harder, at 2.2e-16). On a user's file (`calbench eval`, calbench.estimate) such a
row makes the value not estimable: it is reported so, with the count, never floored.)"}},
      .build = build_nll,
      .extra = {
          .cost = Cost::n_log_n, .interval = IntervalMethod::bca, .logs_label_probability = true}};
}

EstimatorEntry kde_ece_estimator() {
  return {
      .summary =
          "kernel-density top-label ECE (Zhang, Kailkhura & Han 2020, Mix-n-Match ece_kde_binary)",
      .example = "{}",
      .notes =
          {{"target", "ece_top_l1"},
           {"convention",
            R"(Triweight kernel with sd h = std(confidences of correct rows) * (2n)^(-1/5); points below
1/2 reflected at 0, the others at 1; KDEs of correct and of all confidences on the grid
-0.6 + 2.2 j/(2^14-1) (linear binning, as KDEpy's FFTKDE); acc(x) = min(mean(o) f1/f, 1);
value = trapz |x - acc| f / trapz f over [0, 1]. Fallbacks where theirs fails: h from all
confidences when < 2 correct rows or zero spread, h >= 2 grid steps. O(n + grid*h).)"}},
      .build = build_kde_ece,
      // eval: the fake interval's hull with it, which covered kde_ece's target on real models
      // where consistency did not (docs/intervals.md, "Defaults").
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::consistency, .eval_fake = true}};
}

EstimatorEntry kde_canonical_estimator() {
  return {
      .summary = "Dirichlet-kernel estimate of the canonical Lp error (Popordanoska et al. 2022)",
      .params =
          {param::literal_or_number(
               // The log kernel is (1/b) sum_k p_jk log p_ik minus lgamma terms of p/b + 1: below
               // the authors' grid (1e-5) it loses digits, and at 1e-300 p/b overflows and the log
               // normaliser is inf - inf (n = 50 gave 1.0036, not the nearest-neighbour limit).
               // Above 1 the kernel is nearly flat (r_i tends to the mean of the other labels);
               // 1e3 is flat to 1e-3 and larger values add nothing.
               "bandwidth", "loo", [](double x) { return x >= 1e-5 && x <= 1e3; }, "in [1e-5, 1e3]",
               "b: leave-one-out maximum likelihood over the authors' 20-point grid, or fixed"),
           param::choice("norm", l1_l2_choices, Norm::l1, "q = 1 or 2 in E ||r(p) - p||_q^q"),
           param::boolean("squared", false,
                          "norm l2: report the estimate of the square instead of its root")},
      .example = R"({"bandwidth": 0.05, "norm": "l2"})",
      .notes =
          {{"target", "canonical_l1 (l1), canonical_l2 (l2); none for l2 squared"},
           {"convention",
            R"(Kernel at p_j evaluated at p_i: Dir(p_i; p_j/b + 1). Leave-one-out Nadaraya-Watson
r_i = sum_{j!=i} k(p_i;p_j) e_yj / sum_{j!=i} k(p_i;p_j), all in log space; S = (1/n)
sum_i ||r_i - p_i||_q^q; l2 reports sqrt(S). log p floored at log(DBL_MIN). Bandwidth
grid logspace(-5,-1,15) + linspace(0.2,1,5), maximising sum_i log mean_{j!=i} k (the
authors also subtract log b). n < 2 gives 0. Cost O(n^2 K + 20 n^2), O(n) memory:
quadratic, only when asked for.)"}},
      .build = build_kde_canonical,
      .extra = {.cost = Cost::quadratic, .interval = IntervalMethod::consistency}};
}

EstimatorEntry skce_estimator() {
  const SkceSpec defaults;
  return {
      .summary =
          "squared kernel calibration error (Widmann, Lindsten & Zachariah 2019), kernel k(p,p') "
          "I_K",
      .params =
          {param::into(
               param::choice(
                   "kernel", skce_kernel_choices, defaults.kernel,
                   "k(p,p') = exp(-|p-p'|^2/(2 l^2)) or exp(-|p-p'|/l), Euclidean on the simplex"),
               &SkceSpec::kernel),
           // Below 1e-3 the Gaussian kernel is exactly 0 for pairs farther apart than 38.6 l
           // (exp underflows) and the estimate is 0 in double precision (l = 1e-4 at n = 50: every
           // replicate 0); above 1e3 both kernels are 1 within 1e-6 on the simplex (diameter
           // sqrt 2) and give one kernel-free value (measured equal at 1e100).
           param::into(
               param::number(
                   "bandwidth", defaults.bandwidth, [](double x) { return x >= 1e-3 && x <= 1e3; },
                   "in [1e-3, 1e3]",
                   R"(l (CalibrationErrors.jl has no default; 1 is its SqExponentialKernel's lengthscale))"),
               &SkceSpec::bandwidth),
           param::into(param::choice("estimator", skce_form_choices, defaults.form,
                                     "linear: O(n) block estimator over pairs (2i, 2i+1); "
                                     "quadratic: O(n^2) U-statistic"),
                       &SkceSpec::form)},
      .example = R"({"kernel": "laplacian", "bandwidth": 0.5, "estimator": "quadratic"})",
      .notes =
          {{"target",
            R"(none: its own population value (SKCE, a squared quantity; both estimators are unbiased for
it, the quadratic one's population value is computed with the linear form))"},
           {"convention",
            R"(h((p,y),(p',y')) = (e_y - p)^T k(p,p') (e_y' - p') = k(p,p')(1{y=y'} - p'_y - p_y' + <p,p'>);
linear: mean of h over the disjoint pairs (X_2i, X_2i+1); quadratic: mean over all i < j.
Values can be negative. n < 2 gives 0.)"}},
      .build = build_skce,
      // percentile, not consistency: on the realistic fakes of docs/intervals.md the linear
      // estimator's percentile interval covered 1.00 in all 12 settings, consistency 0.51-0.82.
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::percentile}};
}

EstimatorEntry smooth_ece_estimator() {
  return {
      .summary = "smooth ECE (Blasiok & Nakkiran 2023), relplot's smECE reproduced to 1e-9",
      .params =
          {param::literal_or_number(
               // The kernel is sampled on max(2000, round(20/sigma)) nodes: sigma 1e-300 asked for
               // 2e301 (the estimate was NaN, written as null); 1e-4 is 200,001 nodes.
               "bandwidth", "fixed_point", [](double x) { return x >= 1e-4 && x <= 1.0; },
               "in [1e-4, 1]",
               "sigma: the fixed point sigma = smECE_sigma (relplot's 10-step bisection), or "
               "fixed"),
           param::choice("scope", smooth_scope_choices, Scope::top,
                         "top label; binary: p_1 against 1{y = 1} (K = 2 only)")},
      .example = R"({"bandwidth": 0.1})",
      .notes =
          {{"target", "none: its own population value"},
           {"convention",
            R"(Top label: f = max p, o = 1{argmax p = y}, residual f - o. relplot 1.0.3 discretisation:
masses split linearly onto max(2000, round(20/sigma))//2+1 nodes, Gaussian kernel sampled
on linspace(0,1) - 1/2 (support |d| <= 1/2), reflection at 0 and 1 without repeating the
end nodes (relplot's artefact: mass at exactly 0 or 1 gets about half weight), values
interpolated at max(200, round(10/sigma)) points, sum|S_r| / sum(S_1 + 1e-4). The fixed
point returns the upper end of the bisection bracket. Cost O(n + grid^2), grid ~1001.
scope binary (K = 2): relplot.smECE(f = p_1, y = 1{y = 1}), relplot's binary smooth ECE.)"}},
      .build = build_smooth_ece,
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::consistency}};
}

// ---- the table ------------------------------------------------------------------------------
// The list of rows, estimator_rows.def (one line per row, naming the file that defines it),
// gives the row functions' declarations and the table: a new estimator is its file and a line
// there.
#define CALBENCH_ESTIMATOR(name, file) EstimatorEntry name##_estimator();
#include "estimators/estimator_rows.def"
#undef CALBENCH_ESTIMATOR

// The estimators a config can name, in listing order.
const std::vector<EstimatorEntry>& estimator_registry() {
  static const std::vector<EstimatorEntry> rows = [] {
    std::vector<EstimatorEntry> out = {
#define CALBENCH_ESTIMATOR(name, file) named(#name, name##_estimator()),
#include "estimators/estimator_rows.def"
#undef CALBENCH_ESTIMATOR
    };
    for (auto& row : out) {
      row.notes.push_back(
          {"cost",
           row.extra.cost == Cost::quadratic
               ? "O(n^2) per evaluation: calbench eval runs it only when asked for"
           : row.extra.cost == Cost::refit ? "a recalibrator fitted on each of k folds per "
                                             "evaluation: calbench eval runs it only when asked for"
           : row.extra.cost == Cost::external
               ? R"(one start of the command per cell (estimator_bias), else per evaluation: calbench eval runs it only when asked for)"
               : "O(n log n) per evaluation at its defaults"});
      row.notes.push_back(
          {"interval", "default method " + std::string(to_string(row.extra.interval)) +
                           (row.extra.interval == IntervalMethod::bias_corrected
                                ? " (consistency where it does not apply: norms other than l1)"
                            : row.extra.interval == IntervalMethod::analytic
                                ? " (consistency where it does not apply: scope classwise)"
                                : "") +
                           (row.extra.interval_when_error
                                ? " (" + std::string(to_string(*row.extra.interval_when_error)) +
                                      " for its configurations that are error measures)"
                                : "") +
                           " (docs/intervals.md: measured coverage)"});
    }
    return out;
  }();
  return rows;
}

const std::vector<Choice<IntervalChoice>>& interval_choices() {
  static const std::vector<Choice<IntervalChoice>> choices = [] {
    std::vector<Choice<IntervalChoice>> out = {{"default", std::nullopt}};
    for (IntervalMethod m : interval_methods()) out.push_back({to_string(m), m});
    return out;
  }();
  return choices;
}

// ---- the section parser ------------------------------------------------------------------

std::optional<EstimatorConfig> parse_estimator(const Json& entry, const std::string& pointer,
                                               Problems& problems, Json& resolved) {
  auto config =
      parse_registry_entry(entry, pointer, problems, resolved, "estimator", estimator_registry());
  if (config)
    for (const auto& row : estimator_registry())
      if (row.name == config->name) {
        config->interval =
            row.extra.interval_when_error && config->estimator->vanishes_when_calibrated()
                ? *row.extra.interval_when_error
                : row.extra.interval;
        config->logs_label_probability = row.extra.logs_label_probability;
        config->may_be_negative = row.extra.may_be_negative;
        config->eval_fake = row.extra.eval_fake;
      }
  // A row's default that does not apply to the configuration falls back to consistency:
  // bias_corrected needs the estimator's bias model (the binned L1 errors), analytic its
  // squared-error variance (ece_debiased with scope top or binary).
  if (config) {
    const Capabilities can = config->estimator->capabilities();
    if ((config->interval == IntervalMethod::bias_corrected && !can.bias_model) ||
        (config->interval == IntervalMethod::analytic && !can.squared_error))
      config->interval = IntervalMethod::consistency;
  }
  return config;
}

}  // namespace calbench
