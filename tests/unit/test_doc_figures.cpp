// The figures README.md and docs/ quote from the shipped configs (the table in docs/testing.md):
// each [slow] case runs one config of configs/ in full through the command line, as a reader
// would, and checks every quoted number to the precision it is printed with. A config or code
// change that moves a quoted figure fails here until the text is corrected.
#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "config/json_support.hpp"
#include "estimators/coverage_caveats.hpp"
#include "estimators/estimators_json.hpp"
#include "temp_files.hpp"

namespace {

namespace fs = std::filesystem;
using Row = std::map<std::string, std::string>;
using calbench::testing::read_text;
using calbench::testing::TempDir;

struct Run {
  std::string printed;  // stdout of `calbench run` without --quiet
  std::vector<Row> cells;
  std::vector<Row> requirements;
  std::vector<Row> intervals;               // intervals.csv (estimator_bias with intervals)
  std::vector<Row> replicates;              // replicates.csv when the config asks for it
  std::vector<Row> leaderboard, agreement;  // recalibration: leaderboard*.csv
  nlohmann::json summary;
};

// One CSV line's fields (RFC 4180: a field in double quotes may hold commas, "" is a quote, as
// cells.csv writes a swept object).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  return out;
}

// A tidy CSV file as rows keyed by column; leading `#` lines (a meta block) are skipped.
std::vector<Row> read_csv(const fs::path& file) {
  std::vector<Row> rows;
  if (!fs::exists(file)) return rows;
  std::stringstream in(read_text(file));
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#') continue;
    if (header.empty()) {
      header = split_csv(line);
      continue;
    }
    const auto fields = split_csv(line);
    REQUIRE(fields.size() == header.size());
    Row row;
    for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

// A rows file named relative to the config's folder (an empirical generator's `rows` with its
// `sha256`), made absolute so that the patched copy in a temporary folder still finds it.
void absolute_rows(nlohmann::ordered_json& j, const fs::path& folder) {
  if (j.is_object() && j.contains("rows") && j["rows"].is_string() && j.contains("sha256")) {
    const fs::path rows = j["rows"].get<std::string>();
    if (rows.is_relative()) j["rows"] = (folder / rows).string();
  }
  if (j.is_structured())
    for (auto& child : j) absolute_rows(child, folder);
}

// Runs configs/NAME.json (NAME may be papers/X) through the command line, merged with the JSON
// merge patch `patch` (RFC 7386; empty: as shipped), once per (name, patch) per test process.
const Run& run_config(const std::string& name, const std::string& patch = "") {
  static std::map<std::string, Run> runs;
  static TempDir dir;
  const std::string key = name + "|" + patch;
  if (auto it = runs.find(key); it != runs.end()) return it->second;
  const std::string id = "run" + std::to_string(runs.size());
  fs::path config = fs::path(CALBENCH_SOURCE_DIR) / "configs" / (name + ".json");
  if (!patch.empty()) {
    auto merged = nlohmann::ordered_json::parse(read_text(config));
    merged.merge_patch(nlohmann::ordered_json::parse(patch));
    absolute_rows(merged, config.parent_path());
    config = dir.path / (id + ".json");
    std::ofstream(config) << merged.dump(2) << '\n';
  }
  const fs::path out = dir.path / id;
  const fs::path printed = dir.path / (id + ".out");
  const std::string command = std::string("'") + CALBENCH_BINARY + "' run '" + config.string() +
                              "' --threads 2 --no-report --out '" + out.string() + "' >'" +
                              printed.string() + "' 2>/dev/null";
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
  Run run;
  run.printed = read_text(printed);
  run.cells = read_csv(out / "cells.csv");
  run.requirements = read_csv(out / "requirements.csv");
  run.intervals = read_csv(out / "intervals.csv");
  run.replicates = read_csv(out / "replicates.csv");
  run.leaderboard = read_csv(out / "leaderboard.csv");
  run.agreement = read_csv(out / "leaderboard_agreement.csv");
  run.summary = nlohmann::json::parse(read_text(out / "summary.json"));
  return runs.emplace(key, std::move(run)).first->second;
}

// The trimmed cells of a markdown table row "| a | b |" ({"a", "b"}; an empty cell is "").
std::vector<std::string> markdown_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream row(line.substr(line.find('|') + 1));
  for (std::string cell; std::getline(row, cell, '|');) {
    const auto a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
    cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  return cells;
}

// Runs configs/NAME.json as shipped.
const Run& shipped(const std::string& name) {
  return run_config(name);
}

// The one row whose columns have the given values.
const Row& row(const std::vector<Row>& rows,
               const std::vector<std::pair<std::string, std::string>>& key) {
  const Row* found = nullptr;
  for (const auto& r : rows) {
    bool match = true;
    for (const auto& [column, value] : key)
      match = match && r.count(column) && r.at(column) == value;
    if (!match) continue;
    INFO("more than one row matches");
    REQUIRE(found == nullptr);
    found = &r;
  }
  INFO("no row matches");
  REQUIRE(found != nullptr);
  return *found;
}

double number(const Row& r, const std::string& column) {
  REQUIRE(r.count(column));
  return std::stod(r.at(column));
}

// A value as the docs print it: fixed with `decimals` digits, with an explicit sign when asked.
std::string fixed(double value, int decimals, bool sign = false) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, sign ? "%+.*f" : "%.*f", decimals, value);
  return buffer;
}

std::string scientific(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*e", decimals, value);
  return buffer;
}

