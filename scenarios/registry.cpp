#include "scenarios/registry.hpp"

#include <stdexcept>

#include "scenarios/common.hpp"
#include "scenarios/decision/run.hpp"
#include "scenarios/estimator_bias/run.hpp"
#include "scenarios/recalibration/run.hpp"

namespace calbench {
namespace {

// Adapters from a module's typed functions to the table's: the config a row's section parser
// made is that row's Config, and a row's runner makes that row's Results.
template <typename Config>
void prepare(ExperimentBase& config, const TargetProgress& progress) {
  solve_targets(dynamic_cast<Config&>(config), progress);
}

template <typename Config, typename Results, Results (*Run)(const Config&, const RunControl&)>
std::unique_ptr<ScenarioResults> run(const ExperimentBase& config, const RunControl& control) {
  return std::make_unique<Results>(Run(dynamic_cast<const Config&>(config), control));
}

template <typename Results, void (*Report)(const Results&, Reporter&)>
void report(const ScenarioResults& results, Reporter& reporter) {
  Report(dynamic_cast<const Results&>(results), reporter);
}

template <typename Config, std::string (*Describe)(const Config&)>
std::string describe(const ExperimentBase& config) {
  return Describe(dynamic_cast<const Config&>(config));
}

template <typename Config, std::vector<CellDemand> (*Demand)(const Config&)>
std::vector<CellDemand> demand(const ExperimentBase& config) {
  return Demand(dynamic_cast<const Config&>(config));
}

std::vector<ScenarioModule> make_table() {
  return {
      {{"estimator_bias",
        /*keys=*/{"sample_size", "estimators", "intervals", "reliability"},
        /*fixed=*/{"intervals", "reliability"},
        /*output_keys=*/{"replicate_values"},
        /*unused_note=*/"", &estimator_bias_sections},
       "bias, spread and error of each estimator against the exact value of its target, per "
       "cell",
       &prepare<EstimatorBiasConfig>,
       &run<EstimatorBiasConfig, EstimatorBiasResults, &run_estimator_bias>,
       &report<EstimatorBiasResults, &report_estimator_bias>,
       &describe<EstimatorBiasConfig, &describe_estimator_bias>,
       &demand<EstimatorBiasConfig, &estimator_bias_demand>},
      {{"decision",
        /*keys=*/{"sample_size", "decision", "recalibrator", "requirement"},
        /*fixed=*/{"requirement"},
        /*output_keys=*/{"replicate_values"},
        /*unused_note=*/"", &decision_sections},
       "exact expected utility of a decision task acting on p and on the true r(p), the cost of "
       "miscalibration, and the minimal accuracy meeting a requirement",
       &prepare<DecisionConfig>,
       &run<DecisionConfig, DecisionResults, &run_decision>,
       &report<DecisionResults, &report_decision>,
       &describe<DecisionConfig, &describe_decision>,
       &demand<DecisionConfig, &decision_demand>},
      {{"recalibration",
        /*keys=*/
        {"estimators", "fit_size", "test_size", "truth_samples", "methods", "reliability",
         "decision", "leaderboard"},
        /*fixed=*/{"reliability", "leaderboard"},
        /*output_keys=*/{"timings"},
        /*unused_note=*/" (it draws fit_size and test_size rows)",
        &recalibration_sections},
       "recalibration methods fitted on fit_size rows, judged by the truth of the composed "
       "model and by estimators on test_size rows",
       &prepare<RecalibrationConfig>,
       &run<RecalibrationConfig, RecalibrationResults, &run_recalibration>,
       &report<RecalibrationResults, &report_recalibration>,
       &describe<RecalibrationConfig, &describe_recalibration>,
       &demand<RecalibrationConfig, &recalibration_demand>},
  };
}

}  // namespace

const std::vector<ScenarioModule>& scenario_table() {
  static const std::vector<ScenarioModule> table = make_table();
  return table;
}

const std::vector<ScenarioSyntax>& scenario_syntax() {
  static const std::vector<ScenarioSyntax> rows = [] {
    std::vector<ScenarioSyntax> out;
    for (const auto& m : scenario_table()) out.push_back(m.syntax);
    return out;
  }();
  return rows;
}

const ScenarioModule& module_of(const ExperimentBase& config) {
  for (const auto& m : scenario_table())
    if (m.syntax.name == config.scenario) return m;
  throw std::logic_error("no scenario module " + config.scenario);
}

std::vector<CellDemand> cell_demands(const ExperimentBase& config) {
  return module_of(config).demand(config);
}

std::unique_ptr<ExperimentBase> load_experiment(const std::filesystem::path& file) {
  return load_experiment(file, scenario_syntax());
}

std::unique_ptr<ExperimentBase> parse_experiment(const nlohmann::ordered_json& document,
                                                 const std::string& source) {
  return parse_experiment(document, source, scenario_syntax());
}

}  // namespace calbench
