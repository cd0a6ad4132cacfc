// docs/extending.md's worked example, built from the page itself (tests/CMakeLists.txt takes
// its two blocks, the file lib/estimators/mce.cpp and the list's line, into the build): the
// file compiles warning-free through the line's CMake reader, and a table built from the line
// as estimators_json.cpp builds estimator_registry() parses, documents and runs the row.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/registry.hpp"
#include "core/sample.hpp"
#include "estimators/estimators_json.hpp"

namespace calbench {
#define CALBENCH_ESTIMATOR(name, file) EstimatorEntry name##_estimator();
#include "extending/lib/estimators/estimator_rows.def"
#undef CALBENCH_ESTIMATOR
}  // namespace calbench

using namespace calbench;

namespace {

// The page's table: its one line, expanded as estimators_json.cpp expands the list.
std::vector<EstimatorEntry> page_table() {
  return {
#define CALBENCH_ESTIMATOR(name, file) named(#name, name##_estimator()),
#include "extending/lib/estimators/estimator_rows.def"
#undef CALBENCH_ESTIMATOR
  };
}

std::optional<EstimatorConfig> parse(const std::string& entry, Problems& problems) {
  Json resolved;
  return parse_registry_entry(Json::parse(entry), "/estimators/0", problems, resolved, "estimator",
                              page_table());
}

// Rows whose labels are 0, 0, 1, 1 and whose probabilities of class 1 are 0.4, 0.7, 0.9, 1:
// confidences 0.6 (predicts 0, correct), 0.7 (predicts 1, wrong), 0.9 and 1 (correct).
Sample worked_sample() {
  return make_sample(2, {0.6, 0.4, 0.3, 0.7, 0.1, 0.9, 0.0, 1.0}, {0, 0, 1, 1});
}

}  // namespace

TEST_CASE("docs/extending.md: an estimator is one new file and one line", "[unit][registry]") {
  // The page's list block holds exactly one row, and that row is the page's estimator.
  const auto table = page_table();
  REQUIRE(table.size() == 1);
  CHECK(table.front().name == "mce");
  // Its row is covered by what the contract rig reads: an example, and bad values per parameter.
  CHECK(table.front().example == R"({"bins": 10})");
  for (const auto& param : table.front().params) CHECK(!param.bad.empty());
}

TEST_CASE("docs/extending.md: the worked estimator row parses, documents and estimates",
          "[unit][registry]") {
  {
    Problems problems;
    Json resolved;
    const auto config = parse_registry_entry(Json::parse(R"({"name": "mce"})"), "/estimators/0",
                                             problems, resolved, "estimator", page_table());
    REQUIRE(config);
    CHECK(config->name == "mce");
    CHECK(config->label == "mce_15");
    CHECK(resolved.at("bins") == 15);  // the default, filled into the resolved config
  }
  {
    Problems problems;
    CHECK(!parse(R"({"name": "mce", "bins": 0})", problems));
    REQUIRE(problems.size() == 1);
    CHECK(problems.items().front().pointer == "/estimators/0/bins");
  }
  const Sample sample = worked_sample();
  EstimatorWorkspace workspace;
  // By hand, 4 bins: 0.6 (correct) and 0.7 (wrong) in bin floor(4 s) = 2, |1/2 - 0.65| = 0.15;
  // 0.9 and 1.0 (both correct; 1.0 in the last bin, min(3, 4)) in bin 3, |1 - 0.95| = 0.05.
  // MCE = max(0.15, 0.05) = 0.15.
  Problems problems;
  const auto four = parse(R"({"name": "mce", "bins": 4})", problems);
  REQUIRE(four);
  CHECK(four->estimator->estimate(sample, workspace) == Approx(0.15).epsilon(1e-12));
  CHECK(!four->estimator->target());
  // One bin: |accuracy - mean confidence| = |3/4 - 3.2/4| = 0.05.
  const auto one = parse(R"({"name": "mce", "bins": 1})", problems);
  REQUIRE(one);
  CHECK(one->estimator->estimate(sample, workspace) == Approx(0.05).epsilon(1e-12));
  // Ten bins: 0.6 alone in bin 6, |1 - 0.6| = 0.4; 0.7 alone in bin 7, |0 - 0.7| = 0.7; 0.9
  // and 1.0 in bin 9, 0.05. MCE = 0.7.
  const auto ten = parse(R"({"name": "mce", "bins": 10})", problems);
  REQUIRE(ten);
  CHECK(ten->estimator->estimate(sample, workspace) == Approx(0.7).epsilon(1e-12));
  CHECK(problems.empty());
}
