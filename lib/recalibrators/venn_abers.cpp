#include "recalibrators/venn_abers.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace calbench {
namespace {

class VennAbersMap : public BinaryMap {
 public:
  explicit VennAbersMap(VennAbersPairs pairs) : pairs_(std::move(pairs)) {}

  double operator()(double s) const override {
    const auto& c = pairs_.c;
    const auto above =
        static_cast<std::size_t>(std::upper_bound(c.begin(), c.end(), s) - c.begin());
    const auto below =
        static_cast<std::size_t>(std::lower_bound(c.begin(), c.end(), s) - c.begin());
    const double p0 = pairs_.p0[above], p1 = pairs_.p1[below];
    return p1 / (1.0 - p0 + p1);
  }
  std::vector<FittedValue> parameters() const override {
    double width = 0.0;  // the mean width p1 - p0 of the multiprobability pairs over the gaps
    for (std::size_t i = 0; i < pairs_.p0.size(); ++i) width += pairs_.p1[i] - pairs_.p0[i];
    return {{"interval_width", width / static_cast<double>(pairs_.p0.size())}};
  }
  FittedState state() const override {
    return {.kind = "venn_abers",
            .arrays = {{"c", pairs_.c}, {"p0", pairs_.p0}, {"p1", pairs_.p1}}};
  }

 private:
  VennAbersPairs pairs_;
};

// A block of pooled rows, in a persistent stack: `below` is the next block away from the gap.
struct Block {
  double sum = 0.0, weight = 0.0;
  int below = -1;
  double value() const { return sum / weight; }
};

}  // namespace

VennAbersPairs venn_abers_pairs(std::span<const double> scores, std::span<const double> outcomes) {
  const std::size_t n = scores.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  // Distinct scores (exact ties pooled, as numpy.unique in the package) with sums and counts.
  VennAbersPairs out;
  std::vector<double> sum, weight;
  for (std::size_t idx : order) {
    if (out.c.empty() || scores[idx] != out.c.back()) {
      out.c.push_back(scores[idx]);
      sum.push_back(0.0);
      weight.push_back(0.0);
    }
    sum.back() += outcomes[idx];
    weight.back() += 1.0;
  }
  const std::size_t m = out.c.size();
  // prefix_top[t]: the top block of PAV on groups 0..t-1; suffix_top[t]: on groups t..m-1.
  std::vector<Block> blocks;
  blocks.reserve(2 * m);
  std::vector<int> prefix_top(m + 1, -1), suffix_top(m + 1, -1);
  for (std::size_t i = 0; i < m; ++i) {
    Block b{sum[i], weight[i], prefix_top[i]};
    while (b.below >= 0 && blocks[static_cast<std::size_t>(b.below)].value() >= b.value()) {
      const Block& left = blocks[static_cast<std::size_t>(b.below)];
      b = {b.sum + left.sum, b.weight + left.weight, left.below};
    }
    blocks.push_back(b);
    prefix_top[i + 1] = static_cast<int>(blocks.size() - 1);
  }
  for (std::size_t i = m; i-- > 0;) {
    Block b{sum[i], weight[i], suffix_top[i + 1]};
    while (b.below >= 0 && b.value() >= blocks[static_cast<std::size_t>(b.below)].value()) {
      const Block& right = blocks[static_cast<std::size_t>(b.below)];
      b = {b.sum + right.sum, b.weight + right.weight, right.below};
    }
    blocks.push_back(b);
    suffix_top[i] = static_cast<int>(blocks.size() - 1);
  }
  // The new row (label y) in gap t, pooled with violating neighbours until none is left.
  auto fitted_at = [&](std::size_t t, double y) {
    double s = y, w = 1.0;
    int left = prefix_top[t], right = suffix_top[t];
    for (bool pooled = true; pooled;) {
      pooled = false;
      while (right >= 0 && s / w >= blocks[static_cast<std::size_t>(right)].value()) {
        s += blocks[static_cast<std::size_t>(right)].sum;
        w += blocks[static_cast<std::size_t>(right)].weight;
        right = blocks[static_cast<std::size_t>(right)].below;
      }
      while (left >= 0 && blocks[static_cast<std::size_t>(left)].value() >= s / w) {
        s += blocks[static_cast<std::size_t>(left)].sum;
        w += blocks[static_cast<std::size_t>(left)].weight;
        left = blocks[static_cast<std::size_t>(left)].below;
        pooled = true;
      }
    }
    return s / w;
  };
  out.p0.resize(m + 1);
  out.p1.resize(m + 1);
  for (std::size_t t = 0; t <= m; ++t) {
    out.p0[t] = fitted_at(t, 0.0);
    out.p1[t] = fitted_at(t, 1.0);
  }
  return out;
}

std::unique_ptr<const BinaryMap> venn_abers_map(VennAbersPairs pairs) {
  return std::make_unique<VennAbersMap>(std::move(pairs));
}

std::unique_ptr<const BinaryMap> VennAbersCalibrator::fit(std::span<const double> scores,
                                                          std::span<const double> outcomes,
                                                          const std::string& what) const {
  if (scores.empty()) throw DomainError(what + ": the fit sample is empty");
  return std::make_unique<VennAbersMap>(venn_abers_pairs(scores, outcomes));
}

}  // namespace calbench
