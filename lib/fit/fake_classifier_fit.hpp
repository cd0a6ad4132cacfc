#pragma once
// `calbench fit` (docs/fit.md): a dirichlet-family fake classifier fitted to a real model's
// outputs, so that questions about estimators ("how biased is a 15-bin ECE at n = 2,000 for a
// model like mine?") can be answered against exact truth.
//
// Two steps, each by maximum likelihood:
// 1. the calibration function: r(p) = h^-1(p) for h in {identity, temperature, power}, fitted
//    on the labels given p (fit/calibration_map_fit.hpp) and chosen by AIC, as caltrain chooses
//    its calibration curves (Roelofs et al. 2022);
// 2. the confidence distribution: c_i = r(p_i) are the model's true class distributions under
//    that map, and c ~ Dirichlet(alpha) is fitted to them (fit/dirichlet_mle.hpp).
// The fake classifier is then c ~ Dir(alpha), y ~ Cat(c), p = h(c).
//
// For binary data (K = 2) the `beta_binary` family is fitted beside it (fit/beta_binary_fit.hpp,
// as caltrain does) and the family with the lower AIC on the joint likelihood of the scores
// f = p_1 and the labels is chosen, unless FakeFitOptions::family fixes it.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample.hpp"
#include "fit/beta_binary_fit.hpp"
#include "fit/calibration_map_fit.hpp"
#include "fit/dirichlet_mixture_fit.hpp"
#include "fit/dirichlet_mle.hpp"
#include "fit/empirical_fit.hpp"
#include "generators/dirichlet.hpp"
#include "generators/generator.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

enum class FittedFamily { dirichlet, beta_binary, dirichlet_mixture, empirical };

std::string_view to_string(FittedFamily family);

struct FakeFitOptions {
  std::optional<FittedMap> map;  // empty: the lowest AIC among the maps that fit
  std::size_t bins = 15;         // of the ECE compared between model and fake
  std::size_t histogram_bins = 10;
  std::uint64_t seed = 0;  // of the fake sample drawn for the comparison
  // Empty: the confidence model with the lowest BIC among a single Dirichlet and mixtures of
  // 2..max_components (dirichlet or dirichlet_mixture), and at K = 2 the lower joint AIC of that
  // and beta_binary. dirichlet: a single Dirichlet; dirichlet_mixture: 2..max_components.
  std::optional<FittedFamily> family;
  std::size_t max_components = 4;
  // With `family` empty: the empirical family (fit/empirical_fit.hpp) when it fits, else the
  // parametric choice above. False: the parametric choice only (`--family parametric`).
  bool empirical = true;
  EmpiricalFitOptions empirical_options;
  // false: FakeClassifierFit::truth is left empty (a fit only judged by sampling, as the
  // verdict's fit on the non-held-out rows is, need not pay for a Monte Carlo truth).
  bool compute_truth = true;
};

// A family's fit on the joint likelihood of the scores f = p_1 and the labels (K = 2): the
// density of f (with respect to Lebesgue measure on (0, 1), plus the point mass at 1) times
// P(y | f). AIC = 2 free_parameters - 2 log_likelihood; +inf when the family gives the data
// zero density (the dirichlet family at an f of exactly 0 or 1).
struct FamilyCandidate {
  FittedFamily family = FittedFamily::dirichlet;
  double log_likelihood = 0.0;
  std::size_t free_parameters = 0;
  double aic = 0.0;
};

// A side-by-side comparison of the model's data and the fitted fake classifier.
struct GoodnessOfFit {
  std::size_t rows = 0;
  double model_accuracy = 0.0, model_accuracy_se = 0.0;
  double model_confidence = 0.0;  // mean max p
  double model_ece = 0.0;         // binned ECE (bins, equal width) on the data
  // The standard error of the data's plug-in gap mean(max p - correct): the sampling error
  // against which the fake's truth is judged.
  double model_gap_se = 0.0;
  double fake_ece_sample = 0.0;  // the same estimator on a fake sample of the same size
  std::vector<double> model_histogram, fake_histogram;  // fractions of max p per bin
  double total_variation = 0.0;  // (1/2) sum |model - fake| over the histogram bins
};

struct FakeClassifierFit {
  // The dirichlet family (empty when FakeFitOptions::family is beta_binary).
  std::vector<MapFit> candidates;     // every map tried that converged
  std::vector<std::string> rejected;  // maps whose fit ran away, with the reason
  MapFit chosen;
  DirichletFit dirichlet;
  DirichletSpec spec;  // the fitted dirichlet generator (a single Dirichlet)
  // The confidence model of c = r(p) under the chosen map: J = 1 (the single Dirichlet above)
  // and each mixture of J = 2..max_components fitted by EM, in order of J, with the reasons
  // of those not fitted; `components` is the one with the lowest BIC (or the family asked).
  std::vector<MixtureFit> mixtures;
  std::vector<std::string> rejected_mixtures;
  std::vector<MixtureComponent> components;
  // The beta_binary family (K = 2 only, unless FakeFitOptions::family is dirichlet).
  std::optional<BetaBinaryFit> beta_binary;
  std::vector<FamilyCandidate> families;       // K = 2: each family fitted, on the joint AIC
  std::vector<std::string> rejected_families;  // families not fitted, with the reason
  // The empirical family, when it was fitted.
  std::optional<EmpiricalFit> empirical;
  FittedFamily family = FittedFamily::dirichlet;
  GeneratorSpec generator;  // the chosen family's generator
  GroundTruth truth;        // its exact or Monte Carlo truth (default truth settings)
  GoodnessOfFit fit;
};

// The density of f = p_1 under a K = 2 dirichlet-family generator, c ~ Dir(alpha), p = h(c)
// with h the fitted map: with c = h^-1(p) and p_k proportional to c_k^(t_k) (temperature:
// t_k = 1/T; identity: 1), logit f = t_1 log c_1 - t_0 log c_0, so
// dc_1/df = 1 / (f (1 - f) (t_1/c_1 + t_0/c_0)) and the density is
// Beta(c_1; alpha_1, alpha_0) |dc_1/df|. Returns its log; -inf at f = 0 or 1.
// A mixture's density is the weighted sum over its components.
double dirichlet_score_log_density(double f, const MapFit& map,
                                   std::span<const MixtureComponent> components);

// Throws DomainError when no map can be fitted or the data are too small (fewer than 2 rows).
FakeClassifierFit fit_fake_classifier(const Sample& data, const FakeFitOptions& options);

}  // namespace calbench
