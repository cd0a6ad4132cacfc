// The config layer: every bad input is reported with the file, its JSON pointer and the rule;
// defaults, sweep expansion and the registry behave as DESIGN.md §3 states.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "config/registry.hpp"
#include "core/error.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/estimators_json.hpp"
#include "experiment/experiment.hpp"
#include "generators/generators_json.hpp"
#include "report/listing.hpp"
#include "report/value_format.hpp"
#include "scenarios/estimator_bias/run.hpp"
#include "scenarios/registry.hpp"

namespace {

using calbench::ConfigError;
using OJ = nlohmann::ordered_json;

// The configs here are estimator_bias's.
calbench::EstimatorBiasConfig parse_experiment(const OJ& document, const std::string& source) {
  return calbench::parse_experiment_as<calbench::EstimatorBiasConfig>(document, source);
}
calbench::EstimatorBiasConfig parse_experiment(const nlohmann::json& document,
                                               const std::string& source) {
  return parse_experiment(OJ(document), source);
}

const std::string source = "configs/x.json";

// A small valid config; each test breaks one thing in it.
OJ base() {
  return OJ::parse(R"({
    "scenario": "estimator_bias",
    "replicates": 10,
    "sample_size": 100,
    "generator": {"family": "dirichlet", "classes": 3, "alpha": 0.5,
                  "miscalibration": {"map": "temperature", "temperature": 0.7}},
    "estimators": [{"name": "ece"}, {"name": "brier"}]
  })");
}

std::vector<std::string> problems_of(const OJ& document) {
  try {
    (void)parse_experiment(document, source);
  } catch (const ConfigError& error) {
    return error.problems();
  }
  FAIL("parse_experiment accepted a bad config: " << document.dump());
  return {};
}

std::vector<std::string> problems_with(const std::function<void(OJ&)>& edit) {
  OJ document = base();
  edit(document);
  return problems_of(document);
}

std::vector<std::string> problems_of_text(const std::string& text) {
  return problems_of(OJ::parse(text));
}

// True when one message is "configs/x.json: POINTER: ..." and contains `phrase`.
bool has_problem(const std::vector<std::string>& problems, const std::string& pointer,
                 const std::string& phrase) {
  const std::string head = source + ": " + pointer + ": ";
  for (const auto& p : problems)
    if (p.rfind(head, 0) == 0 && p.find(phrase) != std::string::npos) return true;
  return false;
}

#define CHECK_PROBLEM(problems, pointer, phrase)      \
  do {                                                \
    const auto& ps_ = (problems);                     \
    INFO("problems:\n" << calbench::join(ps_, "\n")); \
    CHECK(has_problem(ps_, pointer, phrase));         \
  } while (false)

// A file in the temp directory, removed at the end of the test.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& text) {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("calbench_test_config_" + std::to_string(std::random_device{}()) + "_" +
            std::to_string(counter++) + ".json");
    std::ofstream(path) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

const char* quickstart = R"({
  "name": "quickstart",
  "scenario": "estimator_bias",
  "seed": 20261121,
  "replicates": 500,
  "sample_size": 1000,
  "generator": {
    "family": "dirichlet",
    "classes": 10,
    "alpha": 0.5,
    "miscalibration": {"map": "temperature", "temperature": 0.7}
  },
  "estimators": [
    {"name": "ece", "bins": 15},
    {"name": "ece", "bins": 15, "binning": "equal_mass", "label": "ece_em15"},
    {"name": "brier"}, {"name": "nll"}, {"name": "accuracy"}
  ],
  "truth": {"samples": 4000000},
  "sweep": {
    "sample_size": [100, 1000, 10000],
    "generator.miscalibration.temperature": [0.5, 0.7, 1.0, 1.5]
  },
  "output": {"directory": "results/quickstart", "replicate_values": false}
})";

}  // namespace

// ---- files ----------------------------------------------------------------------------------

TEST_CASE("a missing file is a ConfigError naming the file and the reason", "[unit][config]") {
  const std::string missing = "/nonexistent/calbench/missing.json";
  try {
    (void)calbench::load_experiment(missing);
    FAIL("no error");
  } catch (const ConfigError& error) {
    REQUIRE(error.problems().size() == 1);
    CHECK(error.problems()[0] == missing + ": cannot open the file (No such file or directory)");
  }
}

TEST_CASE("a file that is not JSON is reported with the parser's line and column",
          "[unit][config]") {
  TempFile file("{\n  \"name\": \"x\",\n  oops\n}\n");
  try {
    (void)calbench::load_experiment(file.path);
    FAIL("no error");
  } catch (const ConfigError& error) {
    REQUIRE(error.problems().size() == 1);
    const std::string& message = error.problems()[0];
    INFO(message);
    CHECK(message.rfind(file.path.string() + ": not valid JSON: ", 0) == 0);
    CHECK(message.find("line 3, column") != std::string::npos);
    CHECK(message.find("[json.exception") == std::string::npos);
  }
}

