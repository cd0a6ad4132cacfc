// Generators: maps keep the simplex and (where the design says so) the argmax; sampled
// moments match their formulas within stated standard errors.
#include <boost/math/distributions/exponential.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/running_stats.hpp"
#include "generators/dirichlet.hpp"
#include "generators/ziggurat.hpp"

using namespace calbench;

namespace {

// All tolerances below are z standard errors; with about 60 checks in this file, z = 4.5
// keeps the family-wise false-alarm rate under 0.05% (Bonferroni: 60 * 6.8e-6).
constexpr double z = 4.5;

std::vector<MiscalibrationMap> maps_for(std::size_t K) {
  std::vector<double> t(K), W(K * K, 0.0), b(K, 0.0);
  for (std::size_t k = 0; k < K; ++k) {
    t[k] = 0.5 + 0.25 * static_cast<double>(k);
    W[k * K + k] = 1.3;
    if (k + 1 < K) W[k * K + k + 1] = 0.2;
    b[k] = 0.1 * static_cast<double>(k);
  }
  return {IdentityMap{},    TemperatureMap{0.5}, TemperatureMap{2.0}, PowerMap{t},
          TopLabelMap{0.5}, TopLabelMap{2.0},    AffineLogitMap{W, b}};
}

}  // namespace

TEST_CASE("concentration_range writes the bounds a config is checked against",
          "[unit][generators]") {
  double lo = 0.0, hi = 0.0;
  REQUIRE(std::sscanf(concentration_range, "[%lf, %lf]", &lo, &hi) == 2);
  CHECK(lo == concentration_min);
  CHECK(hi == concentration_max);
}

TEST_CASE("every map keeps vectors on the simplex, argmax where promised", "[unit][generators]") {
  for (std::size_t K : {2u, 3u, 10u}) {
    for (const auto& map : maps_for(K)) {
      for (double alpha : {0.01, 0.3, 2.0}) {
        DirichletGenerator gen({K, {alpha}, map});
        Engine engine = make_engine({11, K, 0, Purpose::sample});
        std::vector<double> c(K), log_c(K), p(K), log_p(K), tmp(K);
        for (int i = 0; i < 2000; ++i) {
          gen.draw_truth(engine, c, log_c);
          apply(map, c, log_c, p, log_p, tmp);
          double sum = 0.0;
          for (std::size_t k = 0; k < K; ++k) {
            REQUIRE(p[k] >= 0.0);
            REQUIRE(std::isfinite(log_p[k]));
            REQUIRE(std::isfinite(log_c[k]));
            sum += p[k];
          }
          REQUIRE(sum == Approx(1.0).margin(1e-12));
          if (preserves_argmax(map, K)) {
            const auto ac = std::max_element(c.begin(), c.end()) - c.begin();
            const auto ap = std::max_element(p.begin(), p.end()) - p.begin();
            // Ties in c (underflowed zeros aside) have probability 0.
            if (c[static_cast<std::size_t>(ac)] > 0.0) REQUIRE(ac == ap);
          }
        }
      }
    }
  }
}

TEST_CASE("temperature and top_label follow their definitions", "[unit][generators]") {
  const std::vector<double> c = {0.40, 0.39, 0.21};
  std::vector<double> log_c(3), p(3), log_p(3), tmp(3);
  for (int k = 0; k < 3; ++k) log_c[k] = std::log(c[k]);
  // The design's example: gamma = 2 lets the runner-up overtake.
  apply(TopLabelMap{2.0}, c, log_c, p, log_p, tmp);
  CHECK(p[0] == Approx(0.340).margin(1e-12));  // 1/3 + (2/3) 0.1^2
  CHECK(p[1] == Approx(0.429).margin(1e-12));  // 0.39 * (1 - 0.34)/(1 - 0.40)
  CHECK(p[2] == Approx(0.231).margin(1e-12));
  CHECK(log_p[1] == Approx(std::log(0.429)).margin(1e-12));
  // p_k ∝ c_k^(1/T), by hand for T = 0.5.
  apply(TemperatureMap{0.5}, c, log_c, p, log_p, tmp);
  const double s = 0.16 + 0.1521 + 0.0441;
  CHECK(p[0] == Approx(0.16 / s).margin(1e-14));
  CHECK(p[2] == Approx(0.0441 / s).margin(1e-14));
  // top_label with gamma = 1 is the identity.
  apply(TopLabelMap{1.0}, c, log_c, p, log_p, tmp);
  for (int k = 0; k < 3; ++k) CHECK(p[k] == Approx(c[k]).margin(1e-14));
}

