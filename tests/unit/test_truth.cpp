// The truth engine: closed forms with cited sources, quadrature against Monte Carlo, the
// non-injective top_label posterior, and determinism.
#include <tbb/global_control.h>

#include <boost/math/special_functions/digamma.hpp>
#include <catch2/catch.hpp>
#include <cmath>

#include "core/running_stats.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/skce.hpp"
#include "truth/dirichlet_integrals.hpp"
#include "truth/map_preimage.hpp"
#include "truth/monte_carlo_sampler.hpp"
#include "truth/plugin_truth.hpp"
#include "truth/population.hpp"
#include "truth/ternary_quadrature.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {
// Monte Carlo against an exact value: z standard errors plus the exact method's own error.
// Nine quantities times a handful of generators: z = 4.5 keeps the family-wise false-alarm
// rate below 0.1%.
constexpr double z = 4.5;

void check_agree(const GroundTruth& exact, const GroundTruth& mc, Quantity q,
                 double floor = 1e-12) {
  INFO(to_string(q) << ": exact " << exact[q].value << " (" << exact[q].error << "), MC "
                    << mc[q].value << " (" << mc[q].error << ")");
  CHECK(std::abs(exact[q].value - mc[q].value) < z * mc[q].error + exact[q].error + floor);
}
}  // namespace

TEST_CASE("E[max c] for K = 2 matches the closed form", "[unit][truth]") {
  // For c ~ Dir(a, a): E max(c_1, c_2) = 1/2 + Gamma(2a) / (Gamma(a) Gamma(a+1) 2^(2a))
  // (issue #2; follows from E|2 c_1 - 1| for c_1 ~ Beta(a, a)).
  for (double a : {0.05, 0.1, 0.5, 1.0, 3.0, 20.0}) {
    const double exact =
        0.5 + std::tgamma(2 * a) / (std::tgamma(a) * std::tgamma(a + 1) * std::pow(2.0, 2 * a));
    const std::vector<double> alpha = {a, a};
    INFO("a = " << a);
    CHECK(expected_max(alpha).value == Approx(exact).margin(1e-10));
  }
  // a = 1: c_1 uniform, E max = 3/4.
  CHECK(expected_max(std::vector<double>{1.0, 1.0}).value == Approx(0.75).margin(1e-12));
}

TEST_CASE("E[max c] by quadrature agrees with Monte Carlo for asymmetric alpha", "[stat][truth]") {
  const std::vector<double> alpha = {0.2, 0.7, 0.7, 1.5, 4.0};
  const TruthValue exact = expected_max(alpha);
  DirichletGenerator gen({5, alpha, IdentityMap{}});
  Engine engine = make_engine({1, 0, 0, Purpose::truth});
  std::vector<double> c(5), log_c(5);
  RunningStats m;
  for (int i = 0; i < 400'000; ++i) {
    gen.draw_truth(engine, c, log_c);
    m.add(*std::max_element(c.begin(), c.end()));
  }
  CHECK(std::abs(m.mean() - exact.value) < z * m.standard_error());
}