TEST_CASE("a key given twice in one object is an error at its pointer", "[unit][config]") {
  TempFile file(R"({"scenario": "estimator_bias", "replicates": 1, "sample_size": 1,
    "generator": {"classes": 2, "classes": 3},
    "estimators": [{"name": "nll"}]})");
  try {
    (void)calbench::load_experiment(file.path);
    FAIL("no error");
  } catch (const ConfigError& error) {
    REQUIRE(error.problems().size() == 2);
    CHECK(error.problems()[0] == file.path.string() +
                                     ": /generator/classes: duplicate key; each "
                                     "key may appear once in an object");
    // The rest of the file is still checked (the parser kept the last value, 3).
    CHECK(error.problems()[1] ==
          file.path.string() +
              ": /generator/family: required key is "
              "missing; expected one of: dirichlet, class_conditional, label_noise, beta_binary, "
              "dirichlet_mixture, empirical");
  }
}

TEST_CASE("a number too large for a double is not valid JSON", "[unit][config]") {
  TempFile file(R"({"scenario": "estimator_bias", "replicates": 1e999})");
  try {
    (void)calbench::load_experiment(file.path);
    FAIL("no error");
  } catch (const ConfigError& error) {
    REQUIRE(error.problems().size() == 1);
    INFO(error.problems()[0]);
    CHECK(error.problems()[0].rfind(file.path.string() + ": not valid JSON: ", 0) == 0);
    CHECK(error.problems()[0].find("1e999") != std::string::npos);
  }
}

TEST_CASE("a valid file loads, and its stem is the default name", "[unit][config]") {
  OJ document = base();
  TempFile file(document.dump());
  const auto config = calbench::load_experiment(file.path);
  CHECK(config->name == file.path.stem().string());
  CHECK(config->source == file.path.string());
  CHECK(config->output.directory == "results/" + file.path.stem().string());
}

TEST_CASE("a document that is not an object is one error at /", "[unit][config]") {
  const auto problems = problems_of_text("[1, 2]");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == source + ": /: expected an object, found an array");
}

// ---- unknown keys ---------------------------------------------------------------------------

TEST_CASE("unknown keys are errors at every level, listing the valid keys", "[unit][config]") {
  SECTION("top level") {
    const auto p = problems_with([](OJ& d) { d["frobnicate"] = 1; });
    CHECK_PROBLEM(
        p, "/frobnicate",
        "unknown key; valid keys: decision, estimators, fit_size, generator, intervals, "
        "leaderboard, methods, name, output, provenance, recalibrator, reliability, replicates, "
        "requirement, sample_size, scenario, seed, sweep, test_size, truth, truth_samples");
  }
  SECTION("generator") {
    const auto p = problems_with([](OJ& d) { d["generator"]["frobnicate"] = 1; });
    CHECK_PROBLEM(p, "/generator/frobnicate",
                  "unknown key; valid keys: alpha, classes, family, miscalibration");
  }
  SECTION("miscalibration") {
    const auto p = problems_with([](OJ& d) { d["generator"]["miscalibration"]["gamma"] = 2; });
    CHECK_PROBLEM(p, "/generator/miscalibration/gamma",
                  "unknown key; valid keys: map, temperature");
  }
  SECTION("estimator entry") {
    const auto p = problems_with([](OJ& d) { d["estimators"][0]["bin"] = 10; });
    CHECK_PROBLEM(
        p, "/estimators/0/bin",
        "unknown key; valid keys: binning, bins, convention, label, name, norm, p, scope");
  }
  SECTION("estimator without parameters") {
    const auto p = problems_with([](OJ& d) {
      d["estimators"][1] = OJ{{"name", "accuracy"}, {"bins", 10}};
    });
    CHECK_PROBLEM(p, "/estimators/1/bins", "unknown key; valid keys: label, name");
  }
  SECTION("truth") {
    const auto p = problems_with([](OJ& d) { d["truth"] = {{"sample", 5000}}; });
    CHECK_PROBLEM(p, "/truth/sample",
                  "unknown key; valid keys: population_samples, samples, tolerance");
  }
  SECTION("output") {
    const auto p = problems_with([](OJ& d) { d["output"] = {{"dir", "x"}}; });
    CHECK_PROBLEM(p, "/output/dir", "unknown key; valid keys: directory, replicate_values");
  }
  SECTION("a key with '/' and '~' is escaped in the pointer") {
    const auto p = problems_with([](OJ& d) { d["a/b~c"] = 1; });
    CHECK_PROBLEM(p, "/a~1b~0c", "unknown key");
  }
}

// ---- wrong types ----------------------------------------------------------------------------

