// Bootstrap percentile intervals and the consistency-resampling test (estimators/uncertainty):
// the formulas on hand-worked examples, the nominal coverage and size in a seeded simulation
// against the known truth, power against strong miscalibration, and the same bits for any
// thread count.
#include <tbb/global_control.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/corp.hpp"
#include "estimators/cumulative.hpp"
#include "estimators/interval_methods.hpp"
#include "estimators/proper_scores.hpp"
#include "estimators/uncertainty.hpp"
#include "experiment/experiment.hpp"
#include "generator_draws.hpp"
#include "scenarios/estimator_bias/run.hpp"
#include "scenarios/registry.hpp"

namespace {

using namespace calbench;
using OJ = nlohmann::ordered_json;

Sample small_sample() {
  // K = 3, 6 rows, mixed correct and wrong.
  return make_sample(3,
                     {0.7, 0.2, 0.1, 0.1, 0.8, 0.1, 0.3, 0.3, 0.4, 0.5, 0.25, 0.25, 0.2, 0.2, 0.6,
                      0.9, 0.05, 0.05},
                     {0, 1, 0, 2, 2, 0});
}

TEST_CASE("type-7 quantile and the consistency p-value by hand", "[unit]") {
  std::vector<double> v = {4.0, 1.0, 3.0, 2.0};
  // h = 0.25 * 3 = 0.75: 1 + 0.75 (2 - 1).
  CHECK(quantile_type7(v, 0.25) == Approx(1.75).epsilon(1e-15));
  CHECK(quantile_type7(v, 0.0) == 1.0);
  CHECK(quantile_type7(v, 1.0) == 4.0);
  // Two estimators, R = 3: values[b * 2 + e]. Estimator 0 observed 0.3: T* = 0.1, 0.5, 0.3,
  // two at or above (ties count), p = (1 + 2) / (1 + 3).
  const std::vector<double> values = {0.1, 9.0, 0.5, 9.0, 0.3, 9.0};
  const std::vector<double> observed = {0.3, 10.0};
  const auto p = consistency_p_values(values, observed);
  CHECK(p[0] == 0.75);
  CHECK(p[1] == 0.25);
  // Percentile interval of R = 5 values at level 0.5: type-7 quantiles at 0.25 and 0.75.
  const std::vector<double> five = {5.0, 1.0, 4.0, 2.0, 3.0};
  const auto ci = percentile_intervals(five, 1, 0.5);
  CHECK(ci[0].lo == 2.0);
  CHECK(ci[0].hi == 4.0);
}

TEST_CASE("consistency resampling draws labels from p", "[unit]") {
  // One-hot rows: every redrawn label is the row's class, so accuracy is exactly 1.
  const Sample s = make_sample(3, {1, 0, 0, 0, 0, 1, 0, 1, 0}, {1, 1, 1});
  const AccuracyEstimator accuracy;
  const std::vector<const Estimator*> estimators = {&accuracy};
  ResampleWorkspace ws;
  const auto values = consistency_values(s, estimators, {1, 2, 3}, 20, Execution::serial, ws);
  for (double v : values) CHECK(v == 1.0);
}

TEST_CASE("bootstrap and consistency values are the same bits serially and on 1 or 2 threads",
          "[unit]") {
  const Sample s = small_sample();
  const BinnedEce ece(BinnedEceSpec{});
  const AccuracyEstimator accuracy;
  const std::vector<const Estimator*> estimators = {&ece, &accuracy};
  ResampleWorkspace ws;
  const ResampleKey key{42, 0, 7};
  const auto serial_b = bootstrap_values(s, estimators, key, 300, Execution::serial, ws);
  const auto serial_c = consistency_values(s, estimators, key, 300, Execution::serial, ws);
  for (std::size_t threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    CHECK(bootstrap_values(s, estimators, key, 300, Execution::parallel, ws) == serial_b);
    CHECK(consistency_values(s, estimators, key, 300, Execution::parallel, ws) == serial_c);
  }
  // Another replicate key gives other resamples.
  CHECK(bootstrap_values(s, estimators, {42, 0, 8}, 300, Execution::serial, ws) != serial_b);
}

// The labels of a resample, folded into one number that changes with any of them.
class LabelDigest final : public Estimator {
 public:
  double estimate(const Sample& s, EstimatorWorkspace&) const override {
    double digest = 0.0;
    for (std::size_t i = 0; i < s.size; ++i)
      digest += static_cast<double>(s.label[i] + 1) * static_cast<double>(i + 1) * 1e-3;
    return digest;
  }
  std::optional<Quantity> target() const override { return std::nullopt; }
};

// The redraws (uncertainty.cpp: running sums formed once, the predicted class tested first,
// else a binary search) against the inverse-CDF walk of uncertainty.hpp written out: rows with
// zeros before and after the predicted class, a tie, a predicted class last, and a row whose
// sum rounds below 1 (then u can pass every running sum and the last class with p > 0 is taken).
TEST_CASE("label redraws are the inverse-CDF walk's classes", "[unit]") {
  const double third = 1.0 / 3.0;
  const Sample s =
      make_sample(4, {0.0,   0.7,   0.0,   0.3, 0.25, 0.25, 0.25, 0.25, 0.1,  0.2,  0.3,  0.4,
                      third, third, third, 0.0, 0.0,  0.0,  0.0,  1.0,  0.05, 0.05, 0.05, 0.85},
                  {1, 2, 3, 0, 3, 2});
  const LabelDigest digest;
  const std::vector<const Estimator*> estimators = {&digest};
  const ResampleKey key{9, 1, 2};
  constexpr std::size_t R = 500;
  ResampleWorkspace ws;
  const auto values = consistency_values(s, estimators, key, R, Execution::serial, ws);
  for (std::size_t b = 0; b < R; ++b) {
    Engine engine = make_engine(resample_key(key, b, Purpose::labels));
    Sample walked = s;
    for (std::size_t i = 0; i < s.size; ++i) {
      const double u = uniform_open01(engine);
      double cumulative = 0.0;
      std::size_t y = s.classes, last_positive = 0;
      for (std::size_t k = 0; k < s.classes; ++k) {
        if (s.p[i * s.classes + k] > 0.0) last_positive = k;
        cumulative += s.p[i * s.classes + k];
        if (u < cumulative) {
          y = k;
          break;
        }
      }
      walked.label[i] = static_cast<std::uint32_t>(y < s.classes ? y : last_positive);
    }
    EstimatorWorkspace unused;
    INFO("resample " << b);
    REQUIRE(values[b] == digest.estimate(walked, unused));
  }
  // A serial workspace that redrew another sample's labels starts afresh.
  const Sample other = make_sample(2, {0.9, 0.1, 0.4, 0.6}, {0, 0});
  consistency_values(other, estimators, key, 3, Execution::serial, ws);
  CHECK(consistency_values(s, estimators, key, R, Execution::serial, ws) == values);
}

// Two cells: calibrated (temperature 1) and strongly overconfident (temperature 0.4).
OJ interval_experiment() {
  return OJ::parse(R"({
    "name": "intervals",
    "scenario": "estimator_bias",
    "seed": 2024,
    "replicates": 400,
    "sample_size": 200,
    "generator": {"family": "dirichlet", "classes": 3, "alpha": 1.0,
                  "miscalibration": {"map": "temperature", "temperature": 1.0}},
    "estimators": [{"name": "accuracy"}, {"name": "ece", "bins": 10}],
    "truth": {"samples": 20000},
    "intervals": {"resamples": 200, "level": 0.9, "test_level": 0.05},
    "sweep": {"generator.miscalibration.temperature": [1.0, 0.4]}
  })");
}

