// Registry rows of the binned estimators (ece, classwise_ece, ace, ece_debiased, ece_sweep):
// their parameters, documentation and construction from a config entry. Each parameter is read
// into its member of the row's spec (param::into: BinnedEceSpec, EceSweepSpec), which the
// build takes whole.
#include <memory>

#include "config/registry.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/convention.hpp"
#include "estimators/ece_sweep.hpp"
#include "estimators/estimators_json.hpp"

namespace calbench {
namespace {

const std::vector<Choice<Binning>> binning_choices = {
    {to_string(Binning::equal_width), Binning::equal_width},
    {to_string(Binning::equal_mass), Binning::equal_mass}};
const std::vector<Choice<Norm>> norm_choices = {{"l1", Norm::l1},
                                                {"l2", Norm::l2},
                                                {"max", Norm::max},
                                                {"average", Norm::average},
                                                {"lp", Norm::lp}};
const std::vector<Choice<Norm>> l1_l2_choices = {{"l1", Norm::l1}, {"l2", Norm::l2}};
const std::vector<Choice<Scope>> scope_choices = {
    {"top", Scope::top}, {"classwise", Scope::classwise}, {"binary", Scope::binary}};

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

// `threshold`: a number in [0, 1), 0 when absent.
bool unit_half_open(double x) {
  return x >= 0.0 && x < 1.0;
}

Param read_after(Param p, std::string key) {
  p.after = std::move(key);
  return p;
}

// The convention is read first: it sets the default number of bins.
Param convention_param(const Convention& fallback, std::string doc) {
  Param p = param::choice("convention", convention_choices(), &fallback, std::move(doc));
  p.rule = "a convention (see convention)";  // the full list is in the convention note
  return param::into(std::move(p), &BinnedEceSpec::convention);
}
Param bins_param() {
  return param::into(param::at_most(param::integer_after(
                                        "bins", 1, "convention",
                                        [](const Args& a) {
                                          return static_cast<std::int64_t>(
                                              a.get<const Convention*>("convention")->default_bins);
                                        },
                                        std::to_string(calbench_convention().default_bins) +
                                            " (calbench; else the convention's)",
                                        "number of bins B"),
                                    max_bins),
                     &BinnedEceSpec::bins);
}
Param binning_param(Binning fallback, std::string doc = "how the scores are binned") {
  return param::into(param::choice("binning", binning_choices, fallback, std::move(doc)),
                     &BinnedEceSpec::binning);
}
Param norm_param(std::string doc) {
  return param::into(param::choice("norm", norm_choices, Norm::l1, std::move(doc)),
                     &BinnedEceSpec::norm);
}
Param scope_param(std::string doc) {
  return param::into(param::choice("scope", scope_choices, Scope::top, std::move(doc)),
                     &BinnedEceSpec::scope);
}
Param threshold_param(std::string doc) {
  return param::into(param::number("threshold", 0.0, unit_half_open, "in [0, 1)", std::move(doc)),
                     &BinnedEceSpec::threshold);
}

bool at_least_one(double x) {
  return x >= 1.0;
}
// The exponent of norm lp.
Param power_param() {
  return param::into(
      param::number("p", 2.0, at_least_one, ">= 1",
                    "norm lp: (sum_b (n_b/n) |gap_b|^p)^(1/p); ignored by the other norms"),
      &BinnedEceSpec::power);
}

const char* const convention_doc = "whose binning conventions to follow (see convention)";

// "ece_ew15", "cwece_em10_l2", "ece_ew15_binary_sklearn": binning and bins always, then
// whatever is not the default. The reported params follow the same rules.
EstimatorConfig binned_estimator(std::string stem, const BinnedEceSpec& spec, Scope default_scope) {
  EstimatorConfig out;
  out.label = stem + (spec.binning == Binning::equal_width ? "_ew" : "_em");
  out.label += std::to_string(spec.bins);
  if (!spec.debiased && spec.norm == Norm::lp)
    out.label += "_l" + format_double(spec.power);
  else if (!spec.debiased && spec.norm != Norm::l1)
    out.label += "_" + choice_name(norm_choices, spec.norm);
  if (spec.scope != default_scope) out.label += "_" + choice_name(scope_choices, spec.scope);
  if (spec.threshold > 0.0) out.label += "_t" + Json(spec.threshold).dump();
  if (spec.squared) out.label += "_sq";
  if (spec.convention != nullptr && spec.convention != &calbench_convention())
    out.label += "_" + std::string(spec.convention->name);
  out.params = {{"bins", static_cast<std::int64_t>(spec.bins)},
                {"binning", choice_name(binning_choices, spec.binning)}};
  if (!spec.debiased) out.params.push_back({"norm", choice_name(norm_choices, spec.norm)});
  if (!spec.debiased && spec.norm == Norm::lp) out.params.push_back({"p", spec.power});
  if (spec.scope != Scope::classwise || spec.debiased)
    out.params.push_back({"scope", choice_name(scope_choices, spec.scope)});
  if (spec.scope == Scope::classwise && !spec.debiased)
    out.params.push_back({"threshold", spec.threshold});
  out.params.push_back({"convention", std::string(spec.convention->name)});
  if (spec.debiased) out.params.push_back({"squared", spec.squared});
  out.estimator = std::make_shared<BinnedEce>(spec);
  return out;
}

// What a row fixes is set here; the rest of BinnedEceSpec, its parameters, were read into it.
std::optional<EstimatorConfig> build_ece(Args& a) {
  return binned_estimator("ece", a.typed<BinnedEceSpec>(), Scope::top);
}

std::optional<EstimatorConfig> build_classwise_ece(Args& a) {
  BinnedEceSpec spec = a.typed<BinnedEceSpec>();
  spec.scope = Scope::classwise;
  return binned_estimator("cwece", spec, Scope::classwise);
}

std::optional<EstimatorConfig> build_ace(Args& a) {
  BinnedEceSpec spec = a.typed<BinnedEceSpec>();  // norm l1, its default
  spec.binning = Binning::equal_mass;             // the convention's equal-mass ranges
  spec.scope = Scope::classwise;
  auto out = binned_estimator("ace", spec, Scope::classwise);
  std::erase_if(out.params, [](const NamedParam& p) {
    return p.key == "binning" || p.key == "scope" || p.key == "norm";
  });
  out.label = "ace" + out.label.substr(6);  // "ace_em15..." -> "ace15..."
  return out;
}

std::optional<EstimatorConfig> build_ece_debiased(Args& a) {
  BinnedEceSpec spec = a.typed<BinnedEceSpec>();
  spec.norm = Norm::l2;
  spec.debiased = true;
  return binned_estimator("dece", spec, Scope::top);
}

std::optional<EstimatorConfig> build_ece_sweep(Args& a) {
  const EceSweepSpec spec = a.typed<EceSweepSpec>();
  EstimatorConfig out;
  out.label = std::string("ece_sweep") + (spec.binning == Binning::equal_width ? "_ew" : "_em") +
              (spec.norm == Norm::l2 ? "_l2" : "");
  out.params = a.shown();
  out.estimator = std::make_shared<EceSweep>(spec);
  return out;
}

// Copied from lib/estimators/binning.hpp, which is the authority.
constexpr const char* binning_conventions =
    R"(equal_width: B bins over [0, 1] with edges e_i = i/B computed by division (so 0.3 is the
double nearest 3/10, not linspace's 0.30000000000000004). Bins are right-closed
(e_i, e_i+1] as in Guo et al. 2017; 0 goes to the first bin; values outside [0, 1] are
clamped into the first or last bin.
equal_mass: the sorted scores are split into B contiguous parts whose sizes differ by at
most one, the first n mod B parts one larger (numpy.array_split); B := n when B > n. The
edge between two parts is the midpoint of the last score of one and the first of the
next, bins right-closed: a run of tied scores that straddles a split goes wholly to the
lower bin, which may leave a bin empty. This is the partition of Kumar et al. 2019's
`calibration` package.
Empty bins contribute nothing (and are not counted by the max norm).
Scores are the confidences max_k p_k, outcomes 1{argmax p = y} (lowest index on ties).
l1: sum_b (n_b/n) |mean_b(o) - mean_b(s)|; l2: sqrt(sum_b (n_b/n) (mean_b(o) - mean_b(s))^2);
max: max over non-empty b of |mean_b(o) - mean_b(s)|.)";

// Shared by the binned rows: the conventions (estimators/convention.hpp, docs/conventions.md).
constexpr const char* convention_text =
    R"(convention: calbench (default) or a library whose numbers to reproduce: kumar, sklearn,
kyle, netcal, robustness_metrics, nixon, torchmetrics (float32 multiclass),
torchmetrics_binary (float64), pycalib, relplot, caltrain (checked against a numpy
evaluation of its rules, not against caltrain itself), tensorflow and tfp (TF's
floor(B s) bins clipped to [0, B-1]; equal mass: TFP's quantile buckets, edges
sort(s)[round_half_even((n-1) j/B)], j = 0..B, [e_j, e_j+1); checked against a numpy
transcription, TF being unavailable; default bins 15 and 20), mapie (digitize on
linspace(0, 1, B), right-closed: a bin of its own for scores of exactly 0, then B-1 bins;
equal mass: B edges np.percentile(s, 100 j/(B-1)), the minimum alone in bin 0; B >= 2;
default 50). A convention fixes the edge arithmetic (division i/B; numpy linspace i*(1/B);
torch's symmetric linspace; PyCalib's linspace(0, 1+1e-8)), the closed side (right:
calbench, kumar, sklearn, kyle; left: netcal, rm, torchmetrics, pycalib, caltrain), whether scores
>= 1 get an extra bin (torchmetrics, robustness_metrics, relplot), the equal-mass rule
(kumar split at midpoints; numpy.quantile: sklearn, kyle, netcal with 0 and 1 outer
edges; Nixon: sort(s)[round_half_even(i n / B)], left-closed; caltrain: rank r in bin
floor(r B / n)), classwise zero dropping
(rm, nixon: p_k > threshold strictly), and the default bins (sklearn 5, kyle/netcal/
relplot 10, others 15). Every library averages classwise errors over classes.)";

}  // namespace