bool printed_line(const Run& run, const std::string& line) {
  return run.printed.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("README: the quickstart figures", "[slow][e2e][docs]") {
  const auto& cells = shipped("quickstart").cells;
  auto ece = [&](const char* T, const char* n) {
    return row(cells, {{"estimator", "ece_ew15"},
                       {"generator.miscalibration.temperature", T},
                       {"sample_size", n}});
  };
  CHECK(fixed(number(ece("0.7", "100"), "truth"), 4) == "0.1008");
  CHECK(fixed(number(ece("0.7", "100"), "mean"), 3) == "0.146");
  CHECK(fixed(number(ece("0.7", "100"), "bias"), 3, true) == "+0.045");
  CHECK(fixed(number(ece("0.7", "1000"), "mean"), 3) == "0.102");
  CHECK(fixed(number(ece("0.7", "1000"), "bias"), 4, true) == "+0.0016");
  CHECK(fixed(number(ece("0.7", "10000"), "mean"), 4) == "0.1008");
  CHECK(fixed(number(ece("0.7", "10000"), "bias"), 4, true) == "+0.0001");
  CHECK(ece("1", "100").at("truth") == "0");
  CHECK(ece("1", "100").at("truth_method") == "closed_form");
  CHECK(fixed(number(ece("1", "100"), "mean"), 3) == "0.102");
  CHECK(fixed(number(ece("1", "1000"), "mean"), 3) == "0.034");
  CHECK(fixed(number(ece("1", "10000"), "mean"), 3) == "0.011");
}

TEST_CASE("docs/truth.md: the quickstart's binning bias", "[slow][e2e][docs]") {
  const auto& cells = shipped("quickstart").cells;
  const std::vector<std::pair<const char*, const char*>> quoted = {
      {"0.5", "-0.000021"}, {"0.7", "+0.000011"}, {"1", "+0.000000"}, {"1.5", "-0.000024"}};
  for (const char* estimator : {"ece_ew15", "ece_em15"})
    for (const auto& [T, bias] : quoted) {
      INFO(estimator << " at T = " << T);
      const auto& r = row(cells, {{"estimator", estimator},
                                  {"generator.miscalibration.temperature", T},
                                  {"sample_size", "1000"}});
      CHECK(fixed(number(r, "binning_bias"), 6, true) == bias);
      // "0 (T = 1, exact)": both values are closed-form zeros up to rounding; the others "all
      // within their Monte Carlo error" (two standard errors).
      if (std::string(T) == "1")
        CHECK(std::abs(number(r, "binning_bias")) < 1e-15);
      else
        CHECK(std::abs(number(r, "binning_bias")) <= 2.0 * number(r, "population_error"));
    }
}

TEST_CASE("README: the estimator zoo's findings", "[slow][e2e][docs]") {
  const auto& cells = shipped("estimator_zoo").cells;
  auto at = [&](const char* estimator, const char* n) {
    return row(cells, {{"estimator", estimator}, {"sample_size", n}});
  };
  CHECK(fixed(number(at("ece_ew15", "100"), "bias"), 3, true) == "+0.066");
  CHECK(fixed(number(at("ece_ew15", "1000"), "bias"), 3, true) == "+0.005");
  CHECK(fixed(number(at("ece_ew15", "10000"), "bias"), 4, true) == "-0.0002");
  const auto& kde = at("kde_canonical_b0.03", "10000");
  CHECK(fixed(number(kde, "mean"), 2) == "0.79");
  CHECK(fixed(number(kde, "truth"), 3) == "0.146");
  CHECK(std::round(number(kde, "mean") / number(kde, "truth")) == 5.0);  // "fivefold"
}

TEST_CASE("README: the triage frontier and its figures", "[slow][e2e][docs]") {
  const auto& run = shipped("requirements_triage");
  for (const char* line :
       {"  generator.miscalibration.temperature = 0.4: minimal accuracy 0.8790 (ece_top_l1 "
        "0.0681), between cell 15 (accuracy 0.8659) and cell 10 (accuracy 0.8988)",
        "  generator.miscalibration.temperature = 0.6: minimal accuracy 0.8691 (ece_top_l1 "
        "0.0468), between cell 16 (accuracy 0.8659) and cell 11 (accuracy 0.8988)",
        "  generator.miscalibration.temperature = 1.0: minimal accuracy 0.8606 (ece_top_l1 "
        "0.0000), between cell 22 (accuracy 0.8398) and cell 17 (accuracy 0.8659)",
        "  generator.miscalibration.temperature = 1.5: minimal accuracy 0.8695 (ece_top_l1 "
        "0.0477), between cell 18 (accuracy 0.8659) and cell 13 (accuracy 0.8988)",
        "  generator.miscalibration.temperature = 2.5: minimal accuracy 0.9007 (ece_top_l1 "
        "0.1019), between cell 14 (accuracy 0.8988) and cell 9 (accuracy 0.9187)"}) {
    INFO(line);
    CHECK(printed_line(run, line));
  }
  double max_cost = 0.0, min_sd = 1.0, max_sd = 0.0;
  for (const auto& r : run.cells) {
    max_cost = std::max(max_cost, number(r, "miscalibration_cost"));
    min_sd = std::min(min_sd, number(r, "realised_sd"));
    max_sd = std::max(max_sd, number(r, "realised_sd"));
  }
  CHECK(fixed(max_cost, 3) == "0.022");
  CHECK(fixed(min_sd, 3) == "0.015");
  CHECK(fixed(max_sd, 3) == "0.020");
}

TEST_CASE("README: the betting frontier and its figures", "[slow][e2e][docs]") {
  const auto& run = shipped("requirements_betting");
  for (const char* line :
       {"  generator.miscalibration.temperature = 0.5: minimal accuracy 0.6478 (ece_top_l1 "
        "0.0974), between cell 10 (accuracy 0.6367) and cell 5 (accuracy 0.6562)",
        "  generator.miscalibration.temperature = 0.7: minimal accuracy 0.5811 (ece_top_l1 "
        "0.0317), between cell 26 (accuracy 0.5806) and cell 21 (accuracy 0.5982)",
        "  generator.miscalibration.temperature = 1.0: minimal accuracy 0.5719 (ece_top_l1 "
        "0.0000), between cell 32 (accuracy 0.5700) and cell 27 (accuracy 0.5806)",
        "  generator.miscalibration.temperature = 1.4: minimal accuracy 0.5757 (ece_top_l1 "
        "0.0210), between cell 33 (accuracy 0.5700) and cell 28 (accuracy 0.5806)",
        "  generator.miscalibration.temperature = 2.0: minimal accuracy 0.5858 (ece_top_l1 "
        "0.0418), between cell 29 (accuracy 0.5806) and cell 24 (accuracy 0.5982)"}) {
    INFO(line);
    CHECK(printed_line(run, line));
  }
  // "negative growth in cells 15, 20, 25, 30 and 35", all at 61 % accuracy or less.
  std::vector<std::string> losing;
  for (const auto& r : run.cells)
    if (number(r, "expected_utility") < 0.0) {
      losing.push_back(r.at("cell"));
      CHECK(number(r, "accuracy") < 0.615);
    }
  CHECK(losing == std::vector<std::string>{"15", "20", "25", "30", "35"});
  auto cost = [&](const char* T) {
    return number(
        row(run.cells, {{"generator.alpha", "2"}, {"generator.miscalibration.temperature", T}}),
        "miscalibration_cost");
  };
  CHECK(fixed(cost("0.5"), 3) == "0.058");
  CHECK(fixed(cost("2"), 3) == "0.023");
}

TEST_CASE("README: the triage requirement on an accuracy x ECE grid", "[slow][e2e][docs]") {
  const auto& requirements = shipped("requirements_triage_targets").requirements;
  auto minimal = [&](const char* direction, const char* ece) {
    return fixed(number(row(requirements, {{"generator.target.direction", direction},
                                           {"generator.target.ece_top_l1", ece}}),
                        "minimal_accuracy"),
                 3);
  };
  CHECK(minimal("overconfident", "0") == "0.861");
  CHECK(minimal("overconfident", "0.025") == "0.863");
  CHECK(minimal("overconfident", "0.05") == "0.870");
  CHECK(minimal("overconfident", "0.075") == "0.884");
  CHECK(minimal("underconfident", "0.075") == "0.882");
}

TEST_CASE("README, docs/decisions.md: the cost of miscalibration after recalibration",
          "[slow][e2e][docs]") {
  const auto& cells = shipped("requirements_triage_recalibrated").cells;
  double before = 0.0, after = 0.0;
  for (const auto& r : cells) {
    before = std::max(before, number(r, "miscalibration_cost"));
    after = std::max(after, number(r, "recalibrated_cost_mean"));
  }
  CHECK(fixed(before, 3) == "0.022");
  CHECK(scientific(after, 1) == "3.5e-04");
}

TEST_CASE("docs/generators.md: target_grid reaches every target", "[slow][e2e][docs]") {
  const auto& summary = shipped("target_grid").summary;
  double worst = 0.0;
  for (const auto& cell : summary.at("cells"))
    for (const char* q : {"accuracy", "ece_top_l1"})
      worst = std::max(worst, std::abs(cell.at("truth").at(q).at("value").get<double>() -
                                       cell.at("target").at(q).get<double>()));
  CHECK(scientific(worst, 1) == "2.2e-04");
}

TEST_CASE("README, docs/recalibration.md: Guo et al. from first principles", "[slow][e2e][docs]") {
  const auto& cells = shipped("recalibration_guo").cells;
  auto truth = [&](const char* fit, const char* method, const char* quantity) {
    return number(
        row(cells,
            {{"fit_size", fit}, {"name", method}, {"kind", "truth"}, {"quantity", quantity}}),
        "mean");
  };
  auto temperature = [&](const char* fit) {
    return number(row(cells, {{"fit_size", fit},
                              {"name", "temperature"},
                              {"kind", "parameter"},
                              {"quantity", "temperature"}}),
                  "mean");
  };
  CHECK(fixed(truth("500", "uncalibrated", "accuracy"), 3) == "0.483");
  CHECK(fixed(truth("500", "uncalibrated", "ece_top_l1"), 3) == "0.267");
  // The table: true ECE after recalibration.
  const std::vector<std::tuple<const char*, const char*, const char*, const char*, const char*>>
      table = {{"500", "0.0094", "0.155", "0.165", "0.095"},
               {"2000", "0.0045", "0.123", "0.084", "0.092"},
               {"10000", "0.0018", "0.045", "0.044", "0.086"}};
  for (const auto& [fit, t, hb, iso, bbq] : table) {
    INFO("fit_size " << fit);
    CHECK(fixed(truth(fit, "temperature", "ece_top_l1"), 4) == t);
    CHECK(fixed(truth(fit, "histogram_binning", "ece_top_l1"), 3) == hb);
    CHECK(fixed(truth(fit, "isotonic", "ece_top_l1"), 3) == iso);
    CHECK(fixed(truth(fit, "bbq", "ece_top_l1"), 3) == bbq);
    // "bbq's true ECE stalls near 0.09 ... accuracy drops from 0.483 to 0.45"
    CHECK(fixed(truth(fit, "bbq", "accuracy"), 2) == "0.45");
  }
  CHECK(fixed(temperature("500"), 2) == "2.57");
  CHECK(fixed(temperature("2000"), 2) == "2.50");
  CHECK(fixed(temperature("10000"), 2) == "2.51");
  // "removes 96-99 % of the error at every size"
  const double before = truth("500", "uncalibrated", "ece_top_l1");
  CHECK(std::round(100.0 * (1.0 - truth("500", "temperature", "ece_top_l1") / before)) == 96.0);
  CHECK(std::round(100.0 * (1.0 - truth("10000", "temperature", "ece_top_l1") / before)) == 99.0);
  // "their exact zeros make the true NLL explode (184 and 116 at 500 rows, against 1.47)"
  CHECK(fixed(truth("500", "histogram_binning", "nll"), 0) == "184");
  CHECK(fixed(truth("500", "isotonic", "nll"), 0) == "116");
  CHECK(fixed(truth("500", "temperature", "nll"), 2) == "1.47");
  // docs/recalibration.md §2: "a huge but finite NLL, 9 to 184"
  double smallest = 1e300;
  for (const char* fit : {"500", "2000", "10000"})
    for (const char* method : {"histogram_binning", "isotonic"})
      smallest = std::min(smallest, truth(fit, method, "nll"));
  CHECK(fixed(smallest, 0) == "9");
}

TEST_CASE("README, docs/recalibration.md: the best method depends on the metric",
          "[slow][e2e][docs]") {
  const auto& run = shipped("recalibration_classwise");
  auto truth = [&](const char* fit, const char* method, const char* quantity) {
    return number(
        row(run.cells,
            {{"fit_size", fit}, {"name", method}, {"kind", "truth"}, {"quantity", quantity}}),
        "mean");
  };
  CHECK(fixed(truth("300", "temperature", "ece_top_l1"), 3) == "0.018");
  CHECK(fixed(truth("300", "vector", "ece_top_l1"), 3) == "0.023");
  CHECK(fixed(truth("300", "beta", "ece_top_l1"), 3) == "0.026");
  CHECK(fixed(truth("300", "histogram_binning", "ece_top_l1"), 3) == "0.029");
  CHECK(fixed(truth("300", "isotonic", "ece_top_l1"), 3) == "0.063");
  CHECK(fixed(truth("300", "temperature", "classwise_ece_l1"), 4) == "0.0191");
  CHECK(fixed(truth("300", "beta", "classwise_ece_l1"), 4) == "0.0145");
  CHECK(fixed(truth("300", "vector", "classwise_ece_l1"), 4) == "0.0153");
  const std::vector<const char*> methods = {"temperature",       "vector",   "beta",
                                            "histogram_binning", "isotonic", "dirichlet"};
  auto best = [&](const char* fit, const char* quantity) {
    const char* winner = methods.front();
    for (const char* m : methods)
      if (truth(fit, m, quantity) < truth(fit, winner, quantity)) winner = m;
    return std::string(winner);
  };
  // The ranking claims: temperature is best on the top-label truth at 300 and 1,000 rows but
  // never on the classwise one; vector scaling is best classwise from 1,000 rows on, and on
  // both at 3,000.
  CHECK(best("300", "ece_top_l1") == "temperature");
  CHECK(best("1000", "ece_top_l1") == "temperature");
  CHECK(best("300", "classwise_ece_l1") == "beta");
  CHECK(best("1000", "classwise_ece_l1") == "vector");
  CHECK(best("3000", "classwise_ece_l1") == "vector");
  CHECK(best("3000", "ece_top_l1") == "vector");
  for (const char* fit : {"300", "1000", "3000"})
    CHECK(fixed(truth(fit, "temperature", "classwise_ece_l1"), 3) == "0.019");
  // "the test-set ECE and classwise ECE disagree with the true ranking in 62.5-90 % of
  // replicates"
  double low = 1.0, high = 0.0;
  for (const auto& cell : run.summary.at("cells"))
    for (const char* e : {"ece_ew15", "cwece_ew15"}) {
      const double d = cell.at("rankings").at(e).at("disagreement").get<double>();
      low = std::min(low, d);
      high = std::max(high, d);
    }
  CHECK(fixed(100.0 * low, 1) == "62.5");
  CHECK(fixed(100.0 * high, 1) == "90.0");
}

TEST_CASE("docs/recalibration.md: the leaderboards of the classwise example", "[slow][e2e][docs]") {
  const auto& run = shipped("recalibration_classwise");
  auto board = [&](const char* kind, const char* key, const char* method) {
    return row(run.leaderboard,
               {{"scope", "all"}, {"kind", kind}, {"key", key}, {"method", method}});
  };
  auto three = [](const Row& r, const char* column) {
    return fixed(number(r, column), 3) + " [" +
           fixed(number(r, std::string(column) + "_lower"), 3) + ", " +
           fixed(number(r, std::string(column) + "_upper"), 3) + "]";
  };
  auto two = [](const Row& r, const char* column) {
    return fixed(number(r, column), 2) + " [" +
           fixed(number(r, std::string(column) + "_lower"), 2) + ", " +
           fixed(number(r, std::string(column) + "_upper"), 2) + "]";
  };
  const Row& vector = board("truth", "ece_top_l1", "vector");
  CHECK(vector.at("cases") == "120");
  CHECK(vector.at("blocks") == "3");
  CHECK(vector.at("rank") == "1");
  CHECK(three(vector, "win_rate") == "0.867 [0.796, 0.938]");
  CHECK(fixed(number(vector, "mean"), 4) == "0.0138");
  const Row& temperature = board("truth", "ece_top_l1", "temperature");
  CHECK(temperature.at("rank") == "2");
  CHECK(three(temperature, "win_rate") == "0.812 [0.796, 0.829]");
  CHECK(fixed(number(temperature, "mean"), 4) == "0.0123");
  CHECK(board("truth", "classwise_ece_l1", "temperature").at("rank") == "6");
  auto agreement = [&](const char* estimator, const char* truth) {
    return row(run.agreement, {{"scope", "all"}, {"estimator", estimator}, {"truth", truth}});
  };
  CHECK(two(agreement("ece_ew15", "ece_top_l1"), "tau_b") == "1.00 [0.90, 1.00]");
  CHECK(two(agreement("ece_ew15", "ece_top_l1"), "winner_agreement") == "0.66 [0.50, 0.80]");
  CHECK(two(agreement("ece_ew15", "classwise_ece_l1"), "tau_b") == "0.52 [0.33, 0.71]");
  CHECK(two(agreement("cwece_ew15", "classwise_ece_l1"), "tau_b") == "0.90 [0.90, 1.00]");
  CHECK(two(agreement("cwece_ew15", "classwise_ece_l1"), "winner_agreement") ==
        "0.62 [0.47, 0.72]");
  CHECK(two(agreement("brier", "ece_top_l1"), "tau_b") == "0.71 [0.24, 0.71]");
}

// docs/intervals.md's coverage tables: the "#### LABEL (target ...)" tables of the section whose
// heading starts with `section`, up to the next heading of level 3 or above.
struct CoverageTable {
  std::string heading, label;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

std::vector<std::string> doc_section(const std::string& doc, const std::string& section) {
  std::stringstream in(read_text(fs::path(CALBENCH_SOURCE_DIR) / "docs" / doc));
  std::vector<std::string> lines;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(section, 0) == 0) {
      inside = true;
      continue;
    }
    if (inside && (line.rfind("## ", 0) == 0 || line.rfind("### ", 0) == 0)) break;
    if (inside) lines.push_back(line);
  }
  REQUIRE(!lines.empty());
  return lines;
}

