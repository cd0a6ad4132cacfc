#include "generators/dirichlet_mixture.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

bool mixture_accepts_map(const MiscalibrationMap& map) {
  return std::holds_alternative<IdentityMap>(map) || std::holds_alternative<TemperatureMap>(map) ||
         std::holds_alternative<PowerMap>(map);
}

DirichletMixtureGenerator::DirichletMixtureGenerator(DirichletMixtureSpec spec)
    : spec_(std::move(spec)) {
  if (spec_.components.empty() || spec_.components.size() > max_mixture_components)
    throw DomainError("components: expected 1 to " + std::to_string(max_mixture_components) +
                      " components, found " + std::to_string(spec_.components.size()));
  if (!mixture_accepts_map(spec_.map))
    throw DomainError("miscalibration map " + calbench::canonical_text(spec_.map) +
                      ": dirichlet_mixture accepts identity, temperature or power (maps with "
                      "r(p) = h^-1(p))");
  double total = 0.0;
  for (std::size_t j = 0; j < spec_.components.size(); ++j) {
    const MixtureComponent& m = spec_.components[j];
    if (!(std::isfinite(m.weight) && m.weight > 0.0))
      throw DomainError("components[" + std::to_string(j) +
                        "].weight = " + format_double(m.weight) + ": must be > 0");
    total += m.weight;
    components_.emplace_back(DirichletSpec{spec_.classes, m.alpha, spec_.map});
  }
  if (std::abs(total - 1.0) > 1e-9)
    throw DomainError("the component weights sum to " + format_double(total) +
                      ": must sum to 1 (within 1e-9)");
  double partial = 0.0;
  for (const MixtureComponent& m : spec_.components) cumulative_.push_back(partial += m.weight);
  cumulative_.back() = 1.0;
}

std::string DirichletMixtureGenerator::canonical_text() const {
  std::string out = "dirichlet_mixture:K=" + std::to_string(spec_.classes);
  for (std::size_t j = 0; j < components_.size(); ++j)
    out += ":[w=" + format_double(spec_.components[j].weight) + ":" +
           components_[j].canonical_text() + "]";
  return out;
}

std::uint32_t DirichletMixtureGenerator::draw(Engine& engine, std::span<double> c,
                                              std::span<double> p, std::span<double> log_p,
                                              DirichletScratch& scratch) const {
  std::size_t j = 0;
  if (components_.size() > 1) {
    const double u = uniform_open01(engine);
    while (j + 1 < cumulative_.size() && u >= cumulative_[j]) ++j;
  }
  const DirichletGenerator& g = components_[j];
  scratch.reserve(spec_.classes);
  const std::span<double> log_c(scratch.log_c.data(), spec_.classes),
      tmp(scratch.tmp.data(), spec_.classes);
  g.draw_truth(engine, c, log_c);
  const std::uint32_t y = g.draw_label(engine, c);
  apply(spec_.map, c, log_c, p, log_p, tmp);
  return y;
}

}  // namespace calbench
