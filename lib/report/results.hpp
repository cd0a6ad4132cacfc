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

// One statistic of a method over replicates: a truth quantity, an estimate or a fitted scalar.
struct MethodStat {
  std::string key;  // quantity name, estimator label or parameter name
  double mean = 0.0, sd = 0.0;
  std::optional<double> error;              // truth: the Monte Carlo error of one replicate's value
  std::optional<double> improvement;        // over the reference model (positive: better)
  std::string target;                       // estimates: the estimator's target quantity, if any
  std::optional<double> rank_disagreement;  // estimates: see MethodRecord
};

// A recalibration method in a cell (or the uncalibrated model).
struct MethodRecord {
  std::string label, name;
  nlohmann::ordered_json params;
  std::vector<MethodStat> truth, estimates, parameters;
  std::size_t fits = 0, failed_fits = 0;  // replicates whose fit succeeded / threw
  std::string failure;                    // the first failure's message
  std::optional<double> fit_seconds;      // mean per fit; volatile (run.json, or on request)
};

// How often the ranking of the methods by an estimator on the test sample disagrees with the
// ranking by the truth of its target, over the replicates in which every method was fitted.
struct RankingRecord {
  std::string estimator, target;
  double disagreement = 0.0;       // the orders differ anywhere
  double best_disagreement = 0.0;  // the best method differs
  std::size_t replicates = 0;
};

// Scenario decision, per cell (docs/decisions.md): exact expected utilities with their errors
// (quadrature error estimate or Monte Carlo standard error), the task's figures, and the spread
// of the realised utility over test sets of sample_size.
// The policy after a recalibrator (scenario decision's `recalibrator`): over the replicates
// whose fit succeeded, the mean and sd of its exact expected utility and of its cost relative
// to the oracle; `error` is the mean Monte Carlo standard error of one replicate's value.
struct RecalibratedRecord {
  std::string label, name;
  nlohmann::ordered_json params;  // the method's parameters, defaults filled
  std::size_t fit_size = 0;
  std::uint64_t samples = 0;
  std::size_t fits = 0, failed_fits = 0;
  std::string failure;  // the first failed fit's message
  double utility_mean = 0.0, utility_sd = 0.0, utility_error = 0.0;
  double cost_mean = 0.0, cost_sd = 0.0, cost_error = 0.0;
};

struct DecisionRecord {
  std::string task;
  nlohmann::ordered_json params;  // the task's parameters, defaults filled
  std::string method;             // quadrature | monte_carlo
  std::uint64_t samples = 0;      // Monte Carlo draws (0 for quadrature)
  double expected_utility = 0.0, expected_utility_error = 0.0;
  double oracle_expected_utility = 0.0, oracle_expected_utility_error = 0.0;
  double miscalibration_cost = 0.0, miscalibration_cost_error = 0.0;  // oracle - policy
  double realised_mean = 0.0, realised_sd = 0.0;
  std::vector<std::pair<std::string, double>> figures, oracle_figures;
  std::optional<RecalibratedRecord> recalibrated;
};

// One group of requirements.csv: the cells that share every swept value but the accuracy key.
struct RequirementRow {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> group;
  std::vector<std::size_t> cells;
  std::string status;  // reached | met_everywhere | unreachable
  std::optional<double> minimal_accuracy;
  // reached: the bracketing cells (last failing, next); unreachable: the closest cell in lower.
  std::optional<std::size_t> lower_cell, upper_cell;
  std::optional<double> lower_accuracy, upper_accuracy, lower_value, upper_value;
  // ece_top_l1 of the generator at the frontier, interpolated like the accuracy.
  std::optional<double> ece_top_l1;
  bool monotone = true;
};

struct RequirementsRecord {
  std::string metric, bound;  // bound: at_least | at_most | regret
  double value = 0.0;
  std::string accuracy_key;  // empty when none is swept
  std::vector<std::string> group_keys;
  std::vector<RequirementRow> rows;
  std::string verdict;  // one paragraph
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
  // Scenarios with methods (recalibration): their sizes (written instead of sample_size),
  // the methods and the ranking agreement.
  std::vector<std::pair<std::string, std::size_t>> sizes;
  std::vector<MethodRecord> methods;
  std::vector<RankingRecord> rankings;
  std::optional<DecisionRecord> decision;  // scenario decision (then estimators is empty)
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
  // Write the methods' fit_seconds into summary.json too (then it is not reproducible).
  bool timings_in_summary = false;
  // Scenario decision with a requirement: requirements.csv and a "requirements" block.
  std::optional<RequirementsRecord> requirements;
};

// Volatile facts of one run: only in run.json.
struct RunInfo {
  std::string started_utc;
  double seconds = 0.0;
  std::string host;
  std::size_t threads = 0;
  std::string compiler, libraries;
};

// Writes config.resolved.json, summary.json, cells.csv, replicates.csv (if requested),
// requirements.csv (with requirements) and run.json into `directory`, each atomically. Every file
// but run.json is a pure function of the config and the calbench version.
void write_results(const ResultSet& results, const nlohmann::ordered_json& resolved_config,
                   const RunInfo& run, bool replicate_values,
                   const std::filesystem::path& directory);

// The meta block every result file carries.
nlohmann::ordered_json meta_block(const ResultSet& results);

// A CSV field: quoted (with doubled quotes) when it holds a comma, quote or newline.
std::string csv_escape(const std::string& s);
// A JSON value as a CSV field: strings escaped, doubles in shortest round-trip form.
std::string csv_value(const nlohmann::ordered_json& v);

// The leading columns of every cells.csv: `cell`, the swept parameters that have no column of
// their own (sample_size, replicates, fit_size, test_size), and with `targets` the solved
// parameters solved_alpha, solved_temperature, solved_gamma. `targets` is meant to be
// has_solved_targets(r), so that results without targets keep their shape.
bool has_solved_targets(const ResultSet& r);
std::string key_columns_header(const ResultSet& r, bool targets);
std::string key_columns(const CellRecord& c, bool targets);

// A readable table of the results for the terminal.
std::string format_summary_table(const ResultSet& results);

}  // namespace calbench
