#pragma once
// The `label_noise` family (the simulation of Widmann, Lindsten & Zachariah 2019): the
// reported p ~ Dirichlet(alpha), and the labels come from c = (1 - w) p + w beta for a weight
// w in [0, 1) and a class distribution beta. The map p -> c is affine and injective, so
// r(p) = c: the canonical error is w ||p - beta||, which has closed forms (truth/family_truth).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "generators/dirichlet.hpp"

namespace calbench {

struct LabelNoiseSpec {
  std::size_t classes = 2;
  std::vector<double> alpha;  // one per class (a symmetric alpha is expanded)
  double weight = 0.0;        // w
  std::vector<double> beta;   // the noise distribution, K entries summing to 1
};

class LabelNoiseGenerator {
 public:
  // Validates every parameter; throws DomainError naming it.
  explicit LabelNoiseGenerator(LabelNoiseSpec spec);

  const LabelNoiseSpec& spec() const { return spec_; }
  std::size_t classes() const { return spec_.classes; }
  bool symmetric() const { return reported_.symmetric(); }
  std::string canonical_text() const;

  // One draw: p ~ Dir(alpha) (log p exact where p underflows), c = (1 - w) p + w beta, y ~ c.
  std::uint32_t draw(Engine& engine, std::span<double> c, std::span<double> p,
                     std::span<double> log_p) const;

 private:
  LabelNoiseSpec spec_;
  DirichletGenerator reported_;  // Dir(alpha), identity map
};

}  // namespace calbench
