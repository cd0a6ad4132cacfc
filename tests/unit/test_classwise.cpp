// The classwise map of the `empirical` family (generators/classwise_map.hpp, fit/classwise_fit.hpp;
// docs/fit.md, "The classwise map"; issue #35): its construction, its exact truth at h = 0, its
// config round trip, and the recovery of a known map from labels.
#include <tbb/task_arena.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <numeric>

#include "config/registry.hpp"
#include "core/rng.hpp"
#include "estimators/binned_ece.hpp"
#include "fit/empirical_fit.hpp"
#include "fit/fit_verdict.hpp"
#include "generator_draws.hpp"
#include "generators/categorical.hpp"
#include "generators/generator.hpp"
#include "generators/generators_json.hpp"
#include "truth/truth_engine.hpp"

using namespace calbench;

namespace {

EmpiricalSpec spec_of(std::size_t K, std::vector<double> rows, double h, LogitSpline curve,
                      ClasswiseMap map) {
  return EmpiricalSpec{K,
                       std::make_shared<const std::vector<double>>(std::move(rows)),
                       h,
                       std::move(curve),
                       std::move(map),
                       "",
                       ""};
}

// A known map for K = 4: class 0 is overconfident when top (d_0 = -0.8), class 1 underconfident
// (d_1 = +0.6); among the other classes class 2 takes e^1 times its share and class 3 e^-0.5 (a
// spline held constant is a constant offset: B-splines sum to 1).
ClasswiseMap known_map() {
  ClasswiseMap m;
  m.classes = 4;
  m.top_knots = {-2.0, 0.0, 2.0, 4.0};
  const std::size_t mt = spline_basis_size(4);
  m.top.assign(4 * mt, 0.0);
  for (std::size_t r = 0; r < mt; ++r) m.top[0 * mt + r] = -0.8, m.top[1 * mt + r] = 0.6;
  m.other_knots = {-6.0, -3.0, 0.0};
  const std::size_t mo = spline_basis_size(3);
  m.other_shared.assign(mo, 0.0);
  m.other.assign(4 * mo, 0.0);
  for (std::size_t r = 0; r < mo; ++r) m.other[2 * mo + r] = 1.0, m.other[3 * mo + r] = -0.5;
  return m;
}

// n rows of a Dirichlet(0.6) model on K = 4, as probabilities.
std::vector<double> dirichlet_rows(std::size_t n, std::uint64_t seed) {
  const Sample s =
      testing::draw(DirichletSpec{4, std::vector<double>(4, 0.6), IdentityMap{}}, n, seed);
  return s.p;
}

// c = r(p) of the generator at each of its rows (h = 0: p is the row itself).
std::vector<double> calibrated_rows(const EmpiricalGenerator& gen) {
  const std::size_t K = gen.classes(), n = gen.rows();
  std::vector<double> out(n * K), p(K), log_p(K), c(K);
  Engine unused = make_engine({0, 0, 0, Purpose::sample});
  for (std::size_t i = 0; i < n; ++i) {
    gen.draw_confidence(unused, i, p, log_p);  // h = 0: the row, no randomness used
    gen.calibrate(p, log_p, c);
    std::copy(c.begin(), c.end(), out.begin() + static_cast<std::ptrdiff_t>(i * K));
  }
  return out;
}

}  // namespace

