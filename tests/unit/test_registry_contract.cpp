// The contract rig over every registry row of every kind (estimators, recalibration methods,
// decision tasks, miscalibration maps, generator families). Each row:
//   - is built from its documented example (a row without one fails);
//   - rejects each parameter's bad values (a wrong type and, where it has a range, a value
//     outside it) and an unknown key, each with a problem at that key's JSON pointer;
//   - is deterministic under a fixed stream key, and gives the same bits on 1 and 2 threads.
#include <tbb/task_arena.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "config/registry.hpp"
#include "core/rng.hpp"
#include "decisions/decision_tasks_json.hpp"
#include "decisions/decision_value.hpp"
#include "estimators/estimators_json.hpp"
#include "generators/generator.hpp"
#include "generators/generators_json.hpp"
#include "recalibrators/recalibrator.hpp"
#include "recalibrators/recalibrators_json.hpp"

using namespace calbench;

namespace {

// Parses one object of a kind; returns the problems.
using ParseObject = std::function<Problems(const Json& object)>;

// `value` on 1 and on 2 threads.
template <typename F>
auto on_threads(int threads, F f) {
  tbb::task_arena arena(threads);
  return arena.execute(f);
}

bool has_problem_at(const Problems& problems, const std::string& pointer) {
  for (const auto& p : problems.items())
    if (p.pointer.rfind(pointer, 0) == 0) return true;
  return false;
}

std::string rendered(const Problems& problems) {
  return join(problems.render("rig"), "\n");
}

// The example as a complete object; fails the rig when the row has none.
template <typename R>
Json example_of(const R& row, std::string_view name_key) {
  INFO(row.name << " has no documented example");
  REQUIRE(!row.example.empty());
  return Json::parse(example_object(name_key, row.name, row.example));
}

// Builds from the example; rejects every bad value of every parameter, and an unknown key.
template <typename R>
void check_rows(const std::vector<R>& rows, std::string_view name_key, const std::string& pointer,
                const ParseObject& parse) {
  REQUIRE(!rows.empty());
  for (const auto& row : rows) {
    INFO("row " << row.name);
    const Json example = example_of(row, name_key);
    const Problems good = parse(example);
    INFO(rendered(good));
    CHECK(good.empty());
    for (const auto& param : row.params) {
      INFO("parameter " << param.key);
      CHECK(!param.bad.empty());
      for (const auto& bad : param.bad) {
        Json object = example;
        for (const auto& other : param.excludes) object.erase(other);
        object[param.key] = bad;
        INFO("bad value " << bad.dump());
        const Problems problems = parse(object);
        INFO(rendered(problems));
        CHECK(has_problem_at(problems, pointer_join(pointer, param.key)));
      }
    }
    Json unknown = example;
    unknown["no_such_parameter"] = 1;
    CHECK(has_problem_at(parse(unknown), pointer_join(pointer, "no_such_parameter")));
  }
}

Sample draw(const Generator& generator, std::size_t n, std::uint64_t replicate) {
  Engine engine = make_engine({20261123, 0, replicate, Purpose::sample});
  Sample sample;
  GeneratorScratch scratch;
  generator.sample(engine, n, sample, scratch);
  return sample;
}

Generator rig_generator(std::size_t classes) {
  DirichletSpec spec;
  spec.classes = classes;
  spec.alpha = std::vector<double>(classes, 0.6);
  spec.map = TemperatureMap{0.7};
  return Generator(spec);
}

}  // namespace

TEST_CASE("contract: every estimator row", "[unit][registry]") {
  const auto parse = [](const Json& object) {
    Problems problems;
    Json resolved;
    (void)parse_estimator(object, "/estimators/0", problems, resolved);
    return problems;
  };
  check_rows(estimator_registry(), "name", "/estimators/0", parse);

  const Sample sample = draw(rig_generator(3), 400, 0);
  for (const auto& row : estimator_registry()) {
    INFO("row " << row.name);
    Problems problems;
    Json resolved;
    const auto config =
        parse_estimator(example_of(row, "name"), "/estimators/0", problems, resolved);
    REQUIRE(config);
    const auto value = [&] {
      EstimatorWorkspace workspace;
      return config->estimator->estimate(sample, workspace);
    };
    const double first = on_threads(1, value);
    CHECK(std::isfinite(first));
    CHECK(on_threads(1, value) == first);
    CHECK(on_threads(2, value) == first);
  }
}

