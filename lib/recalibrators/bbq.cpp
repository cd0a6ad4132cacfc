#include "recalibrators/bbq.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"
#include "recalibrators/score_bins.hpp"

namespace calbench {
namespace {

struct BinningModel {
  std::vector<double> edges, values;
  double weight = 0.0;
};

class BbqMap : public BinaryMap {
 public:
  explicit BbqMap(std::vector<BinningModel> models) : models_(std::move(models)) {}
  double operator()(double s) const override {
    double q = 0.0;
    for (const auto& m : models_) q += m.weight * m.values[bin_of(s, m.edges)];
    return q;
  }
  std::vector<FittedValue> parameters() const override {
    double bins = 0.0;
    for (const auto& m : models_) bins += m.weight * static_cast<double>(m.values.size());
    return {{"models", static_cast<double>(models_.size())}, {"bins_posterior_mean", bins}};
  }
  // One part per binning model: its edges, values and posterior weight.
  FittedState state() const override {
    FittedState out{.kind = "bbq"};
    for (const auto& m : models_)
      out.parts.push_back({.kind = "weighted_steps",
                           .scalars = {{"weight", m.weight}},
                           .arrays = {{"edges", m.edges}, {"values", m.values}}});
    return out;
  }

 private:
  std::vector<BinningModel> models_;
};

}  // namespace

std::unique_ptr<const BinaryMap> bbq_map(std::vector<std::vector<double>> edges,
                                         std::vector<std::vector<double>> values,
                                         std::vector<double> weights) {
  std::vector<BinningModel> models(weights.size());
  for (std::size_t j = 0; j < models.size(); ++j)
    models[j] = {std::move(edges[j]), std::move(values[j]), weights[j]};
  return std::make_unique<BbqMap>(std::move(models));
}

BbqCalibrator::BbqCalibrator(double prior_strength) : prior_strength_(prior_strength) {
  if (!(prior_strength_ > 0.0) || !std::isfinite(prior_strength_))
    throw DomainError("bbq: prior_strength = " + format_double(prior_strength_) + ": must be > 0");
}

std::unique_ptr<const BinaryMap> BbqCalibrator::fit(std::span<const double> scores,
                                                    std::span<const double> outcomes,
                                                    const std::string& what) const {
  const std::size_t n = scores.size();
  if (n == 0) throw DomainError(what + ": the fit sample is empty");
  constexpr double C = 10.0;
  const double root = std::cbrt(static_cast<double>(n));
  const auto lo = static_cast<std::size_t>(std::max(1.0, std::ceil(root / C)));
  const auto hi = std::min(n, std::max(lo, static_cast<std::size_t>(std::floor(C * root))));
  std::vector<BinningModel> models;
  std::vector<double> log_score;
  for (std::size_t B = lo; B <= hi; ++B) {
    BinningModel m;
    m.edges = interior_edges(scores, B, ScoreBinning::equal_mass);
    const std::size_t bins = m.edges.size() + 1;
    std::vector<double> count(bins, 0.0), positives(bins, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t b = bin_of(scores[i], m.edges);
      count[b] += 1.0;
      positives[b] += outcomes[i];
    }
    const double a0 = prior_strength_ / static_cast<double>(bins);
    double ls = 0.0;
    m.values.resize(bins);
    for (std::size_t b = 0; b < bins; ++b) {
      const double left = b == 0 ? 0.0 : m.edges[b - 1];
      const double right = b + 1 == bins ? 1.0 : m.edges[b];
      const double e = std::clamp(0.5 * (left + right), 1e-6, 1.0 - 1e-6);
      const double alpha = a0 * e, beta = a0 * (1.0 - e);
      ls += std::lgamma(a0) - std::lgamma(count[b] + a0) + std::lgamma(positives[b] + alpha) -
            std::lgamma(alpha) + std::lgamma(count[b] - positives[b] + beta) - std::lgamma(beta);
      m.values[b] = (positives[b] + alpha) / (count[b] + a0);
    }
    models.push_back(std::move(m));
    log_score.push_back(ls);
  }
  const double top = *std::max_element(log_score.begin(), log_score.end());
  double total = 0.0;
  for (std::size_t j = 0; j < models.size(); ++j) {
    models[j].weight = std::exp(log_score[j] - top);
    total += models[j].weight;
  }
  // Models with negligible weight are dropped (they change no output by more than 1e-15).
  std::vector<BinningModel> kept;
  for (auto& m : models) {
    m.weight /= total;
    if (m.weight > 1e-15) kept.push_back(std::move(m));
  }
  double kept_total = 0.0;
  for (const auto& m : kept) kept_total += m.weight;
  for (auto& m : kept) m.weight /= kept_total;
  return std::make_unique<BbqMap>(std::move(kept));
}

}  // namespace calbench