std::vector<CoverageTable> coverage_tables(const std::string& section) {
  std::vector<CoverageTable> out;
  for (const std::string& line : doc_section("intervals.md", section)) {
    if (line.rfind("#### ", 0) == 0) {
      out.push_back({line, line.substr(5, line.find(' ', 5) - 5), {}, {}});
    } else if (!out.empty() && line.rfind("| model", 0) == 0) {
      out.back().columns = markdown_cells(line);
    } else if (!out.empty() && line.rfind("| ", 0) == 0) {
      out.back().rows.push_back(markdown_cells(line));
      REQUIRE(out.back().rows.back().size() == out.back().columns.size());
    }
  }
  return out;
}

const std::vector<std::string> interval_method_names = {
    "percentile", "basic", "bca", "consistency", "analytic", "bias_corrected"};

// Each estimator label at its default parameters, with its default interval method.
std::map<std::string, std::string> default_methods() {
  std::map<std::string, std::string> out;
  for (const auto& e : calbench::estimator_registry()) {
    calbench::Problems problems;
    calbench::Json resolved;
    const auto config =
        calbench::parse_estimator(calbench::Json{{"name", e.name}}, "", problems, resolved);
    if (config) out[config->label] = calbench::to_string(config->interval);
  }
  return out;
}

calbench::IntervalMethod method_named(const std::string& name) {
  for (const auto method : calbench::interval_methods())
    if (calbench::to_string(method) == name) return method;
  FAIL("no interval method " << name);
  return calbench::IntervalMethod::basic;
}

// Every figure of a coverage table against a run's intervals.csv; `matches` says whether a row
// of the run is the table row's setting.
template <class Matches>
std::size_t check_coverage_tables(const std::vector<CoverageTable>& tables,
                                  const std::vector<Row>& rows, Matches matches) {
  std::size_t checked = 0;
  for (const auto& table : tables)
    for (const auto& fields : table.rows)
      for (const auto& method : interval_method_names) {
        const auto column = std::find(table.columns.begin(), table.columns.end(), method);
        REQUIRE(column != table.columns.end());
        const std::string& cell = fields[column - table.columns.begin()];
        INFO(table.label << " | " << fields[0] << " | " << fields[1] << " | " << fields[2] << ": "
                         << method);
        bool found = false;
        for (const auto& r : rows)
          if (r.at("estimator") == table.label && r.at("method") == method &&
              r.at("requested") != "default" && r.at("sample_size") == fields[2] &&
              matches(r, fields)) {
            found = true;
            CHECK(fixed(number(r, "coverage"), 2) + " ±" + fixed(number(r, "coverage_se"), 2) ==
                  cell);
          }
        if (!found) CHECK(cell == "-");
        ++checked;
      }
  return checked;
}

// docs/intervals.md: every coverage figure of its parametric tables (two decimals) from the two
// shipped coverage configs, and the rule the defaults follow: where some method's coverage is
// within 0.05 of the nominal 0.90, the estimator's default method's is too; where it is not,
// eval's note (estimators/coverage_caveats.hpp) names a coverage at most the measured one.
TEST_CASE("docs/intervals.md: the coverage tables and the defaults", "[slow][e2e][docs]") {
  std::vector<Row> rows = shipped("interval_coverage").intervals;
  for (Row r : shipped("interval_coverage_k100").intervals) {
    r["generator.classes"] = "100";
    rows.push_back(r);
  }
  REQUIRE(!rows.empty());
  const std::map<std::string, std::string> models = {{"calibrated (T = 1)", "1"},
                                                     {"overconfident (T = 0.7)", "0.7"},
                                                     {"underconfident (T = 1.4)", "1.4"}};
  const std::size_t checked = check_coverage_tables(
      coverage_tables("### Coverage tables"), rows,
      [&](const Row& r, const std::vector<std::string>& fields) {
        REQUIRE(models.count(fields[0]));
        return r.at("generator.miscalibration.temperature") == models.at(fields[0]) &&
               r.at("generator.classes") == fields[1];
      });
  CHECK(checked >=
        6 * 8 * 3 * 6);  // 6 methods x 8 estimators x 3 models x 6 (K, n) settings (K = 2, 10)
  // The defaults against the rule.
  std::map<std::string, std::vector<const Row*>> settings;
  for (const auto& r : rows)
    settings[r.at("estimator") + "|" + r.at("generator.miscalibration.temperature") + "|" +
             r.at("generator.classes") + "|" + r.at("sample_size")]
        .push_back(&r);
  const auto defaults = default_methods();
  for (const auto& [key, group] : settings) {
    const std::string label = group.front()->at("estimator");
    REQUIRE(defaults.count(label));
    bool any = false;
    std::optional<double> by_default;
    for (const Row* r : group) {
      if (r->at("coverage").empty()) continue;
      const double c = number(*r, "coverage");
      any = any || std::fabs(c - 0.9) <= 0.05;
      if (r->at("method") == defaults.at(label)) by_default = c;
    }
    INFO(key << ": default " << defaults.at(label));
    REQUIRE(by_default);
    if (any && std::fabs(*by_default - 0.9) <= 0.05) continue;
    // Where the default misses although another method covers (one fixed method cannot serve
    // both a calibrated and a miscalibrated model for some estimators), or none covers, eval's
    // note must flag it if it is below nominal (an interval that overcovers needs none).
    if (*by_default >= 0.85) continue;
    const auto miss = calbench::coverage_miss(label, method_named(defaults.at(label)),
                                              std::stoul(group.front()->at("generator.classes")),
                                              std::stoul(group.front()->at("sample_size")));
    REQUIRE(miss);
    CHECK(miss->coverage <= std::round(*by_default * 100.0) / 100.0 + 1e-9);
  }
}

// docs/intervals.md, "Realistic fakes": every figure from the shipped
// configs/arena/interval_coverage_realistic.json (empirical fakes of scikit-learn models), the
// truths to 4 decimals, and each table heading's default method is the registry's.
TEST_CASE("docs/intervals.md: coverage on realistic fakes", "[slow][e2e][docs]") {
  const auto& rows = shipped("arena/interval_coverage_realistic").intervals;
  REQUIRE(!rows.empty());
  const auto tables = coverage_tables("### Realistic fakes");
  const auto defaults = default_methods();
  // The fake a row of intervals.csv ran: its generator's rows file, "fakes/gb_k2.rows.npy".
  auto fake = [](const Row& r) {
    const std::string rows_file = nlohmann::json::parse(r.at("generator")).at("rows");
    const auto name = fs::path(rows_file).filename().string();
    return name.substr(0, name.find('.')) + " fake";
  };
  for (const auto& table : tables) {
    INFO(table.heading);
    CHECK(table.heading.find("; default " + defaults.at(table.label) + ")") != std::string::npos);
  }
  const std::size_t checked =
      check_coverage_tables(tables, rows, [&](const Row& r, const std::vector<std::string>& f) {
        const bool match =
            fake(r) == f[0] &&
            std::to_string(nlohmann::json::parse(r.at("generator")).at("classes").get<int>()) ==
                f[1];
        if (match) CHECK(fixed(number(r, "truth"), 4) == f[3]);
        return match;
      });
  CHECK(checked >= 6 * 16 * 4 * 3);  // 6 methods x 16 estimators x 4 fakes x 3 sizes
}

