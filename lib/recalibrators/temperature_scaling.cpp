#include "recalibrators/temperature_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/fast_math.hpp"
#include "core/task_kernel.hpp"

namespace calbench {
namespace {

struct Derivatives {
  double nll = 0.0, first = 0.0, second = 0.0;  // in beta
};

// Rows per block of the parallel passes: the blocks are fixed by n alone and their partial
// sums added in block order, so the result has the same bits for any thread count.
constexpr std::size_t block_rows = 512;

// One pass over the shifted logits d (row maximum 0) at inverse temperature beta.
Derivatives evaluate(std::span<const double> d, std::span<const double> d_label,
                     std::size_t classes, double beta) {
  const std::size_t n = d_label.size();
  const std::size_t blocks = (n + block_rows - 1) / block_rows;
  Derivatives out = fold_batches(
      blocks, Derivatives{},
      [&](std::size_t blk) {
        Derivatives part;
        const std::size_t begin = blk * block_rows, end = std::min(n, (blk + 1) * block_rows);
        // Each row's exponentials in one bulk call (core/fast_math.hpp: vectorised, <= 1 ulp,
        // the same bits on every machine): they are nearly all of the fit's time. One row's
        // buffer per block, small enough to stay in cache (a block-sized one would be mapped
        // afresh).
        std::vector<double> weights(classes);
        for (std::size_t i = begin; i < end; ++i) {
          const double* row = d.data() + i * classes;
          for (std::size_t k = 0; k < classes; ++k) weights[k] = beta * row[k];
          fast::exp_bulk(weights.data(), weights.data(), classes);
          double s0 = 0.0, s1 = 0.0, s2 = 0.0;
          for (std::size_t k = 0; k < classes; ++k) {
            const double w = weights[k];
            s0 += w;
            s1 += w * row[k];
            s2 += w * row[k] * row[k];
          }
          const double mean = s1 / s0;
          part.nll += std::log(s0) - beta * d_label[i];
          part.first += mean - d_label[i];
          part.second += std::max(0.0, s2 / s0 - mean * mean);
        }
        return part;
      },
      [](Derivatives total, const Derivatives& part) {
        total.nll += part.nll;
        total.first += part.first;
        total.second += part.second;
        return total;
      });
  const double nd = static_cast<double>(n);
  out.nll /= nd;
  out.first /= nd;
  out.second /= nd;
  return out;
}

// Safeguarded Newton from u0 on the rows of d: the fitted u = log beta, the derivatives of the
// last pass, the NLL gain of a final step taken without a pass, and the passes.
struct NewtonResult {
  double u = 0.0;
  Derivatives at{};
  double step_gain = 0.0;
  int passes = 0;
};

NewtonResult solve(std::span<const double> d, std::span<const double> d_label, std::size_t classes,
                   double u0) {
  // Newton on u = log beta: g(u) = NLL'(beta), g'(u) = beta NLL''(beta), g increasing.
  const double u_min = std::log(1.0 / max_temperature), u_max = std::log(1.0 / min_temperature);
  double lo = u_min, hi = u_max;
  bool tried_min = false, tried_max = false;
  double u = u0;
  NewtonResult fit;
  Derivatives& at = fit.at;
  double& step_gain = fit.step_gain;  // the NLL decrease of a final step taken without a pass
  for (int iteration = 1; iteration <= 200; ++iteration) {
    const double beta = std::exp(u);
    at = evaluate(d, d_label, classes, beta);
    fit.passes = iteration;
    const double g = at.first, gp = beta * at.second;
    if (g > 0.0)
      hi = u;
    else if (g < 0.0)
      lo = u;
    else
      break;
    const bool newton = gp > 0.0;
    // Quadratic convergence: after a Newton step of size s the error in u is about
    // |g''/(2 g')| s^2, which is below 1e-10 here for s < 1e-5 (the curvature ratio is O(1) in
    // u), so such a step is taken without another pass. The NLL there is that of this pass
    // minus g^2 / (2 NLL''(beta)) (the second-order change along the step; the next term is
    // O(g^3)).
    if (newton && std::abs(g / gp) < 1e-5) {
      u -= g / gp;
      step_gain = 0.5 * g * g / at.second;
      break;
    }
    if (hi - lo < 1e-13) break;  // at a bound of T
    double next = newton ? u - g / gp : 0.5 * (lo + hi);
    // Newton creeps when the optimum is at a bound (separable data: NLL' ~ e^{-c beta}); an
    // ordinary fit has converged within 6 passes, so after 8 the bound itself is tried once.
    if (iteration >= 8) {
      if (g < 0.0 && hi == u_max && !tried_max) next = u_max + 1.0;
      if (g > 0.0 && lo == u_min && !tried_min) next = u_min - 1.0;
    }
    if (!(next > lo && next < hi)) {
      // A step beyond a bound of T tries the bound itself once (separable data: NLL' < 0
      // there too, and the bracket closes at once); otherwise bisection.
      if (next >= hi && hi == u_max && !tried_max) {
        next = u_max;
        tried_max = true;
      } else if (next <= lo && lo == u_min && !tried_min) {
        next = u_min;
        tried_min = true;
      } else {
        next = 0.5 * (lo + hi);
      }
    }
    u = next;
  }
  fit.u = u;
  return fit;
}

// The fit on shifted logits d (each row's maximum 0) and the labels' entries d_label.
TemperatureFit fit_shifted(std::span<const double> d, std::span<const double> d_label,
                           std::size_t classes) {
  const std::size_t n = d_label.size();
  // Newton from the fit on the first rows (i.i.d., so a random subsample) when the sample is
  // large: that start is within a few per cent of the optimum, where Newton needs two or three
  // passes over all rows instead of five or six from T = 1.
  double u0 = 0.0;
  constexpr std::size_t warm_rows = 2048;
  if (n >= 4 * warm_rows) {
    const std::span<const double> d_all(d), label_all(d_label);
    const NewtonResult warm =
        solve(d_all.first(warm_rows * classes), label_all.first(warm_rows), classes, 0.0);
    const bool at_bound = std::abs(warm.u - std::log(1.0 / min_temperature)) < 1e-9 ||
                          std::abs(warm.u - std::log(1.0 / max_temperature)) < 1e-9;
    if (std::isfinite(warm.u) && !at_bound) u0 = warm.u;
  }
  const NewtonResult result = solve(d, d_label, classes, u0);
  const double u = result.u;
  TemperatureFit fit;
  fit.iterations = result.passes;
  // A fit that ran into a bound of T returns the bound itself.
  if (std::abs(u - std::log(1.0 / min_temperature)) < 1e-9)
    fit.temperature = min_temperature;
  else if (std::abs(u - std::log(1.0 / max_temperature)) < 1e-9)
    fit.temperature = max_temperature;
  else
    fit.temperature = std::clamp(1.0 / std::exp(u), min_temperature, max_temperature);
  fit.nll = result.at.nll - result.step_gain;
  return fit;
}

}  // namespace

TemperatureFit fit_temperature(std::span<const double> logits,
                               std::span<const std::uint32_t> labels, std::size_t classes) {
  const std::size_t n = labels.size();
  if (n == 0) throw DomainError("temperature: the fit sample is empty");
  if (std::all_of(labels.begin(), labels.end(), [&](auto y) { return y == labels.front(); }))
    throw DomainError("temperature: only class " + std::to_string(labels.front()) +
                      " occurs in the fit sample; at least two classes must occur");
  std::vector<double> d(n * classes), d_label(n);
  for_each_index(n, [&](std::size_t i) {
    const auto row = logits.subspan(i * classes, classes);
    const double top = *std::max_element(row.begin(), row.end());
    for (std::size_t k = 0; k < classes; ++k) d[i * classes + k] = row[k] - top;
    d_label[i] = row[labels[i]] - top;
  });
  return fit_shifted(d, d_label, classes);
}

std::unique_ptr<const CalibrationModel> TemperatureScaling::fit(const Sample& sample) const {
  check_fit_sample(sample, "temperature", 1, "T");
  // The shifted logits d_ik = log p_ik - log max_k p_ik straight from p (safe_log's floor),
  // in bulk by fixed blocks of rows (core/fast_math.hpp; <= 1 ulp from std::log): one n x K
  // array instead of the logits and their shifted copy, whose first-touch page faults cost
  // as much as the Newton passes at n = 10,000, K = 100.
  const std::size_t n = sample.size, K = sample.classes;
  std::vector<double> d(n * K), d_label(n);
  constexpr std::size_t block_rows_log = 128;
  for_each_index((n + block_rows_log - 1) / block_rows_log, [&](std::size_t b) {
    const std::size_t begin = b * block_rows_log, end = std::min(n, begin + block_rows_log);
    for (std::size_t j = begin * K; j < end * K; ++j)
      d[j] = std::max(sample.p[j], std::numeric_limits<double>::min());
    fast::log_bulk(d.data() + begin * K, d.data() + begin * K, (end - begin) * K);
    for (std::size_t i = begin; i < end; ++i) {
      double* row = d.data() + i * K;
      const double top = *std::max_element(row, row + K);
      for (std::size_t k = 0; k < K; ++k) row[k] -= top;
      d_label[i] = row[sample.label[i]];
    }
  });
  return std::make_unique<TemperatureModel>(fit_shifted(d, d_label, K).temperature);
}

void TemperatureModel::apply(std::span<const double> p, std::size_t classes,
                             std::span<double> q) const {
  const double beta = 1.0 / temperature_;
  const std::size_t rows = p.size() / classes;
  for (std::size_t i = 0; i < rows; ++i) {
    const auto out = q.subspan(i * classes, classes);
    for (std::size_t k = 0; k < classes; ++k) out[k] = beta * safe_log(p[i * classes + k]);
    softmax_in_place(out);
  }
}

}  // namespace calbench
