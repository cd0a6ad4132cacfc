#include "generators/dirichlet.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

void DirichletScratch::reserve(std::size_t classes) {
  c.resize(classes);
  log_c.resize(classes);
  log_g.resize(classes);
  tmp.resize(classes);
}

DirichletGenerator::DirichletGenerator(DirichletSpec spec) : spec_(std::move(spec)) {
  if (spec_.classes < 2)
    throw DomainError("classes = " + std::to_string(spec_.classes) + ": must be >= 2");
  if (spec_.alpha.size() == 1) spec_.alpha.assign(spec_.classes, spec_.alpha.front());
  if (spec_.alpha.size() != spec_.classes)
    throw DomainError("alpha has " + std::to_string(spec_.alpha.size()) +
                      " entries: must be one number or one per class (" +
                      std::to_string(spec_.classes) + ")");
  for (std::size_t k = 0; k < spec_.classes; ++k) {
    const double a = spec_.alpha[k];
    if (!(std::isfinite(a) && a > 0.0))
      throw DomainError("alpha[" + std::to_string(k) + "] = " + format_double(a) +
                        ": must be a finite number > 0");
  }
  validate(spec_.map, spec_.classes);
  symmetric_ = std::all_of(spec_.alpha.begin(), spec_.alpha.end(),
                           [&](double a) { return a == spec_.alpha.front(); });
  if (symmetric_) {
    samplers_.emplace_back(spec_.alpha.front());
  } else {
    for (double a : spec_.alpha) samplers_.emplace_back(a);
  }
  alpha0_ = 0.0;
  for (double a : spec_.alpha) alpha0_ += a;
}

std::string DirichletGenerator::canonical_text() const {
  std::string out = "dirichlet:K=" + std::to_string(spec_.classes) + ":alpha=[";
  for (std::size_t k = 0; k < spec_.classes; ++k) {
    if (k > 0) out.append(1, ',');
    out.append(format_double(spec_.alpha[k]));
  }
  return out + "]:" + calbench::canonical_text(spec_.map);
}

void DirichletGenerator::draw_truth(Engine& engine, std::span<double> c, std::span<double> log_c,
                                    DirichletScratch& scratch) const {
  const std::size_t K = spec_.classes;
  // Variates first, logarithms after in one loop; log_c holds the exact logs of tiny
  // variates until then.
  bool any_tiny = false;
  for (std::size_t k = 0; k < K; ++k) {
    c[k] = samplers_[symmetric_ ? 0 : k].draw_value(engine, log_c[k]);
    any_tiny |= !(c[k] > GammaSampler::kTiny);
  }
  double sum = 0.0;
  double max_log = -INFINITY;
  for (std::size_t k = 0; k < K; ++k) scratch.log_g[k] = std::log(c[k]);
  if (any_tiny) {
    for (std::size_t k = 0; k < K; ++k)
      if (!(c[k] > GammaSampler::kTiny)) scratch.log_g[k] = log_c[k];
  }
  for (std::size_t k = 0; k < K; ++k) {
    sum += c[k];
    max_log = std::max(max_log, scratch.log_g[k]);
  }
  if (max_log > -460.0) {  // the largest gamma exceeds 1e-200: normalise directly
    const double inv = 1.0 / sum;
    const double log_sum = std::log(sum);
    for (std::size_t k = 0; k < K; ++k) {
      c[k] *= inv;
      log_c[k] = scratch.log_g[k] - log_sum;
    }
    return;
  }
  // Every gamma is tiny (alpha << 1 and few classes): normalise in logs.
  double s = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    c[k] = std::exp(scratch.log_g[k] - max_log);
    s += c[k];
  }
  const double inv = 1.0 / s;
  const double log_s = std::log(s);
  for (std::size_t k = 0; k < K; ++k) {
    c[k] *= inv;
    log_c[k] = scratch.log_g[k] - max_log - log_s;
  }
}

std::uint32_t DirichletGenerator::draw_label(Engine& engine, std::span<const double> c) const {
  // Scaling u by the computed sum keeps the draw inside the support despite rounding.
  double total = 0.0;
  for (double v : c) total += v;
  const double u = uniform_open01(engine) * total;
  double acc = 0.0;
  const std::size_t K = c.size();
  for (std::size_t k = 0; k + 1 < K; ++k) {
    acc += c[k];
    if (u < acc) return static_cast<std::uint32_t>(k);
  }
  // The last class with positive mass (u == total can only land on such a class).
  std::size_t k = K - 1;
  while (k > 0 && c[k] == 0.0) --k;
  return static_cast<std::uint32_t>(k);
}

void DirichletGenerator::sample(Engine& engine, std::size_t n, Sample& out,
                                DirichletScratch& scratch) const {
  const std::size_t K = spec_.classes;
  out.resize(n, K);
  scratch.reserve(K);
  const std::span<double> c(scratch.c), log_c(scratch.log_c), tmp(scratch.tmp);
  for (std::size_t i = 0; i < n; ++i) {
    draw_truth(engine, c, log_c, scratch);
    out.label[i] = draw_label(engine, c);
    apply(spec_.map, c, log_c, out.row(i), {}, tmp);
  }
  out.summarise();
}

}  // namespace calbench
