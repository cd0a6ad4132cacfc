// A user's own data: the CSV reader's forgiving parts (a header, whole-float labels, rounded
// probability rows with --renormalize, hints that never mislead) and fitted recalibration
// models saved and loaded (recalibrators/fitted_model_json.hpp): every registry method's loaded
// model gives the fitted model's bits, and bad files are refused with their JSON pointer.
#include <catch2/catch.hpp>
#include <fstream>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "data/model_outputs.hpp"
#include "generator_draws.hpp"
#include "generators/generator.hpp"
#include "recalibrators/fitted_model_json.hpp"
#include "recalibrators/recalibrators_json.hpp"
#include "temp_files.hpp"

using namespace calbench;
using calbench::testing::TempDir;

namespace {

std::filesystem::path write(const TempDir& dir, const std::string& name, const std::string& text) {
  const auto file = dir.path / name;
  std::ofstream(file, std::ios::binary) << text;
  return file;
}

std::string error_of(const std::filesystem::path& file, ValueFormat format = {}) {
  try {
    (void)read_csv_outputs(file, format);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

Sample draw(std::size_t classes, std::size_t n, std::uint64_t replicate) {
  DirichletSpec spec;
  spec.classes = classes;
  spec.alpha = std::vector<double>(classes, 0.6);
  spec.map = TemperatureMap{0.7};
  return testing::draw(spec, n, 20261126, false, 0, replicate);
}

std::vector<std::string> config_problems(const Json& document) {
  try {
    (void)read_fitted_model(document, "model.json");
  } catch (const ConfigError& error) {
    return error.problems();
  }
  return {};
}

}  // namespace

TEST_CASE("data: numpy.savetxt's header and float labels are read", "[unit][data]") {
  TempDir dir;
  // numpy.savetxt(f, np.column_stack([y, p]), delimiter=",", header="label,p0,p1,p2") with the
  // default fmt "%.18e" writes exactly this.
  const auto file = write(dir, "savetxt.csv",
                          "# label,p0,p1,p2\n"
                          "1.000000000000000000e+00,2.500000000000000000e-01,"
                          "5.000000000000000000e-01,2.500000000000000000e-01\n"
                          "2.0,0.125,0.125,0.75\n"
                          "0,0.5,0.25,0.25\n");
  const Sample s = read_csv_outputs(file, {});
  REQUIRE(s.size == 3);
  CHECK(s.classes == 3);
  CHECK(s.label == std::vector<std::uint32_t>{1, 2, 0});
  CHECK(s.p[1] == 0.5);
  // pandas.DataFrame.to_csv(index=False): a plain header.
  CHECK(
      read_csv_outputs(write(dir, "pandas.csv", "label,a,b\n0,0.5,0.5\n1,0.25,0.75\n"), {}).size ==
      2);
  // A header must have the rows' field count, a half-numeric first line is neither.
  CHECK_THAT(error_of(write(dir, "short.csv", "label,a\n0,0.5,0.5\n")),
             Catch::Contains("short.csv: line 2: expected 2 fields, as in the header on line 1"));
  CHECK_THAT(error_of(write(dir, "mixed.csv", "label,0,1\n0,0.5,0.5\n")),
             Catch::Contains("mixed.csv: line 1: field 1 \"label\" is not a number but field 2"));
  // Only the first line can be a header; a fractional label is refused.
  CHECK_THAT(error_of(write(dir, "late.csv", "0,0.5,0.5\nlabel,a,b\n")),
             Catch::Contains("late.csv: line 2: label \"label\" is not an integer class index"));
  CHECK_THAT(error_of(write(dir, "half.csv", "0,0.5,0.5\n1.5,0.5,0.5\n")),
             Catch::Contains("half.csv: line 2: label \"1.5\" is not an integer class index"));
  // "1e-400" underflows to the double 0 but is no whole number (tests/cli/fuzz_inputs.py found
  // it accepted as class 0); "1e0" is a whole number.
  CHECK_THAT(error_of(write(dir, "tiny.csv", "0,0.5,0.5\n1e-400,0.5,0.5\n")),
             Catch::Contains("tiny.csv: line 2: label \"1e-400\" is not an integer class index"));
  CHECK(read_csv_outputs(write(dir, "exp.csv", "0,0.5,0.5\n1e0,0.5,0.5\n"), {}).label ==
        std::vector<std::uint32_t>{0, 1});
}

TEST_CASE("data: rounded probability rows and the hints", "[unit][data]") {
  TempDir dir;
  // Four decimals, K = 3: the row sums to 0.9999, within K x 5e-4 = 0.0015 of 1.
  const auto rounded = write(dir, "rounded.csv", "0,0.3333,0.3333,0.3333\n1,0.5,0.25,0.25\n");
  const std::string refused = error_of(rounded);
  CHECK_THAT(refused, Catch::Contains("rounded.csv: line 1: probabilities sum to 0.9999"));
  CHECK_THAT(refused, Catch::Contains("--renormalize"));
  CHECK_THAT(refused, !Catch::Contains("--logits"));  // the hint that misled (issue #25)
  const Sample s = read_csv_outputs(rounded, {.renormalize = true});
  CHECK(s.p[0] == 0.3333 / 0.9999);
  CHECK(s.p[0] + s.p[1] + s.p[2] == Approx(1.0).epsilon(1e-15));
  CHECK(s.p[3] == 0.5);
  // The tolerance is K x 5e-4 (3 decimals or more): beyond it even --renormalize refuses.
  CHECK(rounded_sum_tolerance(3) == 3 * 5e-4);
  const auto far = write(dir, "far.csv", "0,0.3,0.3,0.3\n");
  CHECK_THAT(error_of(far, {.renormalize = true}), Catch::Contains("too far off for rounding"));
  CHECK_THAT(error_of(far), !Catch::Contains("--logits"));
  // Values that cannot be probabilities point to --logits.
  CHECK_THAT(error_of(write(dir, "big.csv", "0,2.5,-1.5,0.5\n")), Catch::Contains("use --logits"));
  CHECK_THAT(error_of(write(dir, "over.csv", "0,1.5,0.5,0.5\n")), Catch::Contains("use --logits"));
}

TEST_CASE("fitted model: every registry method saved and loaded gives the same bits",
          "[unit][registry][recalibrate]") {
  const Sample fit_sample = draw(3, 600, 1), test_sample = draw(3, 300, 2);
  for (const auto& row : recalibrator_registry()) {
    INFO("row " << row.name);
    const Json method = Json::parse(example_object("name", row.name, row.example));
    const FittedModel fitted = fit_model(method, "test", fit_sample);
    // The scenario's path: the registry row's method, fitted by the shared verb.
    Problems problems;
    Json resolved;
    const auto config = parse_recalibration_method(method, "", problems, resolved);
    REQUIRE(config);
    const auto scenario_model = fit(*config->method, fit_sample);
    std::vector<double> expected(test_sample.p.size());
    apply(*scenario_model, test_sample.p, 3, expected);
    CHECK(apply_fitted_model(fitted, test_sample.p, 3, "test") == expected);
    // Through the file's text and back.
    const std::string text = fitted_model_json(fitted).dump(2);
    const FittedModel loaded = read_fitted_model(Json::parse(text), "model.json");
    CHECK(loaded.label == fitted.label);
    CHECK(loaded.method == fitted.method);
    CHECK(apply_fitted_model(loaded, test_sample.p, 3, "test") == expected);
    CHECK(fitted_model_json(loaded).dump(2) == text);
  }
}

namespace {

// The kinds of a state and of its parts, as a string: "one_vs_rest(isotonic,isotonic,isotonic)".
std::string kind_tree(const FittedState& state) {
  std::string out = state.kind;
  if (state.parts.empty()) return out;
  out += '(';
  for (std::size_t j = 0; j < state.parts.size(); ++j) {
    if (j > 0) out += ',';
    out += kind_tree(state.parts[j]);  // appended: GCC 12 warns (-Wrestrict) on "," + ...
  }
  return out + ')';
}

}  // namespace

TEST_CASE("fitted model: a file whose method and model disagree is refused",
          "[unit][registry][recalibrate]") {
  // Issue #38: apply took a model file whose "method" had been edited (or taken from another
  // file) and mislabelled its output. Every registry method's file, its method swapped for each
  // other row's: refused exactly when the two fits' states differ in kind, down their parts.
  for (const std::size_t K : {2, 3}) {
    const Sample sample = draw(K, 600, 4);
    std::vector<Json> files;
    std::vector<std::string> kinds;
    for (const auto& row : recalibrator_registry()) {
      const FittedModel fitted =
          fit_model(Json::parse(example_object("name", row.name, row.example)), "test", sample);
      files.push_back(fitted_model_json(fitted));
      kinds.push_back(kind_tree(fitted.model->state()));
    }
    for (std::size_t a = 0; a < files.size(); ++a)
      for (std::size_t b = 0; b < files.size(); ++b) {
        INFO("K = " << K << ", method " << files[a]["method"].dump() << ", model " << kinds[b]);
        Json mixed = files[b];
        mixed["method"] = files[a]["method"];
        mixed["label"] = files[a]["label"];
        const auto problems = config_problems(mixed);
        if (kinds[a] == kinds[b]) {
          CHECK(problems.empty());
        } else {
          REQUIRE(problems.size() == 1);
          CHECK_THAT(problems[0], Catch::Contains("model.json: /model: a \"" +
                                                  files[b]["model"]["kind"].get<std::string>() +
                                                  "\" model, but /method is "));
          CHECK_THAT(problems[0], Catch::Contains("the method and the model disagree"));
        }
      }
  }
}

TEST_CASE("fitted model: bad files name the JSON pointer", "[unit][recalibrate]") {
  const Sample sample = draw(3, 300, 3);
  const Json good = fitted_model_json(fit_model(Json{{"name", "isotonic"}}, "test", sample));
  REQUIRE(config_problems(good).empty());
  Json bad = good;
  bad["model"]["parts"][1]["x"][0] = 2.0;  // out of order
  CHECK_THAT(config_problems(bad).at(0),
             Catch::Contains("model.json: /model/parts/1: x must be increasing"));
  bad = good;
  bad["model"]["parts"][2]["y"].erase(0);
  CHECK_THAT(config_problems(bad).at(0), Catch::Contains("/model/parts/2: y has"));
  bad = good;
  bad["model"]["parts"][0]["kind"] = "spline";
  CHECK_THAT(config_problems(bad).at(0), Catch::Contains("unknown binary map \"spline\""));
  bad = good;
  bad["classes"] = 4;
  CHECK_THAT(config_problems(bad).at(0),
             Catch::Contains("a model of 3 classes, but /classes is 4"));
  bad = good;
  bad["method"]["name"] = "nope";
  CHECK_THAT(config_problems(bad).at(0), Catch::Contains("/method/name"));
  bad = good;
  bad["model"]["parts"][0]["x"][1] = "0.5";
  CHECK_THAT(config_problems(bad).at(0), Catch::Contains("/model/parts/0/x/1"));
  bad = good;
  bad.erase("model");
  CHECK_THAT(config_problems(bad).at(0), Catch::Contains("/model: required key is missing"));
  bad = good;
  bad["format"] = "something";
  CHECK_THAT(config_problems(bad).at(0), Catch::Contains("/format"));
  // A temperature must be > 0; K must match the data.
  Json t = fitted_model_json(fit_model(Json{{"name", "temperature"}}, "test", sample));
  t["model"]["temperature"] = -1.0;
  CHECK_THAT(config_problems(t).at(0), Catch::Contains("/model: temperature must be > 0"));
  const FittedModel fitted = fit_model(Json{{"name", "temperature"}}, "test", sample);
  const std::vector<double> four(8, 0.25);
  CHECK_THROWS_AS(apply_fitted_model(fitted, four, 4, "data.csv"), InputError);
}

TEST_CASE("fitted model: the method spec is a name or an object", "[unit][recalibrate]") {
  CHECK(method_spec("temperature", "--method") == Json{{"name", "temperature"}});
  CHECK(method_spec(R"({"name": "bbq", "prior_strength": 4})", "--method")["prior_strength"] == 4);
  CHECK_THROWS_AS(method_spec("{", "--method"), ConfigError);
  const Sample sample = draw(3, 100, 4);
  CHECK_THROWS_AS(fit_model(Json{{"name", "nope"}}, "--method", sample), ConfigError);
}
