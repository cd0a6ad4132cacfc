#pragma once
// The `dirichlet_mixture` family (kyle's multi-Dirichlet fake classifier, appliedAI-Initiative
// kyle: MultiDirichletFC): a component j is chosen with probability w_j, c ~ Dirichlet(alpha_j),
// y ~ Categorical(c), p = h(c) with one miscalibration map h for every component.
//
// Only maps with r(p) = h^-1(p) are accepted (identity, temperature, power: injective, so p
// determines c whatever the component, and r(p) = c as for the dirichlet family); a map with
// several preimages would need the posterior over them weighted by the mixture density.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "generators/dirichlet.hpp"

namespace calbench {

struct MixtureComponent {
  double weight = 1.0;        // w_j > 0; the weights sum to 1
  std::vector<double> alpha;  // one per class
};

struct DirichletMixtureSpec {
  std::size_t classes = 2;
  std::vector<MixtureComponent> components;
  MiscalibrationMap map = IdentityMap{};
};

// The maps the family accepts: identity, temperature, power.
bool mixture_accepts_map(const MiscalibrationMap& map);

// At most this many components: the truth computes one dirichlet truth per component.
inline constexpr std::size_t max_mixture_components = 16;

class DirichletMixtureGenerator {
 public:
  // Validates every parameter (weights > 0 summing to 1 within 1e-9, each alpha as the
  // dirichlet family's, an accepted map); throws DomainError naming it.
  explicit DirichletMixtureGenerator(DirichletMixtureSpec spec);

  const DirichletMixtureSpec& spec() const { return spec_; }
  std::size_t classes() const { return spec_.classes; }
  std::string canonical_text() const;
  // Component j as a dirichlet-family generator with the mixture's map.
  const DirichletGenerator& component(std::size_t j) const { return components_[j]; }

  // One draw: the component by one uniform, then as the dirichlet family (c and log c, y ~ c,
  // p = h(c)); returns y.
  std::uint32_t draw(Engine& engine, std::span<double> c, std::span<double> p,
                     std::span<double> log_p, DirichletScratch& scratch) const;

 private:
  DirichletMixtureSpec spec_;
  std::vector<DirichletGenerator> components_;
  std::vector<double> cumulative_;  // partial sums of the weights, the last exactly 1
};

}  // namespace calbench
