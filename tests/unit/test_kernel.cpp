// Kernel and smooth estimators: smooth_ece against relplot (tests/reference), SKCE known
// answers and unbiasedness, kde_ece convergence, edge cases.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/fft_convolution.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "estimators/kde_canonical.hpp"
#include "estimators/kde_ece.hpp"
#include "estimators/skce.hpp"
#include "estimators/smooth_ece.hpp"
#include "generators/dirichlet.hpp"
#include "reference_data.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;
using calbench::testing::load_reference_dataset;
using calbench::testing::manifest;
using calbench::testing::probability_datasets;
using calbench::testing::reference_values;

TEST_CASE("smooth_ece matches relplot", "[unit][estimators][reference]") {
  EstimatorWorkspace ws;
  const SmoothEce fixed({});
  const SmoothEce at005({0.05});
  for (const auto& name : probability_datasets()) {
    const auto& ref = reference_values().at(name);
    if (!ref.contains("smece")) continue;
    const Sample s = load_reference_dataset(name);
    INFO(name);
    CHECK(fixed.bandwidth(s, ws) == ref.at("smece_sigma").at("relplot").get<double>());
    CHECK(fixed.estimate(s, ws) ==
          Approx(ref.at("smece").at("relplot").get<double>()).margin(1e-9).epsilon(0));
    CHECK(at005.estimate(s, ws) ==
          Approx(ref.at("smece_sigma0.05").at("relplot").get<double>()).margin(1e-9).epsilon(0));
  }
}

// Hand computation (gaussian, l = 1): rows (p, y) = ((1,0), 1), ((0,1), 0), ((.5,.5), 0);
// e_y - p = (-1,1), (1,-1), (.5,-.5); k12 = e^-1, k13 = k23 = e^-1/4;
// h12 = -2 e^-1, h13 = -e^-1/4, h23 = +e^-1/4. Quadratic: (h12 + h13 + h23)/3 = -2e^-1/3;
// linear (one pair (1,2)): h12 = -2e^-1. Laplacian: k12 = e^-sqrt(2), so linear = -2e^-sqrt(2).
TEST_CASE("skce known answers on three rows", "[unit][estimators]") {
  const Sample s = make_sample(2, {1.0, 0.0, 0.0, 1.0, 0.5, 0.5}, {1, 0, 0});
  EstimatorWorkspace ws;
  const double e1 = std::exp(-1.0);
  CHECK(Skce({SkceKernel::gaussian, 1.0, SkceForm::quadratic}).estimate(s, ws) ==
        Approx(-2.0 * e1 / 3.0).epsilon(1e-14));
  CHECK(Skce({SkceKernel::gaussian, 1.0, SkceForm::linear}).estimate(s, ws) ==
        Approx(-2.0 * e1).epsilon(1e-14));
  CHECK(Skce({SkceKernel::laplacian, 1.0, SkceForm::linear}).estimate(s, ws) ==
        Approx(-2.0 * std::exp(-std::sqrt(2.0))).epsilon(1e-14));
  CHECK(Skce({SkceKernel::gaussian, 1.0, SkceForm::quadratic}).population_estimator() != nullptr);
  CHECK(Skce({SkceKernel::gaussian, 1.0, SkceForm::linear}).population_estimator() == nullptr);
}

