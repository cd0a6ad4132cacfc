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
#include <cstdint>
#include <optional>
#include <vector>

#include "core/sample.hpp"
#include "fit/calibration_map_fit.hpp"
#include "fit/dirichlet_mle.hpp"
#include "generators/dirichlet.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

struct FakeFitOptions {
  std::optional<FittedMap> map;  // empty: the lowest AIC among the maps that fit
  std::size_t bins = 15;         // of the ECE compared between model and fake
  std::size_t histogram_bins = 10;
  std::uint64_t seed = 0;  // of the fake sample drawn for the comparison
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
  std::vector<MapFit> candidates;     // every map tried that converged
  std::vector<std::string> rejected;  // maps whose fit ran away, with the reason
  MapFit chosen;
  DirichletFit dirichlet;
  DirichletSpec spec;  // the fitted generator
  GroundTruth truth;   // its exact or Monte Carlo truth (default truth settings)
  GoodnessOfFit fit;
};

// Throws DomainError when no map can be fitted or the data are too small (fewer than 2 rows).
FakeClassifierFit fit_fake_classifier(const Sample& data, const FakeFitOptions& options);

}  // namespace calbench