TEST_CASE("classwise map: zero splines are the top-label construction; sizes are checked",
          "[unit][classwise]") {
  const std::vector<double> rows = dirichlet_rows(200, 3);
  const LogitSpline curve{{-1.0, 1.0, 3.0}, {0.2, -0.1, 0.3, 0.0, -0.4}};
  ClasswiseMap zeros = known_map();
  std::fill(zeros.top.begin(), zeros.top.end(), 0.0);
  std::fill(zeros.other.begin(), zeros.other.end(), 0.0);
  const auto plain = calibrated_rows(EmpiricalGenerator(spec_of(4, rows, 0.0, curve, {})));
  const auto mapped = calibrated_rows(EmpiricalGenerator(spec_of(4, rows, 0.0, curve, zeros)));
  for (std::size_t i = 0; i < plain.size(); ++i) CHECK(mapped[i] == Approx(plain[i]).margin(1e-14));
  // Rows sum to 1 and the offsets act as the module comment says: class 2's share among the
  // others is e^1 times the model's against class 3's e^-0.5.
  const auto known = calibrated_rows(EmpiricalGenerator(spec_of(4, rows, 0.0, curve, known_map())));
  for (std::size_t i = 0; i < 200; ++i) {
    CHECK(known[4 * i] + known[4 * i + 1] + known[4 * i + 2] + known[4 * i + 3] ==
          Approx(1.0).margin(1e-13));
    const std::size_t top = static_cast<std::size_t>(
        std::max_element(rows.begin() + 4 * i, rows.begin() + 4 * i + 4) - rows.begin() - 4 * i);
    if (top != 2 && top != 3)
      CHECK(known[4 * i + 2] / known[4 * i + 3] ==
            Approx(std::exp(1.5) * rows[4 * i + 2] / rows[4 * i + 3]).epsilon(1e-12));
  }
  // Beyond the boundary knots the offset is the boundary coefficient (the clamped basis is one
  // B-spline alone there), equal to the spline evaluated at the knot itself.
  ClasswiseMap varied = known_map();
  for (std::size_t i = 0; i < varied.other.size(); ++i) varied.other[i] = 0.1 * double(i % 7);
  for (std::size_t r = 0; r < varied.other_shared.size(); ++r)
    varied.other_shared[r] = 0.3 - 0.1 * double(r);
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK(other_offset(varied, j, -40.0) ==
          Approx(other_offset(varied, j, -6.0 + 1e-12)).margin(1e-10));
    CHECK(other_offset(varied, j, 5.0) == Approx(other_offset(varied, j, -1e-12)).margin(1e-10));
  }
  // The generator's piecewise cubics are the same splines (to rounding) inside, at and beyond
  // the knots, and give the reference fill_other_classes.
  for (std::size_t i = 0; i < varied.top.size(); ++i) varied.top[i] = 0.05 * double(i % 5) - 0.1;
  const ClasswisePieces pieces(varied);
  for (double x = -45.0; x <= 8.0; x += 0.0625)
    for (std::size_t j = 0; j < 4; ++j) {
      CHECK(pieces.other_offset(j, x) == Approx(other_offset(varied, j, x)).margin(1e-13));
      CHECK(pieces.top_deviation(j, x) == Approx(top_deviation(varied, j, x)).margin(1e-13));
    }
  for (double knot : varied.other_knots)
    CHECK(pieces.other_offset(2, knot) == Approx(other_offset(varied, 2, knot)).margin(1e-13));
  for (std::size_t i = 0; i < 200; ++i) {
    std::vector<double> p(rows.begin() + 4 * i, rows.begin() + 4 * i + 4), log_p(4), a(4), b(4);
    for (std::size_t k = 0; k < 4; ++k) log_p[k] = std::log(p[k]);
    const auto top = static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
    fill_other_classes(varied, log_p, top, 0.7, std::log(0.3), a);
    pieces.fill_other_classes(p, log_p, top, 0.7, std::log(0.3), b);
    for (std::size_t k = 0; k < 4; ++k) CHECK(b[k] == Approx(a[k]).epsilon(1e-12));
  }
  ClasswiseMap bad = known_map();
  bad.top.pop_back();
  CHECK_THROWS_WITH(EmpiricalGenerator(spec_of(4, rows, 0.0, curve, bad)),
                    Catch::Contains("classwise top"));
  CHECK_THROWS_WITH(EmpiricalGenerator(spec_of(3, {0.5, 0.3, 0.2}, 0.0, curve, known_map())),
                    Catch::Contains("K = 4"));
}

