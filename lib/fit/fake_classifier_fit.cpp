#include "fit/fake_classifier_fit.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/binning.hpp"
#include "generators/generator.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {
namespace {

MiscalibrationMap generator_map(const MapFit& fit) {
  switch (fit.map) {
    case FittedMap::identity:
      return IdentityMap{};
    case FittedMap::temperature:
      return TemperatureMap{fit.parameters.at(0)};
    case FittedMap::power:
      return PowerMap{fit.parameters};
  }
  return IdentityMap{};
}

std::vector<double> confidence_histogram(const Sample& s, std::size_t bins) {
  // The binned ECE's equal-width bins (estimators/binning.hpp), so the histogram's bins are the
  // ones a reliability diagram of the same data uses.
  std::vector<double> edges, out(bins, 0.0);
  equal_width_edges(bins, edges);
  for (std::size_t i = 0; i < s.size; ++i) out[equal_width_bin(s.confidence[i], edges)] += 1.0;
  for (double& v : out) v /= static_cast<double>(std::max<std::size_t>(s.size, 1));
  return out;
}

}  // namespace

FakeClassifierFit fit_fake_classifier(const Sample& data, const FakeFitOptions& options) {
  if (data.size < 2)
    throw DomainError("fit needs at least 2 rows, found " + std::to_string(data.size));
  FakeClassifierFit out;
  std::vector<FittedMap> maps = {FittedMap::identity, FittedMap::temperature, FittedMap::power};
  if (options.map) maps = {*options.map};
  for (FittedMap map : maps) {
    try {
      out.candidates.push_back(fit_map(data, map));
    } catch (const DomainError& error) {
      out.rejected.push_back(error.what());
    }
  }
  if (out.candidates.empty())
    throw DomainError("no calibration map could be fitted: " + out.rejected.front());
  out.chosen = *std::min_element(out.candidates.begin(), out.candidates.end(),
                                 [](const MapFit& a, const MapFit& b) { return a.aic < b.aic; });

  const std::vector<double> c = calibrated_rows(data, out.chosen);
  out.dirichlet = fit_dirichlet(dirichlet_statistics(c, data.classes));
  out.spec = DirichletSpec{data.classes, out.dirichlet.alpha, generator_map(out.chosen)};
  const Generator generator(out.spec);
  out.truth = compute_truth(generator, TruthSettings{});

  GoodnessOfFit& g = out.fit;
  g.rows = data.size;
  const double n = static_cast<double>(data.size);
  double correct = 0.0, confidence = 0.0, gap = 0.0, gap_sq = 0.0;
  for (std::size_t i = 0; i < data.size; ++i) {
    const double o = data.correct(i) ? 1.0 : 0.0;
    correct += o;
    confidence += data.confidence[i];
    const double d = data.confidence[i] - o;
    gap += d;
    gap_sq += d * d;
  }
  g.model_accuracy = correct / n;
  g.model_accuracy_se = std::sqrt(g.model_accuracy * (1.0 - g.model_accuracy) / n);
  g.model_confidence = confidence / n;
  g.model_gap_se = std::sqrt(std::max(0.0, gap_sq / n - (gap / n) * (gap / n)) / n);
  const BinnedEce ece(BinnedEceSpec{options.bins});
  EstimatorWorkspace workspace;
  g.model_ece = ece.estimate(data, workspace);
  Sample fake;
  GeneratorScratch scratch;
  Engine engine = make_engine({options.seed, 0, 0, Purpose::sample});
  generator.sample(engine, data.size, fake, scratch);
  g.fake_ece_sample = ece.estimate(fake, workspace);
  g.model_histogram = confidence_histogram(data, options.histogram_bins);
  g.fake_histogram = confidence_histogram(fake, options.histogram_bins);
  for (std::size_t b = 0; b < options.histogram_bins; ++b)
    g.total_variation += 0.5 * std::abs(g.model_histogram[b] - g.fake_histogram[b]);
  return out;
}

}  // namespace calbench
