#include "truth/composed_truth.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/rng.hpp"

namespace calbench {
namespace {

constexpr std::size_t chunk_rows = 2048;
constexpr int octaves = 40;

// Log-scale bins on [0, 1] towards both ends: 2^sub_bits per octave over 40 octaves, one bin
// each for the last 2^-40 at either end. Monotone in v; equal values share a bin.
template <int sub_bits>
struct FineBins {
  static constexpr std::size_t per_side = 1 + (std::size_t{octaves} << sub_bits);
  static constexpr std::size_t count = 2 * per_side;
  static std::size_t of(double v) {
    const bool upper = v > 0.5;
    const double x = upper ? 1.0 - v : v;
    std::size_t index = 0;
    if (x >= 0x1p-40) {
      const auto bits = std::bit_cast<std::uint64_t>(x);
      const int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
      const auto mantissa =
          static_cast<std::size_t>((bits >> (52 - sub_bits)) & ((1u << sub_bits) - 1));
      index = 1 + (static_cast<std::size_t>(exponent + octaves) << sub_bits) + mantissa;
      if (index >= per_side) index = per_side - 1;
    }
    return upper ? count - 1 - index : index;
  }
};
using TopBins = FineBins<3>;
using ClassBins = FineBins<2>;

// Per-bin sums of a residual for the even and the odd rows.
struct HalfSums {
  std::vector<double> n[2], s[2], ss[2];
  void resize(std::size_t size) {
    for (int h = 0; h < 2; ++h) {
      n[h].assign(size, 0.0);
      s[h].assign(size, 0.0);
      ss[h].assign(size, 0.0);
    }
  }
  void add(int half, std::size_t i, double d) {
    n[half][i] += 1.0;
    s[half][i] += d;
    ss[half][i] += d * d;
  }
};

struct AbsResult {
  double plug_in = 0.0, cross_fit = 0.0, variance = 0.0;
};

// E|E[D | V]| over bins [begin, end), N rows in all (see the header).
AbsResult abs_conditional(const HalfSums& h, std::size_t begin, std::size_t end, double N) {
  AbsResult out;
  double resid = 0.0, mean_sq = 0.0;
  auto sgn = [](double v) { return static_cast<double>((v > 0.0) - (v < 0.0)); };
  for (std::size_t i = begin; i < end; ++i) {
    const double n = h.n[0][i] + h.n[1][i];
    if (n == 0.0) continue;
    const double s = h.s[0][i] + h.s[1][i], ss = h.ss[0][i] + h.ss[1][i];
    out.plug_in += std::abs(s);
    out.cross_fit += sgn(h.s[0][i]) * h.s[1][i] + sgn(h.s[1][i]) * h.s[0][i];
    resid += ss - s * s / n;
    mean_sq += s * s / n;
  }
  out.plug_in /= N;
  out.cross_fit /= N;
  out.variance = std::max(0.0, resid / N + mean_sq / N - out.plug_in * out.plug_in);
  return out;
}

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

TruthValue abs_value(const AbsResult& r, double N) {
  return {0.5 * (r.plug_in + r.cross_fit), TruthMethod::monte_carlo,
          std::sqrt(r.variance / N) + 0.5 * std::abs(r.plug_in - r.cross_fit)};
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
  // c is r(p) when p determines c: an injective dirichlet map, or class_conditional (c := r(p)).
  const DirichletGenerator* dirichlet = generator.dirichlet();
  const bool h_injective = dirichlet != nullptr ? is_injective(dirichlet->spec().map, K)
                                                : generator.family() == "class_conditional";
  std::vector<Accumulator> acc(M);
  for (std::size_t m = 0; m < M; ++m) {
    acc[m].top.resize(TopBins::count);
    acc[m].classwise.resize(ClassBins::count * K);
    acc[m].injective = h_injective && (models[m] == nullptr || models[m]->injective());
  }
  Engine engine =
      make_engine({hash64(generator.canonical_text() + "|recalibration"), 0, 0, Purpose::truth});
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
    t.values[3] = abs_value(abs_conditional(a.top, 0, TopBins::count, N), N);
    // Classwise: the mean over classes of each class's value; variances added as if the
    // classes were independent, divided by K^2.
    double plug = 0.0, cross = 0.0, var = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      const auto r =
          abs_conditional(a.classwise, k * ClassBins::count, (k + 1) * ClassBins::count, N);
      plug += r.plug_in;
      cross += r.cross_fit;
      var += r.variance;
    }
    const double Kd = static_cast<double>(K);
    t.values[4] = TruthValue{0.5 * (plug + cross) / Kd, TruthMethod::monte_carlo,
                             std::sqrt(var / N) / Kd + 0.5 * std::abs(plug - cross) / Kd};
    if (a.injective) t.values[5] = mean_value(a.can, a.can2, N);
  }
  return out;
}

}  // namespace calbench