TEST_CASE("identity: closed forms and zero calibration error", "[unit][truth]") {
  // Brier = 1 - sum a_k (a_k + 1) / (a_0 (a_0 + 1)); NLL = -sum (a_k/a_0)(psi(a_k+1) - psi(a_0+1)).
  // By hand for alpha = (1, 1): Brier = 1 - 4/6 = 1/3; NLL = -(psi(2) - psi(3)) = 1/2.
  const GroundTruth t = identity_truth(std::vector<double>{1.0, 1.0});
  CHECK(t[Quantity::brier].value == Approx(1.0 / 3.0).margin(1e-15));
  CHECK(t[Quantity::nll].value == Approx(0.5).margin(1e-14));
  CHECK(t[Quantity::accuracy].value == Approx(0.75).margin(1e-12));
  for (Quantity q : {Quantity::ece_top_l1, Quantity::ece_top_l2, Quantity::classwise_ece_l1,
                     Quantity::canonical_l1, Quantity::canonical_l2, Quantity::overconfidence})
    CHECK(t[q].value == 0.0);
  CHECK(t[Quantity::brier].method == TruthMethod::closed_form);
  // The engine's Monte Carlo path agrees with the closed forms.
  DirichletGenerator gen({6, {0.3, 0.3, 0.5, 1.0, 2.0, 0.1}, IdentityMap{}});
  const GroundTruth exact = compute_truth(gen, TruthSettings{});
  const GroundTruth mc = monte_carlo_truth(gen, TruthSettings{400'000});
  for (Quantity q : {Quantity::accuracy, Quantity::brier, Quantity::nll, Quantity::ece_top_l1,
                     Quantity::overconfidence, Quantity::canonical_l1})
    check_agree(exact, mc, q);
}

TEST_CASE("K = 2: quadrature agrees with Monte Carlo on all nine quantities", "[stat][truth]") {
  for (const MiscalibrationMap& map :
       {MiscalibrationMap{TemperatureMap{0.6}}, MiscalibrationMap{TemperatureMap{1.8}},
        MiscalibrationMap{TopLabelMap{0.5}}, MiscalibrationMap{TopLabelMap{2.0}}}) {
    for (double a : {0.3, 1.0}) {
      DirichletGenerator gen({2, {a}, map});
      GroundTruth quad;
      REQUIRE(binary_truth_by_quadrature(gen, quad));
      const GroundTruth mc = monte_carlo_truth(gen, TruthSettings{600'000});
      INFO(gen.canonical_text());
      for (Quantity q : all_quantities) check_agree(quad, mc, q);
    }
  }
}

TEST_CASE("K = 3: quadrature agrees with Monte Carlo", "[stat][truth]") {
  DirichletGenerator gen({3, {0.8, 1.0, 2.0}, TemperatureMap{0.7}});
  GroundTruth quad;
  REQUIRE(ternary_quadrature_truth(gen, quad));
  const GroundTruth mc = monte_carlo_truth(gen, TruthSettings{600'000});
  for (Quantity q : all_quantities) check_agree(quad, mc, q, 1e-9);
}

TEST_CASE("sign-constant gaps: ece_top_l1 = E[Z] - accuracy", "[stat][truth]") {
  // For T < 1 the gap is negative everywhere, so the binned conditional estimate (used for maps
  // without the property) must agree with |E[gap]|: checked through the power map with equal
  // exponents, which the engine routes like a temperature, against a map it cannot shortcut.
  DirichletGenerator temp({4, {0.5}, TemperatureMap{0.5}});
  const GroundTruth t = compute_truth(temp, TruthSettings{});
  CHECK(t[Quantity::ece_top_l1].value == Approx(t[Quantity::overconfidence].value).margin(1e-15));
  CHECK(t[Quantity::overconfidence].value > 0.0);
  // Panchenko et al. 2021: always-overconfident classifiers have ECE <= 1 - accuracy.
  for (double T : {0.2, 0.5, 0.9})
    for (double a : {0.1, 1.0}) {
      const GroundTruth u =
          compute_truth(DirichletGenerator({10, {a}, TemperatureMap{T}}), TruthSettings{200'000});
      CHECK(u[Quantity::ece_top_l1].value <= 1.0 - u[Quantity::accuracy].value);
    }
}

TEST_CASE("top_label with gamma > 1: the posterior r(p) = E[c | p] is consistent",
          "[stat][truth]") {
  // Tower property: E[(r(p) - c) f(p)] = 0 for every f; checked for f = 1 and f = p_k.
  const std::vector<double> alpha = {0.7, 0.7, 0.7};
  const double gamma = 2.5;
  DirichletGenerator gen({3, alpha, TopLabelMap{gamma}});
  const MapPreimages preimages(gen.spec());
  Engine engine = make_engine({2, 0, 0, Purpose::truth});
  std::vector<double> c(3), log_c(3), p(3), log_p(3), tmp(9), r(3);
  std::array<RunningStats, 6> moments;
  int several = 0;
  for (int i = 0; i < 300'000; ++i) {
    gen.draw_truth(engine, c, log_c);
    apply(gen.spec().map, c, log_c, p, log_p, tmp);
    REQUIRE(preimages.posterior(log_p, r, tmp) > 0.0);
    double sum = 0.0;
    for (int k = 0; k < 3; ++k) {
      sum += r[k];
      moments[k].add(r[k] - c[k]);
      moments[3 + k].add((r[k] - c[k]) * p[k]);
    }
    REQUIRE(sum == Approx(1.0).margin(1e-12));
    if (std::abs(r[0] - c[0]) > 1e-9) ++several;
  }
  for (const auto& m : moments) CHECK(std::abs(m.mean()) < z * m.standard_error());
  CHECK(several > 1000);  // the map really is many-to-one on this generator
  // The design's example point has the preimage c = (0.40, 0.39, 0.21) among its candidates.
  const std::vector<double> pe = {0.340, 0.429, 0.231};
  std::vector<double> lpe(3), re(3);
  for (int k = 0; k < 3; ++k) lpe[k] = std::log(pe[k]);
  const MapPreimages uniform(DirichletSpec{3, {1.0}, TopLabelMap{2.0}});
  REQUIRE(uniform.posterior(lpe, re, tmp) > 0.0);
  CHECK(re[0] >= 0.0);
  CHECK(re[0] + re[1] + re[2] == Approx(1.0).margin(1e-12));
}

TEST_CASE("truth is identical for any thread count", "[unit][truth]") {
  DirichletGenerator gen({5, {0.4}, PowerMap{{0.6, 0.8, 1.0, 1.2, 1.4}}});
  GroundTruth one, two;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = compute_truth(gen, TruthSettings{100'000});
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    two = compute_truth(gen, TruthSettings{100'000});
  }
  for (Quantity q : all_quantities) {
    CHECK(one[q].value == two[q].value);
    CHECK(one[q].error == two[q].error);
  }
}

TEST_CASE("own population values: exact zero when calibrated, the truth when gaps keep one sign",
          "[statistical][truth]") {
  using namespace calbench;
  const BinnedEce ece_ew({15, Binning::equal_width, Norm::l1});
  const BinnedEce ece_em({15, Binning::equal_mass, Norm::l1});
  const BinnedEce mce({15, Binning::equal_width, Norm::max});
  const std::vector<const Estimator*> estimators = {&ece_ew, &ece_em, &mce};
  // Calibrated: with the true c in place of labels every bin's gap is 0 exactly.
  const DirichletGenerator calibrated(DirichletSpec{10, {0.5}, IdentityMap{}});
  for (const auto& v : population_values(calibrated, estimators, 80'000)) {
    CHECK(v.value == Approx(0.0).margin(1e-12));
    CHECK(v.samples == 10'000);
  }
  // Temperature: the top-label gap has one sign, so every binning gives |E[Z - c_top]|, the
  // truth ece_top_l1, up to Monte Carlo error.
  const DirichletGenerator hot(DirichletSpec{10, {0.5}, TemperatureMap{0.7}});
  const auto truth = compute_truth(hot, TruthSettings{});
  const auto values = population_values(hot, estimators, 400'000);
  for (std::size_t e = 0; e < 2; ++e) {
    INFO("estimator " << e << " value " << values[e].value << " se " << values[e].error);
    CHECK(std::abs(values[e].value - truth[Quantity::ece_top_l1].value) <
          4.5 * values[e].error + truth[Quantity::ece_top_l1].error);
  }
  CHECK(values[2].value > values[0].value);  // the largest bin gap exceeds the mean gap
}

// SKCE's population value uses E[h | c, c'] = k(p, p') (c - p).(c' - p'): 0 for a calibrated
// generator, and on a miscalibrated one the mean of the label-based estimator.
TEST_CASE("skce population values are Rao-Blackwellised", "[statistical][truth]") {
  using namespace calbench;
  const Skce skce(SkceSpec{});
  const std::vector<const Estimator*> estimators = {&skce};
  const DirichletGenerator calibrated(DirichletSpec{10, {0.5}, IdentityMap{}});
  CHECK(population_values(calibrated, estimators, 80'000)[0].value == Approx(0.0).margin(1e-12));
  const DirichletGenerator hot(DirichletSpec{10, {0.5}, TemperatureMap{0.7}});
  const PopulationValue rb = population_values(hot, estimators, 400'000)[0];
  RunningStats labels;
  Sample s;
  DirichletScratch scratch;
  EstimatorWorkspace ws;
  for (std::size_t r = 0; r < 20; ++r) {
    Engine engine = make_engine({5, 0, r, Purpose::sample});
    hot.sample(engine, 50'000, s, scratch);
    labels.add(skce.estimate(s, ws));
  }
  INFO("Rao-Blackwellised " << rb.value << " +- " << rb.error << ", with labels " << labels.mean()
                            << " +- " << labels.standard_error());
  CHECK(rb.value > 0.0);
  CHECK(std::abs(rb.value - labels.mean()) < 4.5 * std::hypot(rb.error, labels.standard_error()));
  CHECK(rb.error < labels.standard_error());
}

// ---- the Monte Carlo sampler (truth/monte_carlo_sampler.hpp) --------------------------------

TEST_CASE("sampler: batch b draws from the stream (key, b, 0, purpose), whatever the threads",
          "[unit][truth]") {
  const mc::KeyedBatches streams{0x1234abcdULL, Purpose::decision, 16};
  const auto firsts = [&] {
    return mc::draw_batches<std::uint64_t>(streams,
                                           [](std::size_t, Engine& engine) { return engine(); });
  };
  std::vector<std::uint64_t> one, two;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = firsts();
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    two = firsts();
  }
  for (std::size_t b = 0; b < streams.batches; ++b) {
    Engine expected = make_engine({0x1234abcdULL, b, 0, Purpose::decision});
    const std::uint64_t first = expected();
    CHECK(one[b] == first);
    CHECK(two[b] == first);
  }
  CHECK(one[0] != one[1]);
}

TEST_CASE("sampler: the mean of batches and its standard error by hand", "[unit][truth]") {
  // Column e = 1 of a 4 x 2 table: 1, 3, 5, 11; mean 5, sample variance (16+4+0+36)/3,
  // standard error sqrt(56/3/4).
  const std::vector<double> table = {9.0, 1.0, 9.0, 3.0, 9.0, 5.0, 9.0, 11.0};
  const mc::BatchMean m = mc::batch_mean(table, 2, 1);
  CHECK(m.value == Approx(5.0).epsilon(1e-15));
  CHECK(m.error == Approx(std::sqrt(56.0 / 3.0 / 4.0)).epsilon(1e-14));
}

namespace {
// A group whose every draw adds one to its count; its error halves with every round.
struct CountingGroup {
  std::size_t drawn = 0;
  void draw(std::size_t n) { drawn += n; }
};
}  // namespace

TEST_CASE("sampler: rounds of samples/8 over the groups, stopping once the needed errors are small",
          "[unit][truth]") {
  std::size_t round = 0;
  const std::vector<Quantity> needed = {Quantity::brier};
  const auto summarise = [&] {
    ++round;
    GroundTruth t;
    for (Quantity q : all_quantities) t[q].error = 1.0;  // not needed: never stops the rounds
    t[Quantity::brier].error = std::ldexp(1.0, -static_cast<int>(round));
    return t;
  };
  // 1000 samples over 4 groups in 8 rounds: ceil(1000 / 32) = 32 per group and round. The
  // error 2^-round is within 1/8 after the third round.
  std::vector<CountingGroup> groups(4);
  mc::draw_in_rounds(groups, 1000, 0.125, needed, summarise);
  CHECK(round == 3);
  for (const auto& g : groups) CHECK(g.drawn == 3 * 32);
  // Never within the tolerance: all 8 rounds, then stop.
  round = 0;
  std::vector<CountingGroup> more(4);
  mc::draw_in_rounds(more, 1000, 0.0, needed, summarise);
  CHECK(round == mc::rounds);
  for (const auto& g : more) CHECK(g.drawn == mc::rounds * 32);
  // Above 2,000,000 samples the rounds keep the size of 2,000,000/8 (62,500 per group of 4), so
  // 5,000,000 samples are floor(5e6 / 250,000) = 20 rounds; stopping early is unchanged.
  for (const auto& [tolerance, expected] : {std::pair{0.0, 20}, std::pair{0.125, 3}}) {
    round = 0;
    std::vector<CountingGroup> big(4);
    mc::draw_in_rounds(big, 5'000'000, tolerance, needed, summarise);
    CHECK(round == static_cast<std::size_t>(expected));
    for (const auto& g : big) CHECK(g.drawn == static_cast<std::size_t>(expected) * 62'500);
  }
}

TEST_CASE("sampler: a truth group's per-draw statistics by hand", "[unit][truth]") {
  // One fixed draw, K = 3: c = (0.5, 0.3, 0.2), p = (0.6, 0.3, 0.1), r = c.
  const std::vector<double> c = {0.5, 0.3, 0.2}, p = {0.6, 0.3, 0.1};
  const auto draw = [&](Engine&, mc::Draw& d) {
    d.c = c;
    d.p = p;
    for (std::size_t k = 0; k < 3; ++k) d.log_p[k] = std::log(p[k]);
    d.control = {1.0, 2.0, 3.0};
  };
  const mc::KeyedBatches streams{1, Purpose::truth, 1};
  mc::TruthGroup<decltype(draw)> group(streams, 0, 3, mc::controls, /*pooled=*/false, draw);
  group.draw(2);
  const auto& m = group.result().moments;
  CHECK(m.n == 2.0);
  CHECK(m.x[mc::t_acc] == Approx(2 * 0.5));          // c_top, top = argmax p = 0
  CHECK(m.x[mc::t_gap] == Approx(2 * (0.5 - 0.6)));  // c_top - Z
  CHECK(m.x[mc::t_gap_sq] == Approx(2 * 0.01));
  const double brier = (0.36 + 0.09 + 0.01) - 2 * (0.30 + 0.09 + 0.02) + 1.0;  // 0.64
  CHECK(m.x[mc::t_brier] == Approx(2 * brier));
  const double nll = -(0.5 * std::log(0.6) + 0.3 * std::log(0.3) + 0.2 * std::log(0.1));
  CHECK(m.x[mc::t_nll] == Approx(2 * nll));
  CHECK(m.x[mc::t_can_l1] == Approx(2 * 0.2));     // |0.5-0.6| + 0 + |0.2-0.1|
  CHECK(m.x[mc::t_can_l2sq] == Approx(2 * 0.02));  // 0.01 + 0 + 0.01
  CHECK(m.y[mc::c_max] == Approx(2 * 3.0));
  // The top-label residual on Z's bin, class 2's residual on p_2's bin in its own channel.
  CHECK(group.result().top.s[mc::fine_bin(0.6)] == Approx(2 * -0.1));
  CHECK(group.result().classwise.s[2 * mc::fine_bins + mc::fine_bin(0.1)] == Approx(2 * 0.1));
  CHECK(group.result().classwise.n[2 * mc::fine_bins + mc::fine_bin(0.1)] == 2.0);
}

TEST_CASE("fine bins: monotone in v, 2^sub_bits per octave, the ends in one bin each",
          "[unit][truth]") {
  using Bins = mc::FineBins<2>;
  std::size_t previous = 0;
  for (double v = 1e-14; v < 1.0; v *= 1.01) {
    const std::size_t b = Bins::of(v);
    REQUIRE(b >= previous);
    REQUIRE(b < Bins::count);
    previous = b;
  }
  CHECK(Bins::of(0.0) == 0);
  CHECK(Bins::of(1e-13) == 0);  // below 2^-40
  CHECK(Bins::of(1.0) == Bins::count - 1);
  CHECK(Bins::of(0.25) != Bins::of(0.25 * 1.25));  // a quarter octave apart: the next bin
  CHECK(Bins::of(0.25) == Bins::of(0.25 * 1.24));
  CHECK(Bins::of(0.5) < Bins::of(0.5000001));  // 0.5 belongs to the lower side
}

TEST_CASE("plug-in truth of a finite sample, by hand", "[unit][truth]") {
  using calbench::Quantity;
  // Four rows p = (1, 0), labels 0, 1, 0, 1: one confidence group (z = 1, accuracy 1/2).
  const auto s = calbench::make_sample(2, {1, 0, 1, 0, 1, 0, 1, 0}, {0, 1, 0, 1});
  const auto t = calbench::plugin_truth(s);
  const auto at = [&](Quantity q) { return t[static_cast<std::size_t>(q)]; };
  CHECK(at(Quantity::accuracy) == 0.5);
  CHECK(at(Quantity::ece_top_l1) == 0.5);
  CHECK(at(Quantity::ece_top_l2) == 0.5);
  CHECK(at(Quantity::overconfidence) == 0.5);
  // classwise: class 0 |1/2 - 1|, class 1 |1/2 - 0|, averaged; canonical: their sum, and
  // sqrt(1/4 + 1/4) for L2.
  CHECK(at(Quantity::classwise_ece_l1) == 0.5);
  CHECK(at(Quantity::canonical_l1) == 1.0);
  CHECK(*at(Quantity::canonical_l2) == Approx(std::sqrt(0.5)).epsilon(1e-15));
  // Brier: 0 on the right rows, (1 - 0)^2 + (0 - 1)^2 = 2 on the wrong ones; NLL: log 0.
  CHECK(at(Quantity::brier) == 1.0);
  CHECK(!at(Quantity::nll).has_value());
  // Six rows, three confidence groups (0.7 right; 0.8 wrong; 0.5 wrong; 1.0 twice right once
  // wrong): (0.3 + 0.8 + 0.5 + 3 |2/3 - 1|) / 6 = 2.6 / 6.
  const auto z = calbench::make_sample(
      3, {0.7, 0.3, 0, 0, 1, 0, 0.5, 0, 0.5, 0, 0, 1, 0.2, 0.8, 0, 1, 0, 0}, {0, 1, 2, 2, 0, 1});
  CHECK(*calbench::plugin_truth(z)[static_cast<std::size_t>(Quantity::ece_top_l1)] ==
        Approx(2.6 / 6).epsilon(1e-15));
}