// A compiled table of coverage misses (estimators/coverage_caveats.hpp) against the rows a
// test derived, each as the doc's table prints it: label, method, K, n, coverage, setting.
void check_compiled_misses(std::span<const calbench::CoverageMiss> compiled,
                           const std::vector<std::vector<std::string>>& expected) {
  REQUIRE(compiled.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& m = compiled[i];
    CHECK(std::vector<std::string>{std::string(m.label), std::string(calbench::to_string(m.method)),
                                   std::string(calbench::to_string(m.classes)),
                                   std::string(calbench::to_string(m.size)), fixed(m.coverage, 2),
                                   std::string(m.setting)} == expected[i]);
  }
}

// The notes `calbench eval` prints (estimators/coverage_caveats.hpp) are the misses of
// docs/intervals.md's tables: for each estimator and region (K: 2, 3-10, >10; n: < 500,
// 500-4,999, >= 5,000), the lowest coverage of its default method over the settings of the
// parametric and the realistic tables in the region, where it is below 0.90 - 0.05, with the
// first setting (in the doc's order) where it was that low. Both the compiled table and the
// doc's "Where the defaults miss" table must be exactly those rows.
TEST_CASE("docs/intervals.md: eval's coverage notes are the tables' misses", "[unit][docs]") {
  using calbench::ClassRegion;
  using calbench::SizeRegion;
  const auto defaults = default_methods();
  struct Lowest {
    double coverage;
    std::string setting;
  };
  std::map<std::tuple<std::string, ClassRegion, SizeRegion>, Lowest> lowest;
  std::vector<std::string> labels;
  for (const char* section : {"### Coverage tables", "### Realistic fakes"})
    for (const auto& table : coverage_tables(section)) {
      INFO(table.heading);
      REQUIRE(defaults.count(table.label));
      if (std::find(labels.begin(), labels.end(), table.label) == labels.end())
        labels.push_back(table.label);
      const auto column =
          std::find(table.columns.begin(), table.columns.end(), defaults.at(table.label));
      REQUIRE(column != table.columns.end());
      for (const auto& fields : table.rows) {
        const std::string& cell = fields[column - table.columns.begin()];
        if (cell == "-") continue;
        const double c = std::stod(cell.substr(0, cell.find(' ')));
        const std::size_t K = std::stoul(fields[1]), n = std::stoul(fields[2]);
        const auto key =
            std::tuple(table.label, calbench::class_region(K), calbench::size_region(n));
        if (!lowest.count(key) || c < lowest.at(key).coverage)
          lowest[key] = {c, fields[0] + ", K = " + fields[1] + ", n = " + fields[2]};
      }
    }
  REQUIRE(labels.size() >= 16);
  // The expected rows in order: label (doc order), K region, n region.
  std::vector<std::vector<std::string>> expected;
  const auto compiled = calbench::coverage_misses();
  for (const auto& label : labels)
    for (const auto k : {ClassRegion::two, ClassRegion::three_to_ten, ClassRegion::over_ten})
      for (const auto n : {SizeRegion::below_500, SizeRegion::below_5000, SizeRegion::from_5000}) {
        const auto it = lowest.find(std::tuple(label, k, n));
        const bool miss = it != lowest.end() && it->second.coverage < 0.85 - 1e-9;
        // The lookup eval uses, at a K and an n inside the region.
        const std::size_t K = k == ClassRegion::two ? 2 : k == ClassRegion::three_to_ten ? 5 : 50;
        const std::size_t size = n == SizeRegion::below_500    ? 100
                                 : n == SizeRegion::below_5000 ? 1000
                                                               : 10000;
        const auto found =
            calbench::coverage_miss(label, method_named(defaults.at(label)), K, size);
        INFO(label << " K " << calbench::to_string(k) << " n " << calbench::to_string(n));
        CHECK(found.has_value() == miss);
        if (!miss) continue;
        expected.push_back({label, defaults.at(label), std::string(calbench::to_string(k)),
                            std::string(calbench::to_string(n)), fixed(it->second.coverage, 2),
                            it->second.setting});
      }
  REQUIRE(!expected.empty());
  // The compiled table, row by row.
  check_compiled_misses(compiled, expected);
  // The doc's table, row by row, and its example note is one of the rows' notes.
  std::vector<std::vector<std::string>> doc;
  std::size_t examples = 0;
  for (const auto& line : doc_section("intervals.md", "## Where the defaults miss")) {
    if (line.rfind("| ", 0) == 0 && line.rfind("| estimator", 0) != 0)
      doc.push_back(markdown_cells(line));
    if (line.rfind("    coverage ", 0) == 0) {
      ++examples;
      CHECK(std::any_of(compiled.begin(), compiled.end(), [&](const calbench::CoverageMiss& m) {
        return "    " + calbench::coverage_note(m) == line;
      }));
    }
  }
  CHECK(examples == 1);
  CHECK(doc == expected);
}

// The notes of eval's default fake interval (EstimatorTraits::eval_fake) are the misses of the
// done-when run on real models (docs/intervals.md, "The done-when table"): for each such
// estimator and region, the coverage of the fake interval over all replicates of the region's
// cells, pooled, where it is below 0.85, with the models, their K, the n and the replicates.
// The compiled table and the doc's table must be exactly those rows.
TEST_CASE("docs/intervals.md: eval's fake-interval notes are the real models' misses",
          "[unit][docs]") {
  using calbench::ClassRegion;
  using calbench::SizeRegion;
  std::vector<std::string> eval_fake;  // labels whose eval default is the fake interval
  for (const auto& e : calbench::estimator_registry()) {
    calbench::Problems problems;
    calbench::Json resolved;
    const auto config =
        calbench::parse_estimator(calbench::Json{{"name", e.name}}, "", problems, resolved);
    if (config && config->eval_fake) eval_fake.push_back(config->label);
  }
  REQUIRE(eval_fake.size() == 3);
  struct Pooled {
    std::size_t covered = 0, replicates = 0;
    std::vector<std::string> models;
    std::vector<std::size_t> classes, sizes;
  };
  std::map<std::tuple<std::string, ClassRegion, SizeRegion>, Pooled> pooled;
  std::vector<std::string> labels;  // in the run's order
  const auto cells = read_csv(fs::path(CALBENCH_SOURCE_DIR) / "tests" / "golden" /
                              "fake_interval_study" / "done_when" / "cells.csv");
  REQUIRE(cells.size() == 420);
  for (const Row& r : cells) {
    const std::string& label = r.at("estimator");
    if (r.at("method") != "fake" ||
        std::find(eval_fake.begin(), eval_fake.end(), label) == eval_fake.end())
      continue;
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
    const std::size_t K = std::stoul(r.at("K")), n = std::stoul(r.at("n"));
    Pooled& p = pooled[std::tuple(label, calbench::class_region(K), calbench::size_region(n))];
    p.covered += std::stoul(r.at("covered"));
    p.replicates += std::stoul(r.at("replicates"));
    p.models.push_back(r.at("model"));
    if (std::find(p.classes.begin(), p.classes.end(), K) == p.classes.end()) p.classes.push_back(K);
    if (std::find(p.sizes.begin(), p.sizes.end(), n) == p.sizes.end()) p.sizes.push_back(n);
  }
  REQUIRE(labels.size() == eval_fake.size());
  std::vector<std::vector<std::string>> expected;
  std::vector<double> covered;  // the pooled coverage of the regions without a note
  for (const auto& label : labels)
    for (const auto k : {ClassRegion::two, ClassRegion::three_to_ten, ClassRegion::over_ten})
      for (const auto n : {SizeRegion::below_500, SizeRegion::below_5000, SizeRegion::from_5000}) {
        const auto it = pooled.find(std::tuple(label, k, n));
        if (it == pooled.end()) continue;
        const Pooled& p = it->second;
        const double c = static_cast<double>(p.covered) / static_cast<double>(p.replicates);
        REQUIRE(p.sizes.size() == 1);
        std::vector<std::size_t> ks = p.classes;
        std::sort(ks.begin(), ks.end());
        std::string classes;
        for (std::size_t i = 0; i < ks.size(); ++i)
          classes += (i ? " and " : "") + std::to_string(ks[i]);
        const std::string setting = std::to_string(p.models.size()) +
                                    " real models, K = " + classes +
                                    ", n = " + std::to_string(p.sizes[0]) + ", " +
                                    std::to_string(p.replicates) + " replicates";
        const std::size_t K = k == ClassRegion::two ? 2 : k == ClassRegion::three_to_ten ? 5 : 50;
        const std::size_t size = n == SizeRegion::below_500    ? 100
                                 : n == SizeRegion::below_5000 ? 1000
                                                               : 10000;
        const bool miss = c < 0.85 - 1e-9;
        if (!miss) covered.push_back(c);
        INFO(label << " K " << calbench::to_string(k) << " n " << calbench::to_string(n));
        CHECK(calbench::coverage_miss(label, calbench::IntervalMethod::fake, K, size).has_value() ==
              miss);
        if (miss)
          expected.push_back({label, "fake", std::string(calbench::to_string(k)),
                              std::string(calbench::to_string(n)), fixed(c, 2), setting});
      }
  REQUIRE(!expected.empty());
  const auto compiled = calbench::real_model_misses();
  check_compiled_misses(compiled, expected);
  std::vector<std::vector<std::string>> doc;
  std::string text;
  for (const auto& line : doc_section("intervals.md", "#### Eval's notes on the fake interval")) {
    if (line.rfind("| ", 0) == 0 && line.rfind("| estimator", 0) != 0)
      doc.push_back(markdown_cells(line));
    text += line + " ";
  }
  CHECK(doc == expected);
  REQUIRE(!covered.empty());
  const auto [low, high] = std::minmax_element(covered.begin(), covered.end());
  CHECK_THAT(text, Catch::Contains("In the others the pooled coverage is " + fixed(*low, 2) +
                                   "\u2013" + fixed(*high, 2) + "."));
}

