// End to end: the estimator_bias scenario from a parsed config to its result files. The
// numbers do not depend on the thread count, the summary statistics are the ones DESIGN.md §4
// names, the files are a pure function of the results, and on a calibrated generator the
// unbiased estimators are unbiased.
#include <tbb/global_control.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/common.hpp"
#include "scenarios/estimator_bias/run.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/results.hpp"
#include "temp_files.hpp"

namespace {

using ExperimentConfig = calbench::EstimatorBiasConfig;
using ResultSet = calbench::EstimatorBiasResults;
using OJ = nlohmann::ordered_json;
namespace fs = std::filesystem;

// K = 4, two cells (temperature 0.7 and 1.3), small replicates: a few tenths of a second.
// The estimators cover every target kind, including ECE with norm max, which has none.
OJ small_experiment() {
  return OJ::parse(R"({
    "name": "e2e",
    "scenario": "estimator_bias",
    "seed": 12345,
    "replicates": 30,
    "sample_size": 250,
    "generator": {"family": "dirichlet", "classes": 4, "alpha": 0.7,
                  "miscalibration": {"map": "temperature", "temperature": 0.7}},
    "estimators": [
      {"name": "ece"},
      {"name": "ece", "bins": 10, "binning": "equal_mass", "norm": "l2"},
      {"name": "ece", "norm": "max"},
      {"name": "brier"}, {"name": "nll"}, {"name": "accuracy"}
    ],
    "truth": {"samples": 20000},
    "sweep": {"generator.miscalibration.temperature": [0.7, 1.3]},
    "output": {"replicate_values": true}
  })");
}

ResultSet run_with_threads(const ExperimentConfig& config, std::size_t threads) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  return calbench::run_estimator_bias(config, {});
}

ExperimentConfig parse(const OJ& document, const std::string& source) {
  return calbench::parse_experiment_as<ExperimentConfig>(document, source);
}

void write_results(const ResultSet& results, const ExperimentConfig& config,
                   const calbench::RunInfo& info, const fs::path& out) {
  calbench::write_results(calbench::module_of(config), results, config.resolved, info, out);
}

using calbench::testing::read_text;
using calbench::testing::TempDir;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The lines of a CSV result file: the header line first, no comment lines (docs/config.md).
std::vector<std::string> table_lines_of(const std::string& text) {
  auto lines = lines_of(text);
  REQUIRE(!lines.empty());
  for (const auto& line : lines) CHECK(line.rfind('#', 0) != 0);
  return lines;
}

std::vector<std::string> split_csv_header(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');) out.push_back(field);
  return out;
}

const calbench::TruthValue& truth_of(const calbench::EstimatorBiasCellRecord& cell,
                                     const std::string& q) {
  const auto it = std::find_if(
      cell.cell.truth.begin(), cell.cell.truth.end(),
      [&](const calbench::TruthRecord& t) { return calbench::to_string(t.quantity) == q; });
  REQUIRE(it != cell.cell.truth.end());
  return it->value;
}

const calbench::EstimatorRecord& estimator_of(const calbench::EstimatorBiasCellRecord& cell,
                                              const std::string& label) {
  const auto it =
      std::find_if(cell.estimators.begin(), cell.estimators.end(),
                   [&](const calbench::EstimatorRecord& e) { return e.label == label; });
  REQUIRE(it != cell.estimators.end());
  return *it;
}

calbench::RunInfo some_run_info(double seconds) {
  calbench::RunInfo info;
  info.started_utc = "2026-01-01T00:00:00Z";
  info.seconds = seconds;
  info.host = "test";
  info.threads = 1;
  info.compiler = "test";
  info.libraries = "test";
  return info;
}

}  // namespace

