// The dirichlet_mixture family: its sampler, its truth (linear quantities as weighted sums of
// the components' truths, the rest by Monte Carlo), and its refusals (docs/generators.md).
#include <tbb/task_arena.h>

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "generators/generator.hpp"
#include "truth/family_truth.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

DirichletMixtureSpec two_components(MiscalibrationMap map) {
  return {3, {{0.7, {0.3, 0.3, 0.3}}, {0.3, {2.0, 1.0, 0.5}}}, std::move(map)};
}

}  // namespace

TEST_CASE("a one-component mixture draws exactly as the dirichlet family", "[unit][mixture]") {
  // With one component no uniform is spent on choosing it, so the streams coincide.
  const Generator mixture(DirichletMixtureSpec{3, {{1.0, {0.4, 0.8, 1.5}}}, TemperatureMap{0.7}});
  const Generator plain(DirichletSpec{3, {0.4, 0.8, 1.5}, TemperatureMap{0.7}});
  Engine a = make_engine({9, 0, 0, Purpose::sample}), b = make_engine({9, 0, 0, Purpose::sample});
  GeneratorScratch sa, sb;
  std::vector<double> ca(3), pa(3), la(3), cb(3), pb(3), lb(3);
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(mixture.draw(a, ca, pa, la, sa) == plain.draw(b, cb, pb, lb, sb));
    for (std::size_t k = 0; k < 3; ++k) REQUIRE(pa[k] == pb[k]);
  }
  CHECK(mixture.family() == "dirichlet_mixture");
}

TEST_CASE("the mixture sampler chooses components by weight", "[stat][mixture]") {
  // Identity map: E[p_k] = sum_j w_j alpha_jk / alpha_j0 = (0.7/3 + 0.3 * 2/3.5) for k = 0.
  // 4 standard errors of the sample mean per class (3 checks).
  const Generator gen(two_components(IdentityMap{}));
  Sample s;
  GeneratorScratch scratch;
  Engine engine = make_engine({10, 0, 0, Purpose::sample});
  const std::size_t n = 100'000;
  gen.sample(engine, n, s, scratch);
  const double expected[3] = {0.7 / 3 + 0.3 * 2.0 / 3.5, 0.7 / 3 + 0.3 * 1.0 / 3.5,
                              0.7 / 3 + 0.3 * 0.5 / 3.5};
  for (std::size_t k = 0; k < 3; ++k) {
    double sum = 0.0, sq = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      sum += s.p[i * 3 + k];
      sq += s.p[i * 3 + k] * s.p[i * 3 + k];
    }
    const double mean = sum / n, se = std::sqrt((sq / n - mean * mean) / n);
    INFO("class " << k << ": mean p " << mean << ", expected " << expected[k] << ", se " << se);
    CHECK(std::abs(mean - expected[k]) < 4 * se);
  }
}

