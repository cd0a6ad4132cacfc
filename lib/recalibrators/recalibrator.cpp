#include "recalibrators/recalibrator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace calbench {

void apply_to_sample(const CalibrationModel& model, const Sample& in, Sample& out) {
  out.resize(in.size, in.classes);
  out.label = in.label;
  out.truth.clear();
  model.apply(in.p, in.classes, out.p);
  out.summarise();
}

double safe_log(double p) {
  return std::log(std::max(p, std::numeric_limits<double>::min()));
}

void softmax_in_place(std::span<double> z) {
  const double top = *std::max_element(z.begin(), z.end());
  double sum = 0.0;
  for (double& v : z) {
    v = std::exp(v - top);
    sum += v;
  }
  for (double& v : z) v /= sum;
}

void check_fit_sample(const Sample& sample, const std::string& method, std::size_t min_rows,
                      const std::string& parameters) {
  if (sample.size == 0) throw DomainError(method + ": the fit sample is empty");
  if (sample.size < min_rows)
    throw DomainError(method + ": the fit sample has " + std::to_string(sample.size) +
                      " rows, fewer than its " + std::to_string(min_rows) + " free parameters (" +
                      parameters + ")");
  const auto first = sample.label.front();
  if (std::all_of(sample.label.begin(), sample.label.end(),
                  [&](std::uint32_t y) { return y == first; }))
    throw DomainError(method + ": only class " + std::to_string(first) +
                      " occurs in the fit sample; at least two classes must occur");
}

void normalise_row(std::span<double> q) {
  double sum = 0.0;
  for (double v : q) sum += v;
  if (sum > 0.0 && std::isfinite(sum)) {
    for (double& v : q) v /= sum;
  } else {
    std::fill(q.begin(), q.end(), 1.0 / static_cast<double>(q.size()));
  }
}

void rescale_to_top(std::span<const double> p, std::size_t top_index, double top,
                    std::span<double> q) {
  const std::size_t K = p.size();
  // The others' own sum, not 1 - p_t: rows off the simplex by rounding still give sum q = 1.
  double rest = 0.0;
  for (std::size_t k = 0; k < K; ++k)
    if (k != top_index) rest += p[k];
  const double remainder = std::clamp(1.0 - top, 0.0, 1.0);
  if (rest > 0.0) {
    const double scale = remainder / rest;
    for (std::size_t k = 0; k < K; ++k) q[k] = k == top_index ? 1.0 - remainder : p[k] * scale;
  } else {
    for (std::size_t k = 0; k < K; ++k)
      q[k] = k == top_index ? 1.0 - remainder : remainder / static_cast<double>(K - 1);
  }
}

std::size_t argmax(std::span<const double> p) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < p.size(); ++k)
    if (p[k] > p[best]) best = k;
  return best;
}

}  // namespace calbench