TEST_CASE("classwise truth: known answers at h = 0", "[stat][classwise]") {
  // A finite population of rows whose values are far apart within every class: the classwise
  // calibration function at p_k is the row's own c_k, so classwise_ece_l1 =
  // (1/K) mean_i sum_k |c_ik - p_ik|, and with distinct confidences ece_top_l1 =
  // mean_i |c_top,i - z_i|. The engine's binned Monte Carlo must match within its error. Its
  // bins are 2^-5 wide in relative terms (truth/monte_carlo_core.hpp), so the rows are kept
  // only when every value (p_k, and min(z, 1 - z)) differs from every kept row's by a factor
  // of 1.1 at least: each row then has bins of its own.
  const std::vector<double> candidates = dirichlet_rows(400, 4);
  std::vector<double> rows;
  const auto apart = [](double a, double b) { return std::abs(std::log(a / b)) > std::log(1.1); };
  for (std::size_t i = 0; i < 400 && rows.size() < 4 * 60; ++i) {
    const double* r = candidates.data() + 4 * i;
    const double z = *std::max_element(r, r + 4);
    bool keep = z < 0.99;
    for (std::size_t j = 0; keep && j < rows.size() / 4; ++j) {
      const double* q = rows.data() + 4 * j;
      const double y = *std::max_element(q, q + 4);
      keep = apart(std::min(z, 1 - z), std::min(y, 1 - y));
      for (std::size_t k = 0; keep && k < 4; ++k) keep = apart(r[k], q[k]);
    }
    if (keep) rows.insert(rows.end(), r, r + 4);
  }
  const std::size_t n = rows.size() / 4;
  REQUIRE(n >= 8);
  const LogitSpline curve{{-1.0, 1.0, 3.0}, {0.2, -0.1, 0.3, 0.0, -0.4}};
  const Generator gen(spec_of(4, rows, 0.0, curve, known_map()));
  const auto c = calibrated_rows(std::get<EmpiricalGenerator>(gen.family_generator()));
  double classwise = 0.0, top = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t t = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      classwise += std::abs(c[4 * i + k] - rows[4 * i + k]) / 4.0;
      if (rows[4 * i + k] > rows[4 * i + t]) t = k;
    }
    top += std::abs(c[4 * i + t] - rows[4 * i + t]);
  }
  classwise /= static_cast<double>(n);
  top /= static_cast<double>(n);
  const GroundTruth truth = compute_truth(gen, TruthSettings{});
  INFO("classwise " << classwise << " vs " << truth[Quantity::classwise_ece_l1].value << " ± "
                    << truth[Quantity::classwise_ece_l1].error << "; top " << top << " vs "
                    << truth[Quantity::ece_top_l1].value);
  CHECK(std::abs(truth[Quantity::classwise_ece_l1].value - classwise) <=
        4.0 * truth[Quantity::classwise_ece_l1].error + 1e-12);
  CHECK(std::abs(truth[Quantity::ece_top_l1].value - top) <=
        4.0 * truth[Quantity::ece_top_l1].error + 1e-12);
}

TEST_CASE("classwise map: config round trip and errors at their JSON pointer",
          "[unit][classwise]") {
  const auto parse = [](const Json& generator, Problems& problems) {
    Json resolved;
    return parse_generator(generator, "/generator", problems, resolved);
  };
  Json g = {{"family", "empirical"},
            {"classes", 3},
            {"rows", {{0.7, 0.2, 0.1}, {0.2, 0.5, 0.3}, {0.1, 0.1, 0.8}}},
            {"bandwidth", 0.1},
            {"classwise",
             {{"top_knots", {0.0, 2.0}},
              {"top", {{0.1, 0.2, 0.3, 0.4}, {0, 0, 0, 0}, {-0.1, 0, 0, 0}}},
              {"other_knots", {-3.0, 0.0}},
              {"other_shared", {0.5, 0.5, 0.5, 0.5}},
              {"other", {{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 0, 0}}}}}};
  Problems ok;
  const auto parsed = parse(g, ok);
  INFO(join(ok.render("cfg"), "\n"));
  REQUIRE(parsed);
  const auto& spec = std::get<EmpiricalSpec>(parsed->spec);
  CHECK(spec.classwise.top.size() == 12);
  CHECK(spec.classwise.other[5] == 1.0);
  CHECK(Generator(spec).canonical_text().find("classwise:top_knots=0,2,") != std::string::npos);
  g["classwise"]["top"].erase(2);
  Problems bad;
  CHECK_FALSE(parse(g, bad));
  REQUIRE(bad.size() == 1);
  CHECK(bad.items()[0].pointer == "/generator/classwise/top");
}

