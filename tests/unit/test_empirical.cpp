// The `empirical` family (docs/generators.md, docs/fit.md): its calibration curve, sampler,
// truth, config round trip and fit.
#include <tbb/task_arena.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>

#include "config/registry.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"
#include "core/sha256.hpp"
#include "data/model_outputs.hpp"
#include "data/npy.hpp"
#include "fit/empirical_fit.hpp"
#include "fit/fake_classifier_fit.hpp"
#include "generator_draws.hpp"
#include "generators/generator.hpp"
#include "generators/generators_json.hpp"
#include "temp_files.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

EmpiricalSpec spec_of(std::size_t K, std::vector<double> rows, double h, LogitSpline curve = {}) {
  return EmpiricalSpec{
      K, std::make_shared<const std::vector<double>>(std::move(rows)), h, std::move(curve), {}, "",
      ""};
}

// Rows of a K = 3 model: a spread of confidences, some near-certain.
std::vector<double> three_class_rows() {
  return {0.70, 0.20, 0.10, 0.40, 0.35, 0.25, 0.95,  0.03,   0.02,   0.10, 0.80, 0.10,
          0.34, 0.33, 0.33, 0.05, 0.15, 0.80, 0.999, 0.0005, 0.0005, 0.55, 0.05, 0.40};
}

// An overconfident-at-the-top, underconfident-below curve on knots -1..3.
LogitSpline sign_changing_curve() {
  return {{-1.0, 0.0, 1.0, 2.0, 3.0}, {0.4, 0.3, 0.1, -0.2, -0.5, -0.8, -0.9}};
}

using testing::draw;

double sigmoid(double s) {
  return 1.0 / (1.0 + std::exp(-s));
}

}  // namespace

TEST_CASE("cubic B-splines on two knots are the Bernstein polynomials", "[unit][empirical]") {
  // de Boor (1978): on the clamped knots {0,0,0,0,1,1,1,1} the cubic B-splines are
  // C(3, j) t^j (1 - t)^(3 - j).
  std::vector<double> b(4);
  spline_basis(std::vector<double>{0.0, 1.0}, 0.25, b);
  CHECK(b[0] == Approx(27.0 / 64));
  CHECK(b[1] == Approx(27.0 / 64));
  CHECK(b[2] == Approx(9.0 / 64));
  CHECK(b[3] == Approx(1.0 / 64));
  // Partition of unity, locality and clamping on interior knots.
  const std::vector<double> knots = {-1.0, 0.0, 1.0, 2.0, 3.0};
  std::vector<double> basis(spline_basis_size(knots.size()));
  for (double t : {-5.0, -1.0, -0.3, 0.0, 0.7, 1.5, 2.99, 3.0, 8.0}) {
    spline_basis(knots, t, basis);
    CHECK(std::accumulate(basis.begin(), basis.end(), 0.0) == Approx(1.0).margin(1e-14));
    for (double v : basis) CHECK(v >= 0.0);
  }
  spline_basis(knots, -5.0, basis);
  CHECK(basis[0] == 1.0);  // held at the boundary
  const LogitSpline curve = sign_changing_curve();
  CHECK(calibrated_logit(curve, -7.0) == Approx(-1.0 + 0.4));
  CHECK(calibrated_logit(curve, 9.0) == Approx(3.0 - 0.9));
  CHECK(calibrated_logit(LogitSpline{}, 9.0) == 9.0);
  CHECK_THROWS_AS(validate(LogitSpline{{0.0, 0.0}, {0, 0, 0, 0}}), DomainError);
  CHECK_THROWS_AS(validate(LogitSpline{{0.0, 1.0}, {0, 0, 0}}), DomainError);
}

