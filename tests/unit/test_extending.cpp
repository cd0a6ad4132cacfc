// docs/extending.md's worked example, compiled warning-free and run: tests/extending/ holds its
// files as the page shows them (checked below), laid out as they would be in lib/.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/registry.hpp"
#include "core/sample.hpp"
#include "estimators/estimators_json.hpp"
#include "extending/estimators/mce.hpp"

namespace calbench {
EstimatorEntry mce_estimator();  // tests/extending/estimators/mce_json.cpp
}

using namespace calbench;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("docs/extending.md shows the worked example's files as compiled", "[unit][registry]") {
  const std::string page = read_text(CALBENCH_SOURCE_DIR "/docs/extending.md");
  REQUIRE(!page.empty());
  for (const char* file : {"estimators/mce.hpp", "estimators/mce.cpp", "estimators/mce_json.cpp"}) {
    INFO(file);
    const std::string code = read_text(std::string(CALBENCH_SOURCE_DIR "/tests/extending/") + file);
    REQUIRE(!code.empty());
    CHECK(page.find("```cpp\n" + code + "```\n") != std::string::npos);
  }
}

TEST_CASE("docs/extending.md: the worked estimator row parses, documents and estimates",
          "[unit][registry]") {
  const std::vector<EstimatorEntry> table = {named("mce", mce_estimator())};
  {
    Problems problems;
    Json resolved;
    const auto config = parse_registry_entry(Json::parse(R"({"name": "mce"})"), "/estimators/0",
                                             problems, resolved, "estimator", table);
    REQUIRE(config);
    CHECK(config->name == "mce");
    CHECK(config->label == "mce_15");
    CHECK(resolved.at("bins") == 15);  // the default, filled into the resolved config
  }
  {
    Problems problems;
    Json resolved;
    const auto config =
        parse_registry_entry(Json::parse(R"({"name": "mce", "bins": 0})"), "/estimators/0",
                             problems, resolved, "estimator", table);
    CHECK(!config);
    REQUIRE(problems.size() == 1);
    CHECK(problems.items().front().pointer == "/estimators/0/bins");
  }
  // Known answer, 4 bins: confidences 0.6 (correct) and 0.7 (wrong) in bin 2, |0.5 - 0.65| =
  // 0.15; 0.9 and 1.0 (both correct, 1.0 in the last bin) in bin 3, |1 - 0.95| = 0.05.
  Problems problems;
  Json resolved;
  const auto config = parse_registry_entry(Json::parse(R"({"name": "mce", "bins": 4})"),
                                           "/estimators/0", problems, resolved, "estimator", table);
  REQUIRE(config);
  const Sample sample = make_sample(2, {0.6, 0.4, 0.3, 0.7, 0.1, 0.9, 0.0, 1.0}, {0, 0, 1, 1});
  EstimatorWorkspace workspace;
  CHECK(config->estimator->estimate(sample, workspace) == Approx(0.15).epsilon(1e-12));
  CHECK(!config->estimator->target());
}