TEST_CASE("estimator_bias gives the same bits on 1 and 2 threads", "[e2e]") {
  const ExperimentConfig config = parse(small_experiment(), "e2e.json");
  REQUIRE(config.cells.size() == 2);
  const ResultSet a = run_with_threads(config, 1);
  const ResultSet b = run_with_threads(config, 2);

  REQUIRE(a.records.size() == 2);
  REQUIRE(b.records.size() == 2);
  CHECK(a.meta.config_hash == b.meta.config_hash);
  for (std::size_t c = 0; c < a.records.size(); ++c) {
    const auto& ca = a.records[c];
    const auto& cb = b.records[c];
    INFO("cell " << c);
    REQUIRE(ca.cell.truth.size() == cb.cell.truth.size());
    for (std::size_t q = 0; q < ca.cell.truth.size(); ++q) {
      INFO("truth " << calbench::to_string(ca.cell.truth[q].quantity));
      REQUIRE(ca.cell.truth[q].value.value == cb.cell.truth[q].value.value);
      REQUIRE(ca.cell.truth[q].value.error == cb.cell.truth[q].value.error);
    }
    REQUIRE(ca.estimators.size() == 6);
    REQUIRE(cb.estimators.size() == 6);
    for (std::size_t e = 0; e < ca.estimators.size(); ++e) {
      const auto& ea = ca.estimators[e];
      const auto& eb = cb.estimators[e];
      INFO("estimator " << ea.label);
      REQUIRE(ea.label == eb.label);
      REQUIRE(ea.mean == eb.mean);
      REQUIRE(ea.sd == eb.sd);
      REQUIRE(ea.bias == eb.bias);
      REQUIRE(ea.rmse == eb.rmse);
      REQUIRE(ea.se_bias == eb.se_bias);
    }
    REQUIRE(ca.replicate_values == cb.replicate_values);
  }
}

TEST_CASE("progress is reported once per task, ending at the total", "[e2e]") {
  const ExperimentConfig config = parse(small_experiment(), "e2e.json");
  std::atomic<std::size_t> calls{0}, highest{0}, total_seen{0};
  calbench::RunControl control;
  control.progress = [&](std::size_t done, std::size_t total) {
    ++calls;
    total_seen = total;
    std::size_t h = highest.load();
    while (done > h && !highest.compare_exchange_weak(h, done)) {
    }
  };
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
  const auto values = calbench::simulate_estimates(config, control);
  const std::size_t tasks = 2 * 30;
  CHECK(calls == tasks);
  CHECK(highest == tasks);
  CHECK(total_seen == tasks);
  REQUIRE(values.size() == 2);
  CHECK(values[0].size() == 30 * 6);
}

TEST_CASE("the summary statistics are the ones DESIGN.md §4 defines", "[e2e]") {
  const ExperimentConfig config = parse(small_experiment(), "e2e.json");
  const ResultSet results = run_with_threads(config, 2);
  REQUIRE(results.records.size() == 2);
  for (const auto& cell : results.records) {
    INFO("cell " << cell.cell.index);
    const std::size_t R = cell.cell.replicates;
    REQUIRE(R == 30);
    REQUIRE(cell.cell.truth.size() == calbench::all_quantities.size());
    REQUIRE(cell.replicate_values.size() == R);
    for (std::size_t e = 0; e < cell.estimators.size(); ++e) {
      const auto& est = cell.estimators[e];
      INFO("estimator " << est.label);
      CHECK(est.replicates == R);

      // mean and sd agree with a plain two-pass computation over the stored replicates.
      double sum = 0.0;
      for (std::size_t r = 0; r < R; ++r) sum += cell.replicate_values[r][e];
      const double mean = sum / static_cast<double>(R);
      double ss = 0.0;
      for (std::size_t r = 0; r < R; ++r)
        ss += (cell.replicate_values[r][e] - mean) * (cell.replicate_values[r][e] - mean);
      CHECK(est.mean == Approx(mean).epsilon(1e-12));
      CHECK(est.sd == Approx(std::sqrt(ss / static_cast<double>(R - 1))).epsilon(1e-10));

      REQUIRE(est.truth);
      REQUIRE(est.bias);
      REQUIRE(est.rmse);
      REQUIRE(est.se_bias);
      const double Rd = static_cast<double>(R);
      if (calbench::target_name(est) == "own") {
        // No target quantity: bias against the estimator's own population value, whose
        // error joins the standard error of the bias.
        REQUIRE(est.population);
        CHECK(*est.truth == *est.population);
        CHECK(*est.se_bias ==
              Approx(std::hypot(est.sd / std::sqrt(Rd), *est.population_error)).epsilon(1e-12));
      } else {
        CHECK(*est.truth == truth_of(cell, calbench::target_name(est)).value);
        CHECK(*est.se_bias == est.sd / std::sqrt(Rd));
        if (est.population) {  // bias = binning bias + finite-sample bias
          REQUIRE(est.binning_bias);
          REQUIRE(est.finite_sample_bias);
          CHECK(*est.binning_bias == *est.population - *est.truth);
          CHECK(*est.finite_sample_bias == est.mean - *est.population);
          CHECK(*est.binning_bias + *est.finite_sample_bias == Approx(*est.bias).margin(1e-15));
        }
      }
      CHECK(*est.bias == est.mean - *est.truth);
      // mean((x - t)^2) = (mean - t)^2 + ((R - 1)/R) sd^2, the bias-variance split of the MSE.
      const double mse = *est.bias * *est.bias + est.sd * est.sd * (Rd - 1.0) / Rd;
      CHECK(*est.rmse * *est.rmse == Approx(mse).epsilon(1e-12));
    }
    // ECE with norm max (MCE) has no target quantity: its bias is against its own population
    // value. The binned L1 ECE has a population value and a binning bias; Brier has neither.
    CHECK(calbench::target_name(estimator_of(cell, "ece_ew15_max")) == "own");
    CHECK(estimator_of(cell, "ece_ew15").binning_bias);
    CHECK(!estimator_of(cell, "brier").population);
    CHECK(calbench::target_name(estimator_of(cell, "ece_ew15")) == "ece_top_l1");
    CHECK(calbench::target_name(estimator_of(cell, "ece_em10_l2")) == "ece_top_l2");
    CHECK(calbench::target_name(estimator_of(cell, "brier")) == "brier");
  }
}

