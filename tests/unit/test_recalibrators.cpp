// Recalibrators: reference values (temperature scaling against tests/reference, isotonic
// regression against scikit-learn), parameter recovery on generators whose inverse is known,
// simplex outputs, determinism and degenerate fits.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "generators/dirichlet.hpp"
#include "recalibrators/bbq.hpp"
#include "recalibrators/classwise.hpp"
#include "recalibrators/ensemble_temperature.hpp"
#include "recalibrators/histogram_binning.hpp"
#include "recalibrators/isotonic.hpp"
#include "recalibrators/logistic_calibration.hpp"
#include "recalibrators/logit_scaling.hpp"
#include "recalibrators/one_vs_rest.hpp"
#include "recalibrators/scaling_binning.hpp"
#include "recalibrators/temperature_scaling.hpp"
#include "recalibrators/top_label_reduced.hpp"
#include "reference_data.hpp"

using namespace calbench;
using calbench::testing::load_reference_dataset;
using calbench::testing::manifest;
using calbench::testing::reference_dir;
using calbench::testing::reference_values;

namespace {

Sample draw(const DirichletSpec& spec, std::size_t n, std::uint64_t seed) {
  DirichletGenerator gen(spec);
  Engine engine = make_engine({seed, 0, 0, Purpose::sample});
  Sample s;
  DirichletScratch scratch;
  gen.sample(engine, n, s, scratch);
  return s;
}

std::vector<std::vector<double>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::string field;
    std::vector<double> row;
    while (std::getline(ss, field, ',')) row.push_back(std::strtod(field.c_str(), nullptr));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Every method of the library, constructed directly (the registry's contract rig covers the
// config path in test_recalibration.cpp).
std::vector<std::pair<std::string, std::shared_ptr<const Recalibrator>>> all_methods() {
  auto ovr = [](const char* name, std::shared_ptr<const BinaryCalibrator> b) {
    return std::make_shared<OneVsRest>(name, std::move(b));
  };
  auto temperature = std::make_shared<TemperatureScaling>();
  return {
      {"temperature", temperature},
      {"vector",
       std::make_shared<LogitScaling>("vector", LogitScalingSpec{LogitScalingForm::vector})},
      {"matrix",
       std::make_shared<LogitScaling>("matrix", LogitScalingSpec{LogitScalingForm::matrix})},
      {"dirichlet", std::make_shared<LogitScaling>(
                        "dirichlet", LogitScalingSpec{LogitScalingForm::matrix, 0.01, 0.01})},
      {"platt", ovr("platt", std::make_shared<LogisticCalibrator>(LogisticKind::platt))},
      {"beta", ovr("beta", std::make_shared<LogisticCalibrator>(LogisticKind::beta))},
      {"isotonic", ovr("isotonic", std::make_shared<IsotonicCalibrator>())},
      {"histogram_binning",
       ovr("histogram_binning", std::make_shared<HistogramBinning>(10, ScoreBinning::equal_mass))},
      {"bbq", std::make_shared<TopLabel>("bbq", std::make_shared<BbqCalibrator>())},
      {"scaling_binning",
       std::make_shared<TopLabel>("scaling_binning", std::make_shared<ScalingBinning>(10))},
      {"ensemble_temperature", std::make_shared<EnsembleTemperature>()},
      {"classwise", std::make_shared<Classwise>(temperature)},
      {"top_label_reduced", std::make_shared<TopLabelReduced>(temperature)},
  };
}

}  // namespace

TEST_CASE("temperature scaling reproduces the reference temperatures and NLLs",
          "[unit][recalibrators]") {
  for (const char* name :
       {"logits_k2_n2000", "logits_k3_n1000", "logits_k10_n5000", "logits_k100_n3000"}) {
    INFO(name);
    const Sample s = load_reference_dataset(name);
    const auto fit = fit_temperature(s.p, s.label, s.classes);
    const auto& ref = reference_values().at(name);
    const double T = ref.at("ts_temperature").at("own_newton_beta").get<double>();
    const double nll = ref.at("ts_nll_at_T").at("own_newton_beta").get<double>();
    CHECK(std::abs(fit.temperature / T - 1.0) < 1e-9);
    CHECK(std::abs(fit.nll - nll) < 1e-12);
    CHECK(fit.iterations <= 8);
    // At T = 1 the NLL is the plain one.
    const Sample p = load_reference_dataset(name);
    double nll1 = 0.0;
    for (std::size_t i = 0; i < p.size; ++i) {
      const auto row = p.row(i);
      double top = row[0], sum = 0.0;
      for (double v : row) top = std::max(top, v);
      for (double v : row) sum += std::exp(v - top);
      nll1 += std::log(sum) + top - row[p.label[i]];
    }
    CHECK(std::abs(nll1 / static_cast<double>(p.size) -
                   ref.at("nll_logits_T1").at("sklearn").get<double>()) < 1e-12);
  }
}

TEST_CASE("temperature scaling on separable data returns the lower bound",
          "[unit][recalibrators]") {
  const Sample s = load_reference_dataset("logits_k3_separable");
  const auto fit = fit_temperature(s.p, s.label, s.classes);
  CHECK(fit.temperature == min_temperature);
  CHECK(fit.nll < 1e-6);
  CHECK(fit.iterations <= 10);  // the bound is tried once Newton creeps
}

TEST_CASE("isotonic one-vs-rest reproduces scikit-learn in-sample, normalised and on a grid",
          "[unit][recalibrators]") {
  std::size_t compared = 0;
  for (const auto& [name, info] : manifest().items()) {
    if (info.at("kind") != "probs") continue;
    const std::string base = reference_dir() + "/isotonic/" + name + "__sklearn__";
    std::ifstream probe(base + "raw.csv");
    if (!probe) continue;
    INFO(name);
    const Sample s = load_reference_dataset(name);
    const auto raw = read_csv(base + "raw.csv");
    const auto norm = read_csv(base + "norm.csv");
    const auto grid = read_csv(base + "grid.csv");
    REQUIRE(raw.size() == s.size);
    REQUIRE(grid.size() == 101);
    const std::size_t K = s.classes;
    std::vector<std::unique_ptr<const BinaryMap>> maps;
    std::vector<double> scores(s.size), outcomes(s.size);
    for (std::size_t k = 0; k < K; ++k) {
      for (std::size_t i = 0; i < s.size; ++i) {
        scores[i] = s.p[i * K + k];
        outcomes[i] = s.label[i] == k ? 1.0 : 0.0;
      }
      maps.push_back(IsotonicCalibrator().fit(scores, outcomes, "isotonic"));
    }
    for (std::size_t i = 0; i < s.size; ++i) {
      std::vector<double> q(K);
      for (std::size_t k = 0; k < K; ++k) {
        q[k] = (*maps[k])(s.p[i * K + k]);
        CHECK(std::abs(q[k] - raw[i][k]) < 1e-9);
        ++compared;
      }
      normalise_row(q);
      for (std::size_t k = 0; k < K; ++k) CHECK(std::abs(q[k] - norm[i][k]) < 1e-9);
    }
    for (std::size_t g = 0; g <= 100; ++g)
      for (std::size_t k = 0; k < K; ++k) {
        CHECK(std::abs((*maps[k])(static_cast<double>(g) / 100.0) - grid[g][k]) < 1e-9);
        ++compared;
      }
    // The registry's one-vs-rest model gives the normalised values where it can be fitted.
    const bool two_classes =
        std::any_of(s.label.begin(), s.label.end(), [&](auto y) { return y != s.label.front(); });
    if (two_classes) {
      const auto model = OneVsRest("isotonic", std::make_shared<IsotonicCalibrator>()).fit(s);
      std::vector<double> q(s.p.size());
      model->apply(s.p, K, q);
      for (std::size_t i = 0; i < s.size; ++i)
        for (std::size_t k = 0; k < K; ++k) CHECK(std::abs(q[i * K + k] - norm[i][k]) < 1e-9);
    }
  }
  CHECK(compared > 10'000);
}

TEST_CASE("fitted temperature converges to 1/T on temperature-miscalibrated data",
          "[stat][recalibrators]") {
  for (double T : {0.5, 2.0}) {
    INFO("T = " << T);
    const Sample s = draw({10, {0.5}, TemperatureMap{T}}, 40'000, 11);
    const auto model = TemperatureScaling().fit(s);
    const double fitted = model->parameters().front().value;
    // The MLE's relative standard error here is about 0.5 %; 3 % is a loose, safe bound.
    CHECK(std::abs(fitted * T - 1.0) < 0.03);
  }
}

TEST_CASE("matrix and dirichlet recover the inverse of an affine_logit map",
          "[stat][recalibrators]") {
  // W0 has equal row sums (1.5), the condition for softmax(W log p + b) to invert it exactly
  // (docs/recalibration.md): then W = W0^-1 and b = -W0^-1 b0 up to constants.
  const std::vector<double> W0 = {1.5, 0.3, -0.3, 0.2, 1.4, -0.1, 0.0, 0.5, 1.0};
  const std::vector<double> b0 = {0.3, -0.2, 0.0};
  const DirichletSpec spec{3, {1.0}, AffineLogitMap{W0, b0}};
  const Sample s = draw(spec, 40'000, 12);
  for (double lambda : {0.0, 1e-4}) {
    INFO("lambda = " << lambda);
    const LogitScaling method(lambda > 0 ? "dirichlet" : "matrix",
                              {LogitScalingForm::matrix, lambda, lambda});
    const auto fitted = method.fit_parameters(s);
    // P W W0 = P, P = I - 11^T/3.
    double worst = 0.0;
    for (std::size_t r = 0; r < 3; ++r)
      for (std::size_t c = 0; c < 3; ++c) {
        double m[3];
        for (std::size_t i = 0; i < 3; ++i) {
          m[i] = 0.0;
          for (std::size_t j = 0; j < 3; ++j) m[i] += fitted.weights[i * 3 + j] * W0[j * 3 + c];
        }
        const double centred = m[r] - (m[0] + m[1] + m[2]) / 3.0;
        const double target = (r == c ? 1.0 : 0.0) - 1.0 / 3.0;
        worst = std::max(worst, std::abs(centred - target));
      }
    CHECK(worst < 0.05);
    // And the composed map returns c.
    DirichletGenerator gen(spec);
    Engine engine = make_engine({99, 0, 0, Purpose::truth});
    Sample t;
    DirichletScratch scratch;
    gen.sample(engine, 2000, t, scratch, true);
    const LogitScalingModel model(fitted);
    std::vector<double> q(t.p.size());
    model.apply(t.p, 3, q);
    double l1 = 0.0;
    for (std::size_t j = 0; j < q.size(); ++j) l1 += std::abs(q[j] - t.truth[j]);
    CHECK(l1 / 2000.0 < 0.02);
    CHECK(model.injective());
  }
}

TEST_CASE("every method maps onto the simplex, even from confidences of exactly 0 and 1",
          "[unit][recalibrators]") {
  const Sample fit_sample = draw({4, {0.3}, TemperatureMap{0.6}}, 3000, 13);
  Sample test = draw({4, {0.3}, PowerMap{{0.5, 1.0, 1.5, 2.0}}}, 500, 14);
  // Extreme rows.
  const std::vector<std::vector<double>> extremes = {{1.0, 0.0, 0.0, 0.0},
                                                     {0.0, 0.0, 0.0, 1.0},
                                                     {0.5, 0.5, 0.0, 0.0},
                                                     {0.25, 0.25, 0.25, 0.25},
                                                     {1e-300, 1.0 - 1e-16, 1e-17, 0.0}};
  for (const auto& row : extremes) test.p.insert(test.p.end(), row.begin(), row.end());
  const std::size_t rows = test.p.size() / 4;
  for (const auto& [name, method] : all_methods()) {
    INFO(name);
    const auto model = fit(*method, fit_sample);
    std::vector<double> q(test.p.size());
    apply(*model, test.p, 4, q);
    for (std::size_t i = 0; i < rows; ++i) {
      double sum = 0.0;
      for (std::size_t k = 0; k < 4; ++k) {
        const double v = q[i * 4 + k];
        CHECK(std::isfinite(v));
        CHECK(v >= 0.0);
        sum += v;
      }
      CHECK(std::abs(sum - 1.0) < 1e-12);
    }
    // Deterministic: a second fit gives the same bits.
    const auto again = fit(*method, fit_sample);
    std::vector<double> q2(test.p.size());
    apply(*again, test.p, 4, q2);
    CHECK(q == q2);
    for (const auto& v : model->parameters()) CHECK(std::isfinite(v.value));
  }
}

TEST_CASE("degenerate fits throw DomainError naming the method", "[unit][recalibrators]") {
  // A single class present.
  Sample one = draw({3, {1.0}}, 50, 15);
  std::fill(one.label.begin(), one.label.end(), 2u);
  for (const auto& [name, method] : all_methods()) {
    INFO(name);
    CHECK_THROWS_AS(fit(*method, one), DomainError);
    try {
      fit(*method, one);
    } catch (const DomainError& e) {
      CHECK_THAT(e.what(), Catch::Contains(name));
    }
  }
  // Fewer rows than parameters: matrix scaling with K = 10 has 110.
  const Sample small = draw({10, {1.0}}, 60, 16);
  const LogitScaling matrix("matrix", {LogitScalingForm::matrix});
  CHECK_THROWS_WITH(matrix.fit(small), Catch::Contains("fewer than its 110 free parameters"));
  // ODIR pins the off-diagonal weights and the intercepts: 60 rows are enough for K = 10.
  const LogitScaling odir("dirichlet", {LogitScalingForm::matrix, 0.1, 0.1});
  CHECK_NOTHROW(odir.fit(small));
  // An empty sample.
  Sample empty;
  empty.classes = 3;
  CHECK_THROWS_AS(TemperatureScaling().fit(empty), DomainError);
  // Maximum-likelihood logistic fits reject separable problems; Platt's targets do not.
  const std::vector<double> scores = {0.1, 0.2, 0.8, 0.9}, outcomes = {0, 0, 1, 1};
  CHECK_THROWS_WITH(LogisticCalibrator(LogisticKind::logistic).fit(scores, outcomes, "logistic"),
                    Catch::Contains("separable"));
  CHECK_NOTHROW(LogisticCalibrator(LogisticKind::platt).fit(scores, outcomes, "platt"));
  // Bad parameters.
  CHECK_THROWS_AS(HistogramBinning(0, ScoreBinning::equal_mass), DomainError);
  CHECK_THROWS_AS(BbqCalibrator(0.0), DomainError);
  CHECK_THROWS_AS(LogitScaling("dirichlet", {LogitScalingForm::matrix, -1.0, 0.0}), DomainError);
}

TEST_CASE("small formulas by hand", "[unit][recalibrators]") {
  // rescale_to_top: (0.6, 0.3, 0.1) with top 0.8 -> (0.8, 0.15, 0.05).
  std::vector<double> q(3);
  rescale_to_top(std::vector<double>{0.6, 0.3, 0.1}, 0, 0.8, q);
  CHECK(q[0] == Approx(0.8));
  CHECK(q[1] == Approx(0.15));
  CHECK(q[2] == Approx(0.05));
  // p_t = 1: the remainder is shared.
  rescale_to_top(std::vector<double>{0.0, 1.0, 0.0}, 1, 0.9, q);
  CHECK(q[0] == Approx(0.05));
  CHECK(q[2] == Approx(0.05));
  // Equal-mass edges: midpoints between parts of sizes 2, 2, 1 (array_split).
  const auto edges =
      interior_edges(std::vector<double>{0.5, 0.1, 0.9, 0.3, 0.7}, 3, ScoreBinning::equal_mass);
  REQUIRE(edges.size() == 2);
  CHECK(edges[0] == Approx(0.4));
  CHECK(edges[1] == Approx(0.8));
  CHECK(bin_of(0.4, edges) == 0);  // right-closed
  CHECK(bin_of(0.41, edges) == 1);
  // Platt's targets: 2 positives, 2 negatives -> 3/4 and 1/4; the fit of a 1-D logistic
  // regression on those symmetric data has intercept 0.
  const auto platt =
      LogisticCalibrator(LogisticKind::platt)
          .fit(std::vector<double>{0.2, 0.4, 0.6, 0.8}, std::vector<double>{0, 0, 1, 1}, "platt");
  CHECK((*platt)(0.5) == Approx(0.5).margin(1e-12));
  // Isotonic: PAV pools the violators (0.2:1, 0.4:0) into 0.5.
  const auto iso = IsotonicCalibrator().fit(std::vector<double>{0.2, 0.4, 0.6},
                                            std::vector<double>{1, 0, 1}, "isotonic");
  CHECK((*iso)(0.2) == Approx(0.5));
  CHECK((*iso)(0.5) == Approx(0.75));
  CHECK((*iso)(0.9) == Approx(1.0));
}

TEST_CASE("dirichlet's objective is the mean NLL plus the ODIR penalty, minimised",
          "[unit][recalibrators]") {
  // The penalty of logit_scaling.hpp evaluated by hand: J(W, b) = mean_i -log q_iy +
  // lambda/(K(K-1)) sum_{i != j} W_ij^2 + mu/K sum_j b_j^2, q_i = softmax(W log p_i + b).
  const Sample s = draw({3, {0.7}, PowerMap{{0.7, 1.0, 1.6}}}, 3000, 17);
  const double lambda = 0.5, mu = 0.2;
  const LogitScaling method("dirichlet", {LogitScalingForm::matrix, lambda, mu});
  const auto fitted = method.fit_parameters(s);
  const std::size_t K = 3;
  auto objective = [&](const std::vector<double>& W, const std::vector<double>& b) {
    double nll = 0.0;
    for (std::size_t i = 0; i < s.size; ++i) {
      std::vector<double> z(K);
      for (std::size_t r = 0; r < K; ++r) {
        z[r] = b[r];
        for (std::size_t c = 0; c < K; ++c) z[r] += W[r * K + c] * safe_log(s.p[i * K + c]);
      }
      const double top = *std::max_element(z.begin(), z.end());
      double sum = 0.0;
      for (double v : z) sum += std::exp(v - top);
      nll += std::log(sum) + top - z[s.label[i]];
    }
    double off = 0.0, bias = 0.0;
    for (std::size_t r = 0; r < K; ++r) {
      for (std::size_t c = 0; c < K; ++c)
        if (r != c) off += W[r * K + c] * W[r * K + c];
      bias += b[r] * b[r];
    }
    return nll / static_cast<double>(s.size) + lambda / (K * (K - 1.0)) * off + mu / K * bias;
  };
  const double at = objective(fitted.weights, fitted.bias);
  CHECK(std::abs(at - fitted.objective) < 1e-12);
  // A minimum: central differences of J vanish and no coordinate step lowers it.
  const double h = 1e-4;
  for (std::size_t j = 0; j < K * K + K; ++j) {
    INFO("parameter " << j);
    auto W = fitted.weights;
    auto b = fitted.bias;
    double& x = j < K * K ? W[j] : b[j - K * K];
    const double x0 = x;
    x = x0 + h;
    const double up = objective(W, b);
    x = x0 - h;
    const double down = objective(W, b);
    CHECK(std::abs(up - down) / (2 * h) < 1e-5);
    CHECK(up >= at - 1e-12);
    CHECK(down >= at - 1e-12);
  }
}
