#pragma once
// One interface over every fake-classifier family (DESIGN.md §1), so that scenarios, the truth
// engine and population values work for each without copies.
//
// Shape (for code that used DirichletGenerator / CellConfig::generator as a DirichletSpec):
//   GeneratorSpec spec = DirichletSpec{...};          // or ClassConditionalSpec, LabelNoiseSpec,
//                                                     // BetaBinarySpec, EmpiricalSpec
//   Generator gen(spec);                              // validates, throws DomainError
//   gen.classes(); gen.family(); gen.canonical_text(); // the truth cache's key
//   gen.sample(engine, n, sample, scratch, keep_truth); // GeneratorScratch per thread
//   gen.draw(engine, c, p, log_p, scratch) -> y       // one triple (c, p, y)
//   if (const DirichletGenerator* d = gen.dirichlet()) ...  // family-specific code
//   std::visit(overloaded{...}, gen.family_generator());    // or dispatch on the family
// The `dirichlet` family delegates to DirichletGenerator unchanged (same draws, same bits).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/rng.hpp"
#include "core/sample.hpp"
#include "generators/beta_binary.hpp"
#include "generators/class_conditional.hpp"
#include "generators/dirichlet.hpp"
#include "generators/dirichlet_mixture.hpp"
#include "generators/empirical.hpp"
#include "generators/label_noise.hpp"

namespace calbench {

using GeneratorSpec = std::variant<DirichletSpec, ClassConditionalSpec, LabelNoiseSpec,
                                   BetaBinarySpec, DirichletMixtureSpec, EmpiricalSpec>;

using FamilyGenerator =
    std::variant<DirichletGenerator, ClassConditionalGenerator, LabelNoiseGenerator,
                 BetaBinaryGenerator, DirichletMixtureGenerator, EmpiricalGenerator>;

// The config name of each family, in GeneratorSpec's order: the one place they are spelled.
inline constexpr std::string_view family_names[] = {"dirichlet",         "class_conditional",
                                                    "label_noise",       "beta_binary",
                                                    "dirichlet_mixture", "empirical"};
static_assert(std::size(family_names) == std::variant_size_v<GeneratorSpec>);

// The position of `Spec` in GeneratorSpec.
template <typename Spec, std::size_t I = 0>
constexpr std::size_t spec_index() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, GeneratorSpec>, Spec>)
    return I;
  else
    return spec_index<Spec, I + 1>();
}

// The config name of a family by its spec type (family_name_of<DirichletSpec> is "dirichlet"),
// or of a spec's family.
template <typename Spec>
inline constexpr std::string_view family_name_of = family_names[spec_index<Spec>()];
std::string_view family_name(const GeneratorSpec& spec);
// K of a spec (2 for beta_binary), before validation.
std::size_t spec_classes(const GeneratorSpec& spec);

// Per-thread working memory of the samplers, allocated once.
struct GeneratorScratch {
  DirichletScratch dirichlet;
  std::vector<double> c, p, log_p;
  void reserve(std::size_t classes);
};

class Generator {
 public:
  // Validates every parameter; throws DomainError naming it.
  explicit Generator(GeneratorSpec spec);

  // The spec as validated (symmetric alpha expanded, default prior filled in).
  GeneratorSpec spec() const;
  std::string_view family() const;
  std::size_t classes() const;
  // Whether the classes are exchangeable: relabelling them leaves the law of (c, p, y)
  // unchanged, so every class has the same calibration curve and the truth engine and the
  // true reliability curves keep one channel of fine bins for all classes. dirichlet: a
  // symmetric alpha and a class-symmetric map (identity, temperature, top_label); label_noise:
  // a symmetric alpha and one beta for all classes; class_conditional: symmetric (one alpha
  // pattern permuted, uniform prior). Never beta_binary (its curve phi is class 1's) or
  // dirichlet_mixture (not established).
  bool exchangeable_classes() const;
  // Whether p determines c, c = r(p) = E[c | p]: a dirichlet family with an injective map, or
  // class_conditional, whose c is r(p) by construction.
  bool p_determines_c() const;
  // Canonical parameter text: equal for equal generators, the truth cache's key.
  std::string canonical_text() const;

  // Fills `out` with n rows (p_i, y_i) and summarises it; with keep_truth also out.truth
  // (c_i, with E[1{y = k} | p] = E[c_k | p]).
  void sample(Engine& engine, std::size_t n, Sample& out, GeneratorScratch& scratch,
              bool keep_truth = false) const;

  // One draw of (c, p, y): c the true class distribution of this draw, p what the classifier
  // reports (log p exact where p underflows). Returns y ~ Categorical(c) (for class_conditional
  // the generative y, which has that distribution given p).
  std::uint32_t draw(Engine& engine, std::span<double> c, std::span<double> p,
                     std::span<double> log_p, GeneratorScratch& scratch) const;

  const FamilyGenerator& family_generator() const { return impl_; }
  // The family's generator when it is that family, else null.
  const DirichletGenerator* dirichlet() const { return std::get_if<DirichletGenerator>(&impl_); }

 private:
  FamilyGenerator impl_;
};

}  // namespace calbench
