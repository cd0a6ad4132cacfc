#include "runners/check.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/multiple_testing.hpp"
#include "core/read_file.hpp"
#include "report/columns.hpp"
#include "report/reporter.hpp"
#include "report/text_report.hpp"
#include "runners/command.hpp"

namespace calbench {
namespace {

struct Summary {
  std::string file;
  Json document;
};

// Every field check reads, checked before anything is compared: a malformed file is an input
// error (exit 2), never a regression (1), a raw nlohmann message or a silent pass (a cell
// without "estimators" was dropped, se_bias 1e308 made every test pass, sd -1 was accepted).
class SummaryChecker {
 public:
  explicit SummaryChecker(std::string file) : file_(std::move(file)) {}

  void cells(const Json& cells) {
    std::map<std::uint64_t, std::size_t> seen;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Json& cell = cells[i];
      const std::string at = pointer_join("/cells", i);
      if (!cell.is_object()) fail(at, "expected a cell object, found " + describe(cell));
      const Json& index = field(cell, at, "index");
      if (!index.is_number_unsigned())
        fail(pointer_join(at, "index"), "expected an integer >= 0, found " + describe(index));
      if (const auto [it, fresh] = seen.emplace(index.get<std::uint64_t>(), i); !fresh)
        fail(pointer_join(at, "index"), "cell index " + index.dump() + " appears twice (also at " +
                                            pointer_join("/cells", it->second) + ")");
      if (cell.contains("parameters") && !cell["parameters"].is_object())
        fail(pointer_join(at, "parameters"),
             "expected an object, found " + describe(cell["parameters"]));
      const std::string estimators_at = pointer_join(at, "estimators");
      const Json& estimators = field(cell, at, "estimators");
      if (!estimators.is_object())
        fail(estimators_at, "expected an object of estimators, found " + describe(estimators));
      for (const auto& [label, e] : estimators.items())
        estimator(e, pointer_join(estimators_at, label));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    throw InputError(file_ + ": " + pointer + ": " + what);
  }

  const Json& field(const Json& object, const std::string& at, const char* key) const {
    if (!object.contains(key)) fail(pointer_join(at, key), "required key is missing");
    return object[key];
  }

  double finite(const Json& object, const std::string& at, const char* key, double min) const {
    const Json& value = field(object, at, key);
    const std::string rule = min == 0.0 ? "a finite number >= 0" : "a finite number";
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < min)
      fail(pointer_join(at, key), "expected " + rule + ", found " + describe(value));
    return value.get<double>();
  }

  void estimator(const Json& e, const std::string& at) const {
    if (!e.is_object()) fail(at, "expected an estimator object, found " + describe(e));
    const Json& replicates = field(e, at, "replicates");
    if (!replicates.is_number_unsigned() || replicates.get<std::uint64_t>() < 1)
      fail(pointer_join(at, "replicates"),
           "expected an integer >= 1, found " + describe(replicates));
    const auto R = static_cast<double>(replicates.get<std::uint64_t>());
    constexpr double any = -std::numeric_limits<double>::infinity();
    finite(e, at, "mean", any);
    const double sd = finite(e, at, "sd", 0.0);
    if (e.contains("params") && !e["params"].is_object())
      fail(pointer_join(at, "params"), "expected an object, found " + describe(e["params"]));
    if (!e.contains("bias") || e["bias"].is_null()) return;
    finite(e, at, "bias", any);
    // se_bias = sqrt((sd / sqrt(R))^2 + truth_error^2) (scenarios/estimator_bias/run.cpp): at
    // least the Monte Carlo part, and a truth error above 1 is no calbench truth.
    const double se = sd / std::sqrt(R), se_bias = finite(e, at, "se_bias", 0.0);
    if (se_bias < se * (1.0 - 1e-9) || se_bias > std::hypot(se, 1.0))
      fail(pointer_join(at, "se_bias"),
           "se_bias = " + format_double(se_bias) +
               " does not fit sd / sqrt(replicates) = " + format_double(se) +
               " (it is sqrt(that^2 + truth_error^2), with a truth error of at most 1)");
  }