TEST_CASE("contract: every recalibrator row", "[unit][registry]") {
  const auto parse = [](const Json& object) {
    Problems problems;
    Json resolved;
    (void)parse_recalibration_method(object, "/methods/0", problems, resolved);
    return problems;
  };
  check_rows(recalibrator_registry(), "name", "/methods/0", parse);

  const Generator generator = rig_generator(3);
  const Sample fit_sample = draw(generator, 600, 1);
  const Sample test_sample = draw(generator, 200, 2);
  for (const auto& row : recalibrator_registry()) {
    INFO("row " << row.name);
    Problems problems;
    Json resolved;
    const auto config =
        parse_recalibration_method(example_of(row, "name"), "/methods/0", problems, resolved);
    REQUIRE(config);
    const auto outputs = [&] {
      const auto model = fit(*config->method, fit_sample);
      Sample out;
      apply_to_sample(*model, test_sample, out);
      return out.p;
    };
    const std::vector<double> first = on_threads(1, outputs);
    REQUIRE(first.size() == test_sample.p.size());
    CHECK(on_threads(1, outputs) == first);
    CHECK(on_threads(2, outputs) == first);
  }
}

TEST_CASE("contract: every decision task row", "[unit][registry]") {
  // Examples are for K = 2, the classes a `decision` section is read with here.
  const auto read = [](const Json& object, Problems& problems) {
    ObjectReader d(object, "/decision", problems);
    return parse_object(d, "task", "decision task", decision_registry(), std::size_t{2});
  };
  check_rows(decision_registry(), "task", "/decision", [&](const Json& object) {
    Problems problems;
    (void)read(object, problems);
    return problems;
  });

  const Generator generator = rig_generator(2);
  for (const auto& row : decision_registry()) {
    INFO("row " << row.name);
    Problems problems;
    const auto spec = read(example_of(row, "task"), problems);
    REQUIRE(spec);
    const auto task = make_task(*spec);
    const auto value = [&] {
      const DecisionValue v = exact_decision_value(generator, *task, 20'000);
      return std::vector<double>{v.policy.value, v.oracle.value, v.cost.value};
    };
    const std::vector<double> first = on_threads(1, value);
    CHECK(on_threads(1, value) == first);
    CHECK(on_threads(2, value) == first);
  }
}

namespace {

// A generator object's draws under a fixed key, on `threads` threads.
std::vector<double> draws(const Json& generator_object, int threads) {
  Problems problems;
  Json resolved;
  const auto parsed = parse_generator(generator_object, "/generator", problems, resolved);
  REQUIRE(parsed);
  return on_threads(threads, [&] {
    const Sample sample = draw(Generator(parsed->spec), 300, 3);
    std::vector<double> out = sample.p;
    out.insert(out.end(), sample.label.begin(), sample.label.end());
    return out;
  });
}

}  // namespace

TEST_CASE("contract: every miscalibration map row", "[unit][registry]") {
  // Each map inside a K = 3 dirichlet family (the map examples are for K = 3).
  const auto family = [](const Json& map) {
    return Json{{"family", "dirichlet"}, {"classes", 3}, {"alpha", 0.5}, {"miscalibration", map}};
  };
  check_rows(map_registry(), "map", "/generator/miscalibration", [&](const Json& map) {
    Problems problems;
    Json resolved;
    (void)parse_generator(family(map), "/generator", problems, resolved);
    return problems;
  });
  for (const auto& row : map_registry()) {
    INFO("row " << row.name);
    const Json object = family(example_of(row, "map"));
    const auto first = draws(object, 1);
    CHECK(draws(object, 1) == first);
    CHECK(draws(object, 2) == first);
  }
}

TEST_CASE("contract: every generator family row", "[unit][registry]") {
  check_rows(family_registry(), "family", "/generator", [](const Json& object) {
    Problems problems;
    Json resolved;
    (void)parse_generator(object, "/generator", problems, resolved);
    return problems;
  });
  for (const auto& row : family_registry()) {
    INFO("row " << row.name);
    const Json object = example_of(row, "family");
    const auto first = draws(object, 1);
    CHECK(draws(object, 1) == first);
    CHECK(draws(object, 2) == first);
  }
}