// Unbiasedness: on a calibrated generator E[h] = 0, so both means lie within 4 SE of 0; on a
// miscalibrated one both estimate the same SKCE, so their means agree within 4 SE of the
// difference (independent replicate sets are not needed: the SE of the difference is bounded by
// the sum of the two SEs, which is what the tolerance uses).
TEST_CASE("skce linear and quadratic estimators are unbiased", "[stat][estimators]") {
  const Skce quadratic({SkceKernel::gaussian, 1.0, SkceForm::quadratic});
  const Skce linear({SkceKernel::gaussian, 1.0, SkceForm::linear});
  for (const double temperature : {1.0, 0.5}) {
    DirichletGenerator gen({3,
                            {1.0},
                            temperature == 1.0 ? MiscalibrationMap{IdentityMap{}}
                                               : MiscalibrationMap{TemperatureMap{0.5}}});
    RunningStats q, l;
    Sample s;
    DirichletScratch scratch;
    EstimatorWorkspace ws;
    for (std::size_t r = 0; r < 300; ++r) {
      Engine engine = make_engine({7, 0, r, Purpose::sample});
      gen.sample(engine, 200, s, scratch);
      q.add(quadratic.estimate(s, ws));
      l.add(linear.estimate(s, ws));
    }
    INFO("T = " << temperature << ": quadratic " << q.mean() << " +- " << q.standard_error()
                << ", linear " << l.mean() << " +- " << l.standard_error());
    if (temperature == 1.0) {
      CHECK(std::abs(q.mean()) < 4.0 * q.standard_error());
      CHECK(std::abs(l.mean()) < 4.0 * l.standard_error());
    } else {
      CHECK(q.mean() > 4.0 * q.standard_error());
      CHECK(std::abs(q.mean() - l.mean()) < 4.0 * (q.standard_error() + l.standard_error()));
    }
  }
}