TEST_CASE("bootstrap coverage is nominal and the consistency test has its size and power",
          "[stat]") {
  const auto config =
      parse_experiment_as<EstimatorBiasConfig>(interval_experiment(), "intervals.json");
  REQUIRE(config.intervals);
  const EstimatorBiasResults r = run_estimator_bias(config, {});
  REQUIRE(r.records.size() == 2);
  const auto& calibrated = r.records[0];
  const auto& overconfident = r.records[1];
  const double R = 400.0;
  // The accuracy is a mean of 0/1 outcomes; its percentile interval at n = 200 covers the true
  // accuracy at close to 0.90. Tolerance: 3 binomial SE at the nominal rate.
  const auto& acc = calibrated.estimators[0];
  REQUIRE(acc.coverage);
  const double se_cov = std::sqrt(0.9 * 0.1 / R);
  INFO("coverage " << *acc.coverage << " +- " << *acc.coverage_se);
  CHECK(std::fabs(*acc.coverage - 0.9) < 3 * se_cov);
  // Under calibration the consistency p-value of the ECE is uniform (up to the 1/(R+1) grid):
  // rejection at 0.05 within 4 SE of 0.05.
  const auto& ece = calibrated.estimators[1];
  REQUIRE(ece.rejection_rate);
  INFO("size " << *ece.rejection_rate);
  CHECK(std::fabs(*ece.rejection_rate - 0.05) < 4 * std::sqrt(0.05 * 0.95 / R));
  // Temperature 0.4 is strongly overconfident: the test rejects almost always.
  INFO("power " << *overconfident.estimators[1].rejection_rate);
  CHECK(*overconfident.estimators[1].rejection_rate > 0.95);
}