TEST_CASE("gamma sampler: mean, variance and E[log G] = digamma(alpha)", "[stat][generators]") {
  for (double alpha : {0.01, 0.1, 0.5, 1.0, 2.5, 10.0}) {
    GammaSampler sampler(alpha);
    Engine engine = make_engine({3, 0, 0, Purpose::sample});
    RunningStats value, log_value, sq_dev;
    const int N = 400'000;
    std::vector<double> xs(N);
    for (int i = 0; i < N; ++i) {
      const auto d = sampler.draw(engine);
      REQUIRE(std::isfinite(d.log_value));
      xs[static_cast<std::size_t>(i)] = d.value;
      value.add(d.value);
      log_value.add(d.log_value);
    }
    for (double x : xs) sq_dev.add((x - alpha) * (x - alpha));
    INFO("alpha = " << alpha);
    CHECK(std::abs(value.mean() - alpha) < z * value.standard_error());
    CHECK(std::abs(sq_dev.mean() - alpha) < z * sq_dev.standard_error());  // Var G = alpha
    CHECK(std::abs(log_value.mean() - boost::math::digamma(alpha)) <
          z * log_value.standard_error());
  }
}

TEST_CASE("ziggurat normal and exponential: CDF on a grid through every layer and the tails",
          "[stat][generators]") {
  // The empirical CDF at points spread over the core, the wedges and the tails (beyond
  // 3.44 for the normal, beyond 7.70 for the exponential), each within z binomial SEs of the
  // exact CDF; and the first moments.
  const int N = 2'000'000;
  Engine engine = make_engine({11, 0, 0, Purpose::sample});
  const auto check_cdf = [&](auto draw, const auto& dist, const std::vector<double>& points) {
    std::vector<double> xs(N);
    RunningStats mean;
    for (auto& x : xs) {
      x = draw();
      mean.add(x);
    }
    std::sort(xs.begin(), xs.end());
    for (double t : points) {
      const double F = boost::math::cdf(dist, t);
      const double hat =
          static_cast<double>(std::upper_bound(xs.begin(), xs.end(), t) - xs.begin()) / N;
      INFO("t = " << t);
      CHECK(std::abs(hat - F) < z * std::sqrt(F * (1.0 - F) / N) + 1e-12);
    }
    CHECK(std::abs(mean.mean() - boost::math::mean(dist)) < z * mean.standard_error());
  };
  check_cdf([&] { return standard_normal(engine); }, boost::math::normal_distribution<>(),
            {-4.0, -3.5, -3.0, -2.2, -1.5, -1.0, -0.5, -0.1, 0.0, 0.05, 0.3, 0.8, 1.2, 2.0, 2.7,
             3.3, 3.6, 4.2});
  check_cdf([&] { return standard_exponential(engine); }, boost::math::exponential_distribution<>(),
            {0.01, 0.1, 0.3, 0.7, 1.0, 1.5, 2.5, 4.0, 6.0, 7.5, 8.0, 10.0});
}

TEST_CASE("gamma sampler in blocks: moments, E[log G] and exact logs of tiny variates",
          "[stat][generators]") {
  // draw_values makes Marsaglia-Tsang candidates in rounds over blocks of 128 slots; 300
  // values per call exercise a partial block too.
  for (double alpha : {0.01, 0.1, 0.3, 0.5, 1.0, 2.5}) {
    GammaSampler sampler(alpha);
    Engine engine = make_engine({4, 0, 0, Purpose::sample});
    RunningStats value, sq_dev, log_value;
    std::vector<double> values(300), exact_log(300);
    EngineLanes lanes(engine);
    for (int call = 0; call < 1'500; ++call) {
      EngineLanes* lanes_or_not = call % 2 == 0 ? &lanes : nullptr;  // both word sources
      std::fill(exact_log.begin(), exact_log.end(), 1.0);            // 1: not written
      const bool any_tiny = sampler.draw_values(engine, lanes_or_not, values, exact_log);
      bool tiny_seen = false;
      for (std::size_t k = 0; k < values.size(); ++k) {
        const bool tiny = !(values[k] > GammaSampler::kTiny);
        tiny_seen |= tiny;
        const double log_g = tiny ? exact_log[k] : std::log(values[k]);
        REQUIRE(std::isfinite(log_g));
        if (tiny) REQUIRE(exact_log[k] < std::log(GammaSampler::kTiny) + 1e-9);
        value.add(values[k]);
        sq_dev.add((values[k] - alpha) * (values[k] - alpha));
        log_value.add(log_g);
      }
      REQUIRE(any_tiny == tiny_seen);
    }
    INFO("alpha = " << alpha);
    CHECK(std::abs(value.mean() - alpha) < z * value.standard_error());
    CHECK(std::abs(sq_dev.mean() - alpha) < z * sq_dev.standard_error());
    CHECK(std::abs(log_value.mean() - boost::math::digamma(alpha)) <
          z * log_value.standard_error());
  }
}

