#include "generators/label_noise.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"
#include "generators/categorical.hpp"

namespace calbench {
namespace {

DirichletSpec reported_spec(const LabelNoiseSpec& spec) {
  return DirichletSpec{spec.classes, spec.alpha, IdentityMap{}};
}

}  // namespace

LabelNoiseGenerator::LabelNoiseGenerator(LabelNoiseSpec spec)
    : spec_(std::move(spec)), reported_(reported_spec(spec_)) {
  const std::size_t K = spec_.classes;
  spec_.alpha = reported_.spec().alpha;  // expanded
  // w = 1 is allowed: the labels then ignore p (c = beta), Widmann et al.'s most miscalibrated
  // model, whose ECE_TV = (1/2) E||beta - p||_1 is 1 - alpha_j/alpha_0 for beta = e_j.
  if (!(std::isfinite(spec_.weight) && spec_.weight >= 0.0 && spec_.weight <= 1.0))
    throw DomainError("weight = " + format_double(spec_.weight) + ": must be >= 0 and <= 1");
  if (spec_.beta.size() != K)
    throw DomainError("beta has " + std::to_string(spec_.beta.size()) +
                      " entries: must have one per class (" + std::to_string(K) + ")");
  double total = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    const double v = spec_.beta[k];
    if (!(std::isfinite(v) && v >= 0.0))
      throw DomainError("beta[" + std::to_string(k) + "] = " + format_double(v) +
                        ": must be a finite number >= 0");
    total += v;
  }
  if (std::abs(total - 1.0) > 1e-9)
    throw DomainError("beta sums to " + format_double(total) + ": must sum to 1 (within 1e-9)");
}

std::string LabelNoiseGenerator::canonical_text() const {
  std::string out = "label_noise:K=" + std::to_string(spec_.classes) + ":alpha=[";
  for (std::size_t k = 0; k < spec_.classes; ++k) {
    if (k > 0) out.append(1, ',');
    out.append(format_double(spec_.alpha[k]));
  }
  out += "]:w=" + format_double(spec_.weight) + ":beta=[";
  for (std::size_t k = 0; k < spec_.classes; ++k) {
    if (k > 0) out.append(1, ',');
    out.append(format_double(spec_.beta[k]));
  }
  return out + "]";
}

std::uint32_t LabelNoiseGenerator::draw(Engine& engine, std::span<double> c, std::span<double> p,
                                        std::span<double> log_p) const {
  reported_.draw_truth(engine, p, log_p);
  const double w = spec_.weight;
  for (std::size_t k = 0; k < spec_.classes; ++k) c[k] = (1.0 - w) * p[k] + w * spec_.beta[k];
  return draw_categorical(engine, c);
}

}  // namespace calbench
