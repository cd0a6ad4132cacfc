#pragma once
// Loads the reference datasets of tests/reference/ and the repository's tests/data ones (CSV:
// label, then K probabilities; shortest round-trip floats, so strtod gives the exact doubles) and
// reference.json. Provenance of every file: tests/reference/README.md.
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/sample.hpp"

namespace calbench::testing {

inline std::string reference_dir() {
  return CALBENCH_REFERENCE_DIR;
}

// A dataset CSV at `path` (the reference ones, and the repository's tests/data ones).
inline Sample load_dataset_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open dataset " + path);
  std::vector<double> p;
  std::vector<std::uint32_t> labels;
  std::size_t classes = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::string field;
    std::getline(ss, field, ',');
    labels.push_back(static_cast<std::uint32_t>(std::stoul(field)));
    std::size_t k = 0;
    while (std::getline(ss, field, ',')) {
      p.push_back(std::strtod(field.c_str(), nullptr));
      ++k;
    }
    classes = k;
  }
  return make_sample(classes, std::move(p), std::move(labels));
}

inline Sample load_reference_dataset(const std::string& name) {
  return load_dataset_csv(reference_dir() + "/datasets/" + name + ".csv");
}

inline const nlohmann::json& reference_values() {
  static const nlohmann::json values = [] {
    std::ifstream in(reference_dir() + "/reference.json");
    return nlohmann::json::parse(in);
  }();
  return values;
}

inline const nlohmann::json& manifest() {
  static const nlohmann::json m = [] {
    std::ifstream in(reference_dir() + "/datasets/manifest.json");
    return nlohmann::json::parse(in);
  }();
  return m;
}

// The reference datasets that hold probabilities (the logits_* sets hold logits).
inline std::vector<std::string> probability_datasets() {
  std::vector<std::string> out;
  for (const auto& [name, info] : manifest().items())
    if (info.at("kind") == "probs") out.push_back(name);
  return out;
}

}  // namespace calbench::testing