// kde_ece is consistent for ece_top_l1 with an O(h^2) interior smoothing bias and an O(h)
// reflection bias; h ~ 0.1 (2n)^(-1/5) ~ 0.01 at n = 50,000. Tolerance: 4.5 SE of the
// replicate mean + the truth's error + a smoothing-bias allowance of 0.005 (measured bias at
// this setting: see the INFO line; docs/estimators/kernel.md).
TEST_CASE("kde_ece converges to ece_top_l1", "[stat][estimators]") {
  DirichletGenerator gen({10, {0.5}, TemperatureMap{0.7}});
  const GroundTruth truth = compute_truth(gen, TruthSettings{});
  const KdeEce kde;
  RunningStats stats;
  Sample s;
  DirichletScratch scratch;
  EstimatorWorkspace ws;
  for (std::size_t r = 0; r < 6; ++r) {
    Engine engine = make_engine({11, 0, r, Purpose::sample});
    gen.sample(engine, 50'000, s, scratch);
    stats.add(kde.estimate(s, ws));
  }
  const auto& t = truth[Quantity::ece_top_l1];
  INFO("kde_ece mean " << stats.mean() << " +- " << stats.standard_error() << ", truth "
                       << t.value);
  CHECK(std::abs(stats.mean() - t.value) < 4.5 * stats.standard_error() + t.error + 0.005);
}

// The values are an independent numpy evaluation of the published formulas of Popordanoska et
// al. 2022 (tests/reference/kde_canonical_ref.py, run with numpy 1.24 on the reference
// datasets): S = mean_i ||r_i - p_i||_q^q at a fixed bandwidth b, and the grid bandwidth that
// maximises the leave-one-out log-likelihood with S at it.
TEST_CASE("kde_canonical matches an independent evaluation of the formulas",
          "[unit][estimators][reference]") {
  struct Fixed {
    const char* dataset;
    double b, l1, l2_squared;
  };
  const std::vector<Fixed> fixed = {
      {"k3_n25", 0.01, 0.7721394469357654, 0.41748968744948134},
      {"k3_n25", 0.2, 0.3877008486217602, 0.1468345009967406},
      {"k3_n25", 1.0, 0.5201938773457502, 0.14622466130038164},
      {"dir_k3_n2000", 0.01, 0.20117597319352135, 0.023702816521710395},
      {"dir_k3_n2000", 0.2, 0.1663932748976881, 0.012637783091153185},
      {"dir_k3_n2000", 1.0, 0.4645974634920523, 0.09498436289390753},
      {"k3_exact01_mixed", 0.01, 0.5333333333333333, 0.22592592592592597},
      {"k3_exact01_mixed", 0.2, 0.41754274303532257, 0.14248326683913254},
      {"k3_exact01_mixed", 1.0, 0.3404695741842254, 0.10845657922191583},
      {"k4_never_occurring", 0.01, 0.830025945815102, 0.31694699153125766},
      {"k4_never_occurring", 0.2, 0.5373277396053955, 0.14349244075764803},
      {"k4_never_occurring", 1.0, 0.6977702689466508, 0.1857864173374855},
  };
  EstimatorWorkspace ws;
  for (const auto& row : fixed) {
    INFO(row.dataset << " b = " << row.b);
    const Sample s = load_reference_dataset(row.dataset);
    CHECK(KdeCanonical({1, row.b, false}).estimate(s, ws) == Approx(row.l1).margin(1e-10));
    CHECK(KdeCanonical({2, row.b, true}).estimate(s, ws) == Approx(row.l2_squared).margin(1e-10));
    CHECK(KdeCanonical({2, row.b, false}).estimate(s, ws) ==
          Approx(std::sqrt(row.l2_squared)).margin(1e-10));
  }
  struct Loo {
    const char* dataset;
    double b, l1, l2_squared;
  };
  const std::vector<Loo> loo = {
      {"k3_n25", 0.2, 0.3877008486217602, 0.1468345009967406},
      {"dir_k3_n2000", 0.003727593720314938, 0.2805000914160987, 0.04848373983299828},
      {"k3_exact01_mixed", 1e-5, 0.5333333333333333, 0.22592592592592597},
      {"k4_never_occurring", 1.0, 0.6977702689466508, 0.1857864173374855},
  };
  for (const auto& row : loo) {
    INFO(row.dataset << " (leave-one-out bandwidth)");
    const Sample s = load_reference_dataset(row.dataset);
    const KdeCanonical l1({1, std::nullopt, false});
    CHECK(l1.bandwidth(s, ws) == Approx(row.b).epsilon(1e-12));
    CHECK(l1.estimate(s, ws) == Approx(row.l1).margin(1e-10));
    CHECK(KdeCanonical({2, std::nullopt, true}).estimate(s, ws) ==
          Approx(row.l2_squared).margin(1e-10));
  }
}

// kde_canonical screens the rows j of each row i before computing their kernel weights
// (estimators/kde_canonical.cpp: at small bandwidths only the rows next to p_i are looked at).
// The direct sums over every pair, in long double, must agree with it at every bandwidth of the
// grid and in the leave-one-out choice.
namespace {

void check_against_direct_sums(const Sample& s) {
  const std::size_t n = s.size, K = s.classes;
  std::vector<long double> g(n * n);  // g[i n + j] = sum_k p_jk log p_ik
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t k = 0; k < K; ++k)
        g[i * n + j] += s.p[j * K + k] * std::log(std::max<long double>(s.p[i * K + k], DBL_MIN));
  const auto& grid = kde_canonical_bandwidth_grid();
  std::vector<long double> log_likelihood(grid.size()), error(grid.size());
  for (std::size_t t = 0; t < grid.size(); ++t) {
    const long double b = grid[t];
    std::vector<long double> log_norm(n);
    for (std::size_t j = 0; j < n; ++j) {
      long double sum = -std::lgamma(1.0L / b + static_cast<long double>(K));
      for (std::size_t k = 0; k < K; ++k) sum += std::lgamma(s.p[j * K + k] / b + 1.0L);
      log_norm[j] = sum;
    }
    std::vector<long double> v(n), class_sum(K);
    for (std::size_t i = 0; i < n; ++i) {
      long double top = -INFINITY;
      for (std::size_t j = 0; j < n; ++j) {
        v[j] = j == i ? -INFINITY : g[i * n + j] / b - log_norm[j];
        top = std::max(top, v[j]);
      }
      std::fill(class_sum.begin(), class_sum.end(), 0.0L);
      long double den = 0.0L;
      for (std::size_t j = 0; j < n; ++j) {
        const long double weight = std::exp(v[j] - top);
        class_sum[s.label[j]] += weight;
        den += weight;
      }
      log_likelihood[t] += top + std::log(den) - std::log(static_cast<long double>(n - 1));
      for (std::size_t k = 0; k < K; ++k) error[t] += std::abs(class_sum[k] / den - s.p[i * K + k]);
    }
  }
  EstimatorWorkspace ws;
  for (std::size_t t = 0; t < grid.size(); ++t) {
    INFO("b = " << grid[t]);
    CHECK(KdeCanonical({1, grid[t], false}).estimate(s, ws) ==
          Approx(static_cast<double>(error[t] / n)).epsilon(1e-11));
  }
  const std::size_t best = static_cast<std::size_t>(
      std::max_element(log_likelihood.begin(), log_likelihood.end()) - log_likelihood.begin());
  const KdeCanonical loo({1, std::nullopt, false});
  CHECK(loo.bandwidth(s, ws) == grid[best]);
  CHECK(loo.estimate(s, ws) == Approx(static_cast<double>(error[best] / n)).epsilon(1e-11));
}

// The first `rows` rows of a sample.
Sample first_rows(const Sample& s, std::size_t rows) {
  return make_sample(s.classes, std::vector<double>(s.p.begin(), s.p.begin() + rows * s.classes),
                     std::vector<std::uint32_t>(s.label.begin(), s.label.begin() + rows));
}

}  // namespace

