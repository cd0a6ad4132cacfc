#pragma once
// The `dirichlet` fake-classifier family (the kyle model): c ~ Dirichlet(alpha),
// y ~ Categorical(c), p = h(c) for a miscalibration map h (DESIGN.md §1).
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/sample.hpp"
#include "generators/gamma_sampler.hpp"
#include "generators/miscalibration.hpp"

namespace calbench {

// The concentrations a config accepts (docs/config.md, "Parameter bounds"; the reason is at
// concentration_bounds in generators_json.cpp). `calbench fit` refuses a fit outside them.
inline constexpr double concentration_min = 1e-4, concentration_max = 1e3;
// The same range as the rules and messages write it.
inline constexpr char concentration_range[] = "[1e-4, 1e3]";

struct DirichletSpec {
  std::size_t classes = 2;
  std::vector<double> alpha;  // one per class (a symmetric alpha is expanded)
  MiscalibrationMap map = IdentityMap{};
};

// Per-thread working memory of the sampler, allocated once.
struct DirichletScratch {
  std::vector<double> c, log_c, tmp;
  void reserve(std::size_t classes);
};

class DirichletGenerator {
 public:
  // Validates every parameter; throws DomainError naming it.
  explicit DirichletGenerator(DirichletSpec spec);

  const DirichletSpec& spec() const { return spec_; }
  std::size_t classes() const { return spec_.classes; }
  bool symmetric() const { return symmetric_; }
  // A symmetric alpha and a class-symmetric map: Generator::exchangeable_classes().
  bool exchangeable_classes() const { return symmetric_ && is_class_symmetric(spec_.map); }

  // Canonical parameter text: equal for equal generators, the truth cache's key.
  std::string canonical_text() const;

  // Draws one true distribution c (and log c, exact where c underflows). With `lanes`, most
  // random words come from them (core/rng.hpp; faster for many classes).
  void draw_truth(Engine& engine, std::span<double> c, std::span<double> log_c,
                  EngineLanes* lanes = nullptr) const;

  // The same with log c shifted by a constant s, which it returns (log c = log_c_shifted - s):
  // one logarithm fewer for callers blind to the shift.
  double draw_truth_shifted(Engine& engine, std::span<double> c, std::span<double> log_c_shifted,
                            EngineLanes* lanes = nullptr) const;

  // Draws y ~ Categorical(c) with one uniform.
  std::uint32_t draw_label(Engine& engine, std::span<const double> c) const;

  // Fills `out` with n rows (p_i, y_i) and summarises it; with keep_truth also out.truth.
  void sample(Engine& engine, std::size_t n, Sample& out, DirichletScratch& scratch,
              bool keep_truth = false) const;

 private:
  // K gamma variates G_k ~ Gamma(alpha_k) into g and log G_k into log_g (exact where G_k is
  // tiny: GammaSampler::kTiny).
  void draw_gammas(Engine& engine, EngineLanes* lanes, std::span<double> g,
                   std::span<double> log_g) const;
  // sample() for K = 2 under a temperature map.
  void sample_binary_temperature(Engine& engine, EngineLanes& lanes, double inv_t, Sample& out,
                                 bool keep_truth, std::vector<double>& tmp) const;
  // sample() for K > 2 under a temperature map, in fewer passes over each row.
  void sample_temperature(Engine& engine, EngineLanes& lanes, double inv_t, Sample& out,
                          bool keep_truth, DirichletScratch& scratch) const;

  DirichletSpec spec_;
  std::vector<GammaSampler> samplers_;  // one, or one per class
  bool symmetric_;
};

}  // namespace calbench