TEST_CASE("wrong types name what was expected and what was found", "[unit][config]") {
  SECTION("a string where an integer belongs") {
    const auto p = problems_with([](OJ& d) { d["replicates"] = "many"; });
    CHECK_PROBLEM(p, "/replicates", "expected an integer >= 1, found a string (\"many\")");
  }
  SECTION("a string where a number belongs") {
    const auto p =
        problems_with([](OJ& d) { d["generator"]["miscalibration"]["temperature"] = "hot"; });
    CHECK_PROBLEM(p, "/generator/miscalibration/temperature",
                  "expected a finite number >= 0.0001 and <= 1e+06, found a string (\"hot\")");
  }
  SECTION("a number where a string belongs") {
    const auto p = problems_with([](OJ& d) { d["estimators"][0]["name"] = 5; });
    CHECK_PROBLEM(p, "/estimators/0/name", "expected a string, found 5");
  }
  SECTION("a number where a string belongs (scenario, binning, directory)") {
    const auto p = problems_with([](OJ& d) {
      d["scenario"] = 1.5;
      d["estimators"][0]["binning"] = true;
      d["output"] = {{"directory", 3}};
    });
    CHECK_PROBLEM(p, "/scenario", "expected a string, found 1.5");
    CHECK_PROBLEM(p, "/estimators/0/binning", "expected a string, found a boolean (true)");
    CHECK_PROBLEM(p, "/output/directory", "expected a string, found 3");
  }
  SECTION("an array where an object belongs") {
    const auto p = problems_with([](OJ& d) { d["generator"] = OJ::array({1, 2}); });
    CHECK_PROBLEM(p, "/generator", "expected an object, found an array");
  }
  SECTION("an object where an array belongs") {
    const auto p = problems_with([](OJ& d) { d["estimators"] = {{"name", "ece"}}; });
    CHECK_PROBLEM(p, "/estimators", "expected a non-empty array of estimators, found an object");
  }
  SECTION("a string where a boolean belongs") {
    const auto p = problems_with([](OJ& d) { d["output"] = {{"replicate_values", "yes"}}; });
    CHECK_PROBLEM(p, "/output/replicate_values",
                  "expected true or false, found a string (\"yes\")");
  }
  SECTION("an estimator entry that is not an object") {
    const auto p = problems_with([](OJ& d) { d["estimators"][1] = "brier"; });
    CHECK_PROBLEM(p, "/estimators/1", "expected an object, found a string (\"brier\")");
  }
}

TEST_CASE("missing required keys are reported at the key's pointer", "[unit][config]") {
  const auto p = problems_with([](OJ& d) {
    d.erase("replicates");
    d["generator"].erase("classes");
    d["generator"]["miscalibration"].erase("temperature");
  });
  CHECK_PROBLEM(p, "/replicates", "required key is missing; expected an integer >= 1");
  CHECK_PROBLEM(p, "/generator/classes", "required key is missing; expected an integer >= 2");
  CHECK_PROBLEM(p, "/generator/miscalibration/temperature",
                "required key is missing; expected a number >= 0.0001 and <= 1e+06");
  CHECK(p.size() == 3);
}

// ---- ranges ---------------------------------------------------------------------------------