TEST_CASE("intervals: same bits on 1 and 2 threads", "[e2e]") {
  OJ doc = interval_experiment();
  doc["replicates"] = 20;
  doc["intervals"]["resamples"] = 50;
  const auto config = parse_experiment_as<EstimatorBiasConfig>(doc, "intervals.json");
  std::vector<double> first;
  for (std::size_t threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const EstimatorBiasResults r = run_estimator_bias(config, {});
    std::vector<double> flat;
    for (const auto& c : r.records)
      for (const auto& e : c.estimators) {
        flat.push_back(e.rejection_rate.value_or(-1.0));
        flat.push_back(e.coverage.value_or(-1.0));
      }
    if (first.empty())
      first = flat;
    else
      CHECK(flat == first);
  }
}

TEST_CASE("intervals: bad values are config errors at their pointer", "[unit]") {
  OJ doc = interval_experiment();
  doc["intervals"] = OJ::parse(R"({"resamples": 0, "level": 1.5, "test_level": "x", "extra": 1})");
  try {
    (void)parse_experiment(doc, "bad.json");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& error) {
    const auto& p = error.problems();
    const auto has = [&](const std::string& text) {
      for (const auto& line : p)
        if (line.find(text) != std::string::npos) return true;
      return false;
    };
    CHECK(has("/intervals/resamples"));
    CHECK(has("/intervals/level"));
    CHECK(has("/intervals/test_level"));
    CHECK(has("/intervals/extra: unknown key"));
  }
}

}  // namespace

namespace {

// An estimator computed as `inner` is, without its FixedTopLabelBins: resampling then builds
// every resample and calls estimate() on it (uncertainty.cpp's general path).
class WithoutBinSums final : public Estimator {
 public:
  explicit WithoutBinSums(const Estimator& inner) : inner_(&inner) {}
  double estimate(const Sample& s, EstimatorWorkspace& ws) const override {
    return inner_->estimate(s, ws);
  }
  std::optional<Quantity> target() const override { return inner_->target(); }
  // Its bias model, not its bin sums.
  Capabilities capabilities() const override {
    return {.bias_model = inner_->capabilities().bias_model};
  }

 private:
  const Estimator* inner_;
};

}  // namespace