TEST_CASE("empirical: h = 0 and the identity curve draw the rows themselves", "[unit][empirical]") {
  const std::vector<double> rows = three_class_rows();
  const Generator gen(spec_of(3, rows, 0.0));
  CHECK(gen.family() == "empirical");
  const Sample s = draw(gen.spec(), 2000, 1, true);
  std::vector<int> seen(rows.size() / 3, 0);
  for (std::size_t i = 0; i < s.size; ++i) {
    bool found = false;
    for (std::size_t r = 0; r < seen.size() && !found; ++r) {
      found = std::abs(s.p[3 * i] - rows[3 * r]) < 1e-12 &&
              std::abs(s.p[3 * i + 1] - rows[3 * r + 1]) < 1e-12;
      if (found) ++seen[r];
    }
    REQUIRE(found);
    for (std::size_t k = 0; k < 3; ++k) CHECK(s.truth[3 * i + k] == s.p[3 * i + k]);  // c = p
  }
  // Each of the 8 rows is drawn with probability 1/8: 2000 draws, binomial sd 14.8, 4.5 sd.
  for (int count : seen) CHECK(std::abs(count - 250) < 67);
}

TEST_CASE("empirical: the constructor rejects bad rows and parameters", "[unit][empirical]") {
  CHECK_THROWS_WITH(Generator(spec_of(3, {0.5, 0.6, 0.1}, 0.1)), Catch::Contains("rows[0] sums"));
  CHECK_THROWS_WITH(Generator(spec_of(2, {1.5, -0.5}, 0.1)), Catch::Contains("rows[0][1]"));
  CHECK_THROWS_WITH(Generator(spec_of(2, {0.5, 0.5}, -1.0)), Catch::Contains("bandwidth"));
  CHECK_THROWS_AS(Generator(spec_of(3, {0.5, 0.5}, 0.1)), DomainError);
  CHECK_THROWS_AS(Generator(spec_of(2, {}, 0.1)), DomainError);
}

TEST_CASE("empirical truth: known answers at h = 0", "[stat][empirical]") {
  // A finite population: every quantity is the average over the rows, by hand.
  const std::vector<double> rows = three_class_rows();
  const LogitSpline curve = sign_changing_curve();
  const Generator gen(spec_of(3, rows, 0.0, curve));
  const GroundTruth t = compute_truth(gen, TruthSettings{});
  const std::size_t rows_n = rows.size() / 3;
  const double n = static_cast<double>(rows_n);
  double acc = 0.0, l1 = 0.0, l2 = 0.0, conf = 0.0;
  for (std::size_t i = 0; i < rows_n; ++i) {
    const double z = *std::max_element(rows.begin() + 3 * i, rows.begin() + 3 * i + 3);
    const double g = sigmoid(calibrated_logit(curve, std::log(z / (1.0 - z))));
    acc += g / n;
    conf += z / n;
    l1 += std::abs(g - z) / n;
    l2 += (g - z) * (g - z) / n;
  }
  CHECK(t[Quantity::accuracy].method == TruthMethod::closed_form);
  CHECK(t[Quantity::accuracy].value == Approx(acc).epsilon(1e-12));
  CHECK(t[Quantity::overconfidence].value == Approx(conf - acc).margin(1e-12));
  CHECK(t[Quantity::ece_top_l1].value == Approx(l1).epsilon(1e-12));
  CHECK(t[Quantity::ece_top_l2].value == Approx(std::sqrt(l2)).epsilon(1e-12));
  // canonical_l1 = E[2 |g - z|]: the others move by (1 - g) - (1 - z) in total, one sign.
  CHECK(t[Quantity::canonical_l1].value == Approx(2.0 * l1).epsilon(1e-12));

  // The identity curve: every calibration error exactly 0, accuracy the mean confidence.
  const GroundTruth id = compute_truth(Generator(spec_of(3, rows, 0.0)), TruthSettings{});
  for (Quantity q : {Quantity::ece_top_l1, Quantity::ece_top_l2, Quantity::classwise_ece_l1,
                     Quantity::canonical_l1, Quantity::canonical_l2, Quantity::overconfidence})
    CHECK(id[q].value == Approx(0.0).margin(1e-15));
  CHECK(id[Quantity::accuracy].value == Approx(conf).epsilon(1e-12));
}

