#include "fit/fake_classifier_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/format.hpp"
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

// The dirichlet family: the map by AIC on the labels, then alpha on c = r(p).
void fit_dirichlet_family(const Sample& data, const FakeFitOptions& options,
                          FakeClassifierFit& out) {
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
  const std::size_t K = data.classes;
  out.dirichlet = fit_dirichlet(dirichlet_statistics(c, K));
  out.spec = DirichletSpec{K, out.dirichlet.alpha, generator_map(out.chosen)};

  // The confidence model: J = 1 and mixtures of J = 2..max_components, by BIC.
  const double log_n = std::log(static_cast<double>(data.size));
  MixtureFit single;
  single.components = {{1.0, out.dirichlet.alpha}};
  single.log_likelihood = static_cast<double>(data.size) * out.dirichlet.mean_log_likelihood;
  single.free_parameters = K;
  single.bic = static_cast<double>(K) * log_n - 2.0 * single.log_likelihood;
  out.mixtures.push_back(single);
  const bool single_only = options.family == FittedFamily::dirichlet;
  for (std::size_t J = 2; J <= options.max_components && !single_only; ++J) {
    try {
      MixtureFit fit = fit_dirichlet_mixture(c, K, J);
      for (const MixtureComponent& m : fit.components)
        for (double a : m.alpha)
          if (!(a >= concentration_min && a <= concentration_max))
            throw DomainError("a fitted alpha = " + format_double(a) + " is outside the family's " +
                              concentration_range);
      out.mixtures.push_back(std::move(fit));
    } catch (const DomainError& error) {
      out.rejected_mixtures.push_back(std::to_string(J) + " components: " + error.what());
    }
  }
  auto first = out.mixtures.begin();
  if (options.family == FittedFamily::dirichlet_mixture) {
    if (out.mixtures.size() < 2)
      throw DomainError(
          "no mixture of 2 to " + std::to_string(options.max_components) +
          " Dirichlets could be fitted" +
          (out.rejected_mixtures.empty() ? std::string() : ": " + out.rejected_mixtures.front()));
    ++first;
  }
  out.components =
      std::min_element(first, out.mixtures.end(), [](const MixtureFit& a, const MixtureFit& b) {
        return a.bic < b.bic;
      })->components;
}

// The chosen confidence model's family.
FittedFamily dirichlet_kind(const FakeClassifierFit& fit) {
  return fit.components.size() > 1 ? FittedFamily::dirichlet_mixture : FittedFamily::dirichlet;
}

// The fitted dirichlet generator's joint log-likelihood of (f, y) at K = 2: the density of each
// f times r_y(p). -inf when some f is 0 or 1 exactly.
double dirichlet_joint_log_likelihood(const Sample& data, const FakeClassifierFit& fit) {
  double out = -fit.chosen.negative_log_likelihood;
  for (std::size_t i = 0; i < data.size; ++i)
    out += dirichlet_score_log_density(data.p[2 * i + 1], fit.chosen, fit.components);
  return out;
}

FamilyCandidate candidate(FittedFamily family, double log_likelihood, std::size_t parameters) {
  const double aic = std::isfinite(log_likelihood)
                         ? 2.0 * static_cast<double>(parameters) - 2.0 * log_likelihood
                         : std::numeric_limits<double>::infinity();
  return {family, log_likelihood, parameters, aic};
}

}  // namespace

double dirichlet_score_log_density(double f, const MapFit& map,
                                   std::span<const MixtureComponent> components) {
  if (!(f > 0.0 && f < 1.0)) return -std::numeric_limits<double>::infinity();
  std::vector<double> t = {1.0, 1.0};
  if (map.map == FittedMap::temperature) t.assign(2, 1.0 / map.parameters.at(0));
  if (map.map == FittedMap::power) t = map.parameters;
  const std::array<double, 2> log_p = {std::log1p(-f), std::log(f)};
  std::array<double, 2> c{};
  power_inverse(log_p, t, c);
  if (!(c[0] > 0.0 && c[1] > 0.0)) return -std::numeric_limits<double>::infinity();
  const std::array<double, 2> log_c = {std::log(c[0]), std::log(c[1])};
  // The Dirichlet density of (c_0, c_1) with respect to Lebesgue measure on c_1 is the Beta's.
  return mixture_log_density(log_c, components) - std::log(f) - std::log1p(-f) -
         std::log(t[1] / c[1] + t[0] / c[0]);
}