TEST_CASE("out-of-range values name the value and the rule", "[unit][config]") {
  SECTION("classes < 2") {
    const auto p = problems_with([](OJ& d) { d["generator"]["classes"] = 1; });
    CHECK_PROBLEM(p, "/generator/classes", "expected an integer >= 2, found 1");
  }
  SECTION("scalar alpha <= 0") {
    const auto p = problems_with([](OJ& d) { d["generator"]["alpha"] = -1; });
    CHECK_PROBLEM(p, "/generator/alpha", "alpha = -1: must be > 0");
  }
  SECTION("an alpha element <= 0") {
    const auto p = problems_with([](OJ& d) { d["generator"]["alpha"] = {1.0, 0.0, 2.0}; });
    CHECK_PROBLEM(p, "/generator/alpha/1", "alpha[1] = 0: must be > 0");
  }
  SECTION("alpha of the wrong length") {
    const auto p = problems_with([](OJ& d) { d["generator"]["alpha"] = {1.0, 2.0}; });
    CHECK_PROBLEM(p, "/generator/alpha",
                  "expected an array of 3 numbers > 0 (one per class), found an array of 2");
  }
  SECTION("alpha of the wrong type") {
    const auto p = problems_with([](OJ& d) { d["generator"]["alpha"] = "flat"; });
    CHECK_PROBLEM(p, "/generator/alpha", "expected a number > 0 or an array of 3 numbers > 0");
  }
  SECTION("temperature <= 0") {
    const auto p =
        problems_with([](OJ& d) { d["generator"]["miscalibration"]["temperature"] = 0; });
    CHECK_PROBLEM(p, "/generator/miscalibration/temperature",
                  "temperature = 0: must be >= 0.0001 and <= 1e+06");
  }
  SECTION("exponents of the wrong length") {
    const auto p = problems_with([](OJ& d) {
      d["generator"]["miscalibration"] = {{"map", "power"}, {"exponents", {1.0, 2.0}}};
    });
    CHECK_PROBLEM(p, "/generator/miscalibration/exponents",
                  "expected an array of 3 numbers > 0 (one per class), found an array of 2");
  }
  SECTION("an exponent <= 0") {
    const auto p = problems_with([](OJ& d) {
      d["generator"]["miscalibration"] = {{"map", "power"}, {"exponents", {1.0, 2.0, -3.0}}};
    });
    CHECK_PROBLEM(p, "/generator/miscalibration/exponents/2", "exponents[2] = -3: must be > 0");
  }
  SECTION("gamma <= 0") {
    const auto p = problems_with([](OJ& d) {
      d["generator"]["miscalibration"] = {{"map", "top_label"}, {"gamma", -0.5}};
    });
    CHECK_PROBLEM(p, "/generator/miscalibration/gamma",
                  "gamma = -0.5: must be >= 0.0001 and <= 100");
  }
  SECTION("affine_logit weights that are not K x K") {
    const auto p = problems_with([](OJ& d) {
      d["generator"]["miscalibration"] = {
          {"map", "affine_logit"},
          {"weights", OJ::array({OJ::array({1, 0, 0}), OJ::array({0, 1}), OJ::array({0, 0, 1})})}};
    });
    CHECK_PROBLEM(p, "/generator/miscalibration/weights/1",
                  "expected an array of 3 numbers (one per class), found an array of 2");
  }
  SECTION("bins < 1") {
    const auto p = problems_with([](OJ& d) { d["estimators"][0]["bins"] = 0; });
    CHECK_PROBLEM(p, "/estimators/0/bins", "expected an integer >= 1, found 0");
  }
  SECTION("replicates < 1") {
    const auto p = problems_with([](OJ& d) { d["replicates"] = 0; });
    CHECK_PROBLEM(p, "/replicates", "expected an integer >= 1, found 0");
  }
  SECTION("sample_size < 1") {
    const auto p = problems_with([](OJ& d) { d["sample_size"] = -5; });
    CHECK_PROBLEM(p, "/sample_size", "expected an integer >= 1, found -5");
  }
  SECTION("truth.samples < 1000") {
    const auto p = problems_with([](OJ& d) { d["truth"] = {{"samples", 999}}; });
    CHECK_PROBLEM(p, "/truth/samples", "expected an integer >= 1000, found 999");
  }
  SECTION("a negative seed") {
    const auto p = problems_with([](OJ& d) { d["seed"] = -1; });
    CHECK_PROBLEM(p, "/seed", "expected an integer in [0, 18446744073709551615], found -1");
  }
  SECTION("a fractional integer") {
    const auto p = problems_with([](OJ& d) { d["sample_size"] = 2.5; });
    CHECK_PROBLEM(p, "/sample_size", "expected an integer >= 1, found 2.5");
  }
  SECTION("a non-finite number") {
    const auto p = problems_with([](OJ& d) {
      d["generator"]["miscalibration"]["temperature"] = std::numeric_limits<double>::infinity();
      d["generator"]["alpha"] = {1.0, std::numeric_limits<double>::quiet_NaN(), 1.0};
      d["replicates"] = std::numeric_limits<double>::infinity();
    });
    CHECK_PROBLEM(p, "/generator/miscalibration/temperature",
                  "expected a finite number >= 0.0001 and <= 1e+06, found inf");
    CHECK_PROBLEM(p, "/generator/alpha/1", "expected a finite number > 0, found nan");
    CHECK_PROBLEM(p, "/replicates", "expected an integer >= 1, found inf");
  }
  SECTION("an empty label") {
    const auto p = problems_with([](OJ& d) { d["estimators"][0]["label"] = ""; });
    CHECK_PROBLEM(p, "/estimators/0/label", "expected a non-empty string");
  }
  SECTION("an empty estimator list") {
    const auto p = problems_with([](OJ& d) { d["estimators"] = OJ::array(); });
    CHECK_PROBLEM(p, "/estimators",
                  "expected a non-empty array of estimators, found an empty array");
  }
  SECTION("a name that cannot be a directory") {
    const auto p = problems_with([](OJ& d) { d["name"] = "../up"; });
    CHECK_PROBLEM(p, "/name", "it names the output directory");
  }
}

TEST_CASE("reliability: its keys are checked", "[unit][config]") {
  CHECK_PROBLEM(problems_with([](OJ& d) { d["reliability"] = OJ::parse(R"({"points": 1})"); }),
                "/reliability/points", "expected an integer >= 2, found 1");
  CHECK_PROBLEM(problems_with([](OJ& d) { d["reliability"] = OJ::parse(R"({"bin": 10})"); }),
                "/reliability/bin", "unknown key; valid keys: bins, points, samples");
  CHECK_PROBLEM(problems_with([](OJ& d) { d["reliability"] = OJ::parse(R"({"samples": 10})"); }),
                "/reliability/samples", "expected an integer >= 1000, found 10");
}

TEST_CASE("an integral float is an integer, and the full seed range is accepted",
          "[unit][config]") {
  OJ document = base();
  document["sample_size"] = 1e4;
  document["seed"] = 18446744073709551615ULL;
  const auto config = parse_experiment(document, source);
  REQUIRE(config.cells.size() == 1);
  CHECK(config.cells[0].sample_size == 10000);
  CHECK(config.seed == std::numeric_limits<std::uint64_t>::max());
  CHECK(config.resolved["sample_size"].is_number_integer());
  CHECK(config.resolved["sample_size"].dump() == "10000");
}

// ---- unknown names --------------------------------------------------------------------------