TEST_CASE("fit_empirical recovers a known classwise map", "[stat][classwise][fit]") {
  // Labels drawn from a known map (known_map) on 6,000 Dirichlet rows at h = 0. The map fitted
  // must come closer to the true c on the rows than the top-label construction alone does (the
  // previous family), by half at least, and the fake's true classwise ECE must be within
  // 4 standard errors of the labels' own information about it (se below) of the true one.
  const std::size_t n = 6'000, K = 4;
  const std::vector<double> rows = dirichlet_rows(n, 5);
  const EmpiricalGenerator truth_gen(spec_of(K, rows, 0.0, {}, known_map()));
  const std::vector<double> c = calibrated_rows(truth_gen);
  std::vector<std::uint32_t> labels(n);
  Engine engine = make_engine({77, 0, 0, Purpose::labels});
  for (std::size_t i = 0; i < n; ++i)
    labels[i] = draw_categorical(engine, std::span<const double>(c.data() + i * K, K));
  const Sample data = make_sample(K, rows, labels);
  EmpiricalFitOptions with, without;
  without.classwise.enabled = false;
  const EmpiricalFit fit = fit_empirical(data, with), plain = fit_empirical(data, without);
  INFO("top " << fit.classwise.top_choice << ", other " << fit.classwise.other_choice);
  CHECK(fit.classwise.top_choice != "none");
  CHECK(fit.classwise.other_choice.find("classes") != std::string::npos);
  // Distances on the rows, the fakes evaluated at h = 0 (the map, not the smoothing).
  const auto at_rows = [&](const EmpiricalFit& f) {
    EmpiricalSpec s = f.spec;
    s.bandwidth = 0.0;
    const auto fitted = calibrated_rows(EmpiricalGenerator(s));
    double d = 0.0;
    for (std::size_t i = 0; i < n * K; ++i) d += std::abs(fitted[i] - c[i]);
    return d / static_cast<double>(n);
  };
  const double d_fit = at_rows(fit), d_plain = at_rows(plain);
  INFO("mean |c_fit - c|_1 " << d_fit << " against the top-label construction's " << d_plain);
  CHECK(d_fit < 0.5 * d_plain);
  // se of the classwise ECE from n labelled rows whose c is known: the influence function
  // (1/K) sum_k sign(c_k - p_k) (1{y = k} - c_k) (the |c - p| part is fixed at h = 0).
  double ss = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double v = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      const double gap = c[i * K + k] - rows[i * K + k];
      v += (gap > 0 ? 1.0 : -1.0) * ((labels[i] == k ? 1.0 : 0.0) - c[i * K + k]) / 4.0;
    }
    ss += v * v;
  }
  const double se = std::sqrt(ss / static_cast<double>(n) / static_cast<double>(n));
  EmpiricalSpec at_zero = fit.spec;
  at_zero.bandwidth = 0.0;
  const GroundTruth fitted_truth = compute_truth(Generator(at_zero), TruthSettings{});
  const GroundTruth true_truth = compute_truth(Generator(truth_gen.spec()), TruthSettings{});
  const TruthValue a = fitted_truth[Quantity::classwise_ece_l1],
                   b = true_truth[Quantity::classwise_ece_l1];
  INFO("classwise ECE: fake " << a.value << " ± " << a.error << ", true " << b.value << " ± "
                              << b.error << ", se " << se);
  CHECK(std::abs(a.value - b.value) <= 4.0 * se + 4.0 * (a.error + b.error));
}