EstimatorEntry ece_estimator() {
  return {
      .summary =
          "top-label binned expected calibration error (Guo et al. 2017, eq. 3; norm max is MCE)",
      .params = {bins_param(),
                 binning_param(Binning::equal_width, "how the confidences are binned"),
                 norm_param("how the per-bin gaps are combined"), power_param(),
                 scope_param("top label; every class; p_1 vs 1{y=1} (K = 2 only, else an error)"),
                 convention_param(calbench_convention(), convention_doc)},
      .example = R"({"bins": 10, "binning": "equal_mass", "norm": "l2"})",
      .notes =
          {{"target",
            R"(ece_top_l1 (norm l1), ece_top_l2 (norm l2), scope top, calbench-like convention; none
for max, average, scope binary and conventions that drop zeros)"},
           {"convention", std::string(binning_conventions) +
                              R"(
average: the unweighted mean of |gap_b| over non-empty bins (netcal/kyle "ACE").
lp: (sum_b (n_b/n) |gap_b|^p)^(1/p), any p >= 1 (Kumar et al.'s plugin_ce(power = p)).
scope binary (K = 2 only, a DomainError otherwise): scores p_1, outcomes 1{y = 1}.
)" + convention_text}},
      .build = build_ece,
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::bias_corrected}};
}

EstimatorEntry classwise_ece_estimator() {
  return {
      .summary =
          "classwise ECE (Kull et al. 2019) = SCE (Nixon et al. 2019); TACE with a threshold",
      .params = {bins_param(), binning_param(Binning::equal_width),
                 norm_param("per-class combination of bins"), power_param(),
                 threshold_param("class k keeps rows with p_k > threshold (when > 0)"),
                 convention_param(calbench_convention(), convention_doc)},
      .example = R"({"bins": 10, "threshold": 0.001})",
      .notes =
          {{"target",
            "classwise_ece_l1 (norm l1, threshold 0, a convention that keeps zeros); none "
            "otherwise"},
           {"convention",
            R"((1/K) sum_k CE_k, CE_k the binned error of the scores p_k against 1{y = k} over the
n_k rows kept for class k (all n at threshold 0), weights n_kb / n_k; norm l2 reports
sqrt((1/K) sum_k CE_k^2) (Kumar et al.'s marginal mode), norm lp ((1/K) sum_k CE_k^p)^(1/p).
Bins as ece.
)" + std::string(binning_conventions) +
                "\n" + convention_text}},
      .build = build_classwise_ece,
      .extra =  // consistency, not bias_corrected: the bias model cannot see a binning bias, and
                // classwise gaps change sign within bins, so bias_corrected covered 0.01 at K =
                // 100, n = 1,000, T = 0.7 where consistency covered 0.80 (docs/intervals.md).
                // eval: the fake interval's hull with it, which covered the classwise ECE of
                // real models where consistency did not (docs/intervals.md, "Defaults").
      {.cost = Cost::n_log_n, .interval = IntervalMethod::consistency, .eval_fake = true}};
}

EstimatorEntry ace_estimator() {
  return {
      .summary = "adaptive calibration error, exactly as Nixon et al. 2019 print it",
      .params =
          {param::into(read_after(param::at_most(param::integer("bins", 1, 15, "number of bins B"),
                                                 max_bins),
                                  "convention"),
                       &BinnedEceSpec::bins),
           threshold_param("keep p_k > threshold; 1e-3 gives their TACE"),
           convention_param(
               *find_convention("nixon"),
               R"(nixon: the paper; robustness_metrics: weights n_kb/n_k; others: that library's
equal-mass classwise ECE)")},
      .example = R"({"bins": 10, "threshold": 0.001})",
      .notes =
          {{"target", "none (its own population value)"},
           {"convention",
            R"(ACE = (1/(K R)) sum_k sum_r |acc(r, k) - conf(r, k)|, R = B ranges per class, built on
the scores p_k > threshold of class k (strictly, so exact zeros drop out even at 0):
range edges sort(p_k)[round_half_even(i n_k / B)], i < B, left-closed, scores >= 1 in
an extra range; empty ranges count 0 and stay in R. Unweighted, so it collapses when
ranges are empty (nixon_pathology: 0.094 where the weighted form gives 0.465).
A class with no kept rows contributes 0 and is still divided by K. Not netcal's or
kyle's "ACE" (average calibration error: ece with norm average).
)" + std::string(convention_text)}},
      .build = build_ace,
      // eval: the fake interval's hull with it, which covered ace's value on real models where
      // bias_corrected did not (docs/intervals.md, "Defaults").
      .extra = {
          .cost = Cost::n_log_n, .interval = IntervalMethod::bias_corrected, .eval_fake = true}};
}

EstimatorEntry ece_debiased_estimator() {
  return {
      .summary = "debiased plug-in estimate of the binned L2 calibration error (Kumar et al. 2019)",
      .params =
          {bins_param(), binning_param(Binning::equal_mass),
           scope_param("top label; classwise (Kumar's marginal mode); binary (K = 2)"),
           param::into(
               param::boolean(
                   "squared", false,
                   R"(report the unbiased estimate of the square (may be < 0) instead of its root)"),
               &BinnedEceSpec::squared),
           convention_param(calbench_convention(), convention_doc)},
      .example = R"({"bins": 10, "scope": "classwise"})",
      .notes =
          {{"target", "ece_top_l2 (scope top, squared false); none otherwise"},
           {"convention",
            R"(S = sum_b (n_b/n) [(mean_b s - mean_b o)^2 - mean_b o (1 - mean_b o) / (n_b - 1)]
(Kumar et al. 2019, Verified Uncertainty Calibration, sec. 5). A bin with n_b < 2 has
no variance estimate: it contributes 0, its biased term included (Kumar's
`calibration`); convention torchmetrics keeps the biased term. squared false reports
sqrt(max(0, S)), biased for ece_top_l2 by the clipping and the root; squared true
reports S, unbiased for the squared binned error. classwise: sqrt((1/K) sum_k
max(0, S_k)) (squared: (1/K) sum_k S_k). Default bins: 15 equal-mass (Kumar's split).
)" + std::string(binning_conventions)}},
      .build = build_ece_debiased,
      // analytic, not consistency: on the 36 settings of docs/intervals.md's tables it covers
      // within 0.05 of 0.90 (or above) in 21, consistency in 13 (a near-calibrated fake of a
      // scikit-learn MLP, K = 3, n = 200: 0.81 against 0.58).
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::analytic}};
}

EstimatorEntry ece_sweep_estimator() {
  return {
      .summary = "ECE at the largest monotone number of bins (Roelofs et al. 2022)",
      .params = {param::into(param::choice("binning", binning_choices, Binning::equal_mass,
                                           "equal_mass: row of rank r in bin floor((r/n) b); "
                                           "equal_width: floor(s b)"),
                             &EceSweepSpec::binning),
                 param::into(param::choice("norm", l1_l2_choices, Norm::l1,
                                           "how the per-bin gaps are combined"),
                             &EceSweepSpec::norm)},
      .example = R"({"binning": "equal_width", "norm": "l2"})",
      .notes =
          {{"target", "ece_top_l1 (l1), ece_top_l2 (l2)"},
           {"convention",
            R"(Bins of the authors' code (google-research/caltrain): confidences sorted stably; the
row of rank r in equal-mass bin min(b-1, floor((r/n) b)) (ties may split), or in
equal-width bin min(b-1, floor(s b)) ([j/b, (j+1)/b), 1.0 in the last). b = 2, 3, ...
scanned upward to n-1 as caltrain does, while the accuracies of the non-empty bins are
non-decreasing; b* = the last monotone b (1 if b = 2 fails or n <= 2), no cap. Reports
the l1 / l2 binned ECE at b*. One sort, then O(b) per b (equal width O(min(b log n, n)));
all wrong rows below all correct ones: b* = n-1 without a scan.)"}},
      .build = build_ece_sweep,
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::consistency}};
}

}  // namespace calbench