TEST_CASE("write_results writes every file, as a pure function of the results", "[e2e]") {
  const ExperimentConfig config = parse(small_experiment(), "e2e.json");
  const ResultSet results = run_with_threads(config, 2);
  TempDir dir;
  const fs::path out = dir.path / "run";
  write_results(results, config, some_run_info(1.5), out);

  for (const char* name :
       {"config.resolved.json", "summary.json", "cells.csv", "replicates.csv", "run.json"}) {
    INFO(name);
    CHECK(fs::is_regular_file(out / name));
  }
  for (const auto& entry : fs::directory_iterator(out))
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);

  const std::string summary_text = read_text(out / "summary.json");
  const auto summary = nlohmann::json::parse(summary_text);
  CHECK(summary["meta"]["schema_version"] == 1);
  CHECK(summary["meta"]["name"] == "e2e");
  CHECK(summary["meta"]["seed"] == 12345);
  REQUIRE(summary["cells"].size() == 2);
  const auto& truth = summary["cells"][0]["truth"];
  CHECK(truth.size() == calbench::all_quantities.size());
  for (const auto q : calbench::all_quantities) {
    const std::string name(calbench::to_string(q));
    INFO(name);
    REQUIRE(truth.contains(name));
    CHECK(truth[name]["value"].is_number());
    CHECK(truth[name]["method"].is_string());
    CHECK(truth[name]["error"].is_number());
  }
  const auto& ests = summary["cells"][0]["estimators"];
  // MCE: bias against its own population value, which the summary carries.
  CHECK(ests["ece_ew15_max"]["target"] == "own");
  CHECK(ests["ece_ew15_max"]["bias"].is_number());
  CHECK(ests["ece_ew15_max"]["population"]["samples"] == 125000);
  CHECK(ests["ece_ew15"]["binning_bias"].is_number());
  CHECK(ests["brier"]["population"].is_null());
  CHECK(ests["brier"]["target"] == "brier");
  CHECK(summary["cells"][1]["parameters"]["generator.miscalibration.temperature"] == 1.3);

  const auto resolved = nlohmann::json::parse(read_text(out / "config.resolved.json"));
  CHECK(resolved["calbench"]["version"].is_string());
  CHECK(resolved["output"]["replicate_values"] == true);

  // cells.csv: a header and one row per (cell, estimator); its column names are unique.
  const auto cells_lines = table_lines_of(read_text(out / "cells.csv"));
  CHECK(cells_lines.size() == 1 + 2 * 6);
  auto header = split_csv_header(cells_lines.at(0));
  CHECK(header.front() == "cell");
  CHECK(header.at(1) == "generator.miscalibration.temperature");
  std::sort(header.begin(), header.end());
  CHECK(std::adjacent_find(header.begin(), header.end()) == header.end());
  // replicates.csv: a header and one row per (cell, replicate, estimator).
  CHECK(table_lines_of(read_text(out / "replicates.csv")).size() == 1 + 2 * 30 * 6);

  // Again, with other volatile facts: everything but run.json is unchanged.
  const std::string cells_text = read_text(out / "cells.csv");
  const std::string run_text = read_text(out / "run.json");
  write_results(results, config, some_run_info(99.0), out);
  CHECK(read_text(out / "summary.json") == summary_text);
  CHECK(read_text(out / "cells.csv") == cells_text);
  CHECK(read_text(out / "run.json") != run_text);

  // Without replicate values, no replicates.csv.
  const fs::path lean = dir.path / "lean";
  ResultSet without = results;
  without.replicate_values = false;
  write_results(without, config, some_run_info(1.5), lean);
  CHECK(!fs::exists(lean / "replicates.csv"));
  CHECK(read_text(lean / "summary.json") == summary_text);
}