TEST_CASE("unknown names list the valid ones", "[unit][config]") {
  SECTION("estimator") {
    const auto p = problems_with([](OJ& d) { d["estimators"].push_back({{"name", "foo"}}); });
    // Every row of the table, in alphabetical order.
    std::vector<std::string> names;
    for (const auto& row : calbench::estimator_registry()) names.push_back(row.name);
    std::sort(names.begin(), names.end());
    std::string valid;
    for (const auto& name : names) valid += (valid.empty() ? "" : ", ") + name;
    REQUIRE(names.size() > 10);
    CHECK_PROBLEM(p, "/estimators/2/name", "unknown estimator \"foo\"; valid: " + valid);
  }
  SECTION("map") {
    const auto p = problems_with([](OJ& d) {
      d["generator"]["miscalibration"] = {{"map", "warp"}};
    });
    CHECK_PROBLEM(
        p, "/generator/miscalibration/map",
        "unknown miscalibration map \"warp\"; valid: affine_logit, identity, power, quantize, "
        "temperature, top_label");
  }
  SECTION("family") {
    const auto p = problems_with([](OJ& d) { d["generator"]["family"] = "beta"; });
    CHECK_PROBLEM(p, "/generator/family",
                  "unknown family \"beta\"; valid: beta_binary, class_conditional, dirichlet, "
                  "dirichlet_mixture, empirical, label_noise");
  }
  SECTION("scenario") {
    const auto p = problems_with([](OJ& d) { d["scenario"] = "bias"; });
    CHECK_PROBLEM(p, "/scenario", "unknown scenario \"bias\"; valid: decision, estimator_bias");
  }
  SECTION("binning and norm") {
    const auto p = problems_with([](OJ& d) {
      d["estimators"][0]["binning"] = "equal_size";
      d["estimators"][0]["norm"] = "l3";
    });
    CHECK_PROBLEM(p, "/estimators/0/binning",
                  "unknown binning \"equal_size\"; valid: equal_mass, equal_width");
    CHECK_PROBLEM(p, "/estimators/0/norm", "unknown norm \"l3\"; valid: average, l1, l2, lp, max");
  }
}

TEST_CASE("duplicate labels name both entries", "[unit][config]") {
  SECTION("two default labels") {
    const auto p = problems_with([](OJ& d) {
      d["estimators"].push_back({{"name", "ece"}, {"bins", 15}});
    });
    CHECK_PROBLEM(p, "/estimators/2",
                  "duplicate label \"ece_ew15\", also the label of /estimators/0");
  }
  SECTION("an explicit label equal to a default one") {
    const auto p = problems_with([](OJ& d) { d["estimators"][0]["label"] = "brier"; });
    CHECK_PROBLEM(p, "/estimators/1", "duplicate label \"brier\", also the label of /estimators/0");
  }
}

TEST_CASE("every problem of a file is reported at once", "[unit][config]") {
  const auto p = problems_of_text(R"({
    "scenario": "nope",
    "replicates": 0,
    "sample_size": "big",
    "generator": {"family": "dirichlet", "classes": 1, "alpha": -2,
                  "miscalibration": {"map": "temperature", "temperature": -1}},
    "estimators": [{"name": "ece", "bins": 2.5}, {"name": "foo"}],
    "extra": true
  })");
  CHECK(p.size() == 9);
  CHECK_PROBLEM(p, "/extra", "unknown key");
  CHECK_PROBLEM(p, "/scenario", "unknown scenario");
  CHECK_PROBLEM(p, "/replicates", "found 0");
  CHECK_PROBLEM(p, "/sample_size", "found a string (\"big\")");
  CHECK_PROBLEM(p, "/generator/classes", "found 1");
  CHECK_PROBLEM(p, "/generator/alpha", "alpha = -2: must be > 0");
  CHECK_PROBLEM(p, "/generator/miscalibration/temperature",
                "temperature = -1: must be >= 0.0001 and <= 1e+06");
  CHECK_PROBLEM(p, "/estimators/0/bins", "found 2.5");
  CHECK_PROBLEM(p, "/estimators/1/name", "unknown estimator \"foo\"");
}

// ---- sweep ----------------------------------------------------------------------------------