TEST_CASE("empirical: P(y = argmax p | z) = g(z) on sampled labels", "[stat][empirical]") {
  // The construction's promise, checked on labels: in 10 equal-mass bins of z, the fraction
  // correct matches the mean g(z) within 4 binomial standard errors (10 checks, Bonferroni
  // 0.05/10 needs 2.8). K = 3 with noise, a sign-changing curve.
  const Generator gen(spec_of(3, three_class_rows(), 0.4, sign_changing_curve()));
  const auto& e = std::get<EmpiricalGenerator>(gen.family_generator());
  const Sample s = draw(gen.spec(), 200'000, 7);
  std::vector<std::size_t> order(s.size);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return s.confidence[a] < s.confidence[b]; });
  const std::size_t bins = 10, per = s.size / bins;
  for (std::size_t b = 0; b < bins; ++b) {
    double correct = 0.0, g = 0.0;
    for (std::size_t r = b * per; r < (b + 1) * per; ++r) {
      const std::size_t i = order[r];
      correct += s.correct(i) ? 1.0 : 0.0;
      const double z = s.confidence[i];
      g += e.curve(std::log(z) - std::log1p(-z));
    }
    const double count = static_cast<double>(per);
    const double m = g / count, se = std::sqrt(m * (1.0 - m) / count);
    INFO("bin " << b << ": correct " << correct / count << ", g " << m);
    CHECK(std::abs(correct / count - m) < 4.0 * se);
  }
}

TEST_CASE("empirical truth agrees with brute-force Monte Carlo on sampled labels",
          "[stat][empirical]") {
  // accuracy, Brier and NLL from 400,000 labelled draws (their plain sample means, never c)
  // against the truth, within 4 standard errors of the sample plus 4 of the truth's error
  // (3 quantities x 2 cases, Bonferroni 0.05/6 needs 2.6).
  for (std::size_t K : {2u, 3u}) {
    const std::vector<double> rows =
        K == 3 ? three_class_rows()
               : std::vector<double>{0.9, 0.1, 0.3, 0.7, 0.55, 0.45, 0.02, 0.98, 0.6, 0.4};
    const Generator gen(spec_of(K, rows, 0.3, sign_changing_curve()));
    const GroundTruth t = compute_truth(gen, TruthSettings{});
    const Sample s = draw(gen.spec(), 400'000, 11);
    RunningStats acc, brier, nll;
    for (std::size_t i = 0; i < s.size; ++i) {
      acc.add(s.correct(i) ? 1.0 : 0.0);
      double b = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        const double d = s.p[i * K + k] - (s.label[i] == k ? 1.0 : 0.0);
        b += d * d;
      }
      brier.add(b);
      nll.add(-std::log(s.p[i * K + s.label[i]]));
    }
    for (const auto& [q, stats] :
         {std::pair{Quantity::accuracy, &acc}, std::pair{Quantity::brier, &brier},
          std::pair{Quantity::nll, &nll}}) {
      INFO("K = " << K << " " << to_string(q) << ": truth " << t[q].value << " ± " << t[q].error
                  << ", sample " << stats->mean() << " ± " << stats->standard_error());
      CHECK(std::abs(t[q].value - stats->mean()) <
            4.0 * stats->standard_error() + 4.0 * t[q].error);
    }
  }
}

TEST_CASE("empirical truth: the same bits on 1 and 2 threads, error within the target",
          "[stat][empirical]") {
  const Generator gen(spec_of(3, three_class_rows(), 0.3, sign_changing_curve()));
  GroundTruth one, two;
  tbb::task_arena(1).execute([&] { one = compute_truth(gen, TruthSettings{}); });
  tbb::task_arena(2).execute([&] { two = compute_truth(gen, TruthSettings{}); });
  for (Quantity q : all_quantities) {
    INFO(to_string(q) << " = " << one[q].value << " ± " << one[q].error);
    CHECK(one[q].value == two[q].value);
    CHECK(one[q].error < 2e-4);
  }
}

