#include "truth/plugin_truth.hpp"

#include <cmath>
#include <map>
#include <vector>

namespace calbench {
namespace {

// Rows grouped by an exact key: per key, the number of rows and the sum of their outcomes.
template <typename Key>
struct Groups {
  std::map<Key, std::pair<double, double>> sums;  // key -> (rows, outcomes)
  void add(const Key& key, double outcome) {
    auto& s = sums[key];
    s.first += 1.0;
    s.second += outcome;
  }
};

}  // namespace

std::array<std::optional<double>, all_quantities.size()> plugin_truth(const Sample& s) {
  const std::size_t n = s.size, K = s.classes;
  const double N = static_cast<double>(n);
  std::array<std::optional<double>, all_quantities.size()> out;
  auto set = [&](Quantity q, std::optional<double> v) { out[static_cast<std::size_t>(q)] = v; };
  double correct = 0.0, confidence = 0.0, brier = 0.0, nll = 0.0;
  Groups<double> top;
  std::vector<Groups<double>> per_class(K);
  std::map<std::vector<double>, std::vector<double>> label_counts;  // p -> counts per class
  std::vector<double> key;
  for (std::size_t i = 0; i < n; ++i) {
    const auto row = s.row(i);
    correct += s.correct(i) ? 1.0 : 0.0;
    confidence += s.confidence[i];
    top.add(s.confidence[i], s.correct(i) ? 1.0 : 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      const double hit = s.label[i] == k ? 1.0 : 0.0;
      brier += (row[k] - hit) * (row[k] - hit);
      per_class[k].add(row[k], hit);
    }
    nll -= std::log(row[s.label[i]]);
    key.assign(row.begin(), row.end());  // one buffer: a new vector only for a new key
    auto it = label_counts.find(key);
    if (it == label_counts.end()) it = label_counts.emplace(key, std::vector<double>(K)).first;
    it->second[s.label[i]] += 1.0;
  }
  set(Quantity::accuracy, correct / N);
  set(Quantity::overconfidence, (confidence - correct) / N);
  set(Quantity::brier, brier / N);
  set(Quantity::nll, std::isfinite(nll) ? std::optional(nll / N) : std::nullopt);
  double l1 = 0.0, l2 = 0.0;
  for (const auto& [z, s_] : top.sums) {
    const double gap = s_.second / s_.first - z;
    l1 += s_.first / N * std::fabs(gap);
    l2 += s_.first / N * gap * gap;
  }
  set(Quantity::ece_top_l1, l1);
  set(Quantity::ece_top_l2, std::sqrt(l2));
  double classwise = 0.0;
  for (const auto& g : per_class)
    for (const auto& [pk, s_] : g.sums)
      classwise += s_.first / N * std::fabs(s_.second / s_.first - pk);
  set(Quantity::classwise_ece_l1, classwise / static_cast<double>(K));
  double c1 = 0.0, c2 = 0.0;
  for (const auto& [p, counts] : label_counts) {
    double rows = 0.0;
    for (double c : counts) rows += c;
    for (std::size_t k = 0; k < K; ++k) {
      const double d = counts[k] / rows - p[k];
      c1 += rows / N * std::fabs(d);
      c2 += rows / N * d * d;
    }
  }
  set(Quantity::canonical_l1, c1);
  set(Quantity::canonical_l2, std::sqrt(c2));
  return out;
}

}  // namespace calbench