TEST_CASE("mixture truth: linear quantities are the weighted component truths", "[stat][mixture]") {
  const DirichletMixtureSpec spec = two_components(PowerMap{{0.6, 1.0, 1.4}});
  const TruthSettings settings{200'000};
  const Generator gen(spec);
  const GroundTruth t = compute_truth(gen, settings);
  const GroundTruth parts[2] = {
      compute_truth(Generator(DirichletSpec{3, spec.components[0].alpha, spec.map}), settings),
      compute_truth(Generator(DirichletSpec{3, spec.components[1].alpha, spec.map}), settings)};
  for (Quantity q : {Quantity::accuracy, Quantity::overconfidence, Quantity::brier, Quantity::nll,
                     Quantity::canonical_l1}) {
    INFO(to_string(q));
    CHECK(t[q].value == Approx(0.7 * parts[0][q].value + 0.3 * parts[1][q].value).epsilon(1e-14));
  }
  CHECK(t[Quantity::canonical_l2].value ==
        Approx(std::sqrt(0.7 * std::pow(parts[0][Quantity::canonical_l2].value, 2) +
                         0.3 * std::pow(parts[1][Quantity::canonical_l2].value, 2)))
            .epsilon(1e-14));
  // Against the mixture's own Monte Carlo (independent of the component truths): within 4
  // combined errors for every quantity (9 checks).
  const GroundTruth mc = family_monte_carlo(gen, settings);
  for (Quantity q : all_quantities) {
    const double tolerance = 4.0 * (t[q].error + mc[q].error);
    INFO(to_string(q) << ": " << t[q].value << " (" << to_string(t[q].method) << ") vs Monte Carlo "
                      << mc[q].value << ", tolerance " << tolerance);
    CHECK(std::abs(t[q].value - mc[q].value) <= tolerance);
  }
}

TEST_CASE("mixture truth: exact ECEs for the identity and temperature maps", "[stat][mixture]") {
  const TruthSettings settings{400'000};
  const GroundTruth calibrated = compute_truth(Generator(two_components(IdentityMap{})), settings);
  for (Quantity q : {Quantity::ece_top_l1, Quantity::ece_top_l2, Quantity::classwise_ece_l1,
                     Quantity::canonical_l1, Quantity::canonical_l2}) {
    INFO(to_string(q));
    CHECK(calibrated[q].value == Approx(0.0).margin(1e-12));
  }
  // Temperature: the gap has one sign, so ece_top_l1 = |overconfidence|; the binned Monte Carlo
  // estimate of the mixture must agree within its errors (4 of them).
  const Generator hot(two_components(TemperatureMap{0.6}));
  const GroundTruth t = compute_truth(hot, settings);
  const GroundTruth mc = family_monte_carlo(hot, settings);
  CHECK(t[Quantity::ece_top_l1].value == Approx(std::abs(t[Quantity::overconfidence].value)));
  CHECK(t[Quantity::ece_top_l1].value > 0.01);
  CHECK(std::abs(t[Quantity::ece_top_l1].value - mc[Quantity::ece_top_l1].value) <=
        4.0 * (t[Quantity::ece_top_l1].error + mc[Quantity::ece_top_l1].error));
}

TEST_CASE("mixture truth is the same on 1 and 2 threads", "[unit][mixture]") {
  const Generator gen(two_components(PowerMap{{0.6, 1.0, 1.4}}));
  GroundTruth one, two;
  tbb::task_arena(1).execute([&] { one = compute_truth(gen, TruthSettings{100'000}); });
  tbb::task_arena(2).execute([&] { two = compute_truth(gen, TruthSettings{100'000}); });
  for (Quantity q : all_quantities) CHECK(one[q].value == two[q].value);
}

TEST_CASE("the mixture refuses what it cannot represent", "[unit][mixture]") {
  CHECK_THROWS_WITH(Generator(two_components(TopLabelMap{2.0})),
                    Catch::Contains("accepts identity, temperature or power"));
  CHECK_THROWS_WITH(Generator(DirichletMixtureSpec{3, {{0.5, {1, 1, 1}}, {0.4, {2, 2, 2}}}}),
                    Catch::Contains("sum to"));
  CHECK_THROWS_AS(Generator(DirichletMixtureSpec{3, {{1.0, {1, 1}}}}), DomainError);
  CHECK_THROWS_AS(Generator(DirichletMixtureSpec{3, {}}), DomainError);
}

namespace {

// The quantities the mixture asks its components for.
constexpr std::array<Quantity, 6> linear = {Quantity::accuracy,     Quantity::overconfidence,
                                            Quantity::brier,        Quantity::nll,
                                            Quantity::canonical_l1, Quantity::canonical_l2};

// Two components at K = 10: one confident and symmetric, one flatter and asymmetric.
DirichletMixtureSpec ten_classes(MiscalibrationMap map, bool reversed = false) {
  std::vector<double> spread(10);
  for (std::size_t k = 0; k < 10; ++k) spread[k] = 0.5 + 0.15 * static_cast<double>(k);
  std::vector<MixtureComponent> components = {{0.6, std::vector<double>(10, 0.2)}, {0.4, spread}};
  if (reversed) std::swap(components[0], components[1]);
  return {10, components, std::move(map)};
}

PowerMap ten_exponents() {
  std::vector<double> t(10);
  for (std::size_t k = 0; k < 10; ++k) t[k] = 0.6 + 0.1 * static_cast<double>(k);
  return {t};
}

}  // namespace

TEST_CASE("dirichlet truth with `needed`: exact values kept, Monte Carlo only for what is asked",
          "[unit][truth][mixture]") {
  // K = 3 power: the top-label quadrature pass gives the six linear quantities whatever is
  // needed (the same bits); the classwise passes are skipped, so classwise is unknown.
  const DirichletGenerator k3(DirichletSpec{3, {2.0, 1.0, 0.5}, PowerMap{{0.6, 1.0, 1.4}}});
  const TruthSettings settings{1'000'000};
  const GroundTruth full = compute_truth(k3, settings);
  const GroundTruth part = compute_truth(k3, settings, linear);
  for (Quantity q : linear) {
    INFO(to_string(q));
    CHECK(part[q].value == full[q].value);
    CHECK(part[q].error == full[q].error);
    CHECK(part[q].method == TruthMethod::quadrature);
  }
  CHECK(std::isnan(part[Quantity::classwise_ece_l1].value));
  CHECK(std::isinf(part[Quantity::classwise_ece_l1].error));
  CHECK(full[Quantity::classwise_ece_l1].error < 1e-6);
  // K = 10 temperature: Monte Carlo without per-class bins, stopped on the linear quantities.
  const DirichletGenerator k10(
      DirichletSpec{10, std::vector<double>(10, 0.2), TemperatureMap{0.7}});
  const GroundTruth mc = compute_truth(k10, settings, linear);
  CHECK(std::isnan(mc[Quantity::classwise_ece_l1].value));
  for (Quantity q : linear) {
    INFO(to_string(q) << " error " << mc[q].error);
    CHECK(mc[q].error <= settings.tolerance);
  }
}

TEST_CASE("mixture truth: errors add as bounds for quadrature, in quadrature for Monte Carlo",
          "[unit][mixture]") {
  const TruthSettings settings{1'000'000};
  // K = 10 temperature: the components' accuracy is exact (quadrature, a bound), the rest Monte
  // Carlo standard errors from independent streams.
  {
    const DirichletMixtureSpec spec = ten_classes(TemperatureMap{0.7});
    const Generator gen(spec);
    const GroundTruth t = compute_truth(gen, settings);
    GroundTruth parts[2];
    for (std::size_t j = 0; j < 2; ++j)
      parts[j] =
          compute_truth(DirichletGenerator(DirichletSpec{10, spec.components[j].alpha, spec.map}),
                        settings, linear);
    const double w[2] = {0.6, 0.4};
    REQUIRE(parts[0][Quantity::accuracy].method == TruthMethod::quadrature);
    CHECK(t[Quantity::accuracy].error == Approx(w[0] * parts[0][Quantity::accuracy].error +
                                                w[1] * parts[1][Quantity::accuracy].error));
    for (Quantity q : {Quantity::brier, Quantity::nll, Quantity::overconfidence}) {
      INFO(to_string(q));
      REQUIRE(parts[0][q].method == TruthMethod::monte_carlo);
      CHECK(t[q].error == Approx(std::hypot(w[0] * parts[0][q].error, w[1] * parts[1][q].error)));
      CHECK(t[q].method == TruthMethod::monte_carlo);
    }
    // canonical_l2 = (sum w l2_j^2)^(1/2): the square's error (sum (2 w_j l2_j e_j)^2)^(1/2),
    // carried to the root by 1/(2 l2).
    const auto& a = parts[0][Quantity::canonical_l2];
    const auto& b = parts[1][Quantity::canonical_l2];
    const double l2 = std::sqrt(w[0] * a.value * a.value + w[1] * b.value * b.value);
    CHECK(t[Quantity::canonical_l2].value == Approx(l2).epsilon(1e-14));
    CHECK(
        t[Quantity::canonical_l2].error ==
        Approx(std::hypot(2 * w[0] * a.value * a.error, 2 * w[1] * b.value * b.error) / (2 * l2)));
    // ece_top_l1 = |overconfidence| (one-signed gap), with its error.
    CHECK(t[Quantity::ece_top_l1].value == t[Quantity::overconfidence].value);
    CHECK(t[Quantity::ece_top_l1].error == t[Quantity::overconfidence].error);
  }
  // K = 3 power: every component quantity by quadrature, so the errors add as bounds.
  {
    const DirichletMixtureSpec spec = two_components(PowerMap{{0.6, 1.0, 1.4}});
    const GroundTruth t = compute_truth(Generator(spec), settings);
    GroundTruth parts[2];
    for (std::size_t j = 0; j < 2; ++j)
      parts[j] = compute_truth(
          DirichletGenerator(DirichletSpec{3, spec.components[j].alpha, spec.map}), settings);
    for (Quantity q : {Quantity::accuracy, Quantity::brier, Quantity::nll}) {
      INFO(to_string(q));
      REQUIRE(parts[0][q].method == TruthMethod::quadrature);
      CHECK(t[q].error == Approx(0.7 * parts[0][q].error + 0.3 * parts[1][q].error));
    }
  }
}

TEST_CASE("mixture truth: equal components are computed once, as one with their summed weight",
          "[unit][mixture]") {
  // Two components with the same alpha draw the same keyed streams: their Monte Carlo errors are
  // not independent. Merged, the mixture's linear quantities are the one-component mixture's,
  // bit for bit (0.4 + 0.6 = 1 exactly), errors included.
  const TruthSettings settings{1'000'000};
  const std::vector<double> alpha(10, 0.2);
  const GroundTruth split = compute_truth(
      Generator(DirichletMixtureSpec{10, {{0.4, alpha}, {0.6, alpha}}, TemperatureMap{0.7}}),
      settings);
  const GroundTruth one = compute_truth(
      Generator(DirichletMixtureSpec{10, {{1.0, alpha}}, TemperatureMap{0.7}}), settings);
  for (Quantity q : linear) {
    INFO(to_string(q));
    CHECK(split[q].value == one[q].value);
    CHECK(split[q].error == one[q].error);
  }
  CHECK(split[Quantity::brier].method == TruthMethod::monte_carlo);
}

TEST_CASE("mixture truth at default settings agrees with an independent long Monte Carlo",
          "[stat][mixture]") {
  // The same law with its components listed in reverse order has another canonical text, so its
  // Monte Carlo draws independent streams. 8M draws, no exact shortcuts; every quantity within 4
  // of the summed stated errors (2 mixtures x 9 quantities; a 4-sigma check on the sum of the
  // errors is far beyond any multiple-testing correction).
  const TruthSettings defaults{};
  const TruthSettings long_run{8'000'000, 0.0};
  for (const bool power : {false, true}) {
    const MiscalibrationMap map =
        power ? MiscalibrationMap(ten_exponents()) : MiscalibrationMap(TemperatureMap{0.7});
    const GroundTruth t = compute_truth(Generator(ten_classes(map)), defaults);
    const GroundTruth mc = family_monte_carlo(Generator(ten_classes(map, true)), long_run);
    for (Quantity q : all_quantities) {
      const double tolerance = 4.0 * (t[q].error + mc[q].error);
      INFO((power ? "power " : "temperature ")
           << to_string(q) << ": " << t[q].value << " +- " << t[q].error << " ("
           << to_string(t[q].method) << ") vs " << mc[q].value << " +- " << mc[q].error);
      CHECK(t[q].error <= 2e-4);
      CHECK(std::abs(t[q].value - mc[q].value) <= tolerance);
    }
  }
}