TEST_CASE("coverage caveats: regions and the note's text", "[unit]") {
  using calbench::ClassRegion;
  using calbench::SizeRegion;
  CHECK(calbench::class_region(2) == ClassRegion::two);
  CHECK(calbench::class_region(3) == ClassRegion::three_to_ten);
  CHECK(calbench::class_region(10) == ClassRegion::three_to_ten);
  CHECK(calbench::class_region(11) == ClassRegion::over_ten);
  CHECK(calbench::size_region(499) == SizeRegion::below_500);
  CHECK(calbench::size_region(500) == SizeRegion::below_5000);
  CHECK(calbench::size_region(4999) == SizeRegion::below_5000);
  CHECK(calbench::size_region(5000) == SizeRegion::from_5000);
  const calbench::CoverageMiss miss{"dece_em15",
                                    calbench::IntervalMethod::consistency,
                                    ClassRegion::three_to_ten,
                                    SizeRegion::below_5000,
                                    0.53,
                                    "gb_k10 fake, K = 10, n = 2000"};
  CHECK(calbench::coverage_note(miss) ==
        "coverage 0.53 at nominal 0.90 measured for K 3-10, n 500-4999 (gb_k10 fake, K = 10, n "
        "= 2000; docs/intervals.md)");
}

// ---- configs/papers/: the field's published numbers (docs/papers.md) -------------------------

// Roelofs et al. 2022, Fig. 1: beta_binary Beta(2.8, 0.05), calibrated (every ECE's truth is 0),
// n = 200: the 15-bin L2 ECE of the score averages about 6.6 % with equal-width bins and 2.6 %
// with equal-mass bins. The shipped config's first three sample sizes only (cell 2, n = 200, keeps
// its index, hence its streams and its numbers; the larger sizes are the bias-versus-n figure
// below): fast enough for the default run.
TEST_CASE("papers: Roelofs et al. Fig. 1, 15-bin L2 ECE at n = 200", "[e2e][papers]") {
  const auto& run =
      run_config("papers/roelofs_fig1", R"({"sweep": {"sample_size": [50, 100, 200]}})");
  for (const auto& [label, published] : std::vector<std::pair<std::string, double>>{
           {"ece_ew15_l2", 0.066}, {"ece_em15_l2", 0.026}}) {
    INFO(label);
    const Row& r = row(run.cells, {{"estimator", label}, {"sample_size", "200"}});
    CHECK(number(r, "truth") == 0.0);  // calibrated: the binned quantity is exactly 0
    // As published (two significant digits), and statistically: within half a unit of the
    // published last digit plus 3 standard errors of the mean over 2,000 replicates.
    CHECK(fixed(number(r, "mean"), 3) == fixed(published, 3));
    CHECK(std::abs(number(r, "mean") - published) < 0.0005 + 3.0 * number(r, "se_bias"));
  }
  // docs/papers.md: "Beta(2.8, 0.05) puts 93.1 % of its mass above 14/15".
  CHECK(fixed(100.0 * boost::math::ibetac(2.8, 0.05, 14.0 / 15.0), 1) == "93.1");
}

// Their bias-versus-n comparison: every estimator's bias falls with n; equal-mass bins are less
// biased than equal-width ones at every n; the figures docs/papers.md quotes.
TEST_CASE("papers: Roelofs et al. bias against n", "[slow][e2e][papers]") {
  const auto& run = shipped("papers/roelofs_fig1");
  const std::vector<std::string> sizes = {"50", "100", "200", "400", "800", "1600", "3200"};
  auto bias = [&](const std::string& label, const std::string& n) {
    return number(row(run.cells, {{"estimator", label}, {"sample_size", n}}), "bias");
  };
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    INFO("n = " << sizes[i]);
    CHECK(bias("ece_em15_l2", sizes[i]) < bias("ece_ew15_l2", sizes[i]));
    if (i > 0) {
      CHECK(bias("ece_ew15_l2", sizes[i]) < bias("ece_ew15_l2", sizes[i - 1]));
      CHECK(bias("ece_em15_l2", sizes[i]) < bias("ece_em15_l2", sizes[i - 1]));
      CHECK(bias("ece_sweep_em_l2", sizes[i]) < bias("ece_sweep_em_l2", sizes[i - 1]));
    }
  }
  // docs/papers.md's table.
  const std::vector<std::pair<std::string, std::vector<std::string>>> quoted = {
      {"ece_ew15_l2", {"0.077", "0.074", "0.066", "0.056", "0.045", "0.034", "0.025"}},
      {"ece_em15_l2", {"0.046", "0.036", "0.026", "0.019", "0.014", "0.010", "0.007"}},
      {"ece_sweep_em_l2", {"0.054", "0.044", "0.033", "0.023", "0.016", "0.011", "0.008"}},
      {"ece_debiased_ew15", {"0.016", "0.020", "0.018", "0.016", "0.013", "0.010", "0.007"}}};
  for (const auto& [label, values] : quoted)
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      INFO(label << " at n = " << sizes[i]);
      CHECK(fixed(bias(label, sizes[i]), 3) == values[i]);
    }
}

// Widmann, Lindsten & Zachariah 2019's label-noise model (label_noise: p ~ Dir(1) over K = 10
// classes, labels from c = (1 - w) p + w e_0, w = 0 .. 1): the analytic ECE with respect to total
// variation, ECE_TV = (1/2) E||r(p) - p||_1 = (1/2) w E||p - e_0||_1 = w (1 - 1/K) (E p_0 = 1/K).
// calbench's canonical_l1 is the L1 norm without the 1/2: twice ECE_TV. w = 1 (labels ignore p) is
// allowed. Replicates shrunk to 20: the checked numbers are truths, which do not depend on them.
TEST_CASE("papers: Widmann et al. ECE_TV on label_noise", "[e2e][papers]") {
  const auto& run = run_config("papers/widmann_label_noise", R"({"replicates": 20})");
  const auto& cells = run.summary.at("cells");
  REQUIRE(cells.size() == 5);
  for (const auto& cell : cells) {
    const double w = cell.at("parameters").at("generator.weight").get<double>();
    const auto& t = cell.at("truth").at("canonical_l1");
    INFO("w = " << w);
    CHECK(t.at("method") == "closed_form");
    const double ece_tv = 0.5 * t.at("value").get<double>();
    CHECK(ece_tv == Approx(w * (1.0 - 1.0 / 10.0)).margin(1e-12));
    // classwise_ece_l1 = (1/K) sum_k E|w (beta_k - p_k)| = 2 ECE_TV / K here.
    CHECK(cell.at("truth").at("classwise_ece_l1").at("value").get<double>() ==
          Approx(2.0 * ece_tv / 10.0).margin(1e-12));
  }
  // docs/papers.md: "ECE_TV 0.9 at w = 1 (canonical_l1 1.8)".
  CHECK(fixed(0.5 * cells.back().at("truth").at("canonical_l1").at("value").get<double>(), 1) ==
        "0.9");
}

// Kumar, Liang & Ma 2019 ("Verified uncertainty calibration"): the plug-in estimate of the squared
// binned L2 error is biased upward and their debiased estimator removes most of it. Exactly, for
// a calibrated score s (P(y = 1 | s) = s) in B fixed bins with probabilities pi_b, n rows: given
// the m >= 1 rows of bin b, the gap mean(y - s) has mean 0 and variance E[s(1 - s) | b]/m, so
//   E[plug-in] = (1/n) sum_b P(n_b >= 1) E[s(1 - s) | b],        P(n_b >= 1) = 1 - (1 - pi_b)^n;
// and the debiased term gap^2 - ybar(1 - ybar)/(m - 1) has mean (E[s(1 - s) | b] - mu_b(1 -
// mu_b))/m = -Var(s | b)/m (ybar's variance includes the spread of s within the bin), singletons
// dropping out, so
//   E[debiased] = -(1/n) sum_b P(n_b >= 2) Var(s | b),  P(n_b >= 2) = P(n_b >= 1) - n pi_b (1 -
//   pi_b)^(n-1).
// The truth of both is 0. Moments of s ~ Beta(a, b) on a bin (l, u]:
// E[s^k 1{l < s <= u}] = B(a + k, b)/B(a, b) (I_u(a + k, b) - I_l(a + k, b)).
TEST_CASE("papers: Kumar et al. plug-in and debiased squared error, exact bias", "[e2e][papers]") {
  const auto& run = run_config("papers/kumar_debiased");
  const double a = 2.0, b = 5.0;
  constexpr int B = 10;
  auto moment = [&](int k, double lo, double hi) {
    return boost::math::beta(a + k, b) / boost::math::beta(a, b) *
           (boost::math::ibeta(a + k, b, hi) - boost::math::ibeta(a + k, b, lo));
  };
  auto exact = [&](double n) {
    double plug = 0.0, debiased = 0.0;
    for (int i = 0; i < B; ++i) {
      const double lo = i / double(B), hi = (i + 1) / double(B);
      const double pi = moment(0, lo, hi), m1 = moment(1, lo, hi) / pi, m2 = moment(2, lo, hi) / pi;
      const double any = 1.0 - std::pow(1.0 - pi, n);
      const double two = any - n * pi * std::pow(1.0 - pi, n - 1.0);
      plug += any * (m1 - m2) / n;
      debiased -= two * (m2 - m1 * m1) / n;
    }
    return std::pair{plug, debiased};
  };
  // Mean and standard error over the replicates of one estimator in one cell (squared: the
  // plug-in estimator reports the root).
  auto mean_se = [&](const std::string& cell, const std::string& label, bool square) {
    double sum = 0.0, sum_sq = 0.0, R = 0.0;
    for (const auto& r : run.replicates) {
      if (r.at("cell") != cell || r.at("estimator") != label) continue;
      const double v = square ? std::pow(std::stod(r.at("value")), 2) : std::stod(r.at("value"));
      sum += v;
      sum_sq += v * v;
      R += 1.0;
    }
    REQUIRE(R == 4000.0);
    const double mean = sum / R;
    return std::pair{mean, std::sqrt((sum_sq / R - mean * mean) / (R - 1.0))};
  };
  // 8 checks; 3.5 standard errors keep the family-wise false-alarm rate below 0.4 %.
  constexpr double z = 3.5;
  const std::vector<std::string> sizes = {"30", "100", "300", "1000"};
  std::vector<std::string> quoted_exact, quoted_mean;
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    const std::string cell = std::to_string(c);
    const auto [plug, debiased] = exact(std::stod(sizes[c]));
    const auto [plug_mean, plug_se] = mean_se(cell, "plugin_ew10_l2", true);
    const auto [deb_mean, deb_se] = mean_se(cell, "debiased_ew10_sq", false);
    INFO("n = " << sizes[c] << ": plug-in " << plug_mean << " (exact " << plug << ", SE " << plug_se
                << "), debiased " << deb_mean << " (exact " << debiased << ", SE " << deb_se
                << ")");
    CHECK(std::abs(plug_mean - plug) < z * plug_se);
    CHECK(std::abs(deb_mean - debiased) < z * deb_se);
    // Kumar et al.'s point: the plug-in is far off (the truth is 0), the debiased one is not.
    CHECK(plug_mean > 20.0 * plug_se);
    CHECK(std::abs(deb_mean) < plug_mean / 20.0);
    quoted_exact.push_back(fixed(plug, 4));
    quoted_mean.push_back(fixed(plug_mean, 4));
  }
  // docs/papers.md's table.
  CHECK(quoted_exact == std::vector<std::string>{"0.0416", "0.0145", "0.0052", "0.0016"});
  CHECK(quoted_mean == std::vector<std::string>{"0.0412", "0.0144", "0.0051", "0.0016"});
  CHECK(fixed(exact(30.0).second, 5) == "-0.00015");
}