TEST_CASE("empirical: config round trip through a rows file and its SHA-256",
          "[unit][empirical][config]") {
  calbench::testing::TempDir dir;
  const std::vector<double> rows = three_class_rows();
  const std::string bytes = npy_bytes({rows.size() / 3, 3}, rows);
  {
    std::ofstream out(dir.path / "m.rows.npy", std::ios::binary);
    out << bytes;
  }
  const std::string sha =
      sha256_hex({reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()});
  CHECK(sha == sha256_file(dir.path / "m.rows.npy"));
  const Json generator = {{"family", "empirical"},
                          {"classes", 3},
                          {"rows", "m.rows.npy"},
                          {"sha256", sha},
                          {"bandwidth", 0.25},
                          {"calibration",
                           {{"knots", sign_changing_curve().knots},
                            {"coefficients", sign_changing_curve().coefficients}}}};
  const auto parse = [&](const Json& g, Problems& problems) {
    problems.base_directory = dir.path;
    Json resolved;
    return parse_generator(g, "/generator", problems, resolved);
  };
  Problems problems;
  const auto parsed = parse(generator, problems);
  INFO(join(problems.render("cfg"), "\n"));
  REQUIRE(parsed);
  const auto& spec = std::get<EmpiricalSpec>(parsed->spec);
  CHECK(*spec.rows == rows);
  CHECK(spec.bandwidth == 0.25);
  CHECK(spec.calibration.coefficients == sign_changing_curve().coefficients);
  // The same generator inline: the same canonical text (the truth cache's key), which holds
  // the rows' digest.
  Json inline_rows = Json::array();
  for (std::size_t i = 0; i < rows.size() / 3; ++i)
    inline_rows.push_back({rows[3 * i], rows[3 * i + 1], rows[3 * i + 2]});
  Json inline_generator = generator;
  inline_generator["rows"] = inline_rows;
  inline_generator.erase("sha256");
  Problems inline_problems;
  const auto inline_parsed = parse(inline_generator, inline_problems);
  REQUIRE(inline_parsed);
  CHECK(Generator(inline_parsed->spec).canonical_text() ==
        Generator(parsed->spec).canonical_text());
  CHECK(Generator(parsed->spec)
            .canonical_text()
            .find(sha256_hex({reinterpret_cast<const unsigned char*>(rows.data()),
                              rows.size() * sizeof(double)})) != std::string::npos);

  // A changed file is an error at /generator/sha256; a missing one at /generator/rows.
  {
    std::ofstream out(dir.path / "m.rows.npy", std::ios::binary | std::ios::app);
    out << ' ';
  }
  Problems changed;
  CHECK_FALSE(parse(generator, changed));
  REQUIRE(changed.size() == 1);
  CHECK(changed.items()[0].pointer == "/generator/sha256");
  CHECK_THAT(changed.items()[0].message, Catch::Contains("changed"));
  Json missing = generator;
  missing["rows"] = "absent.npy";
  Problems gone;
  CHECK_FALSE(parse(missing, gone));
  REQUIRE(gone.size() == 1);
  CHECK(gone.items()[0].pointer == "/generator/rows");
  Json unsummed = inline_generator;
  unsummed["rows"][2] = {0.5, 0.5, 0.5};
  Problems bad;
  CHECK_FALSE(parse(unsummed, bad));
  REQUIRE(bad.size() == 1);
  CHECK(bad.items()[0].pointer == "/generator/rows/2");
}