TEST_CASE("resampling from bin sums gives the bits of the built resamples", "[unit]") {
  // A K = 10 model's rows, and rows made to meet every corner: confidences on bin edges
  // (k/15, 1/3 shared by 15 and 6 bins), rows summing to 1 - 1e-4 (the label redraw then
  // falls past the last running sum for some u, and takes the last class with p > 0, which
  // is the predicted one in some rows and not in others), and zeros.
  const DirichletSpec spec{10, std::vector<double>(10, 0.5), TemperatureMap{0.7}};
  const Sample model = testing::draw(spec, 700, 11);
  std::vector<double> p;
  std::vector<std::uint32_t> labels;
  for (std::size_t i = 0; i < 300; ++i) {
    const double top = i % 3 == 0   ? static_cast<double>(5 + i % 11) / 15.0
                       : i % 3 == 1 ? 1.0 / 3.0 + 0.01 * static_cast<double>(i % 7)
                                    : 0.4;
    const double missing = i % 2 == 0 ? 1e-4 : 0.0;
    const double rest = 1.0 - top - missing;
    // Class 0 the top one, or the last with p > 0 (class 2, with class 3 at 0).
    if (i % 4 < 2)
      p.insert(p.end(), {top, rest * 0.7, rest * 0.3, 0.0});
    else
      p.insert(p.end(), {rest * 0.3, rest * 0.3, top, 0.0});
    labels.push_back(static_cast<std::uint32_t>(i % 3));
  }
  const Sample corners = make_sample(4, p, labels);

  const BinnedEce ece(BinnedEceSpec{}), ece6({.bins = 6});
  const BinnedEce l2({.norm = Norm::l2}), max({.norm = Norm::max});
  const FiniteSampleBias beta(ece), beta6(ece6);
  // Only these variants have bin sums (equal-mass bins move with the rows).
  const auto bin_sums = [](const Estimator& e) { return e.capabilities().fixed_top_label_bins; };
  CHECK(bin_sums(ece) != nullptr);
  CHECK(bin_sums(beta) != nullptr);
  CHECK(bin_sums(BinnedEce({.binning = Binning::equal_mass})) == nullptr);
  CHECK(bin_sums(BinnedEce({.scope = Scope::classwise})) == nullptr);
  CHECK(bin_sums(BinnedEce({.debiased = true})) == nullptr);
  CHECK(bin_sums(BinnedEce({.norm = Norm::average})) == nullptr);

  const WithoutBinSums ece_w(ece), ece6_w(ece6), l2_w(l2), max_w(max);
  const FiniteSampleBias beta_w(ece_w), beta6_w(ece6_w);
  const std::vector<const Estimator*> fast = {&ece, &beta, &ece6, &beta6, &l2, &max, &ece};
  const std::vector<const Estimator*> built = {&ece_w, &beta_w, &ece6_w, &beta6_w,
                                               &l2_w,  &max_w,  &ece_w};
  for (const Sample* s : {&model, &corners}) {
    ResampleWorkspace ws;
    const ResampleKey key{5, 1, 3};
    const auto b_fast = bootstrap_values(*s, fast, key, 200, Execution::serial, ws);
    const auto b_built = bootstrap_values(*s, built, key, 200, Execution::serial, ws);
    CHECK(b_fast == b_built);
    const auto c_fast = consistency_values(*s, fast, key, 200, Execution::serial, ws);
    const auto c_built = consistency_values(*s, built, key, 200, Execution::serial, ws);
    CHECK(c_fast == c_built);
    // Not a constant: the resamples differ and the bias is not 0.
    CHECK(b_fast[0] != b_fast[7]);
    CHECK(c_fast[0] != c_fast[7]);
    CHECK(b_fast[1] != 0.0);
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    CHECK(bootstrap_values(*s, fast, key, 200, Execution::parallel, ws) == b_fast);
    CHECK(consistency_values(*s, fast, key, 200, Execution::parallel, ws) == c_fast);
  }
}