TEST_CASE("sweep problems point into the sweep", "[unit][config]") {
  SECTION("a path that does not exist") {
    const auto p = problems_with([](OJ& d) { d["sweep"] = {{"generator.temperature", {1, 2}}}; });
    CHECK_PROBLEM(p, "/sweep/generator.temperature",
                  "sweep path \"generator.temperature\" does not exist in the config");
  }
  SECTION("an index past the end of an array") {
    const auto p = problems_with([](OJ& d) { d["sweep"] = {{"estimators.2.bins", {5, 10}}}; });
    CHECK_PROBLEM(p, "/sweep/estimators.2.bins", "does not exist in the config");
  }
  SECTION("a path with '/' is escaped in the pointer") {
    const auto p = problems_with([](OJ& d) { d["sweep"] = {{"a/b", {1}}}; });
    CHECK_PROBLEM(p, "/sweep/a~1b", "does not exist in the config");
  }
  SECTION("an empty list") {
    const auto p = problems_with([](OJ& d) { d["sweep"] = {{"sample_size", OJ::array()}}; });
    CHECK_PROBLEM(p, "/sweep/sample_size",
                  "expected a non-empty array of values, found an empty array");
  }
  SECTION("a value that is not a list") {
    const auto p = problems_with([](OJ& d) { d["sweep"] = {{"sample_size", 100}}; });
    CHECK_PROBLEM(p, "/sweep/sample_size", "expected a non-empty array of values, found 100");
  }
  SECTION("a bad value in the list") {
    const auto p = problems_with([](OJ& d) {
      d["sweep"] = {{"sample_size", {10, 20}},
                    {"generator.miscalibration.temperature", {0.5, 1.0, -1.0}}};
    });
    // Two cells carry the bad temperature; it is reported once.
    REQUIRE(p.size() == 1);
    CHECK(p[0] == source +
                      ": /sweep/generator.miscalibration.temperature/2: temperature = -1: "
                      "must be >= 0.0001 and <= 1e+06");
  }
  SECTION("a bad value inside a swept array value") {
    const auto p = problems_with([](OJ& d) {
      d["sweep"] = {{"generator.alpha", OJ::array({0.5, OJ::array({1, -1, 1})})}};
    });
    CHECK_PROBLEM(p, "/sweep/generator.alpha/1/1", "alpha[1] = -1: must be > 0");
  }
  SECTION("keys that are fixed for the experiment") {
    const auto p = problems_with([](OJ& d) {
      d["sweep"] = {{"seed", {1, 2}}, {"output.directory", {"a", "b"}}};
    });
    CHECK_PROBLEM(p, "/sweep/seed", "cannot sweep \"seed\"");
    CHECK_PROBLEM(p, "/sweep/output.directory", "cannot sweep \"output\"");
  }
  SECTION("overlapping paths") {
    const auto p = problems_with([](OJ& d) {
      d["sweep"] = {{"generator.miscalibration", OJ::array({{{"map", "identity"}}})},
                    {"generator.miscalibration.temperature", {1, 2}}};
    });
    CHECK_PROBLEM(p, "/sweep/generator.miscalibration.temperature", "overlaps");
  }
  SECTION("a problem a swept value causes elsewhere names the cells") {
    const auto p = problems_with([](OJ& d) {
      d["generator"]["alpha"] = {1, 1, 1};
      d["sweep"] = {{"generator.classes", {3, 4}}};
    });
    REQUIRE(p.size() == 1);
    CHECK_PROBLEM(p, "/generator/alpha",
                  "found an array of 3 (in sweep cell 1: generator.classes=4)");
  }
  SECTION("a placeholder value at a swept path is not checked") {
    OJ d = base();
    d["generator"]["miscalibration"]["temperature"] = -1;
    d["sweep"] = {{"generator.miscalibration.temperature", {0.5, 2}}};
    CHECK(parse_experiment(d, source).cells.size() == 2);
  }
}

TEST_CASE("cells are the Cartesian product, the last key varying fastest", "[unit][config]") {
  OJ d = base();
  // Keys deliberately not in alphabetical order: the file's order decides.
  d["sweep"] = OJ::parse(
      R"({"sample_size": [10, 20], "generator.miscalibration.temperature": [0.5, 1, 2]})");
  const auto config = parse_experiment(d, source);
  REQUIRE(config.cells.size() == 6);
  CHECK(config.sweep_keys ==
        std::vector<std::string>{"sample_size", "generator.miscalibration.temperature"});
  const std::vector<std::pair<std::size_t, double>> expected = {{10, 0.5}, {10, 1.0}, {10, 2.0},
                                                                {20, 0.5}, {20, 1.0}, {20, 2.0}};
  for (std::size_t i = 0; i < 6; ++i) {
    const auto& cell = config.cells[i];
    INFO("cell " << i);
    CHECK(cell.index == i);
    CHECK(cell.sample_size == expected[i].first);
    REQUIRE(cell.swept.size() == 2);
    CHECK(cell.swept[0].key == "sample_size");
    CHECK(calbench::to_text(cell.swept[0].value) == std::to_string(expected[i].first));
    CHECK(cell.swept[1].key == "generator.miscalibration.temperature");
    const auto* map = std::get_if<calbench::TemperatureMap>(
        &std::get<calbench::DirichletSpec>(cell.generator).map);
    REQUIRE(map != nullptr);
    CHECK(map->temperature == expected[i].second);
    CHECK(cell.replicates == 10);
  }
}

TEST_CASE("sweeps reach defaults, array elements and truth settings", "[unit][config]") {
  OJ d = base();
  d["sweep"] = OJ::parse(R"({"estimators.0.bins": [5, 10], "truth.samples": [1e4],
                             "generator.miscalibration.map": ["identity"]})");
  d["generator"]["miscalibration"] = {{"map", "identity"}};
  const auto config = parse_experiment(d, source);
  REQUIRE(config.cells.size() == 2);
  CHECK(config.cells[0].estimators[0].label == "ece_ew5");
  CHECK(config.cells[1].estimators[0].label == "ece_ew10");
  CHECK(config.cells[1].truth.samples == 10000);
  CHECK(calbench::to_text(config.cells[1].swept[1].value) == "10000");
  const auto* ece =
      dynamic_cast<const calbench::BinnedEce*>(config.cells[1].estimators[0].estimator.get());
  REQUIRE(ece != nullptr);
  CHECK(ece->spec().bins == 10);
}

TEST_CASE("a document parsed as nlohmann::json is accepted (keys sorted)", "[unit][config]") {
  const auto config = parse_experiment(nlohmann::json::parse(base().dump()), source);
  CHECK(config.cells.size() == 1);
  CHECK(config.name == "x");
}

// ---- defaults and typed results -------------------------------------------------------------

