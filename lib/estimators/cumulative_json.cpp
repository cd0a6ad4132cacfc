// Registry rows of the calibration tests (ks_calibration, kuiper_calibration, spiegelhalter):
// parameters, documentation and construction from a config entry.
#include <memory>

#include "config/registry.hpp"
#include "core/format.hpp"
#include "estimators/cumulative.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/spiegelhalter.hpp"

namespace calbench {
namespace {

const std::vector<Choice<Scope>> test_scope_choices = {{"top", Scope::top},
                                                       {"binary", Scope::binary}};
const std::vector<Choice<TestOutput>> output_choices = {{"statistic", TestOutput::statistic},
                                                        {"normalized", TestOutput::normalized},
                                                        {"p_value", TestOutput::p_value},
                                                        {"reject", TestOutput::reject}};
const TestSettings test_defaults;

std::vector<Param> test_params(std::string normalized_doc) {
  return {param::choice("scope", test_scope_choices, Scope::top,
                        "top: max p against 1{argmax p = y}; binary (K = 2): p_1 against 1{y = 1}"),
          param::choice("output", output_choices, test_defaults.output,
                        "statistic, " + std::move(normalized_doc) +
                            ", the analytic p-value of calibration, or 1{p <= level}"),
          param::number(
              "level", test_defaults.level, [](double x) { return x > 0.0 && x < 1.0; },
              "in (0, 1)", "output reject: the test's level")};
}

// The label: the row name, then _binary, then _norm, _p or _reject_LEVEL.
template <typename Spec>
EstimatorConfig test_config(const Args& a, const Spec& spec, std::shared_ptr<const Estimator> e) {
  EstimatorConfig out;
  out.label = a.name();
  out.params = a.shown();
  out.estimator = std::move(e);
  if (spec.scope == Scope::binary) out.label += "_binary";
  switch (spec.test.output) {
    case TestOutput::statistic:
      break;
    case TestOutput::normalized:
      out.label += "_norm";
      break;
    case TestOutput::p_value:
      out.label += "_p";
      break;
    case TestOutput::reject:
      out.label += "_reject" + format_double(spec.test.level);
      break;
  }
  return out;
}

TestSettings read_test(const Args& a) {
  return {.output = a.get<TestOutput>("output"), .level = a.get<double>("level")};
}

std::optional<EstimatorConfig> build_cumulative(Args& a, CumulativeStatistic statistic) {
  const CumulativeSpec spec{
      .statistic = statistic, .scope = a.get<Scope>("scope"), .test = read_test(a)};
  return test_config(a, spec, std::make_shared<CumulativeCalibration>(spec));
}

std::optional<EstimatorConfig> build_ks(Args& a) {
  return build_cumulative(a, CumulativeStatistic::ks);
}

std::optional<EstimatorConfig> build_kuiper(Args& a) {
  return build_cumulative(a, CumulativeStatistic::kuiper);
}

std::optional<EstimatorConfig> build_spiegelhalter(Args& a) {
  const SpiegelhalterSpec spec{.scope = a.get<Scope>("scope"), .test = read_test(a)};
  return test_config(a, spec, std::make_shared<Spiegelhalter>(spec));
}

constexpr const char* cumulative_convention =
    R"(Scores s (top: max p; binary: p_1) and outcomes o (top: 1{argmax p = y}; binary: 1{y = 1})
sorted by score; C_0 = 0, C_j = (1/n) sum_{i<=j} (o_i - s_i) at the end of each run of tied
scores (row order of ties does not matter). KS = max |C_j|, Kuiper = max C_j - min C_j.
sigma = sqrt(sum s(1-s))/n; normalized = T/sigma (+inf when sigma = 0 < T); p-value = 1 - F(T/sigma),
F the cdf of max|W| (KS) or of max W - min W (Kuiper), W a standard Brownian motion on [0, 1]
(Tygert 2023). Reproduces MCGrad's ecce / ecce_sigma / ecce_pvalue and Tygert's
ecevecce code to 1e-12 on data without ties (tests/reference/cumulative.json).)";

constexpr const char* test_target =
    R"(none: its own population value (output statistic), sup_t over thresholds of the population
cumulative difference, computed with c in place of the label (docs/estimators/tests.md);
none at all for normalized, p_value and reject (mean and sd only: the mean of reject is
the rejection rate))";

}  // namespace

EstimatorEntry ks_calibration_estimator() {
  return {.summary =
              "Kolmogorov-Smirnov calibration statistic (Gupta et al. 2021 KS; ECCE-MAD of "
              "Arrieta-Ibarra et al. 2022) with its analytic p-value",
          .params = test_params("KS/sigma"),
          .example = R"({"output": "p_value"})",
          .notes = {{"target", test_target}, {"convention", cumulative_convention}},
          .build = build_ks,
          .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::consistency}};
}

EstimatorEntry kuiper_calibration_estimator() {
  return {.summary =
              "Kuiper calibration statistic (ECCE-R of Arrieta-Ibarra et al. 2022, MCGrad's "
              "ecce) with its analytic p-value",
          .params = test_params("Kuiper/sigma"),
          .example = R"({"output": "reject", "level": 0.01})",
          .notes = {{"target", test_target}, {"convention", cumulative_convention}},
          .build = build_kuiper,
          .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::consistency}};
}

EstimatorEntry spiegelhalter_estimator() {
  return {
      .summary = "Spiegelhalter's (1986) Z test of calibration: statistic, Z or two-sided p-value",
      .params = test_params("Z"),
      .example = R"({"output": "normalized"})",
      .notes =
          {{"target",
            R"(none: its own population value E[(r(s) - s)(1 - 2s)] (output statistic), 0 under
calibration; none at all for normalized, p_value and reject)"},
           {"convention",
            R"(Scores s and outcomes o as ks_calibration. N = sum (o - s)(1 - 2s), V = sum (1 - 2s)^2 s(1 - s);
statistic N/n (signed: > 0 for an overconfident model at K = 2), Z = N/sqrt(V),
p = erfc(|Z|/sqrt 2) (two-sided); V = 0: Z = +-inf, p = 0 when N != 0, else Z = 0, p = 1.
Equals rms::val.prob's Z (R) and the cali_tutorial formula (tests/reference/cumulative.json).)"}},
      .build = build_spiegelhalter,
      .extra = {.cost = Cost::n_log_n, .interval = IntervalMethod::bca, .may_be_negative = true}};
}

}  // namespace calbench