TEST_CASE("temperature sampling in fused passes equals the map applied to the kept truth",
          "[unit][generators]") {
  // sample() under a temperature map draws labels from the unnormalised gammas and builds p
  // without the generic loop (K = 2 in passes over the sample, K > 2 row by row); check p,
  // the argmax and the labels' frequencies against the definitions, from the kept c.
  // alpha = 0.005 makes about 4 % of the variates tiny (below 1e-280), where r and log G come
  // from logarithms.
  for (const auto& [K, alpha] : std::vector<std::pair<std::size_t, double>>{
           {7, 0.1}, {7, 0.7}, {2, 0.005}, {2, 0.3}, {2, 1.0}}) {
    const double T = 0.6;
    DirichletGenerator gen({K, {alpha}, TemperatureMap{T}});
    Engine engine = make_engine({6, 0, 0, Purpose::sample});
    Sample s;
    DirichletScratch scratch;
    gen.sample(engine, 50'000, s, scratch, true);
    std::vector<double> log_c(K), p(K), log_p(K), tmp(K);
    std::vector<RunningStats> residual(K);
    for (std::size_t i = 0; i < s.size; ++i) {
      const std::span<const double> c(s.truth.data() + i * K, K);
      for (std::size_t k = 0; k < K; ++k) log_c[k] = std::log(c[k]);
      apply(TemperatureMap{T}, c, log_c, p, log_p, tmp);
      double sum_c = 0.0, sum_p = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        sum_c += c[k];
        sum_p += s.p[i * K + k];
        REQUIRE(std::abs(s.p[i * K + k] - p[k]) < 1e-12);
        residual[k].add((s.label[i] == k ? 1.0 : 0.0) - c[k]);
      }
      REQUIRE(std::abs(sum_c - 1.0) < 1e-14);
      REQUIRE(std::abs(sum_p - 1.0) < 1e-14);
      const double* row = s.p.data() + i * K;
      const auto best = static_cast<std::size_t>(std::max_element(row, row + K) - row);
      REQUIRE(s.predicted[i] == best);
      REQUIRE(s.confidence[i] == row[best]);
    }
    for (std::size_t k = 0; k < K; ++k) {
      INFO("K = " << K << ", alpha = " << alpha << ", k = " << k);  // E[1{y = k} - c_k] = 0
      CHECK(std::abs(residual[k].mean()) < z * residual[k].standard_error());
    }
  }
}

TEST_CASE("Dirichlet draws and labels match the Dirichlet moments", "[stat][generators]") {
  for (const std::vector<double>& alpha :
       {std::vector<double>{0.5, 1.0, 2.0}, std::vector<double>{0.05, 0.05, 0.05, 0.05, 0.05},
        std::vector<double>{0.01, 0.02, 0.5, 3.0}}) {
    const std::size_t K = alpha.size();
    DirichletGenerator gen({K, alpha, IdentityMap{}});
    const double a0 = std::accumulate(alpha.begin(), alpha.end(), 0.0);
    Engine engine = make_engine({5, K, 0, Purpose::sample});
    std::vector<double> c(K), log_c(K);
    std::vector<RunningStats> mean(K), var(K), label(K);
    const int N = 300'000;
    for (int i = 0; i < N; ++i) {
      gen.draw_truth(engine, c, log_c);
      const auto y = gen.draw_label(engine, c);
      for (std::size_t k = 0; k < K; ++k) {
        const double m = alpha[k] / a0;
        mean[k].add(c[k]);
        var[k].add((c[k] - m) * (c[k] - m));
        label[k].add(y == k ? 1.0 : 0.0);
      }
    }
    for (std::size_t k = 0; k < K; ++k) {
      const double m = alpha[k] / a0;
      const double v = alpha[k] * (a0 - alpha[k]) / (a0 * a0 * (a0 + 1.0));
      INFO("K = " << K << ", k = " << k);
      CHECK(std::abs(mean[k].mean() - m) < z * mean[k].standard_error());
      CHECK(std::abs(var[k].mean() - v) < z * var[k].standard_error());
      CHECK(std::abs(label[k].mean() - m) < z * label[k].standard_error());  // P(y = k) = E c_k
    }
  }
}

TEST_CASE("samples are deterministic under a fixed key", "[unit][generators]") {
  DirichletGenerator gen({4, {0.3}, TemperatureMap{0.8}});
  Sample a, b;
  DirichletScratch s1, s2;
  Engine e1 = make_engine({1, 2, 3, Purpose::sample}), e2 = make_engine({1, 2, 3, Purpose::sample});
  gen.sample(e1, 500, a, s1);
  gen.sample(e2, 500, b, s2);
  CHECK(a.p == b.p);
  CHECK(a.label == b.label);
  for (std::size_t i = 0; i < a.size; ++i) REQUIRE(a.confidence[i] == a.p[i * 4 + a.predicted[i]]);
}

TEST_CASE("bad generator parameters are rejected with their name", "[unit][generators]") {
  CHECK_THROWS_WITH(DirichletGenerator({1, {1.0}, IdentityMap{}}), Catch::Contains("classes"));
  CHECK_THROWS_WITH(DirichletGenerator({3, {1.0, -0.5, 1.0}, IdentityMap{}}),
                    Catch::Contains("alpha[1]"));
  CHECK_THROWS_WITH(DirichletGenerator({3, {1.0, 1.0}, IdentityMap{}}), Catch::Contains("alpha"));
  CHECK_THROWS_WITH(DirichletGenerator({3, {1.0}, TemperatureMap{0.0}}),
                    Catch::Contains("temperature"));
  CHECK_THROWS_WITH(DirichletGenerator({3, {1.0}, PowerMap{{1.0, 2.0}}}),
                    Catch::Contains("exponents"));
  CHECK_THROWS_WITH(DirichletGenerator({3, {1.0}, TopLabelMap{-1.0}}), Catch::Contains("gamma"));
}