TEST_CASE("cells.csv has one column per parameter when sample_size is swept", "[e2e]") {
  OJ document = small_experiment();
  document["replicates"] = 3;
  document["sample_size"] = 50;
  document["sweep"] = OJ::parse(R"({"sample_size": [50, 60], "replicates": [2, 3]})");
  const ExperimentConfig config = parse(document, "e2e.json");
  REQUIRE(config.cells.size() == 4);
  const ResultSet results = run_with_threads(config, 2);
  TempDir dir;
  write_results(results, config, some_run_info(1.0), dir.path);
  const auto lines = table_lines_of(read_text(dir.path / "cells.csv"));
  REQUIRE(lines.size() == 1 + 4 * 6);
  auto header = split_csv_header(lines[0]);
  const auto columns = header.size();
  std::sort(header.begin(), header.end());
  CHECK(std::adjacent_find(header.begin(), header.end()) == header.end());
  CHECK(std::count(header.begin(), header.end(), "sample_size") == 1);
  CHECK(std::count(header.begin(), header.end(), "replicates") == 1);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(split_csv_header(lines[i]).size() + (lines[i].back() == ',' ? 1 : 0) == columns);
  }
  // Row of cell 3 (sample_size 60, replicates 3): the fixed columns carry the swept values.
  CHECK(lines.back().rfind("3,60,3,accuracy,", 0) == 0);
}

TEST_CASE("on a calibrated generator the unbiased estimators are unbiased", "[e2e][stat]") {
  // Identity map, K = 3, alpha = 1 (c uniform on the simplex). Known answers:
  //   accuracy = E[max c] = (1/K) sum_{k<=K} 1/k = 11/18 (expected largest uniform spacing,
  //     David & Nagaraja, Order Statistics, 3rd ed., §6.4);
  //   Brier = 1 - sum a_k (a_k + 1) / (a_0 (a_0 + 1)) = 1 - 6/12 = 1/2;
  //   NLL = -sum (a_k/a_0) (psi(a_k + 1) - psi(a_0 + 1)) = psi(4) - psi(2) = 1/2 + 1/3 = 5/6.
  // Brier, NLL and accuracy are sample means of i.i.d. per-row terms, so E[estimate] = truth
  // exactly; with 200 replicates the mean is within 4 standard errors of the truth except
  // with probability 6e-5 per estimator (normal approximation), 2e-4 for the three.
  OJ document = OJ::parse(R"({
    "name": "calibrated",
    "scenario": "estimator_bias",
    "seed": 2026,
    "replicates": 200,
    "sample_size": 2000,
    "generator": {"family": "dirichlet", "classes": 3, "alpha": 1,
                  "miscalibration": {"map": "identity"}},
    "estimators": [{"name": "ece"}, {"name": "brier"}, {"name": "nll"}, {"name": "accuracy"}]
  })");
  const ExperimentConfig config = parse(document, "calibrated.json");
  const ResultSet results = run_with_threads(config, 2);
  REQUIRE(results.records.size() == 1);
  const auto& cell = results.records[0];

  const auto& ece_truth = truth_of(cell, "ece_top_l1");
  CHECK(ece_truth.value == 0.0);
  CHECK(ece_truth.method == calbench::TruthMethod::closed_form);
  CHECK(truth_of(cell, "brier").value == Approx(0.5).epsilon(1e-14));
  CHECK(truth_of(cell, "brier").method == calbench::TruthMethod::closed_form);
  CHECK(truth_of(cell, "nll").value == Approx(5.0 / 6.0).epsilon(1e-14));
  CHECK(truth_of(cell, "accuracy").value == Approx(11.0 / 18.0).epsilon(1e-10));

  for (const char* label : {"brier", "nll", "accuracy"}) {
    const auto& est = estimator_of(cell, label);
    INFO(label << ": mean " << est.mean << ", truth " << *est.truth << ", bias " << *est.bias
               << ", se " << *est.se_bias);
    REQUIRE(est.se_bias);
    CHECK(*est.se_bias > 0.0);
    CHECK(std::abs(*est.bias) < 4.0 * *est.se_bias);
  }
  // The binned ECE of a calibrated model is biased upward (|.| of noisy bin gaps): its bias is
  // its mean, and positive.
  const auto& ece = estimator_of(cell, "ece_ew15");
  CHECK(*ece.bias == ece.mean);
  CHECK(ece.mean > 0.0);
}

