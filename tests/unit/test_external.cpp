// External estimators (docs/external.md): the NPY files calbench writes read back exactly, the
// protocol's failures are errors naming the estimator, the place and the replicate, and a run
// whose external command computes the built-in ECE reproduces the built-in numbers on any
// number of threads, starting the command once per cell.
#include <tbb/global_control.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "data/npy.hpp"
#include "estimators/external.hpp"
#include "generators/generator.hpp"
#include "scenarios/estimator_bias/run.hpp"
#include "scenarios/registry.hpp"
#include "temp_files.hpp"

namespace {

using namespace calbench;
using OJ = nlohmann::ordered_json;
namespace fs = std::filesystem;

Sample small_sample() {
  return make_sample(3, {0.5, 0.3, 0.2, 0.1, 0.1, 0.8, 1.0, 0.0, 0.0}, {0, 2, 1});
}

// The error message of running `command` (a shell script; calbench appends the directory as
// $1) on one sample, or "" when it succeeded.
std::string failure(const std::string& script, double timeout = 30.0) {
  const ExternalEstimator e({"sh", "-c", script, "sh"}, Quantity::ece_top_l1, timeout);
  EstimatorWorkspace ws;
  try {
    (void)e.estimate(small_sample(), ws);
  } catch (const ExternalError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("write_npy files read back exactly with the NPY reader", "[unit][external]") {
  testing::TempDir dir;
  const std::vector<double> p = {0.1, 0.9, 1.0, 0.0, 1.0 / 3.0, 2.0 / 3.0};
  write_npy(dir.path / "p.npy", {3, 2}, std::span<const double>(p));
  const NpyArray a = read_npy(dir.path / "p.npy");
  CHECK(a.descr == "<f8");
  CHECK(a.shape == std::vector<std::size_t>{3, 2});
  CHECK(a.floats == p);
  const std::vector<std::int64_t> y = {0, 1, 1, 0, 7};
  write_npy(dir.path / "y.npy", {5}, std::span<const std::int64_t>(y));
  const NpyArray b = read_npy(dir.path / "y.npy");
  CHECK(b.descr == "<i8");
  CHECK(b.shape == std::vector<std::size_t>{5});
  CHECK(b.ints == y);
  // NumPy's layout: magic, version 1.0, header padded so the data start on a 64-byte boundary
  // (the file is byte-identical to numpy.save's, 176 bytes, for this array).
  const std::string bytes = testing::read_text(dir.path / "p.npy");
  const std::size_t data_start = bytes.size() - 6 * 8;
  CHECK(data_start % 64 == 0);
  CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK(bytes[data_start - 1] == '\n');
}

TEST_CASE("an external estimator reads the number its command prints", "[unit][external]") {
  const ExternalEstimator e({"sh", "-c", "test -f \"$1/p_000000.npy\" && echo 0.125", "sh"},
                            Quantity::ece_top_l1, 30.0);
  EstimatorWorkspace ws;
  CHECK(e.estimate(small_sample(), ws) == 0.125);
  CHECK(e.target() == Quantity::ece_top_l1);
  // The manifest names the files and the sample's shape.
  CHECK(failure("grep -q '\"replicates\": 1' \"$1/manifest.json\" && grep -q '\"classes\": 3' "
                "\"$1/manifest.json\" && grep -q p_000000.npy \"$1/manifest.json\" && echo 1") ==
        "");
}

TEST_CASE("external estimator failures name the estimator, the place and the replicate",
          "[unit][external]") {
  std::string m = failure("echo 'my metric broke' >&2; exit 3");
  CHECK_THAT(m, Catch::Contains("exited with status 3"));
  CHECK_THAT(m, Catch::Contains("my metric broke"));
  CHECK_THAT(m, Catch::Contains("one sample"));
  m = failure("sleep 20", 0.3);
  CHECK_THAT(m, Catch::Contains("did not finish within the timeout of 0.3 s"));
  m = failure("echo 1 2");
  CHECK_THAT(m, Catch::Contains("printed 2 value(s) for 1 replicate(s)"));
  m = failure("echo");
  CHECK_THAT(m, Catch::Contains("printed 0 value(s) for 1 replicate(s)"));
  m = failure("echo abc");
  CHECK_THAT(m, Catch::Contains("replicate 0") && Catch::Contains("\"abc\", not a number"));
  m = failure("echo nan");
  CHECK_THAT(m, Catch::Contains("\"nan\", not a finite number"));
  m = failure("kill -9 $$");
  CHECK_THAT(m, Catch::Contains("killed by signal 9"));
  const ExternalEstimator missing({"no-such-program-calbench"}, Quantity::accuracy, 5.0);
  EstimatorWorkspace ws;
  CHECK_THROWS_WITH(missing.estimate(small_sample(), ws),
                    Catch::Contains("cannot start \"no-such-program-calbench\""));
  CHECK_THROWS_AS(ExternalEstimator({}, Quantity::accuracy, 1.0), DomainError);
}

namespace {

OJ external_ece_experiment(const std::string& script_command) {
  OJ d = OJ::parse(R"({
    "name": "external",
    "scenario": "estimator_bias",
    "seed": 77,
    "replicates": 12,
    "sample_size": 300,
    "generator": {"family": "dirichlet", "classes": 3, "alpha": 0.4,
                  "miscalibration": {"map": "temperature", "temperature": 0.6}},
    "estimators": [{"name": "ece", "bins": 15}],
    "truth": {"samples": 20000},
    "sweep": {"sample_size": [100, 300]},
    "output": {"replicate_values": true}
  })");
  d["estimators"].push_back({{"name", "external"},
                             {"label", "numpy_ece"},
                             {"target", "ece_top_l1"},
                             {"command", OJ::parse(script_command)}});
  return d;
}

}  // namespace

TEST_CASE("an external numpy ECE reproduces the built-in ece in a run, on any thread count",
          "[e2e][external]") {
  const std::string python = CALBENCH_PYTHON3;
  const std::string script = std::string(CALBENCH_SOURCE_DIR) + "/docs/examples/external_ece.py";
  const OJ doc = external_ece_experiment(OJ::array({python, script, "15"}).dump());
  auto run = [&](std::size_t threads) {
    const auto config = parse_experiment_as<EstimatorBiasConfig>(doc, "external.json");
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    return run_estimator_bias(config, {});
  };
  const EstimatorBiasResults one = run(1), two = run(2);
  REQUIRE(one.records.size() == 2);
  for (std::size_t c = 0; c < 2; ++c) {
    const auto& rec = one.records[c];
    REQUIRE(rec.replicate_values.size() == 12);
    for (const auto& row : rec.replicate_values) {
      INFO("cell " << c);
      // Same bins; the sums differ only in their order (a few ulps of an ECE near 0.1).
      CHECK(std::fabs(row[0] - row[1]) <= 1e-12);
      CHECK(row[0] > 0.0);
    }
    const auto& external = rec.estimators[1];
    CHECK(external.label == "numpy_ece");
    CHECK(external.target == Quantity::ece_top_l1);
    CHECK(external.truth == rec.estimators[0].truth);
    CHECK(std::fabs(*external.bias - *rec.estimators[0].bias) <= 1e-12);
    CHECK(two.records[c].replicate_values == rec.replicate_values);
  }
}

TEST_CASE("a failing external command stops the run naming the cell, and nothing is written",
          "[e2e][external]") {
  // Fails only in the second cell (sample_size 300), after printing for the first.
  const OJ doc = external_ece_experiment(
      R"(["sh", "-c", "if grep -q '\"sample_size\": 300' \"$0/manifest.json\"; then echo bad >&2; exit 4; fi; for f in \"$0\"/y_*.npy; do echo 0.5; done"])");
  testing::TempDir dir;
  const fs::path config = dir.path / "external.json";
  OJ with_output = doc;
  with_output["output"]["directory"] = (dir.path / "out").string();
  std::ofstream(config) << with_output.dump(2);
  const fs::path err = dir.path / "stderr.txt";
  const std::string command =
      std::string(CALBENCH_BINARY) + " run --quiet " + config.string() + " 2> " + err.string();
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  const std::string message = testing::read_text(err);
  CHECK_THAT(message, Catch::Contains("external estimator \"numpy_ece\", cell 1 (sample_size = "
                                      "300): command sh -c") &&
                          Catch::Contains("exited with status 4") && Catch::Contains("bad"));
  CHECK(!fs::exists(dir.path / "out"));
}

TEST_CASE("external estimators reject intervals and bad parameters at their JSON pointers",
          "[unit][external]") {
  OJ doc = external_ece_experiment(R"(["true"])");
  doc["intervals"] = {{"resamples", 10}};
  CHECK_THROWS_WITH(parse_experiment(doc, "x.json"),
                    Catch::Contains("x.json: /intervals: intervals are not available with the "
                                    "external estimator \"numpy_ece\""));
  doc = external_ece_experiment(R"([])");
  CHECK_THROWS_WITH(parse_experiment(doc, "x.json"),
                    Catch::Contains("x.json: /estimators/1/command: expected a non-empty array"));
  doc = external_ece_experiment(R"(["true"])");
  doc["estimators"][1]["target"] = "ece";
  CHECK_THROWS_WITH(parse_experiment(doc, "x.json"),
                    Catch::Contains("/estimators/1/target: unknown target \"ece\""));
  doc["estimators"][1].erase("target");
  CHECK_THROWS_WITH(parse_experiment(doc, "x.json"),
                    Catch::Contains("/estimators/1/target: required key is missing"));
}
