// Registry row of `corp` (the CORP decomposition of the Brier and log scores).
#include <memory>

#include "config/registry.hpp"
#include "estimators/corp.hpp"
#include "estimators/estimators_json.hpp"

namespace calbench {
namespace {

const std::vector<Choice<CorpScore>> corp_score_choices = {{"brier", CorpScore::brier},
                                                           {"log", CorpScore::log}};
const std::vector<Choice<CorpComponent>> corp_component_choices = {{"score", CorpComponent::score},
                                                                   {"mcb", CorpComponent::mcb},
                                                                   {"dsc", CorpComponent::dsc},
                                                                   {"unc", CorpComponent::unc}};
const std::vector<Choice<Scope>> corp_scope_choices = {{"top", Scope::top},
                                                       {"binary", Scope::binary}};

std::optional<EstimatorConfig> build_corp(Args& a) {
  const CorpSpec spec = a.typed<CorpSpec>();
  EstimatorConfig out;
  auto shown = [&](std::string_view key) { return std::get<std::string>(a.shown(key).data); };
  out.label = "corp_" + shown("component") + "_" + shown("score");
  if (spec.scope == Scope::binary) out.label += "_binary";
  out.params = a.shown();
  out.estimator = std::make_shared<Corp>(spec);
  return out;
}

}  // namespace

EstimatorEntry corp_estimator() {
  const CorpSpec defaults;
  return {
      .summary =
          "CORP decomposition (Dimitriadis, Gneiting & Jordan 2021): miscalibration, "
          "discrimination or uncertainty of the Brier or log score via isotonic (PAV) "
          "recalibration",
      .params = {param::into(param::choice("score", corp_score_choices, defaults.score,
                                           "the proper score: binary Brier (s - o)^2 or log"),
                             &CorpSpec::score),
                 param::into(param::choice("component", corp_component_choices, defaults.component,
                                           "score = mcb - dsc + unc, or one of the three terms"),
                             &CorpSpec::component),
                 param::into(param::choice("scope", corp_scope_choices, defaults.scope,
                                           "top: max p against 1{argmax p = y}; binary (K = 2): "
                                           "p_1 against 1{y = 1}"),
                             &CorpSpec::scope)},
      .example = R"({"score": "log", "component": "dsc"})",
      .notes =
          {{"target",
            R"(none: its own population value; for component mcb, score brier, scope top and a
monotone calibration function it is ece_top_l2^2 (docs/estimators/corp.md))"},
           {"convention",
            R"(PAV of the outcomes on the scores, exact ties pooled first, equal adjacent means pooled
(scikit-learn's IsotonicRegression in-sample fit). With S-bar the mean score of the scores
(f), of the PAV fit (c) and of the mean outcome (r): mcb = S(f) - S(c), dsc = S(r) - S(c),
unc = S(r). Brier is the binary (s - o)^2; log floors s and 1 - s at DBL_MIN.)"}},
      .build = build_corp,
      // mcb, an error bounded at 0 and biased upward by more than its bootstrap spread at large
      // n (docs/intervals.md), takes consistency as ece_sweep does.
      .extra = {.cost = Cost::n_log_n,
                .interval = IntervalMethod::bca,
                .interval_when_error = IntervalMethod::consistency}};
}

}  // namespace calbench