TEST_CASE("fit_empirical: calibrated labels keep the classwise map near the identity",
          "[stat][classwise][fit]") {
  // Labels drawn from the rows' own probabilities (a calibrated model). Whatever the
  // cross-validation chooses, the fake's true classwise ECE at h = 0 stays within 4 standard
  // errors (as above, c = p) of 0.
  const std::size_t n = 5'000, K = 4;
  const std::vector<double> rows = dirichlet_rows(n, 6);
  std::vector<std::uint32_t> labels(n);
  Engine engine = make_engine({78, 0, 0, Purpose::labels});
  double ss = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    labels[i] = draw_categorical(engine, std::span<const double>(rows.data() + i * K, K));
    double v = 0.0;
    for (std::size_t k = 0; k < K; ++k)
      v += std::abs((labels[i] == k ? 1.0 : 0.0) - rows[i * K + k]) / 4.0;
    ss += v * v;
  }
  const double se = std::sqrt(ss / static_cast<double>(n) / static_cast<double>(n));
  const EmpiricalFit fit = fit_empirical(make_sample(K, rows, labels));
  EmpiricalSpec at_zero = fit.spec;
  at_zero.bandwidth = 0.0;
  const TruthValue cw =
      compute_truth(Generator(at_zero), TruthSettings{})[Quantity::classwise_ece_l1];
  INFO("top " << fit.classwise.top_choice << ", other " << fit.classwise.other_choice
              << ": classwise ECE " << cw.value << " ± " << cw.error << ", se " << se);
  CHECK(cw.value <= 4.0 * se + 4.0 * cw.error);
}

TEST_CASE("fit_empirical: the classwise map is the same on 1 and 2 threads", "[unit][classwise]") {
  const std::vector<double> rows = dirichlet_rows(3000, 8);
  std::vector<std::uint32_t> labels(3000);
  for (std::size_t i = 0; i < 3000; ++i) labels[i] = static_cast<std::uint32_t>((i * 7) % 4);
  const Sample data = make_sample(4, rows, labels);
  EmpiricalFit one, two;
  tbb::task_arena(1).execute([&] { one = fit_empirical(data); });
  tbb::task_arena(2).execute([&] { two = fit_empirical(data); });
  CHECK(canonical_text(one.spec.classwise) == canonical_text(two.spec.classwise));
  CHECK(!is_identity(one.spec.classwise));
}

TEST_CASE("judge_fit: a classwise miss is POOR on the classwise check, not on the top label",
          "[stat][classwise][fit]") {
  // The model: Dirichlet rows with the known map, its non-top shares moved strongly (class 2
  // e^2, class 3 e^-2). The fake: the same rows, the same top-label part, the non-top splines
  // removed: its top label behaves exactly as the model's (accuracy, confidence, ECE and
  // reliability curve agree in distribution), its classwise calibration does not. 5,000
  // held-out rows of the model, a fake fitted on 20,000: the 15-bin classwise ECE fails, the
  // top-label checks do not; the model judged against itself is GOOD.
  const std::vector<double> rows = dirichlet_rows(3000, 9);
  ClasswiseMap strong = known_map();
  const std::size_t mo = spline_basis_size(strong.other_knots.size());
  for (std::size_t r = 0; r < mo; ++r)
    strong.other[2 * mo + r] = 2.0, strong.other[3 * mo + r] = -2.0;
  ClasswiseMap top_only = strong;
  top_only.other_knots.clear();
  top_only.other_shared.clear();
  top_only.other.clear();
  const Generator model(spec_of(4, rows, 0.1, {}, strong));
  const Generator fake(spec_of(4, rows, 0.1, {}, top_only));
  const GroundTruth a = compute_truth(model, TruthSettings{}),
                    b = compute_truth(fake, TruthSettings{});
  INFO("classwise ECE: model " << a[Quantity::classwise_ece_l1].value << ", fake "
                               << b[Quantity::classwise_ece_l1].value);
  const BinnedEce top(BinnedEceSpec{15});
  BinnedEceSpec cw_spec{15};
  cw_spec.scope = Scope::classwise;
  const BinnedEce classwise(cw_spec);
  const std::vector<LabelledEstimator> estimators = {{"ece_15", &top}, {"cwece_15", &classwise}};
  VerdictSettings settings;
  settings.replicates = 200;
  settings.seed = 4;
  const Sample held_out = testing::draw(model.spec(), 5000, 12);
  const FitVerdict miss = judge_fit(fake, held_out, 20000, estimators, settings);
  CHECK_FALSE(miss.good);
  for (const auto& c : miss.checks) CHECK(c.fails == (c.name == "cwece_15"));
  const FitVerdict same = judge_fit(model, held_out, 20000, estimators, settings);
  CHECK(same.good);
}