TEST_CASE("the resolved config has every default, file keys first", "[unit][config]") {
  OJ d = base();
  d["generator"]["miscalibration"] = nullptr;
  d["generator"].erase("miscalibration");
  d["name"] = "demo";
  const auto config = parse_experiment(d, source);
  const auto& r = config.resolved;
  std::vector<std::string> keys;
  for (const auto& item : r.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"scenario", "replicates", "sample_size", "generator",
                                         "estimators", "name", "seed", "truth", "output"});
  CHECK(r["seed"] == 0);
  CHECK(r["estimators"][0] == OJ::parse(R"({"name": "ece", "convention": "calbench", "bins": 15,
                                              "binning": "equal_width", "norm": "l1", "p": 2.0,
                                              "scope": "top", "label": "ece_ew15"})"));
  CHECK(r["estimators"][1] == OJ::parse(R"({"name": "brier", "component": "total", "scope": "all",
                                              "bins": 15, "label": "brier"})"));
  CHECK(r["generator"]["miscalibration"] == OJ::parse(R"({"map": "identity"})"));
  CHECK(r["generator"]["alpha"] == 0.5);  // a scalar alpha stays a scalar
  CHECK(r["truth"]["samples"] == calbench::TruthSettings{}.samples);
  CHECK(r["output"] == OJ::parse(R"({"directory": "results/demo", "replicate_values": false})"));
  CHECK(config.output.directory == "results/demo");
  CHECK(!config.replicate_values);
  CHECK(std::holds_alternative<calbench::IdentityMap>(
      std::get<calbench::DirichletSpec>(config.cells[0].generator).map));
}

TEST_CASE("a default alpha and affine bias are filled in", "[unit][config]") {
  OJ d = base();
  d["generator"].erase("alpha");
  d["generator"]["miscalibration"] =
      OJ::parse(R"({"map": "affine_logit", "weights": [[2, 0, 0], [0, 2, 0], [0, 0, 2]]})");
  const auto config = parse_experiment(d, source);
  CHECK(config.resolved["generator"]["alpha"] == 1.0);
  CHECK(config.resolved["generator"]["miscalibration"]["bias"] == OJ::parse("[0.0, 0.0, 0.0]"));
  const auto& spec = std::get<calbench::DirichletSpec>(config.cells[0].generator);
  CHECK(spec.alpha == std::vector<double>{1.0, 1.0, 1.0});
  const auto& map = std::get<calbench::AffineLogitMap>(spec.map);
  CHECK(map.weights == std::vector<double>{2, 0, 0, 0, 2, 0, 0, 0, 2});
  CHECK(map.bias == std::vector<double>{0, 0, 0});
}

TEST_CASE("a scalar alpha is expanded to one per class in the spec", "[unit][config]") {
  const auto config = parse_experiment(base(), source);
  REQUIRE(config.cells.size() == 1);
  const auto& cell = config.cells[0];
  CHECK(std::get<calbench::DirichletSpec>(cell.generator).classes == 3);
  CHECK(std::get<calbench::DirichletSpec>(cell.generator).alpha ==
        std::vector<double>{0.5, 0.5, 0.5});
  CHECK(std::get<calbench::TemperatureMap>(std::get<calbench::DirichletSpec>(cell.generator).map)
            .temperature == 0.7);
  CHECK(config.scenario == "estimator_bias");
  CHECK(config.name == "x");  // the stem of configs/x.json
}

TEST_CASE("estimator labels and parameters are built from the parameters", "[unit][config]") {
  OJ d = base();
  d["estimators"] = OJ::parse(R"([
    {"name": "ece", "bins": 10, "binning": "equal_mass", "norm": "max"},
    {"name": "ece", "norm": "l2"},
    {"name": "ece", "label": "mine"},
    {"name": "accuracy"}, {"name": "nll"}])");
  const auto config = parse_experiment(d, source);
  const auto& e = config.cells[0].estimators;
  REQUIRE(e.size() == 5);
  CHECK(e[0].label == "ece_em10_max");
  CHECK(e[1].label == "ece_ew15_l2");
  CHECK(e[2].label == "mine");
  CHECK(e[3].label == "accuracy");
  CHECK(e[4].label == "nll");
  CHECK(e[0].name == "ece");
  REQUIRE(e[0].params.size() == 5);  // bins, binning, norm, scope, convention
  CHECK(e[0].params[0].key == "bins");
  CHECK(std::get<std::int64_t>(e[0].params[0].value.data) == 10);
  CHECK(std::get<std::string>(e[0].params[1].value.data) == "equal_mass");
  CHECK(std::get<std::string>(e[0].params[2].value.data) == "max");
  CHECK(!e[0].estimator->target().has_value());
  CHECK(e[1].estimator->target() == calbench::Quantity::ece_top_l2);
  CHECK(e[3].estimator->target() == calbench::Quantity::accuracy);
  CHECK(e[4].estimator->target() == calbench::Quantity::nll);
}