std::string_view to_string(FittedFamily family) {
  switch (family) {
    case FittedFamily::dirichlet:
      return family_name_of<DirichletSpec>;
    case FittedFamily::beta_binary:
      return family_name_of<BetaBinarySpec>;
    case FittedFamily::dirichlet_mixture:
      return family_name_of<DirichletMixtureSpec>;
    case FittedFamily::empirical:
      return family_name_of<EmpiricalSpec>;
  }
  return "?";
}

namespace {

// The parametric families (dirichlet, dirichlet_mixture, beta_binary): the choice of
// FakeFitOptions::family, or by BIC and at K = 2 the joint AIC.
void fit_parametric(const Sample& data, const FakeFitOptions& options, FakeClassifierFit& out) {
  const bool binary = data.classes == 2;
  const bool want_dirichlet = options.family != FittedFamily::beta_binary;
  const bool want_beta = options.family ? *options.family == FittedFamily::beta_binary : binary;
  // A family the options fix must fit (its error propagates), as must the only one (K > 2); in
  // the automatic choice at K = 2 a family that cannot be fitted is listed with its reason and
  // the other one is used.
  const auto attempt = [&](FittedFamily family, auto&& fit) {
    if (options.family || !binary) return fit();
    try {
      fit();
    } catch (const DomainError& error) {
      out.rejected_families.push_back(std::string(to_string(family)) + ": " + error.what());
    }
  };
  if (want_dirichlet) {
    attempt(FittedFamily::dirichlet, [&] {
      fit_dirichlet_family(data, options, out);
      out.family = dirichlet_kind(out);
      const std::size_t J = out.components.size();
      if (binary)
        out.families.push_back(candidate(out.family, dirichlet_joint_log_likelihood(data, out),
                                         J * data.classes + J - 1 + out.chosen.free_parameters));
    });
  }
  if (want_beta) {
    attempt(FittedFamily::beta_binary, [&] {
      out.beta_binary = fit_beta_binary(data);
      out.families.push_back(candidate(FittedFamily::beta_binary, out.beta_binary->log_likelihood,
                                       out.beta_binary->free_parameters));
    });
  }
  if (binary) {
    if (out.families.empty())
      throw DomainError("neither family could be fitted: " + out.rejected_families.front());
    // The lower AIC; on a tie (both infinite) the dirichlet family (or mixture), listed first.
    out.family = std::min_element(out.families.begin(), out.families.end(),
                                  [](const FamilyCandidate& a, const FamilyCandidate& b) {
                                    return a.aic < b.aic;
                                  })
                     ->family;
  }
  if (out.family == FittedFamily::beta_binary)
    out.generator = out.beta_binary->spec;
  else if (out.family == FittedFamily::dirichlet_mixture)
    out.generator = DirichletMixtureSpec{data.classes, out.components, out.spec.map};
  else
    out.generator = out.spec;
}

}  // namespace

FakeClassifierFit fit_fake_classifier(const Sample& data, const FakeFitOptions& options) {
  if (data.size < 2)
    throw DomainError("fit needs at least 2 rows, found " + std::to_string(data.size));
  FakeClassifierFit out;
  const bool empirical =
      options.family ? *options.family == FittedFamily::empirical : options.empirical;
  bool fitted = false;
  if (empirical) {
    try {
      out.empirical = fit_empirical(data, options.empirical_options);
      out.family = FittedFamily::empirical;
      out.generator = out.empirical->spec;
      fitted = true;
    } catch (const DomainError& error) {
      if (options.family) throw;
      out.rejected_families.push_back(std::string("empirical: ") + error.what());
    }
  }
  if (!fitted) fit_parametric(data, options, out);
  const Generator generator(out.generator);
  if (options.compute_truth) out.truth = compute_truth(generator, TruthSettings{});

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