// caltrain's polynomial calibration curve (Roelofs et al. 2022's code): f ~ Beta(a, b),
// P(y = 1 | f) = f^d, whose binary L1 calibration error has the closed form
// E|f^d - f| = |R(d) - R(1)|, R(x) = B(a + x, b)/B(a, b) (f^d - f has one sign). For a = 2, b = 1,
// d = 2 by hand: f has density 2f, E f = 2/3, E f^2 = 1/2, so E|f^2 - f| = 1/6, and
// E(f^2 - f)^2 = 2 (1/6 - 2/5 + 1/4) = 1/30 (canonical_l2 counts both classes: sqrt(2/30)).
TEST_CASE("papers: caltrain's polynomial closed form", "[e2e][papers]") {
  const auto& run = run_config("papers/caltrain_polynomial", R"({"replicates": 20})");
  for (const auto& cell : run.summary.at("cells")) {
    const auto& truth = cell.at("truth");
    CHECK(truth.at("classwise_ece_l1").at("method") == "closed_form");
    CHECK(truth.at("classwise_ece_l1").at("value").get<double>() ==
          Approx(1.0 / 6.0).margin(1e-14));
    CHECK(truth.at("canonical_l2").at("value").get<double>() ==
          Approx(std::sqrt(2.0 / 30.0)).margin(1e-14));
    // A one-signed gap makes every binned L1 ECE of the score equal E|f^2 - f| in the limit:
    // each estimator's own population value is 1/6 within its Monte Carlo error.
    for (const char* label : {"ece_ew15_binary", "ece_em15_binary"}) {
      INFO(label);
      const auto& population = cell.at("estimators").at(label).at("population");
      CHECK(std::abs(population.at("value").get<double>() - 1.0 / 6.0) <
            3.5 * population.at("error").get<double>());
    }
  }
}

// kyle's calibration game (appliedAI-Initiative/kyle, notebooks/fake_classifiers.ipynb, "The
// Calibration Game"): three 5-class DirichletFC settings, c ~ Dir(alpha), p_k ∝ c_k^(t_k)
// (PowerLawSimplexAut, calbench's `power` map), headed "accuracy 80, ECE 18", "accuracy 80, ECE
// 10" and "accuracy 80, ECE 0" (kyle's ECE: 200 equal-width bins on 500,000 / 300,000 rows). The
// ECE headings hold for the truth; the accuracy heading only for the calibrated setting (the
// truth: 0.980, 0.902, 0.794). The checked numbers are truths (replicates and sizes shrunk, the
// reliability curves dropped: they do not change them). Monte Carlo truths carry an error below
// 1e-4, far from a rounding boundary of the quoted digits.
TEST_CASE("papers: kyle's calibration game, ECE 0.18, 0.10 and 0", "[e2e][papers]") {
  const auto& run = run_config("papers/kyle_calibration_game",
                               R"({"replicates": 2, "sample_size": 2000, "reliability": null})");
  const auto& cells = run.summary.at("cells");
  REQUIRE(cells.size() == 3);
  const std::vector<std::string> ece = {"0.18", "0.10", "0.00"};
  const std::vector<std::string> accuracy = {"0.980", "0.902", "0.794"};
  for (std::size_t c = 0; c < cells.size(); ++c) {
    INFO("cell " << c);
    const auto& truth = cells[c].at("truth");
    const double e = truth.at("ece_top_l1").at("value").get<double>();
    const double a = truth.at("accuracy").at("value").get<double>();
    CHECK(truth.at("ece_top_l1").at("error").get<double>() < 1e-4);
    CHECK(truth.at("accuracy").at("error").get<double>() < 1e-4);
    CHECK(fixed(e, 2) == ece[c]);
    CHECK(fixed(a, 3) == accuracy[c]);
    // docs/papers.md quotes the ECE to three digits too.
    CHECK(fixed(e, 3) == std::vector<std::string>{"0.182", "0.102", "0.000"}[c]);
  }
  // The calibrated setting's truth is exact: identity map, ECE 0 in closed form.
  CHECK(cells[2].at("truth").at("ece_top_l1").at("value").get<double>() == 0.0);
  CHECK(cells[2].at("truth").at("ece_top_l1").at("method") == "closed_form");
}

// Nixon et al. 2019's bin-count pathology (docs/papers.md): 1,000 binary predictions, 500 with
// confidence 0.52 (491 right) and 500 with 0.58 (56 right), configs/data/nixon_052_058.csv. Ten
// equal-width bins put both in (0.5, 0.6]: |0.55 - 0.547| = 0.003. Fifteen separate them
// ((7/15, 8/15] and (8/15, 9/15]): 0.5 |0.52 - 0.982| + 0.5 |0.58 - 0.112| = 0.231 + 0.234 =
// 0.465. The values are exact functions of the file (no randomness); the test checks the file's
// composition, the values by hand, and the diagram's data (`--plot`'s reliability.csv).
TEST_CASE("papers: Nixon et al.'s 0.52/0.58 pathology, ECE 0.003 and 0.465", "[e2e][papers]") {
  const fs::path source(CALBENCH_SOURCE_DIR);
  const fs::path data = source / "configs" / "data" / "nixon_052_058.csv";
  // The file as docs/papers.md describes it.
  std::map<std::string, int> counts;
  {
    std::stringstream in(read_text(data));
    for (std::string line; std::getline(in, line);) ++counts[line];
  }
  CHECK(counts ==
        std::map<std::string, int>{
            {"1,0.48,0.52", 491}, {"0,0.48,0.52", 9}, {"1,0.42,0.58", 56}, {"0,0.42,0.58", 444}});
  // By hand from the counts.
  const double merged = std::abs(0.5 * 0.52 + 0.5 * 0.58 - (491.0 + 56.0) / 1000.0);
  const double separate = 0.5 * std::abs(0.52 - 491.0 / 500.0) + 0.5 * std::abs(0.58 - 56.0 / 500);
  CHECK(fixed(merged, 3) == "0.003");
  CHECK(fixed(separate, 3) == "0.465");

  TempDir dir;
  const fs::path json = dir.path / "eval.json";
  const fs::path plot = dir.path / "plot";
  const std::string command =
      std::string("'") + CALBENCH_BINARY + "' eval '" + data.string() + "' --estimators '" +
      (source / "configs" / "papers" / "nixon_bins.json").string() +
      "' --resamples 20 --json --plot '" + plot.string() + "' >'" + json.string() + "' 2>/dev/null";
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
  const auto out = nlohmann::json::parse(read_text(json));
  auto value = [&](const char* label) {
    return out.at("estimators").at(label).at("value").get<double>();
  };
  CHECK(out.at("n") == 1000);
  CHECK(value("ece_ew10") == Approx(merged).margin(1e-12));
  CHECK(value("ece_ew15") == Approx(separate).margin(1e-12));
  // docs/papers.md: 20 bins separate them too; ECE_sweep keeps one bin (two bins would not be
  // monotone: 0.982 then 0.112) and reports the merged 0.003.
  CHECK(value("ece_ew20") == Approx(separate).margin(1e-12));
  CHECK(value("ece_sweep_em") == Approx(merged).margin(1e-12));
  CHECK(fixed(value("accuracy"), 3) == "0.547");
  // The report's diagram: the two 15-bin equal-width top-label bars, half the rows each.
  std::vector<std::pair<std::string, std::string>> bars;
  for (const auto& r : read_csv(plot / "reliability.csv"))
    if (r.at("binning") == "equal_width" && r.at("scope") == "top_label")
      bars.emplace_back(fixed(std::stod(r.at("score")), 2), fixed(std::stod(r.at("frequency")), 3));
  CHECK(bars ==
        std::vector<std::pair<std::string, std::string>>{{"0.52", "0.982"}, {"0.58", "0.112"}});
  // Its title (when python3 and matplotlib rendered it), as docs/papers.md quotes it.
  if (fs::exists(plot / "reliability_equal_width.svg"))
    CHECK(read_text(plot / "reliability_equal_width.svg").find("ECE 0.4650") != std::string::npos);
}