  std::string file_;
};

Summary read_summary(const std::string& path, const std::string& role) {
  std::filesystem::path file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) file /= "summary.json";
  const FileBytes read = read_file(file);
  if (!read)
    throw InputError(file.string() + ": cannot open the " + role +
                     " (a result directory or its summary.json): " + read.reason());
  Summary out{file.string(), {}};
  try {
    Problems problems;
    out.document = parse_json_source(read.bytes, out.file, problems);
    if (!problems.empty()) throw ConfigError(problems.render(out.file));
  } catch (const ConfigError& e) {
    throw InputError(e.what());
  }
  const Json& d = out.document;
  if (!d.is_object()) throw InputError(out.file + ": not a calbench summary.json (not an object)");
  const Json meta = d.contains("meta") && d["meta"].is_object() ? d["meta"] : Json::object();
  const Json scenario_value = meta.value("scenario", Json(""));
  const std::string scenario = scenario_value.is_string() ? scenario_value.get<std::string>() : "";
  if (scenario != "estimator_bias")
    throw InputError(
        out.file + ": calbench check compares estimator_bias results; this is " +
        (scenario.empty() ? std::string("not a calbench summary.json") : "scenario " + scenario));
  if (!d.contains("cells") || !d["cells"].is_array())
    throw InputError(out.file + ": no cells array");
  SummaryChecker(out.file).cells(d["cells"]);
  return out;
}

// "cell 3 (sample_size = 100, ...)".
std::string cell_text(const Json& cell) {
  std::string swept;
  if (cell.contains("parameters"))
    for (const auto& [key, value] : cell["parameters"].items())
      swept += (swept.empty() ? " (" : ", ") + key + " = " + value.dump();
  return "cell " + cell["index"].dump() + swept + (swept.empty() ? "" : ")");
}

double number(const Json& entry, const char* key, const std::string& where) {
  if (!entry.contains(key) || !entry[key].is_number())
    throw InputError(where + ": no number \"" + key + "\"");
  return entry[key].get<double>();
}

struct Test {
  std::string cell, label, what;  // what: bias, mean or sd
  double old_value = 0.0, new_value = 0.0, z = 0.0, p = 1.0;
};

// z = (new - old) / sqrt(se_new^2 + se_old^2). Two runs of identical numbers give z = 0 even
// with zero standard errors (deterministic estimators); different numbers with zero errors
// give an infinite z.
Test z_test(std::string cell, std::string label, std::string what, double old_value, double old_se,
            double new_value, double new_se) {
  Test t{std::move(cell), std::move(label), std::move(what), old_value, new_value, 0.0, 1.0};
  const double se = std::hypot(old_se, new_se), d = new_value - old_value;
  t.z = d == 0.0 ? 0.0 : se > 0.0 ? d / se : std::copysign(INFINITY, d);
  t.p = two_sided_normal_p(t.z);
  return t;
}

// A value with `digits` significant digits ("%.*g").
std::string significant(double x, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

// A test that moved: a row of the "moved" table, which has no header line.
struct Moved {
  const Test& t;
  double holm = 1.0;
};

ColumnSpec<Moved> moved_column(std::function<Value(const Moved&)> value) {
  return {"", std::move(value), show::terminal, {.align = Align::left}};
}

const std::vector<ColumnSpec<Moved>> moved_columns = {
    moved_column([](const Moved& m) { return Value(m.t.cell); }),
    moved_column([](const Moved& m) { return Value(m.t.label); }),
    moved_column([](const Moved& m) { return Value(m.t.what); }),
    moved_column([](const Moved& m) {
      return Value(significant(m.t.old_value, 5) + " -> " + significant(m.t.new_value, 5));
    }),
    moved_column([](const Moved& m) { return Value("z = " + format_fixed(m.t.z, 1)); }),
    moved_column([](const Moved& m) { return Value("Holm p = " + significant(m.holm, 2)); })};

// The verdict through the terminal reporter: what was compared, the notes, then the tests that
// moved (status 1) or the largest |z| (status 0).
int report_check(const CheckOptions& o, const Summary& results, const Summary& baseline,
                 const std::vector<Test>& tests, const std::vector<std::string>& not_compared,
                 std::size_t estimators, std::ostream& out) {
  std::vector<double> p;
  for (const auto& t : tests) p.push_back(t.p);
  const std::vector<double> adjusted = holm_adjusted(p);
  std::string head = "calbench check " + results.file + " against " + baseline.file + ": " +
                     std::to_string(estimators) + " (cell, estimator) pairs, " +
                     std::to_string(tests.size()) +
                     " z-tests of bias (mean without a truth) and sd, Holm at alpha " +
                     format_double(o.alpha) + "\n";
  for (const auto& note : not_compared) head += "  note: " + note + "\n";
  std::vector<Moved> moved;
  for (std::size_t i = 0; i < tests.size(); ++i)
    if (adjusted[i] <= o.alpha) moved.push_back({tests[i], adjusted[i]});
  TextReport report;
  if (moved.empty()) {
    std::size_t largest = 0;
    for (std::size_t i = 1; i < tests.size(); ++i)
      if (std::fabs(tests[i].z) > std::fabs(tests[largest].z)) largest = i;
    const Test& t = tests[largest];
    report.prose(head + "no regression: none of the " + std::to_string(tests.size()) +
                 " tests moved (largest |z| = " + format_fixed(std::fabs(t.z), 2) + ": " + t.label +
                 " " + t.what + " in " + t.cell + ")\n");
  } else {
    report.table(head + "moved:\n", "moved", moved_columns, moved,
                 "regression: " + std::to_string(moved.size()) + " of " +
                     std::to_string(tests.size()) + " tests moved\n");
  }
  TerminalReporter terminal(out);
  report.emit(terminal);
  return moved.empty() ? 0 : 1;
}

}  // namespace

