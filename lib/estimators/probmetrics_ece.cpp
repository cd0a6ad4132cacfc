#include "estimators/probmetrics_ece.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace calbench {
namespace {

// torchmetrics' _binning_bucketize and _ce_compute in the arithmetic T of the scores (float
// for the multiclass error, double for the binary one): per-bin sums in row order (CPU
// scatter_add_), means with empty bins 0 (nan_to_num), proportions count / sum(count).
template <typename T>
class Bins {
 public:
  Bins(std::span<const double> edges)
      : edges_(edges), count_(edges.size()), conf_(edges.size()), acc_(edges.size()) {}

  void add(T confidence, T accuracy) {
    // bucketize(right=True) - 1: the number of edges <= s, less one; s = 1 lands in bin B.
    std::size_t at = 0;
    for (double e : edges_) at += static_cast<double>(confidence) >= e ? 1 : 0;
    const std::size_t bin = at - 1;
    count_[bin] += T(1);
    conf_[bin] += confidence;
    acc_[bin] += accuracy;
  }

  double error(Norm norm) const {
    T total = T(0);
    for (T c : count_) total += c;
    T out = T(0);
    for (std::size_t b = 0; b < count_.size(); ++b) {
      const T conf = count_[b] > T(0) ? conf_[b] / count_[b] : T(0);
      const T acc = count_[b] > T(0) ? acc_[b] / count_[b] : T(0);
      const T gap = std::abs(acc - conf), prop = count_[b] / total;
      if (norm == Norm::max)
        out = std::max(out, gap);
      else if (norm == Norm::l2)
        out += gap * gap * prop;
      else
        out += gap * prop;
    }
    if (norm == Norm::l2) out = out > T(0) ? std::sqrt(out) : T(0);
    return static_cast<double>(static_cast<float>(out));  // the library returns float32
  }

 private:
  std::span<const double> edges_;
  std::vector<T> count_, conf_, acc_;
};

constexpr double clamp_lo = 1e-7,
                 clamp_hi = 1.0 - 1e-7;  // metrics.py: y_probs.clamp(1e-7, 1 - 1e-7)

}  // namespace

ProbmetricsEce::ProbmetricsEce(ProbmetricsEceSpec spec) : spec_(spec) {
  if (spec_.bins < 1) throw DomainError("bins = 0: must be >= 1");
  if (spec_.norm != Norm::l1 && spec_.norm != Norm::l2 && spec_.norm != Norm::max)
    throw DomainError("probmetrics_ece norm: must be l1, l2 or max");
}

std::optional<Quantity> ProbmetricsEce::target() const {
  return std::nullopt;
}

std::optional<std::string> ProbmetricsEce::classes_problem(std::size_t classes) const {
  if (classes < 2) return "probmetrics_ece needs K >= 2 classes";
  return std::nullopt;
}

double ProbmetricsEce::estimate(const Sample& s, EstimatorWorkspace&) const {
  const std::size_t n = s.size, K = s.classes;
  // 1. The classes that occur among the labels (all of them for a Rao-Blackwellised sample
  // without labels).
  std::vector<char> present(K, s.label.empty() ? 1 : 0);
  for (std::uint32_t y : s.label) present[y] = 1;
  std::vector<std::size_t> kept;
  for (std::size_t k = 0; k < K; ++k)
    if (present[k]) kept.push_back(k);
  // One class left: the library raises ValueError (num_classes = 1). No value: NaN, not a
  // number the library never gives (and not an error, which would stop `eval` of every
  // estimator on such data).
  if (kept.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t Kp = kept.size();
  const bool binary = Kp == 2;
  std::vector<double> edges;
  library_edges(EdgeRule::torch_linspace, spec_.bins, !binary, edges);
  Bins<float> multiclass(edges);
  Bins<double> two(edges);
  std::vector<double> q(Kp);
  for (std::size_t i = 0; i < n; ++i) {
    // 2. Clamped and renormalised over the classes kept.
    double sum = 0.0;
    for (std::size_t j = 0; j < Kp; ++j) {
      q[j] = std::clamp(s.p[i * K + kept[j]], clamp_lo, clamp_hi);
      sum += q[j];
    }
    for (double& v : q) v /= sum;
    // 3. Binary: q_1 against class kept[1]; multiclass: max q (first on ties, torch.max)
    // against its class, in float32.
    if (binary) {
      two.add(q[1], s.outcome(i, kept[1]));
    } else {
      const std::size_t top =
          static_cast<std::size_t>(std::max_element(q.begin(), q.end()) - q.begin());
      multiclass.add(static_cast<float>(q[top]), static_cast<float>(s.outcome(i, kept[top])));
    }
  }
  return binary ? two.error(spec_.norm) : multiclass.error(spec_.norm);
}

}  // namespace calbench