TEST_CASE("kde_canonical's screening keeps every term the direct sums need", "[unit][estimators]") {
  SECTION("rows where screening decides most") {
    // Dirichlet rows, near-duplicates of them (kept at the smallest bandwidths only if
    // screening is right), exact duplicates, and one-hot rows (exact zeros, far from the rest).
    const Sample base = load_reference_dataset("dir_k10_n5000");
    const std::size_t K = base.classes;
    std::vector<double> p(base.p.begin(), base.p.begin() + 240 * K);
    std::vector<std::uint32_t> labels(base.label.begin(), base.label.begin() + 240);
    for (std::size_t r = 0; r < 60; ++r) {  // every third an exact duplicate
      const double mix = r % 3 == 0 ? 0.0 : 1e-6 * static_cast<double>(r);
      for (std::size_t k = 0; k < K; ++k)
        p.push_back((1.0 - mix) * base.p[r * K + k] + mix / static_cast<double>(K));
      labels.push_back(static_cast<std::uint32_t>((r * 7) % K));
    }
    for (std::size_t r = 0; r < 10; ++r) {
      for (std::size_t k = 0; k < K; ++k) p.push_back(k == r ? 1.0 : 0.0);
      labels.push_back(static_cast<std::uint32_t>(r));
    }
    check_against_direct_sums(make_sample(K, p, labels));
  }
  // Real models' outputs (tests/data/real_models/README.md: scikit-learn on make_classification):
  // Gaussian naive Bayes, overconfident with components down to 1e-7 and below, and a random
  // forest whose outputs are often exactly 0 or 1 and repeat.
  const auto real = std::filesystem::path(CALBENCH_SOURCE_DIR) / "tests" / "data" / "real_models";
  SECTION("naive Bayes, K = 3") {
    check_against_direct_sums(
        first_rows(calbench::testing::load_dataset_csv((real / "nb_k3.csv").string()), 400));
  }
  SECTION("random forest, K = 2") {
    check_against_direct_sums(
        first_rows(calbench::testing::load_dataset_csv((real / "rf_k2.csv").string()), 400));
  }
}

