#include "estimators/corp.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "core/error.hpp"
#include "estimators/cumulative.hpp"
#include "estimators/isotonic_fit.hpp"

namespace calbench {
namespace {

// S(s, 1) and S(s, 0).
struct ScorePair {
  double one, zero;
};

ScorePair score_of(CorpScore score, double s) {
  if (score == CorpScore::brier) return {(1.0 - s) * (1.0 - s), s * s};
  return {-std::log(std::max(s, DBL_MIN)), -std::log(std::max(1.0 - s, DBL_MIN))};
}

// Total score of `weight` rows with outcome sum `hits`, all scored s: hits S(s,1) + rest S(s,0).
// A term whose weight is 0 adds nothing even where its score is large (s = 1, no misses).
double total_score(CorpScore score, double s, double hits, double weight) {
  const ScorePair v = score_of(score, s);
  const double misses = weight - hits;
  return (hits != 0.0 ? hits * v.one : 0.0) + (misses != 0.0 ? misses * v.zero : 0.0);
}

}  // namespace

CorpDecomposition corp_decomposition(std::span<const double> scores,
                                     std::span<const double> outcomes, CorpScore score,
                                     std::span<const std::uint32_t> order) {
  const std::size_t n = scores.size();
  CorpDecomposition out;
  if (n == 0) return out;
  const IsotonicFit fit = isotonic_fit(scores, outcomes, 0.0, order);
  double original = 0.0, recalibrated = 0.0, hits = 0.0;
  for (std::size_t i = 0; i < n; ++i) original += total_score(score, scores[i], outcomes[i], 1.0);
  for (std::size_t j = 0; j < fit.x.size(); ++j) {
    recalibrated += total_score(score, fit.y[j], fit.sum[j], fit.weight[j]);
    hits += fit.sum[j];
  }
  const double N = static_cast<double>(n);
  const double climatology = total_score(score, hits / N, hits, N);
  out.score = original / N;
  out.mcb = (original - recalibrated) / N;
  out.dsc = (climatology - recalibrated) / N;
  out.unc = climatology / N;
  return out;
}

Corp::Corp(CorpSpec spec) : spec_(spec) {
  if (spec_.scope == Scope::classwise) throw DomainError("corp: scope must be top or binary");
}

std::optional<std::string> Corp::classes_problem(std::size_t classes) const {
  if (spec_.scope == Scope::binary && classes != 2)
    return "scope binary needs K = 2 classes, found K = " + std::to_string(classes);
  return std::nullopt;
}

double Corp::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  return estimate_in_order(s, {}, ws);
}

double Corp::estimate_in_order(const Sample& s, std::span<const std::uint32_t> order,
                               EstimatorWorkspace& ws) const {
  if (const auto problem = classes_problem(s.classes)) throw DomainError(*problem);
  fill_scope(s, spec_.scope, ws);
  // At scope top the scores are the confidences, whose order a resample may know.
  if (spec_.scope != Scope::top) order = {};
  const CorpDecomposition d = corp_decomposition(ws.scores, ws.outcomes, spec_.score, order);
  switch (spec_.component) {
    case CorpComponent::score:
      return d.score;
    case CorpComponent::mcb:
      return d.mcb;
    case CorpComponent::dsc:
      return d.dsc;
    case CorpComponent::unc:
      return d.unc;
  }
  return d.mcb;
}

}  // namespace calbench
