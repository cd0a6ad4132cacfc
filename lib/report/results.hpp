#pragma once
// Result records and the files written from them (DESIGN.md §4). The report layer knows only
// these records, never a scenario.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace calbench {

inline constexpr int results_schema_version = 1;

struct TruthRecord {
  std::string quantity;
  double value = 0.0;
  std::string method;
  double error = 0.0;
};

struct EstimatorRecord {
  std::string label, name;
  nlohmann::ordered_json params;  // the estimator's parameters, defaults filled
  std::string target;             // empty when the estimator has no target
  std::optional<double> truth;    // the target's population value
  double mean = 0.0, sd = 0.0;
  std::optional<double> bias, rmse, se_bias;
  // The estimator's own population value (truth/population.hpp), when computed: for
  // estimators without a target (then target is "own" and bias is against it) and for those
  // that do not converge to their target (then bias = binning_bias + finite_sample_bias).
  std::optional<double> population, population_error;
  std::uint64_t population_samples = 0;
  std::optional<double> binning_bias, finite_sample_bias;
  std::size_t replicates = 0;
  // With `intervals`: the fraction of replicates whose bootstrap interval holds the target's
  // truth (estimators with a target) and the fraction whose consistency test rejected
  // calibration, each with its binomial standard error sqrt(f (1 - f) / R).
  std::optional<double> coverage, coverage_se, rejection_rate, rejection_se;
};

struct CellRecord {
  std::size_t index = 0;
  std::vector<std::pair<std::string, nlohmann::ordered_json>> swept;
  std::size_t sample_size = 0, replicates = 0;
  std::string generator;  // canonical parameter text
  // When the generator was given by a target: the request, the solved parameters and the
  // achieved truth (config/generator_config.hpp target_json); null otherwise.
  nlohmann::ordered_json target;
  std::vector<TruthRecord> truth;
  std::vector<EstimatorRecord> estimators;
  // replicate_values[r][e]: estimator e on replicate r (written only on request).
  std::vector<std::vector<double>> replicate_values;
};

struct ResultSet {
  std::string name, scenario;
  std::uint64_t seed = 0;
  std::string config_hash;  // of the resolved config
  std::vector<std::string> sweep_keys;
  std::vector<CellRecord> cells;
  // Set when the experiment asked for intervals: then summary.json has an "intervals" block
  // and cells.csv four more columns.
  struct Intervals {
    std::size_t resamples = 0;
    double level = 0.0, test_level = 0.0;
  };
  std::optional<Intervals> intervals;
};

// Volatile facts of one run: only in run.json.
struct RunInfo {
  std::string started_utc;
  double seconds = 0.0;
  std::string host;
  std::size_t threads = 0;
  std::string compiler, libraries;
};

// Writes config.resolved.json, summary.json, cells.csv, replicates.csv (if requested) and
// run.json into `directory`, each atomically. Every file but run.json is a pure function of
// the config and the calbench version.
void write_results(const ResultSet& results, const nlohmann::ordered_json& resolved_config,
                   const RunInfo& run, bool replicate_values,
                   const std::filesystem::path& directory);

// The meta block every result file carries.
nlohmann::ordered_json meta_block(const ResultSet& results);

// A readable table of the results for the terminal.
std::string format_summary_table(const ResultSet& results);

}  // namespace calbench