// kernel_pass is compiled for AVX-512, AVX2 and SSE2 and picks the widest the processor has;
// every version must give the same bits (same operations per row in the same order), so that a
// result does not depend on the machine. On a machine without AVX-512 the first two coincide.
TEST_CASE("kde_canonical gives the same bits with every instruction set", "[unit][estimators]") {
  const auto real = std::filesystem::path(CALBENCH_SOURCE_DIR) / "tests" / "data" / "real_models";
  // 701 rows: not a multiple of 4 or 8, so every tail runs.
  const std::vector<Sample> samples = {
      first_rows(load_reference_dataset("dir_k10_n5000"), 701),
      load_reference_dataset("dir_k3_n2000"),
      load_reference_dataset("k3_exact01_mixed"),
      load_reference_dataset("k3_n25"),
      first_rows(calbench::testing::load_dataset_csv((real / "nb_k3.csv").string()), 701),
      first_rows(calbench::testing::load_dataset_csv((real / "rf_k2.csv").string()), 701)};
  EstimatorWorkspace ws;
  for (std::size_t i = 0; i < samples.size(); ++i)
    for (const std::optional<double> b :
         {std::optional<double>(), std::optional<double>(0.05), std::optional<double>(1e-3)})
      for (const int power : {1, 2}) {
        INFO("sample " << i << ", b " << b.value_or(-1.0) << ", power " << power);
        const double widest =
            KdeCanonical({power, b, false, KdeCanonicalIsa::widest}).estimate(samples[i], ws);
        CHECK(KdeCanonical({power, b, false, KdeCanonicalIsa::avx2}).estimate(samples[i], ws) ==
              widest);
        CHECK(KdeCanonical({power, b, false, KdeCanonicalIsa::sse2}).estimate(samples[i], ws) ==
              widest);
      }
}

TEST_CASE("kernel estimators survive the edge cases", "[unit][estimators]") {
  const std::vector<std::shared_ptr<Estimator>> estimators = {
      std::make_shared<SmoothEce>(SmoothEceSpec{}),
      std::make_shared<SmoothEce>(SmoothEceSpec{0.05}),
      std::make_shared<KdeEce>(),
      std::make_shared<Skce>(SkceSpec{}),
      std::make_shared<Skce>(SkceSpec{SkceKernel::laplacian, 0.5, SkceForm::quadratic}),
      std::make_shared<KdeCanonical>(KdeCanonicalSpec{}),
      std::make_shared<KdeCanonical>(KdeCanonicalSpec{2, 0.1, false})};
  const std::vector<Sample> samples = {
      make_sample(3, {0.2, 0.5, 0.3}, {1}),                                    // n = 1
      make_sample(2, {0.7, 0.3, 0.7, 0.3, 0.7, 0.3, 0.7, 0.3}, {0, 1, 0, 0}),  // identical
      make_sample(2, {1.0, 0.0, 0.0, 1.0, 1.0, 0.0}, {0, 0, 1}),               // exact 0 / 1
      make_sample(3, {0.4, 0.4, 0.2, 0.4, 0.4, 0.2, 1.0 / 3, 1.0 / 3, 1.0 / 3}, {1, 0, 2}),  // ties
      make_sample(2, {1.0, 0.0, 1.0, 0.0}, {1, 1}),  // no correct row
      make_sample(2, {0.9, 0.1, 0.6, 0.4}, {0, 0}),  // all correct
  };
  EstimatorWorkspace ws;
  for (std::size_t i = 0; i < samples.size(); ++i)
    for (std::size_t e = 0; e < estimators.size(); ++e) {
      INFO("sample " << i << ", estimator " << e);
      CHECK(std::isfinite(estimators[e]->estimate(samples[i], ws)));
    }
}