TEST_CASE("fit_empirical: a calibrated model keeps the identity, a miscalibrated one is found",
          "[stat][empirical][fit]") {
  // Data from dirichlet generators whose truth is exact: calibrated (identity map) and
  // overconfident (temperature 0.6), K = 4, n = 5,000. The fitted fake's true top-label ECE
  // must be within 3 standard errors of the data's mean gap (its sampling error) plus 0.005
  // (the bar) of the original's, and its accuracy within 3 binomial standard errors.
  struct Case {
    MiscalibrationMap map;
    const char* name;
  };
  for (const Case& c : {Case{IdentityMap{}, "identity"}, Case{TemperatureMap{0.6}, "T = 0.6"}}) {
    const DirichletSpec original{4, std::vector<double>(4, 0.4), c.map};
    const GroundTruth truth = compute_truth(Generator(original), TruthSettings{});
    const Sample data = draw(original, 5000, 21);
    FakeFitOptions options;
    options.family = FittedFamily::empirical;
    const FakeClassifierFit fit = fit_fake_classifier(data, options);
    REQUIRE(fit.empirical);
    CHECK(fit.family == FittedFamily::empirical);
    for (const auto& [q, se] : {std::pair{Quantity::accuracy, fit.fit.model_accuracy_se},
                                std::pair{Quantity::ece_top_l1, fit.fit.model_gap_se}}) {
      const double tolerance = 3.0 * se + (q == Quantity::ece_top_l1 ? 0.005 : 0.0) +
                               3.0 * (truth[q].error + fit.truth[q].error);
      INFO(c.name << " " << to_string(q) << ": fake " << fit.truth[q].value << ", original "
                  << truth[q].value << ", tolerance " << tolerance << ", penalty "
                  << fit.empirical->penalty << ", h " << fit.empirical->spec.bandwidth);
      CHECK(std::abs(fit.truth[q].value - truth[q].value) <= tolerance);
    }
    CHECK(fit.fit.total_variation < 0.05);
    // The penalty rule's step 1 (empirical_fit.hpp): the identity for the calibrated model, the
    // first grid's 0.1 for the miscalibrated one (its 5,000 rows resolve the curve).
    INFO(c.name << ": penalty " << fit.empirical->penalty << ", " << fit.empirical->penalty_reason);
    CHECK(std::isfinite(fit.empirical->penalty) == (c.name != std::string("identity")));
  }
}

TEST_CASE("fit_empirical: the same fit on 1 and 2 threads", "[unit][empirical][fit]") {
  const Sample data = draw(DirichletSpec{3, {0.5, 0.7, 0.9}, TemperatureMap{1.4}}, 2000, 5);
  EmpiricalFit one, two;
  tbb::task_arena(1).execute([&] { one = fit_empirical(data); });
  tbb::task_arena(2).execute([&] { two = fit_empirical(data); });
  CHECK(one.spec.bandwidth == two.spec.bandwidth);
  CHECK(one.spec.calibration.coefficients == two.spec.calibration.coefficients);
  CHECK(one.penalty == two.penalty);
  CHECK(Generator(one.spec).canonical_text() == Generator(two.spec).canonical_text());
}

