#include "runners/export_cases.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/read_file.hpp"
#include "core/temporaries.hpp"
#include "data/model_outputs.hpp"
#include "data/npy.hpp"
#include "estimators/convention.hpp"
#include "estimators/estimators_json.hpp"
#include "report/result_set.hpp"
#include "runners/command.hpp"
#include "truth/plugin_truth.hpp"

namespace calbench {
namespace {

struct Case {
  std::string name, description;
  std::size_t classes;
  std::vector<double> p;
  std::vector<std::uint32_t> y;
};

std::vector<Case> edge_cases() {
  const double third = 1.0 / 3.0;
  std::vector<Case> out = {
      {"confident_wrong",
       "every row says class 0 with confidence exactly 1 and the label is 1: top-label and "
       "binary ECE are 1 (an implementation that drops p = 0 or p = 1 reports 0)",
       2,
       {1, 0, 1, 0, 1, 0, 1, 0},
       {1, 1, 1, 1}},
      {"confident_half_right",
       "confidence exactly 1 on every row, right on half of them: top-label ECE 0.5 (a "
       "confidence of 1.0 put into a bin past the last, and not counted, gives 0)",
       2,
       {1, 0, 1, 0, 1, 0, 1, 0},
       {0, 1, 0, 1}},
      {"zero_probabilities",
       "exact zeros among the non-top classes and a confidence of exactly 1: classwise "
       "estimators that drop p_k = 0 rows differ from those that keep them",
       3,
       {0.7, 0.3, 0, 0, 1, 0, 0.5, 0, 0.5, 0, 0, 1, 0.2, 0.8, 0, 1, 0, 0},
       {0, 1, 2, 2, 0, 1}},
      {"ties",
       "tied largest probabilities: the predicted class is the lowest tied index",
       3,
       {third, third, third, third, third, third, 0.5, 0.5, 0, 0, 0.5, 0.5, 0.4, 0.4, 0.2},
       {0, 1, 1, 2, 0}},
      {"bin_edges",
       "confidences exactly on the equal-width edges i/15 (i = 8 .. 15): conventions that "
       "close bins on the left or compute edges as i * (1/15) put them in other bins",
       2,
       {},
       {}},
      {"empty_class",
       "class 3 is never the label nor predicted (p_3 = 0.1 on every row)",
       4,
       {0.6, 0.2, 0.1, 0.1, 0.1, 0.7, 0.1, 0.1, 0.2, 0.2, 0.5, 0.1,
        0.5, 0.3, 0.1, 0.1, 0.3, 0.3, 0.3, 0.1, 0.1, 0.1, 0.7, 0.1},
       {0, 1, 2, 1, 0, 2}},
      {"single_row", "n = 1", 3, {0.2, 0.5, 0.3}, {1}},
      {"uniform",
       "p = 1/K on every row, each class the label once: calibrated, every ECE is 0",
       4,
       {0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
        0.25},
       {0, 1, 2, 3}},
  };
  for (Case& c : out)
    if (c.name == "bin_edges")
      for (int i = 8; i <= 15; ++i) {
        const double edge = static_cast<double>(i) / 15.0;
        c.p.insert(c.p.end(), {edge, 1.0 - edge});
        c.y.push_back(static_cast<std::uint32_t>(i % 2));
      }
  return out;
}

// The estimator entries: every registry row but external, under every convention it takes;
// the binary scope of ece too when K = 2.
std::vector<Json> entries(std::size_t classes) {
  std::vector<Json> out;
  for (const auto& row : estimator_registry()) {
    if (row.extra.cost == Cost::external) continue;
    bool has_convention = false;
    for (const auto& p : row.params) has_convention = has_convention || p.key == "convention";
    if (!has_convention) {
      out.push_back({{"name", row.name}, {"label", row.name}});
      continue;
    }
    for (const auto& c : conventions()) {
      const std::string convention(c.name);
      out.push_back(
          {{"name", row.name}, {"convention", convention}, {"label", row.name + "_" + convention}});
      if (row.name == "ece" && classes == 2)
        out.push_back({{"name", row.name},
                       {"scope", "binary"},
                       {"convention", convention},
                       {"label", "ece_binary_" + convention}});
    }
  }
  return out;
}

// The file in DIR.partial that says which process stages there.
constexpr const char* export_marker = ".calbench-export-cases.pid";

// DIR.partial is what a killed export-cases left: a directory (not a link) of this user
// holding the marker, whose pid is gone.
bool left_by_dead_export(const std::filesystem::path& staging) {
  struct stat st {};
  if (::lstat(staging.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return false;
  const FileBytes text = read_file(staging / export_marker);
  if (!text) return false;
  long long pid = 0;
  char extra = 0;
  if (std::sscanf(text.bytes.c_str(), "%lld%c", &pid, &extra) != 2 || extra != '\n' || pid <= 0 ||
      pid > 0x7fffffff)
    return false;
  return static_cast<pid_t>(pid) != ::getpid() && process_is_gone(static_cast<pid_t>(pid));
}

}  // namespace

int run_export_cases(const std::filesystem::path& directory, std::ostream& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(directory, ec) &&
      !(fs::is_directory(directory, ec) && fs::is_empty(directory, ec)))
    throw InputError(directory.string() +
                     ": exists and is not an empty directory; export-cases "
                     "writes a new one");
  fs::path staging = directory;
  staging += ".partial";
  // The staging name is ours only when we create it: an existing DIR.partial (a user's file)
  // is refused, never removed, unless it is what a killed export-cases left: a directory
  // holding our marker, whose pid is gone (core/temporaries.hpp).
  const fs::path marker = staging / export_marker;
  if (fs::exists(fs::symlink_status(staging, ec))) {
    if (!left_by_dead_export(staging))
      throw OutputError(staging.string() +
                        " exists: export-cases stages its files there and does not remove what "
                        "it did not create; remove it or choose another directory");
    fs::remove_all(staging, ec);
  }
  if (directory.has_parent_path()) fs::create_directories(directory.parent_path(), ec);
  if (!fs::create_directory(staging, ec) || ec)
    throw OutputError("cannot create " + staging.string() + ": " +
                      (ec ? ec.message() : std::string("it exists")));
  Json cases = Json::array();
  const std::vector<Case> all = edge_cases();
  try {
    write_file_atomically(marker, std::to_string(::getpid()) + "\n");
    for (const Case& c : all) {
      const Sample sample = make_sample(c.classes, c.p, c.y);
      fs::create_directories(staging / c.name);
      write_npy(staging / c.name / "p.npy", {sample.size, sample.classes},
                std::span<const double>(sample.p));
      const std::vector<std::int64_t> labels(sample.label.begin(), sample.label.end());
      write_npy(staging / c.name / "y.npy", {sample.size}, std::span<const std::int64_t>(labels));
      Json truth = Json::object();
      const auto plugin = plugin_truth(sample);
      for (const Quantity q : all_quantities) {
        const auto& v = plugin[static_cast<std::size_t>(q)];
        truth[std::string(to_string(q))] = v ? Json(*v) : Json(nullptr);
      }
      const std::size_t label_zeros = count_zeros(sample).true_label_zeros;
      Json expected = Json::array();
      for (const Json& entry : entries(c.classes)) {
        Problems problems;
        Json resolved;
        const auto config = parse_estimator(entry, "", problems, resolved);
        Json item = {{"label", entry["label"]}, {"estimator", resolved}};
        if (!config) {
          item["error"] =
              problems.items().empty() ? "cannot be built" : problems.items()[0].message;
        } else if (config->logs_label_probability && label_zeros > 0) {
          // -log 0 is infinite: not estimable, as `calbench eval` and calbench.estimate say.
          item["value"] = nullptr;
          item["error"] =
              "not estimable: " + std::to_string(label_zeros) + " rows with label probability 0";
        } else {
          try {
            EstimatorWorkspace workspace;
            const double v = config->estimator->estimate(sample, workspace);
            item["value"] = std::isfinite(v) ? Json(v) : Json(nullptr);
            if (!std::isfinite(v)) item["error"] = "not finite";
          } catch (const std::exception& error) {
            item["error"] = error.what();
          }
        }
        expected.push_back(std::move(item));
      }
      cases.push_back({{"name", c.name},
                       {"description", c.description},
                       {"classes", c.classes},
                       {"n", sample.size},
                       {"p", c.name + "/p.npy"},
                       {"y", c.name + "/y.npy"},
                       {"plugin_truth", std::move(truth)},
                       {"expected", std::move(expected)}});
    }
    write_file_atomically(staging / "cases.json",
                          Json({{"schema_version", 1},
                                {"about", "calbench export-cases (docs/cases.md)"},
                                {"cases", std::move(cases)}})
                                  .dump(1) +
                              "\n");
    fs::remove(marker);
    fs::remove(directory, ec);  // an empty directory given
    fs::rename(staging, directory);
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  out << wrote(directory.string(),
               std::to_string(all.size()) + " cases: p.npy, y.npy and cases.json");
  return 0;
}

Command add_export_cases_command(CLI::App& app) {
  auto directory = std::make_shared<std::string>();
  auto* export_cases = app.add_subcommand(
      "export-cases", "write edge-case data sets with every estimator's value (docs/cases.md)");
  export_cases->add_option("DIR", *directory, "a new directory")->required();
  return {export_cases, [directory] { return run_export_cases(*directory, std::cout); }};
}

}  // namespace calbench
