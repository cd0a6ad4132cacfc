#include "generators/generator.hpp"

#include <algorithm>

#include "core/stop_request.hpp"

namespace calbench {
namespace {

FamilyGenerator make_family(GeneratorSpec spec) {
  return std::visit(
      [](auto&& s) -> FamilyGenerator {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, DirichletSpec>)
          return DirichletGenerator(std::move(s));
        else if constexpr (std::is_same_v<S, ClassConditionalSpec>)
          return ClassConditionalGenerator(std::move(s));
        else if constexpr (std::is_same_v<S, LabelNoiseSpec>)
          return LabelNoiseGenerator(std::move(s));
        else if constexpr (std::is_same_v<S, DirichletMixtureSpec>)
          return DirichletMixtureGenerator(std::move(s));
        else if constexpr (std::is_same_v<S, EmpiricalSpec>)
          return EmpiricalGenerator(std::move(s));
        else
          return BetaBinaryGenerator(std::move(s));
      },
      std::move(spec));
}

}  // namespace

std::string_view family_name(const GeneratorSpec& spec) {
  return family_names[spec.index()];
}

std::size_t spec_classes(const GeneratorSpec& spec) {
  return std::visit(
      [](const auto& s) -> std::size_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(s)>, BetaBinarySpec>)
          return 2;
        else
          return s.classes;
      },
      spec);
}

void GeneratorScratch::reserve(std::size_t classes) {
  dirichlet.reserve(classes);
  c.resize(classes);
  p.resize(classes);
  log_p.resize(classes);
}

Generator::Generator(GeneratorSpec spec) : impl_(make_family(std::move(spec))) {}

GeneratorSpec Generator::spec() const {
  return std::visit([](const auto& g) -> GeneratorSpec { return g.spec(); }, impl_);
}

std::string_view Generator::family() const {
  return family_names[impl_.index()];
}

std::size_t Generator::classes() const {
  return std::visit([](const auto& g) { return g.classes(); }, impl_);
}

bool Generator::exchangeable_classes() const {
  return std::visit(
      [](const auto& g) {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, DirichletGenerator>)
          return g.exchangeable_classes();
        else if constexpr (std::is_same_v<G, LabelNoiseGenerator>)
          return g.symmetric() && std::all_of(g.spec().beta.begin(), g.spec().beta.end(),
                                              [&](double b) { return b == g.spec().beta.front(); });
        else if constexpr (std::is_same_v<G, ClassConditionalGenerator>)
          return g.symmetric();
        else
          return false;
      },
      impl_);
}

bool Generator::p_determines_c() const {
  if (const auto* d = dirichlet()) return is_injective(d->spec().map, d->classes());
  return std::holds_alternative<ClassConditionalGenerator>(impl_);
}

std::string Generator::canonical_text() const {
  return std::visit([](const auto& g) { return g.canonical_text(); }, impl_);
}

std::uint32_t Generator::draw(Engine& engine, std::span<double> c, std::span<double> p,
                              std::span<double> log_p, GeneratorScratch& scratch) const {
  if (const auto* d = dirichlet()) {
    const std::size_t K = d->classes();
    scratch.dirichlet.reserve(K);
    const std::span<double> log_c(scratch.dirichlet.log_c), tmp(scratch.dirichlet.tmp);
    d->draw_truth(engine, c, log_c);
    const auto y = d->draw_label(engine, c);
    apply(d->spec().map, c, log_c, p, log_p, tmp);
    return y;
  }
  return std::visit(
      [&](const auto& g) -> std::uint32_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(g)>, DirichletGenerator>)
          return 0;  // handled above
        else if constexpr (std::is_same_v<std::decay_t<decltype(g)>, DirichletMixtureGenerator>)
          return g.draw(engine, c, p, log_p, scratch.dirichlet);
        else
          return g.draw(engine, c, p, log_p);
      },
      impl_);
}

void Generator::sample(Engine& engine, std::size_t n, Sample& out, GeneratorScratch& scratch,
                       bool keep_truth) const {
  if (const auto* d = dirichlet()) {
    d->sample(engine, n, out, scratch.dirichlet, keep_truth);
    return;
  }
  const std::size_t K = classes();
  out.resize(n, K);
  out.truth.resize(keep_truth ? n * K : 0);
  scratch.reserve(K);
  const std::span<double> c(scratch.c), log_p(scratch.log_p);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 4096 == 0) throw_if_stop_requested();  // sample(G, 3e7): Ctrl-C within a second
    out.label[i] = draw(engine, c, out.row(i), log_p, scratch);
    if (keep_truth)
      std::copy(c.begin(), c.end(), out.truth.begin() + static_cast<std::ptrdiff_t>(i * K));
  }
  out.summarise();
}

}  // namespace calbench