TEST_CASE("fit_empirical on scikit-learn models' outputs matches their pool calibration",
          "[stat][empirical][fit]") {
  // tests/data/real_models (scripts/real-models.py --write-data, seeds there): 5,000 rows of a
  // model's outputs and the model's accuracy and top-label ECE (20 equal-mass bins) on a pool of
  // 200,000 rows, with the ECE's bootstrap standard error. The bar of issue #23: the fake's
  // true ECE within max(0.005, 3 pool SEs) of the model's, widened by 2 standard errors of the
  // fit rows' own mean gap (the fake cannot know the model better than its 5,000 rows do);
  // accuracy within 3 binomial standard errors of the fit rows. The parametric fit of the
  // random forest reverses its miscalibration (docs/fit.md); this one may not.
  for (const char* name : {"nb_k3", "rf_k2"}) {
    const std::filesystem::path dir =
        std::filesystem::path(CALBENCH_SOURCE_DIR) / "tests" / "data" / "real_models";
    const Json pool =
        Json::parse(calbench::testing::read_text(dir / (std::string(name) + ".json")));
    const Sample data = read_model_outputs((dir / (std::string(name) + ".csv")).string(), "",
                                           {.kind = ValueKind::probabilities});
    FakeFitOptions options;
    options.family = FittedFamily::empirical;
    const FakeClassifierFit fit = fit_fake_classifier(data, options);
    const double pool_ece = pool["pool_ece_em20"].get<double>();
    const double tolerance =
        std::max(0.005, 3.0 * pool["pool_ece_se"].get<double>()) + 2.0 * fit.fit.model_gap_se;
    const TruthValue& ece = fit.truth[Quantity::ece_top_l1];
    INFO(name << ": fake ECE " << ece.value << ", pool " << pool_ece << ", tolerance " << tolerance
              << "; fake accuracy " << fit.truth[Quantity::accuracy].value << ", pool "
              << pool["pool_accuracy"].get<double>());
    CHECK(std::abs(ece.value - pool_ece) <= tolerance);
    CHECK(std::abs(fit.truth[Quantity::accuracy].value - pool["pool_accuracy"].get<double>()) <=
          3.0 * fit.fit.model_accuracy_se);
  }
}

TEST_CASE(
    "fit_empirical: the noise correction scales the curve to the bootstrap-corrected distance",
    "[stat][empirical][fit]") {
  // A near-calibrated model (temperature 0.9, K = 4, n = 3,000): the fitted curve's mean
  // distance from the diagonal, D = mean_i |g(t_i) - sigmoid(t_i)|, is biased upward by its
  // noise. Step 4 (empirical_fit.hpp) estimates the bias by bootstrap refits and scales the
  // coefficients by kappa so that D(kappa) = 2 D - mean of the refits' D. Checked by hand
  // here: the written curve is the uncorrected fit times kappa, and its D is that target.
  const Sample data =
      draw(DirichletSpec{4, std::vector<double>(4, 0.5), TemperatureMap{0.9}}, 3000, 17);
  EmpiricalFitOptions plain;
  plain.penalties = {0.01, 0.1, 1.0, 10.0, 100.0, 1000.0};  // the grid it was made for
  plain.noise_resamples = 0;
  const EmpiricalFit uncorrected = fit_empirical(data, plain);
  EmpiricalFitOptions corrected = plain;
  corrected.noise_resamples = 20;  // off by default (empirical_fit.hpp)
  const EmpiricalFit fit = fit_empirical(data, corrected);
  REQUIRE(std::isfinite(fit.penalty));
  REQUIRE(fit.penalty == uncorrected.penalty);
  CHECK(uncorrected.shrinkage == 1.0);
  INFO("D " << fit.distance << ", bootstrap " << fit.distance_bootstrap << ", kappa "
            << fit.shrinkage);
  CHECK(fit.distance == uncorrected.distance);
  CHECK(fit.distance_bootstrap > fit.distance);  // the noise bias this data shows
  CHECK(fit.shrinkage > 0.0);
  CHECK(fit.shrinkage < 1.0);
  const auto& a = fit.spec.calibration.coefficients;
  const auto& b = uncorrected.spec.calibration.coefficients;
  REQUIRE(a.size() == b.size());
  for (std::size_t j = 0; j < a.size(); ++j) CHECK(a[j] == fit.shrinkage * b[j]);
  const CurveData curve = curve_data(data);
  double d = 0.0, d_plain = 0.0;
  for (double t : curve.t) {
    d += std::abs(sigmoid(calibrated_logit(fit.spec.calibration, t)) - sigmoid(t));
    d_plain += std::abs(sigmoid(calibrated_logit(uncorrected.spec.calibration, t)) - sigmoid(t));
  }
  d /= static_cast<double>(curve.t.size());
  d_plain /= static_cast<double>(curve.t.size());
  CHECK(std::abs(d_plain - fit.distance) < 1e-12);
  CHECK(std::abs(d - (2.0 * fit.distance - fit.distance_bootstrap)) < 1e-9);
}