// The FFT convolution (core/fft_convolution.hpp) against its direct sum, on grids like the kernel
// estimators': masses in a few hundred nodes, long runs of exact zeros, a spike, and kernels
// (Gaussian, triweight) of the lengths smooth_ece and kde_ece use. The bound is the rounding
// bound of the header, c u log2(N) ||x1 + i x2||_2 ||k||_2 with c = 4.
TEST_CASE("FFT convolution equals the direct sum to rounding", "[unit][estimators]") {
  Engine engine = make_engine({20261126, 0, 0, Purpose::sample});
  FftConvolution fft;
  for (const auto& [n, taps] : {std::pair<std::size_t, std::size_t>{2001, 1001},
                                {2001, 37},
                                {9647, 2201},
                                {64, 64},
                                {5, 1}}) {
    std::vector<double> x1(n, 0.0), x2(n, 0.0), kernel(taps);
    for (std::size_t i = n / 4; i < n / 2; ++i) {
      x1[i] = uniform_open01(engine) - 0.5;
      x2[i] = 30.0 * uniform_open01(engine);
    }
    x2[n / 3] += 5000.0;  // one heavy node
    for (std::size_t j = 0; j < taps; ++j) {
      const double u = (static_cast<double>(j) + 0.5) / static_cast<double>(taps) * 2.0 - 1.0;
      kernel[j] = (n + taps) % 2 ? std::exp(-8.0 * u * u) : std::pow(1.0 - u * u, 3);
    }
    std::vector<double> y1(n - taps + 1), y2(n - taps + 1), d1(y1.size()), d2(y2.size());
    fft.valid_pair(x1, x2, kernel, y1, y2);
    valid_convolution_direct(x1, kernel, d1);
    valid_convolution_direct(x2, kernel, d2);
    const auto norm = [](const std::vector<double>& v) {
      double s = 0.0;
      for (double a : v) s += a * a;
      return std::sqrt(s);
    };
    // The two signals share one transform, so each output's error scales with both:
    // ||x||_2 of x1 + i x2.
    const double N = static_cast<double>(FftConvolution::transform_size(n));
    const double signal = std::hypot(norm(x1), norm(x2));
    const double bound = 4.0 * std::ldexp(1.0, -53) * std::log2(N) * norm(kernel) * signal;
    double worst = 0.0;  // the largest error in units of the bound
    for (std::size_t i = 0; i < y1.size(); ++i) {
      worst = std::max(worst, std::abs(y1[i] - d1[i]) / bound);
      worst = std::max(worst, std::abs(y2[i] - d2[i]) / bound);
    }
    INFO("n = " << n << ", taps = " << taps << ", N = " << N << ": error / bound " << worst);
    CHECK(worst <= 1.0);
  }
  std::vector<double> y(3);
  CHECK_THROWS_AS(
      fft.valid_pair(std::vector<double>(4), std::vector<double>(4), std::vector<double>(3), y, y),
      DomainError);
  CHECK(FftConvolution::transform_size(2001) == 2025);  // 3^4 5^2
  CHECK(FftConvolution::transform_size(1) == 1);
  CHECK(FftConvolution::transform_size(7) == 8);
}

// Values of the direct-sum implementation the FFT replaced (commit 5337666, printed with 17
// digits by `calbench eval --json`): the FFT changes them by rounding only.
TEST_CASE("kernel estimators by FFT keep the direct sums' values", "[unit][estimators]") {
  struct Row {
    const char* dataset;
    double smooth, kde, smooth_002;
  };
  const std::vector<Row> rows = {
      {"dir_k10_n5000", 0.1667962073494314, 0.16668477390892766, 0.1667091847280526},
      {"dir_k3_n2000", 0.081980602625521273, 0.087505013371760379, 0.087641409976057197},
      {"dir_k2_n1000", 0.12257000630046755, 0.11887333068838694, 0.12678540018179729},
      {"k3_n25", 0.117390845250765, 0.12889952290897122, 0.22533227280692114}};
  EstimatorWorkspace ws;
  for (const Row& row : rows) {
    INFO(row.dataset);
    const Sample s = load_reference_dataset(row.dataset);
    CHECK(SmoothEce({}).estimate(s, ws) == Approx(row.smooth).epsilon(1e-12));
    CHECK(KdeEce().estimate(s, ws) == Approx(row.kde).epsilon(1e-12));
    CHECK(SmoothEce({0.02}).estimate(s, ws) == Approx(row.smooth_002).epsilon(1e-12));
  }
}