int run_check(const CheckOptions& o, std::ostream& out) {
  if (!(o.alpha > 0.0 && o.alpha < 1.0))
    throw InputError("--alpha " + format_double(o.alpha) + ": must be > 0 and < 1");
  const Summary results = read_summary(o.results, "results");
  const Summary baseline = read_summary(o.baseline, "baseline");
  std::vector<Test> tests;
  std::vector<std::string> not_compared;
  std::size_t estimators = 0;
  // The baseline's cells by index, built once (the first cell of an index wins).
  std::map<std::int64_t, const Json*> base_by_index;
  for (const Json& c : baseline.document["cells"])
    base_by_index.emplace(c.value("index", std::int64_t{-1}), &c);
  for (const Json& cell : results.document["cells"]) {
    const std::string where = cell_text(cell);
    const auto found = base_by_index.find(cell.value("index", std::int64_t{-2}));
    const Json* base = found == base_by_index.end() ? nullptr : found->second;
    if (base == nullptr) {
      not_compared.push_back(where + ": not in the baseline");
      continue;
    }
    if (base->value("parameters", Json()) != cell.value("parameters", Json()) ||
        base->value("generator", Json()) != cell.value("generator", Json()))
      throw InputError(results.file + ": " + where + " (generator " +
                       cell.value("generator", Json()).dump() + ") is not the baseline's " +
                       cell_text(*base) + " (generator " + base->value("generator", Json()).dump() +
                       "): not the same experiment");
    for (const auto& [label, e] : cell["estimators"].items()) {
      if (!base->at("estimators").contains(label)) {
        not_compared.push_back(where + " " + label + ": not in the baseline");
        continue;
      }
      const Json& b = base->at("estimators").at(label);
      ++estimators;
      const std::string at = results.file + ": " + where + " " + label;
      const double R1 = number(e, "replicates", at), R0 = number(b, "replicates", at);
      const double sd1 = number(e, "sd", at), sd0 = number(b, "sd", at);
      if (e.contains("bias") && b.contains("bias")) {
        tests.push_back(z_test(where, label, "bias", number(b, "bias", at),
                               number(b, "se_bias", at), number(e, "bias", at),
                               number(e, "se_bias", at)));
      } else {
        tests.push_back(z_test(where, label, "mean", number(b, "mean", at), sd0 / std::sqrt(R0),
                               number(e, "mean", at), sd1 / std::sqrt(R1)));
      }
      // se(sd) ~ sd / sqrt(2 (R - 1)): the normal approximation (docs/check.md says when it
      // is rough).
      tests.push_back(z_test(where, label, "sd", sd0, R0 > 1 ? sd0 / std::sqrt(2 * (R0 - 1)) : 0,
                             sd1, R1 > 1 ? sd1 / std::sqrt(2 * (R1 - 1)) : 0));
      const Json p0 = b.value("params", Json::object()), p1 = e.value("params", Json::object());
      std::string changed;
      for (const auto& [key, value] : p1.items())
        if (!p0.contains(key) || p0[key] != value)
          changed += (changed.empty() ? "" : "; ") + key + ": " +
                     (p0.contains(key) ? p0[key].dump() : "(none)") + " -> " + value.dump();
      if (!changed.empty())
        not_compared.push_back(where + " " + label + ": its parameters changed (" + changed +
                               "); compared anyway");
    }
  }
  if (tests.empty())
    throw InputError(results.file + ": nothing to compare with " + baseline.file +
                     " (no cell and label in common)");
  return report_check(o, results, baseline, tests, not_compared, estimators, out);
}

Command add_check_command(CLI::App& app) {
  auto o = std::make_shared<CheckOptions>();
  auto* check = app.add_subcommand(
      "check", "compare an estimator_bias run with a baseline run: z-tests, Holm (docs/check.md)");
  check->add_option("RESULTS", o->results, "result directory (or its summary.json)")->required();
  check->add_option("--baseline", o->baseline, "the baseline's summary.json")->required();
  check->add_option("--alpha", o->alpha, "family-wise error rate over all tests (default 0.01)")
      ->check(CLI::Range(1e-12, 0.5));
  return {check, [o] { return run_check(*o, std::cout); }};
}

}  // namespace calbench