namespace {

// The estimator it wraps, without its ConfidenceOrdered: it sorts every resample itself.
class WithoutOrder final : public Estimator {
 public:
  explicit WithoutOrder(const Estimator& inner) : inner_(&inner) {}
  double estimate(const Sample& s, EstimatorWorkspace& ws) const override {
    return inner_->estimate(s, ws);
  }
  std::optional<Quantity> target() const override { return inner_->target(); }

 private:
  const Estimator* inner_;
};

}  // namespace

TEST_CASE("resamples with a known confidence order give the values of sorting them", "[unit]") {
  // ks, kuiper and CORP read the order the resampler builds in O(n) (uncertainty.cpp) instead
  // of sorting each resample. Without ties between rows of different outcomes the values are
  // the same bits; with them (rounded confidences) only the order of adding tied rows differs.
  const DirichletSpec spec{10, std::vector<double>(10, 0.5), TemperatureMap{0.7}};
  const Sample model = testing::draw(spec, 700, 12);
  std::vector<double> p;
  for (std::size_t i = 0; i < model.size; ++i) {  // confidences rounded to 2 decimals
    const double top = std::round(model.confidence[i] * 100.0) / 100.0;
    const double rest = (1.0 - top) / 2.0;
    p.insert(p.end(), {top, rest, rest});
  }
  std::vector<std::uint32_t> labels(model.size);
  for (std::size_t i = 0; i < labels.size(); ++i)
    labels[i] = model.correct(i) ? 0 : static_cast<std::uint32_t>(1 + i % 2);
  const Sample tied = make_sample(3, p, labels);

  const CumulativeCalibration ks({.statistic = CumulativeStatistic::ks});
  const CumulativeCalibration kuiper({.statistic = CumulativeStatistic::kuiper});
  const CumulativeCalibration kuiper_p({.test = {.output = TestOutput::p_value}});
  const Corp corp({}), corp_log({.score = CorpScore::log});
  const BinnedEce ece(BinnedEceSpec{});  // no order: evaluated between the others
  const auto order_of = [](const Estimator& e) { return e.capabilities().confidence_order; };
  CHECK(order_of(ks) != nullptr);
  CHECK(order_of(corp) != nullptr);
  CHECK(order_of(ece) == nullptr);
  CHECK(order_of(Corp({.scope = Scope::binary})) == nullptr);
  const WithoutOrder ks_w(ks), kuiper_w(kuiper), kuiper_p_w(kuiper_p), corp_w(corp),
      corp_log_w(corp_log);
  const std::vector<const Estimator*> ordered = {&ks, &ece, &kuiper, &kuiper_p, &corp, &corp_log};
  const std::vector<const Estimator*> sorting = {&ks_w,       &ece,    &kuiper_w,
                                                 &kuiper_p_w, &corp_w, &corp_log_w};
  const ResampleKey key{9, 0, 2};
  for (const Sample* s : {&model, &tied}) {
    ResampleWorkspace ws;
    const bool exact = s == &model;
    const auto same = [&](const std::vector<double>& a, const std::vector<double>& b) {
      REQUIRE(a.size() == b.size());
      if (exact) {
        CHECK(a == b);
        return;
      }
      for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(a[i] == Approx(b[i]).epsilon(1e-12).margin(1e-15));
    };
    const auto b_ordered = bootstrap_values(*s, ordered, key, 100, Execution::serial, ws);
    same(b_ordered, bootstrap_values(*s, sorting, key, 100, Execution::serial, ws));
    same(consistency_values(*s, ordered, key, 100, Execution::serial, ws),
         consistency_values(*s, sorting, key, 100, Execution::serial, ws));
    same(jackknife_values(*s, ordered, 30, Execution::serial, ws),
         jackknife_values(*s, sorting, 30, Execution::serial, ws));
    CHECK(b_ordered[0] != b_ordered[6]);  // not a constant
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    CHECK(bootstrap_values(*s, ordered, key, 100, Execution::parallel, ws) == b_ordered);
  }
}