TEST_CASE("the quickstart example of DESIGN.md parses into 12 cells", "[unit][config]") {
  const auto config = parse_experiment(OJ::parse(quickstart), "configs/quickstart.json");
  CHECK(config.name == "quickstart");
  CHECK(config.seed == 20261121);
  CHECK(config.cells.size() == 12);
  CHECK(config.output.directory == "results/quickstart");
  const auto& last = config.cells.back();
  CHECK(last.sample_size == 10000);
  CHECK(std::get<calbench::TemperatureMap>(std::get<calbench::DirichletSpec>(last.generator).map)
            .temperature == 1.5);
  CHECK(last.truth.samples == 4000000);
  CHECK(std::get<calbench::DirichletSpec>(last.generator).alpha.size() == 10);
  std::vector<std::string> labels;
  for (const auto& e : last.estimators) labels.push_back(e.label);
  CHECK(labels == std::vector<std::string>{"ece_ew15", "ece_em15", "brier", "nll", "accuracy"});

  const std::string text = calbench::describe_estimator_bias(config);
  INFO(text);
  CHECK(text.find("quickstart") != std::string::npos);
  CHECK(text.find("cells:       12") != std::string::npos);
  CHECK(text.find("ece_ew15, ece_em15, brier, nll, accuracy") != std::string::npos);
  CHECK(text.find("cell 11  sample_size=10000  replicates=500  "
                  "generator.miscalibration.temperature=1.5") != std::string::npos);
}

// ---- registry -------------------------------------------------------------------------------

TEST_CASE("the registry lists every kind and rejects an unknown one", "[unit][config]") {
  // The scenario rows come from the scenario table (scenarios/registry.cpp); any rows listed.
  const std::vector<calbench::ScenarioEntry> scenarios = {
      {"estimator_bias", "bias of each estimator per cell"}};
  // With no kind, one screen: every kind with each of its names, no parameters.
  const std::string summary = calbench::format_registry("", scenarios);
  for (const char* word : {"estimators (", "maps (", "families (", "scenarios (1)", "quantities (",
                           "decisions (", "recalibrators (", "affine_logit", "dirichlet",
                           "estimator_bias", "classwise_ece_l1", "venn_abers"})
    CHECK(summary.find(word) != std::string::npos);
  CHECK(summary.find("parameters:") == std::string::npos);  // none listed
  CHECK(std::count(summary.begin(), summary.end(), '\n') <= 40);
  for (const auto& row : calbench::estimator_registry())
    CHECK(summary.find(row.name) != std::string::npos);
  CHECK(summary.find('\x1b') == std::string::npos);
  // A kind in full.
  const std::string estimators = calbench::format_registry("estimators", scenarios);
  for (const char* word :
       {"ESTIMATORS", "equal_mass", "DBL_MIN", "right-closed", "bins        integer  default 15"})
    CHECK(estimators.find(word) != std::string::npos);
  CHECK(estimators.find("QUANTITIES") == std::string::npos);
  for (const auto& q : calbench::all_quantities)
    CHECK(calbench::format_registry("quantities", {}).find(std::string(calbench::to_string(q))) !=
          std::string::npos);
  // One entry by name, under its kind (a name of two kinds shows both).
  const std::string ece = calbench::format_registry("ece", scenarios);
  CHECK(ece.rfind("estimators:\n  ece  ", 0) == 0);
  CHECK(ece.find("bins        integer  default 15") != std::string::npos);
  CHECK(ece.find("ece_sweep") == std::string::npos);
  const std::string temperature = calbench::format_registry("temperature", scenarios);
  CHECK(temperature.find("maps:") != std::string::npos);
  CHECK(temperature.find("recalibrators:") != std::string::npos);
  try {
    (void)calbench::format_registry("widgets", {});
    FAIL("no error");
  } catch (const ConfigError& error) {
    CHECK(std::string(error.what())
              .find("unknown kind or name \"widgets\"; kinds: estimators, maps, families, "
                    "scenarios, quantities") != std::string::npos);
  }
}

TEST_CASE("every registry row parses with its defaults and documents its parameters",
          "[unit][config]") {
  // The contract rig of the config layer: each estimator row builds from {"name": NAME}, or
  // from its example when it has a required parameter (external: command and target).
  for (const auto& row : calbench::estimator_registry()) {
    OJ d = base();
    const bool required = std::any_of(row.params.begin(), row.params.end(),
                                      [](const auto& p) { return p.fallback == "required"; });
    d["estimators"] =
        OJ::array({required ? OJ::parse(calbench::example_object("name", row.name, row.example))
                            : OJ{{"name", row.name}}});
    const auto config = parse_experiment(d, source);
    const auto& e = config.cells[0].estimators.at(0);
    CHECK(e.name == row.name);
    // Parameters added to a row after results were published are reported only when they
    // change the estimator (norm lp's p; brier's and smooth_ece's scope at its default top/all),
    // so earlier results keep their bytes; every other parameter is always reported.
    const std::set<std::pair<std::string, std::string>> reported_when_used = {
        {"ece", "p"}, {"classwise_ece", "p"}, {"brier", "scope"}, {"smooth_ece", "scope"}};
    std::size_t expected = 0;
    for (const auto& p : row.params)
      expected += reported_when_used.contains({row.name, p.key}) ? 0 : 1;
    CHECK(e.params.size() == expected);
    CHECK(e.estimator != nullptr);
    CHECK(!row.summary.empty());
    CHECK(!row.notes.empty());
  }
  for (const auto& row : calbench::map_registry()) {
    CHECK(!row.summary.empty());
    for (const auto& param : row.params) CHECK(!param.doc.empty());
  }
}