TEST_CASE("reliability: true and replicate 0's curves, into reliability.csv", "[e2e]") {
  OJ document = small_experiment();
  document["reliability"] = OJ::parse(R"({"samples": 40000, "points": 50})");
  const ExperimentConfig config = parse(document, "e2e.json");
  REQUIRE(config.reliability);
  CHECK(config.reliability->bins == 15);
  const ResultSet results = run_with_threads(config, 2);
  for (const auto& cell : results.records) {
    // K = 4, symmetric alpha, temperature: the classes are pooled. true top and pooled curves,
    // then per binning the estimated top and pooled curves.
    REQUIRE(cell.reliability.size() == 6);
    CHECK(cell.reliability[0].curve == calbench::CurveOrigin::true_curve);
    CHECK(cell.reliability[1].scope == calbench::CurveScope::classes_pooled);
    // The estimated top-label equal-width curve is replicate 0's sample binned as `ece`
    // (15 equal-width bins), so sum_b w_b |frequency_b - score_b| is replicate 0's value.
    const calbench::CurveRecord& ew = cell.reliability[2];
    CHECK(ew.curve == calbench::CurveOrigin::estimated);
    CHECK(ew.grouping == calbench::CurveGrouping::equal_width);
    CHECK(ew.scope == calbench::CurveScope::top_label);
    double ece = 0.0;
    for (const auto& p : ew.points) ece += p.weight * std::abs(p.frequency - p.score);
    CHECK(ece == Approx(cell.replicate_values[0][0]).epsilon(1e-12));
    // The true top-label curve averages to the accuracy (temperature keeps the argmax:
    // E[c_top] = accuracy, exact); SE of a mean of c_top over 40,000 draws <= 0.5/200.
    double acc = 0.0;
    for (const auto& p : cell.reliability[0].points) acc += p.weight * p.frequency;
    CHECK(std::abs(acc - truth_of(cell, "accuracy").value) < 4.5 * 0.5 / 200.0);
  }
  TempDir dir;
  write_results(results, config, some_run_info(1.0), dir.path);
  const auto lines = table_lines_of(read_text(dir.path / "reliability.csv"));
  CHECK(lines.at(0) ==
        "cell,generator.miscalibration.temperature,sample_size,curve,binning,scope,class,lower,"
        "upper,score,frequency,error,count,weight");
  std::size_t points = 0;
  for (const auto& cell : results.records)
    for (const auto& curve : cell.reliability) points += curve.points.size();
  CHECK(lines.size() == 1 + points);
  const auto summary = nlohmann::json::parse(read_text(dir.path / "summary.json"));
  CHECK(summary["reliability"]["samples"] == 40000);
  // A run without `reliability` removes a stale reliability.csv.
  ResultSet without = results;
  without.reliability.reset();
  for (auto& cell : without.records) cell.reliability.clear();
  write_results(without, config, some_run_info(1.0), dir.path);
  CHECK_FALSE(fs::exists(dir.path / "reliability.csv"));
}
