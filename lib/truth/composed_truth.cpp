#include "truth/composed_truth.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"
#include "truth/monte_carlo_sampler.hpp"

namespace calbench {
namespace {

constexpr std::size_t chunk_rows = 2048;

using TopBins = mc::FineBins<3>;
using ClassBins = mc::FineBins<2>;

// Per-bin sums of a residual for the even and the odd rows (the cross-fit's two halves).
struct HalfSums {
  mc::BinSums half[2];
  void resize(std::size_t size) {
    half[0].resize(size);
    half[1].resize(size);
  }
  void add(int h, std::size_t i, double d) { half[h].add(i, d); }
  // E|E[D | V]| over bins [begin, end), N rows in all.
  mc::AbsConditional abs_conditional(const mc::BinSums& all, std::size_t begin, std::size_t end,
                                     double N) const {
    return mc::abs_conditional(all, half[0], half[1], begin, end, N);
  }
  mc::BinSums pooled() const {
    const mc::BinSums* parts[] = {&half[0], &half[1]};
    return mc::merge_bins(parts);
  }
};

struct Accumulator {
  // Sums over rows of the per-row values and their squares.
  double acc = 0, acc2 = 0, brier = 0, brier2 = 0, nll = 0, nll2 = 0, can = 0, can2 = 0;
  HalfSums top, classwise;
  bool injective = false;
};

TruthValue mean_value(double sum, double sum_sq, double N) {
  const double m = sum / N;
  const double var = std::max(0.0, sum_sq / N - m * m);
  return {m, TruthMethod::monte_carlo, std::sqrt(var / std::max(1.0, N - 1.0))};
}

}  // namespace

const std::optional<TruthValue>& ComposedTruth::operator[](Quantity q) const {
  for (std::size_t j = 0; j < composed_quantities.size(); ++j)
    if (composed_quantities[j] == q) return values[j];
  static const std::optional<TruthValue> none;
  return none;
}

std::vector<ComposedTruth> composed_truth(const Generator& generator,
                                          std::span<const CalibrationModel* const> models,
                                          std::uint64_t samples) {
  const std::size_t K = generator.classes(), M = models.size();
  // c is r(p) when p determines c.
  const bool h_injective = generator.p_determines_c();
  std::vector<Accumulator> acc(M);
  for (std::size_t m = 0; m < M; ++m) {
    acc[m].top.resize(TopBins::count);
    acc[m].classwise.resize(ClassBins::count * K);
    acc[m].injective = h_injective && (models[m] == nullptr || models[m]->injective());
  }
  // One batch: the rows' parity splits the cross-fit, and the models share every row.
  const mc::KeyedBatches streams{hash64(generator.canonical_text() + "|recalibration"),
                                 Purpose::truth, 1};
  Engine engine = streams.engine(0);
  Sample rows;
  GeneratorScratch scratch;
  std::vector<double> q;
  std::uint64_t done = 0;
  while (done < samples) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_rows, samples - done));
    generator.sample(engine, n, rows, scratch, /*keep_truth=*/true);
    q.resize(n * K);
    for (std::size_t m = 0; m < M; ++m) {
      const std::vector<double>* out = &rows.p;
      if (models[m] != nullptr) {
        models[m]->apply(rows.p, K, q);
        out = &q;
      }
      Accumulator& a = acc[m];
      for (std::size_t i = 0; i < n; ++i) {
        const double* qi = out->data() + i * K;
        const double* ci = rows.truth.data() + i * K;
        const int half = static_cast<int>((done + i) & 1u);
        std::size_t top = 0;
        for (std::size_t k = 1; k < K; ++k)
          if (qi[k] > qi[top]) top = k;
        double sum_sq = 0.0, cross = 0.0, nll = 0.0, l1 = 0.0;
        for (std::size_t k = 0; k < K; ++k) {
          sum_sq += qi[k] * qi[k];
          cross += qi[k] * ci[k];
          if (ci[k] > 0.0) nll -= ci[k] * safe_log(qi[k]);
          l1 += std::abs(ci[k] - qi[k]);
          a.classwise.add(half, k * ClassBins::count + ClassBins::of(qi[k]), ci[k] - qi[k]);
        }
        const double brier = sum_sq - 2.0 * cross + 1.0;
        a.acc += ci[top];
        a.acc2 += ci[top] * ci[top];
        a.brier += brier;
        a.brier2 += brier * brier;
        a.nll += nll;
        a.nll2 += nll * nll;
        a.can += l1;
        a.can2 += l1 * l1;
        a.top.add(half, TopBins::of(qi[top]), ci[top] - qi[top]);
      }
    }
    done += n;
  }
  const auto N = static_cast<double>(samples);
  std::vector<ComposedTruth> out(M);
  for (std::size_t m = 0; m < M; ++m) {
    const Accumulator& a = acc[m];
    ComposedTruth& t = out[m];
    t.values[0] = mean_value(a.acc, a.acc2, N);
    t.values[1] = mean_value(a.brier, a.brier2, N);
    t.values[2] = mean_value(a.nll, a.nll2, N);
    const auto top = a.top.abs_conditional(a.top.pooled(), 0, TopBins::count, N);
    t.values[3] = mc::bracketed(top.plug_in, top.cross_fit, std::sqrt(top.variance_if / N));
    // Classwise: the mean over classes of each class's value; variances added as if the
    // classes were independent, divided by K^2.
    // (Not mc::abs_value, which divides by K before it adds: other rounding, other bits.)
    const mc::BinSums cw_all = a.classwise.pooled();
    double plug = 0.0, cross = 0.0, var = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      const auto r =
          a.classwise.abs_conditional(cw_all, k * ClassBins::count, (k + 1) * ClassBins::count, N);
      plug += r.plug_in;
      cross += r.cross_fit;
      var += r.variance_if;
    }
    const double Kd = static_cast<double>(K);
    t.values[4] = TruthValue{0.5 * (plug + cross) / Kd, TruthMethod::monte_carlo,
                             std::sqrt(var / N) / Kd + 0.5 * std::abs(plug - cross) / Kd};
    if (a.injective) t.values[5] = mean_value(a.can, a.can2, N);
  }
  return out;
}

}  // namespace calbench