// Guo et al. 2017, Table 1's shape: every post-hoc method lowers the ECE of an overconfident
// network, temperature scaling the most or tied with vector scaling, matrix scaling overfitting
// with many classes. Here on a fake classifier overconfident by a temperature (so temperature
// scaling is the correctly specified model), judged by the true ECE of each recalibrated model
// (the composed truth, docs/recalibration.md §3), mean over replicates. `ece_of` returns (mean,
// standard error of the mean from the sd over replicates).
namespace {

std::pair<double, double> ece_of(const nlohmann::json& cell, const std::string& method) {
  const auto& m = cell.at("methods").at(method);
  const auto& t = m.at("truth").at("ece_top_l1");
  const double fits = m.at("fits").get<double>();
  return {t.at("mean").get<double>(), t.at("sd").get<double>() / std::sqrt(fits)};
}

// The table's shape in one cell: every method below the uncalibrated ECE; no method better than
// temperature scaling by 2 standard errors of the difference; temperature scaling better than
// `beaten` by more than 2 standard errors; its accuracy the uncalibrated one (argmax kept).
void check_guo_shape(const nlohmann::json& cell, const std::vector<std::string>& beaten) {
  const double uncalibrated = ece_of(cell, "uncalibrated").first;
  const auto [ts, ts_se] = ece_of(cell, "temperature");
  CHECK(ts < uncalibrated / 10.0);
  for (const auto& [name, m] : cell.at("methods").items()) {
    if (name == "uncalibrated" || m.at("fits").get<int>() == 0) continue;
    INFO(name);
    const auto [e, se] = ece_of(cell, name);
    CHECK(e < uncalibrated);
    CHECK(e - ts > -2.0 * std::hypot(se, ts_se));
  }
  for (const auto& name : beaten) {
    INFO(name << " beaten by temperature scaling");
    const auto [e, se] = ece_of(cell, name);
    CHECK(e - ts > 2.0 * std::hypot(se, ts_se));
  }
  const auto& accuracy = cell.at("methods").at("temperature").at("truth").at("accuracy");
  CHECK(accuracy.at("mean").get<double>() ==
        cell.at("methods").at("uncalibrated").at("truth").at("accuracy").at("mean").get<double>());
}

}  // namespace

// The K = 10 cell alone with 4 replicates, without the curves: the default run.
TEST_CASE("papers: Guo et al. temperature scaling table shape, K = 10", "[e2e][papers]") {
  const auto& run =
      run_config("papers/guo_temperature_table", R"({"replicates": 4, "reliability": null, "sweep":
      {"generator": [{"family": "dirichlet", "classes": 10,
                      "target": {"accuracy": 0.93, "ece_top_l1": 0.05},
                      "miscalibration": {"map": "temperature"}}]}})");
  const auto& cells = run.summary.at("cells");
  REQUIRE(cells.size() == 1);
  CHECK(fixed(ece_of(cells[0], "uncalibrated").first, 3) == "0.050");
  check_guo_shape(cells[0], {"histogram_binning_ew15", "isotonic", "matrix"});
}

// The shipped config (10 replicates, K = 10 and K = 100): docs/papers.md's table.
TEST_CASE("papers: Guo et al. temperature scaling table", "[slow][e2e][papers]") {
  const auto& run = shipped("papers/guo_temperature_table");
  const auto& cells = run.summary.at("cells");
  REQUIRE(cells.size() == 2);
  check_guo_shape(cells[0], {"histogram_binning_ew15", "isotonic", "matrix"});
  // With 100 classes temperature scaling is alone in front.
  check_guo_shape(cells[1], {"histogram_binning_ew15", "isotonic", "bbq", "vector"});
  // docs/papers.md: histogram binning and isotonic regression lose accuracy in both settings.
  for (const auto& cell : cells)
    for (const char* method : {"histogram_binning_ew15", "isotonic"}) {
      INFO(method);
      const auto& m = cell.at("methods");
      CHECK(m.at(method).at("truth").at("accuracy").at("mean").get<double>() <
            m.at("uncalibrated").at("truth").at("accuracy").at("mean").get<double>());
    }
  // Matrix scaling: 10,100 parameters on 5,000 rows, refused in every replicate.
  const auto& matrix = cells[1].at("methods").at("matrix");
  CHECK(matrix.at("failed_fits") == 10);
  CHECK(matrix.at("fits") == 0);
  const std::vector<std::string> methods = {
      "uncalibrated", "histogram_binning_ew15", "isotonic", "bbq", "temperature", "vector",
      "matrix"};
  const std::vector<std::vector<std::string>> quoted = {
      {"0.0498", "0.0109", "0.0068", "0.0049", "0.0021", "0.0023", "0.0088"},
      {"0.1499", "0.0674", "0.0416", "0.0253", "0.0033", "0.0144", "-"}};
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t i = 0; i < methods.size(); ++i) {
      INFO("cell " << c << ", " << methods[i]);
      const auto& m = cells[c].at("methods").at(methods[i]);
      CHECK((m.at("fits") == 0 ? "-" : fixed(ece_of(cells[c], methods[i]).first, 4)) ==
            quoted[c][i]);
    }
}

// docs/estimators/tests.md: after the marker "<!-- figures: NAME -->" a table lists, per
// (temperature, n), the rejection rates at level 0.05 of ks_calibration, kuiper_calibration and
// spiegelhalter in configs/NAME.json (the mean of their `reject` outputs) to 3 decimals. The
// test reads the table from the page, so every figure on it is checked.
TEST_CASE("docs/estimators/tests.md: size and power of the calibration tests",
          "[slow][e2e][docs]") {
  const std::string doc =
      read_text(fs::path(CALBENCH_SOURCE_DIR) / "docs" / "estimators" / "tests.md");
  for (const std::string name : {"calibration_tests_k2", "calibration_tests_k10"}) {
    const std::string scope = name == "calibration_tests_k2" ? "_binary" : "";
    const auto& cells = shipped(name).cells;
    const auto marker = doc.find("<!-- figures: " + name + " -->");
    REQUIRE(marker != std::string::npos);
    std::stringstream table(doc.substr(marker));
    std::string line;
    std::getline(table, line);  // the marker
    std::size_t rows = 0;
    while (std::getline(table, line) && !line.empty()) {
      if (line.rfind("| ", 0) != 0 || line.find("---") != std::string::npos ||
          line.find("temperature") != std::string::npos)
        continue;
      const std::vector<std::string> fields = markdown_cells(line);
      REQUIRE(fields.size() >= 5);
      const double temperature = std::stod(fields[0]);
      const std::string n = fields[1];
      const char* tests[] = {"ks_calibration", "kuiper_calibration", "spiegelhalter"};
      for (std::size_t t = 0; t < 3; ++t) {
        const std::string label = std::string(tests[t]) + scope + "_reject0.05";
        const Row* found = nullptr;
        for (const auto& r : cells)
          if (r.at("estimator") == label && r.at("sample_size") == n &&
              std::stod(r.at("generator.miscalibration.temperature")) == temperature)
            found = &r;
        INFO(name << " " << label << " T = " << temperature << " n = " << n);
        REQUIRE(found != nullptr);
        CHECK(fixed(number(*found, "mean"), 3) == fields[2 + t]);
      }
      ++rows;
    }
    CHECK(rows == 15);
  }
  // The figures of its prose.
  const auto& k2 = shipped("calibration_tests_k2").cells;
  const auto& k10 = shipped("calibration_tests_k10").cells;
  auto at = [](const std::vector<Row>& cells, const std::string& label, double temperature,
               const std::string& n) -> const Row& {
    for (const auto& r : cells)
      if (r.at("estimator") == label && r.at("sample_size") == n &&
          std::stod(r.at("generator.miscalibration.temperature")) == temperature)
        return r;
    FAIL("no row " << label);
    return cells.front();
  };
  CHECK(fixed(number(at(k2, "ks_calibration_binary", 1.0, "100"), "mean"), 3) == "0.049");
  CHECK(fixed(number(at(k2, "ks_calibration_binary", 1.0, "10000"), "mean"), 3) == "0.005");
  CHECK(fixed(number(at(k10, "spiegelhalter", 0.8, "1000"), "population"), 4) == "-0.0003");
  double kuiper_size = 0.0;
  for (const char* n : {"100", "300", "1000", "3000", "10000"})
    kuiper_size += number(at(k2, "kuiper_calibration_binary_reject0.05", 1.0, n), "mean") / 5.0;
  CHECK(fixed(kuiper_size, 3) == "0.041");
}

TEST_CASE("markdown_cells: the trimmed cells of a table row", "[unit][docs]") {
  CHECK(markdown_cells("| 0.8 | 1000 |  0.291 |") ==
        std::vector<std::string>{"0.8", "1000", "0.291"});
  CHECK(markdown_cells("| a |  | b |") == std::vector<std::string>{"a", "", "b"});
}

// docs/estimators/cross_fitted.md: the table after "<!-- figures: cross_fitted_ce -->" lists,
// per (temperature, n), the truths (nll, brier) and each estimator's bias with bias/se, from
// configs/cross_fitted_ce.json; read from the page, so every figure on it is checked.
TEST_CASE("docs/estimators/cross_fitted.md: does it avoid overestimation", "[slow][e2e][docs]") {
  const std::string doc =
      read_text(fs::path(CALBENCH_SOURCE_DIR) / "docs" / "estimators" / "cross_fitted.md");
  const auto& cells = shipped("cross_fitted_ce").cells;
  auto at = [&](const std::string& label, double temperature, const std::string& n) -> const Row& {
    for (const auto& r : cells)
      if (r.at("estimator") == label && r.at("sample_size") == n &&
          std::stod(r.at("generator.miscalibration.temperature")) == temperature)
        return r;
    FAIL("no row " << label);
    return cells.front();
  };
  const char* labels[] = {"cross_fitted_ce_temperature_nll", "cross_fitted_ce_temperature_brier",
                          "cross_fitted_ce_isotonic_nll", "cross_fitted_ce_isotonic_brier"};
  const auto marker = doc.find("<!-- figures: cross_fitted_ce -->");
  REQUIRE(marker != std::string::npos);
  std::stringstream table(doc.substr(marker));
  std::string line;
  std::getline(table, line);
  std::size_t rows = 0;
  double max_z = -1e300;
  while (std::getline(table, line) && !line.empty()) {
    if (line.rfind("| ", 0) != 0 || line.find("---") != std::string::npos ||
        line.find("temperature |") != std::string::npos)
      continue;
    const std::vector<std::string> fields = markdown_cells(line);
    REQUIRE(fields.size() == 8);
    const double temperature = std::stod(fields[0]);
    const std::string n = fields[1];
    INFO("T = " << temperature << ", n = " << n);
    CHECK(fixed(number(at(labels[0], temperature, n), "truth"), 4) == fields[2]);
    CHECK(fixed(number(at(labels[1], temperature, n), "truth"), 4) == fields[3]);
    for (std::size_t e = 0; e < 4; ++e) {
      const Row& r = at(labels[e], temperature, n);
      const double z = number(r, "bias") / number(r, "se_bias");
      max_z = std::max(max_z, z);
      CHECK(fixed(number(r, "bias"), 4, true) + " (" + fixed(z, 1, true) + ")" == fields[4 + e]);
    }
    ++rows;
  }
  CHECK(rows == 9);
  // The prose.
  CHECK(fixed(max_z, 1, true) == "+2.0");
  CHECK(fixed(number(at(labels[2], 0.7, "1000"), "mean"), 4) == "-0.0207");
}

// docs/arena.md, the small version of the study (default run, seconds): the shipped binary
// arena with its five generators at one fit size of 300 rows, 4 replicates and five methods.
// Its pooled boards reproduce the study's finding in small: histogram binning first by the
// test-set ECE, not first by the true ECE, last by the true Brier score.
TEST_CASE("docs/arena.md: the arena in small", "[e2e][docs]") {
  const auto& run = run_config("arena/binary", R"({"replicates": 4, "sweep": {"fit_size": [300]},
    "test_size": 1000, "truth_samples": 20000, "methods": [{"name": "temperature"},
    {"name": "histogram_binning"}, {"name": "isotonic"}, {"name": "platt_probability"},
    {"name": "subsample", "rows": 200, "method": {"name": "kernel"}}]})");
  auto board = [&](const char* kind, const char* key, const char* method) {
    return row(run.leaderboard,
               {{"scope", "all"}, {"kind", kind}, {"key", key}, {"method", method}});
  };
  const Row& binning = board("estimate", "ece_ew15", "histogram_binning_em10");
  CHECK(binning.at("cases") == "20");
  CHECK(binning.at("blocks") == "5");
  CHECK(binning.at("rank") == "1");
  CHECK(board("truth", "ece_top_l1", "histogram_binning_em10").at("rank") != "1");
  CHECK(board("truth", "brier", "histogram_binning_em10").at("rank") == "6");
  // Every test-set estimator against every true quantity, tau-b and shares in range.
  std::size_t pairs = 0;
  for (const auto& r : run.agreement) {
    if (r.at("scope") != "all") continue;
    ++pairs;
    CHECK(std::abs(number(r, "tau_b")) <= 1.0);
    CHECK(number(r, "winner_agreement") >= 0.0);
    CHECK(number(r, "winner_agreement") <= 1.0);
  }
  CHECK(pairs == 5 * 5);  // ece, brier, nll, kuiper, smooth ECE x 5 true quantities
}

// docs/arena.md, "CalArena's methods": configs/arena/xgboost_check.json as
// shipped (seconds). Every line of its table is the run's true top-label ECE per fake and
// model, and the sentence after it quotes xgboost's ranks and win rates on the pooled boards.
TEST_CASE("docs/arena.md: xgboost beside temperature, platt and isotonic", "[e2e][docs]") {
  const auto& run = shipped("arena/xgboost_check");
  const std::string doc = read_text(fs::path(CALBENCH_SOURCE_DIR) / "docs" / "arena.md");
  const std::vector<std::string> fakes = {"nb_k2", "gb_k2", "mlp_k3"};  // the sweep's order
  const std::vector<std::string> models = {"uncalibrated", "temperature", "platt", "isotonic",
                                           "xgboost"};
  for (std::size_t c = 0; c < fakes.size(); ++c) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict) on "| " + a string.
    std::string line = "| ";
    line += fakes[c];
    line += " |";
    for (const auto& m : models) {
      line += ' ';
      line += fixed(number(row(run.cells, {{"cell", std::to_string(c)},
                                           {"method", m},
                                           {"kind", "truth"},
                                           {"quantity", "ece_top_l1"}}),
                           "mean"),
                    3);
      line += " |";
    }
    INFO(line);
    CHECK(doc.find("\n" + line + "\n") != std::string::npos);
  }
  auto pooled = [&](const char* key) {
    return row(run.leaderboard,
               {{"scope", "all"}, {"kind", "truth"}, {"key", key}, {"method", "xgboost"}});
  };
  const Row& ece = pooled("ece_top_l1");
  const Row& brier = pooled("brier");
  CHECK(ece.at("cases") == "30");
  CHECK(ece.at("blocks") == "3");
  CHECK(ece.at("rank") == "4");
  CHECK(brier.at("rank") == "5");
  auto flat = [](std::string text) {
    for (char& ch : text)
      if (ch == '\n') ch = ' ';
    return text;
  };
  CHECK_THAT(flat(doc), Catch::Contains("4th of the 5 models by true top-label ECE (win rate " +
                                        fixed(number(ece, "win_rate"), 2) +
                                        ") and 5th by the true Brier score (win rate " +
                                        fixed(number(brier, "win_rate"), 2) + ")"));
}

// docs/arena.md's table of fakes: every row as configs/arena/fakes/provenance.csv (written by
// scripts/arena-fits.py) has it, and every fake of the provenance in the table.
TEST_CASE("docs/arena.md: the fakes' table is their provenance", "[unit][docs]") {
  const auto provenance =
      read_csv(fs::path(CALBENCH_SOURCE_DIR) / "configs" / "arena" / "fakes" / "provenance.csv");
  REQUIRE(provenance.size() == 8);
  const std::string doc = read_text(fs::path(CALBENCH_SOURCE_DIR) / "docs" / "arena.md");
  const std::map<std::string, std::string> data = {{"cancer_lr_k2", "breast_cancer"},
                                                   {"digits_lr_k10", "digits"}};
  for (const auto& r : provenance) {
    const std::string& model = r.at("model");
    const std::string source = data.count(model) ? data.at(model) : "make_classification";
    const std::string line = "| " + model + " | " + r.at("classes") + " | " + source + " | " +
                             r.at("rows") + " | " + r.at("accuracy") + " | " + r.at("ece15") +
                             " | " + r.at("fake_accuracy") + " | " + r.at("fake_ece_top_l1") +
                             " | " + r.at("verdict") + " |";
    INFO(line);
    CHECK(doc.find("\n" + line + "\n") != std::string::npos);
  }
}

TEST_CASE("README, docs/decisions.md: recalibrators ranked by the decision", "[slow][e2e][docs]") {
  const auto& run = shipped("recalibration_decision");
  const auto board = [&](const std::string& key, const std::string& method) {
    return row(run.leaderboard, {{"scope", "cell"}, {"key", key}, {"method", method}});
  };
  const auto interval = [](const Row& r, const char* column, int decimals) {
    return fixed(number(r, column), decimals) + " [" +
           fixed(number(r, std::string(column) + "_lower"), decimals) + ", " +
           fixed(number(r, std::string(column) + "_upper"), decimals) + "]";
  };
  // The table of §7, row by row: true ECE mean, its board's win rate and rank, the true regret
  // mean, its board's win rate and rank.
  std::size_t rows = 0;
  for (const std::string& line : doc_section("decisions.md", "## 7. ")) {
    const auto cells = markdown_cells(line);
    if (line.rfind("| ", 0) != 0 || cells.size() != 7 || cells[0] == "method") continue;
    INFO(line);
    const Row& ece = board("ece_top_l1", cells[0]);
    const Row& regret = board("decision_regret", cells[0]);
    CHECK(ece.at("kind") == "truth");
    CHECK(regret.at("kind") == "truth");
    CHECK(fixed(number(ece, "mean"), 4) == cells[1]);
    CHECK(interval(ece, "win_rate", 3) == cells[2]);
    CHECK(ece.at("rank") == cells[3]);
    CHECK(fixed(number(regret, "mean"), 4) == cells[4]);
    CHECK(interval(regret, "win_rate", 3) == cells[5]);
    CHECK(regret.at("rank") == cells[6]);
    ++rows;
  }
  CHECK(rows == 6);
  CHECK(board("ece_top_l1", "uncalibrated").at("cases") == "40");
  const auto& truth = run.summary.at("cells").at(0).at("truth");
  CHECK(fixed(truth.at("accuracy").at("value").get<double>(), 3) == "0.948");
  CHECK(fixed(truth.at("ece_top_l1").at("value").get<double>(), 3) == "0.078");
  // The prose: errors, ratios and the agreements.
  const auto regret_of = [&](const char* method) {
    return row(run.cells, {{"method", method}, {"quantity", "decision_regret"}});
  };
  CHECK(scientific(number(regret_of("uncalibrated"), "truth_error"), 0) == "6e-04");
  double lo = 1.0, hi = 0.0;
  for (const char* m : {"temperature", "platt", "beta", "isotonic", "histogram_binning_em10"}) {
    lo = std::min(lo, number(regret_of(m), "truth_error"));
    hi = std::max(hi, number(regret_of(m), "truth_error"));
  }
  CHECK(scientific(lo, 0) == "8e-05");
  CHECK(scientific(hi, 0) == "6e-04");
  const double histogram = number(regret_of("histogram_binning_em10"), "mean");
  CHECK(std::lround(histogram / number(regret_of("temperature"), "mean")) == 11);
  CHECK(histogram / number(regret_of("uncalibrated"), "mean") > 0.45);
  CHECK(histogram / number(regret_of("uncalibrated"), "mean") < 0.5);
  CHECK(number(board("ece_top_l1", "histogram_binning_em10"), "mean") -
            number(board("ece_top_l1", "beta"), "mean") <
        0.001);
  const auto agreement = [&](const char* key, const char* target) {
    return row(run.agreement,
               {{"estimator", key}, {"target", target}, {"truth", "decision_regret"}});
  };
  CHECK(interval(row(run.agreement, {{"estimator", "decision_regret"}, {"truth", "ece_top_l1"}}),
                 "tau_b", 2) == "0.47 [0.33, 0.87]");
  CHECK(interval(agreement("brier", "brier"), "tau_b", 2) == "0.87 [0.73, 1.00]");
  CHECK(interval(agreement("realised_utility", ""), "tau_b", 2) == "0.87 [0.60, 1.00]");
  CHECK(interval(agreement("ece_ew15", "ece_top_l1"), "tau_b", 2) == "0.20 [0.20, 0.47]");
  CHECK(board("ece_ew15", "histogram_binning_em10").at("rank") == "1");
}
