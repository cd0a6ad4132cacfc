#include "scenarios/recalibration/config.hpp"

#include "estimators/estimators_json.hpp"
#include "recalibrators/recalibrators_json.hpp"
#include "scenarios/common.hpp"

namespace calbench {
namespace {

// With a decision task the true regret and the test set's realised utility are ranking keys
// beside the estimators (and name rows of leaderboard_agreement.csv): no estimator may take
// their names.
void reserve_decision_key(ObjectReader& top, const std::vector<EstimatorConfig>& estimators) {
  for (std::size_t e = 0; e < estimators.size(); ++e)
    for (const std::string_view key : {decision_regret_key, realised_utility_key})
      if (estimators[e].label == key)
        top.problems().add(pointer_join(pointer_join(top.pointer_to("estimators"), e), "label"),
                           "label " + quote(key) + " is reserved for the decision task's keys");
}

const std::vector<Choice<BoardBlock>> block_choices = {{"cell", BoardBlock::cell},
                                                       {"generator", BoardBlock::generator}};

class Sections : public ScenarioSections {
 public:
  std::unique_ptr<CellBase> parse_cell(ObjectReader& top) override {
    const auto replicates = parse_count(top, "replicates");
    auto generator = parse_generator_section(top);
    auto estimators =
        parse_labelled_array<EstimatorConfig>(top, "estimators", "estimators", parse_estimator);
    const auto truth = parse_truth_section(top);
    RecalibrationCell defaults;
    const auto fit_size = top.integer("fit_size", 2);
    const auto test_size = top.integer("test_size", 1);
    const auto truth_samples = top.unsigned_integer("truth_samples", 1000, defaults.truth_samples);
    auto methods =
        parse_labelled_array<MethodConfig>(top, "methods", "methods", parse_recalibration_method,
                                           uncalibrated_label, "the uncalibrated model");
    if (generator && estimators) check_estimator_classes(top, *generator, *estimators);
    // `decision` is optional here; the decision scenario's parser reads it when present.
    const std::size_t before = top.problems().size();
    std::optional<DecisionTaskConfig> decision;
    if (top.find("decision") != nullptr) {
      decision = parse_decision_section(
          top,
          generator ? std::optional<std::size_t>(spec_classes(generator->spec)) : std::nullopt);
      if (decision && estimators) reserve_decision_key(top, *estimators);
    }
    if (!replicates || !generator || !estimators || !truth || !fit_size || !test_size ||
        !truth_samples || !methods || top.problems().size() != before)
      return nullptr;
    auto cell = std::make_unique<RecalibrationCell>();
    set_cell_base(*cell, *replicates, std::move(*generator), *truth);
    cell->fit_size = static_cast<std::size_t>(*fit_size);
    cell->test_size = static_cast<std::size_t>(*test_size);
    cell->truth_samples = *truth_samples;
    cell->methods = std::move(*methods);
    cell->estimators = std::move(*estimators);
    cell->decision = std::move(decision);
    return cell;
  }
  void parse_output(ObjectReader& output) override {
    if (const auto v = output.boolean("timings", false)) timings_ = *v;
  }
  void parse_after_sweep(ObjectReader& top, const std::vector<std::string>& /*keys*/,
                         const CellBase* /*base*/) override {
    parse_leaderboard(top);
    const Json* value = top.find("reliability");
    if (value == nullptr) return;
    ObjectReader o(*value, top.pointer_to("reliability"), top.problems());
    if (!o.is_object()) return;
    o.allow_only({"points", "samples"});
    const ReliabilitySettings defaults;
    const auto points = o.integer("points", 2, static_cast<std::int64_t>(defaults.points));
    const auto samples = o.unsigned_integer("samples", 1000, defaults.samples);
    top.set_resolved("reliability", o.take_resolved());
    if (points && samples)
      reliability_ = ReliabilitySettings{static_cast<std::size_t>(*points), *samples};
  }
  std::unique_ptr<ExperimentBase> finish(ExperimentBase header,
                                         std::vector<std::unique_ptr<CellBase>> cells) override {
    auto out = std::make_unique<RecalibrationConfig>();
    static_cast<ExperimentBase&>(*out) = std::move(header);
    out->timings = timings_;
    out->reliability = reliability_;
    out->boards = boards_;
    for (auto& cell : cells)
      out->cells.push_back(std::move(static_cast<RecalibrationCell&>(*cell)));
    return out;
  }

 private:
  // `leaderboard`: absent, the defaults, and the resolved config is as without it.
  void parse_leaderboard(ObjectReader& top) {
    const Json* value = top.find("leaderboard");
    if (value == nullptr) return;
    ObjectReader o(*value, top.pointer_to("leaderboard"), top.problems());
    if (!o.is_object()) return;
    o.allow_only({"block", "generator_boards"});
    const BoardSettings defaults;
    const auto block = o.choice("block", "leaderboard block", block_choices, defaults.block);
    const auto generator_boards = o.boolean("generator_boards", defaults.generator_boards);
    top.set_resolved("leaderboard", o.take_resolved());
    if (block && generator_boards)
      boards_ = {.block = *block, .generator_boards = *generator_boards};
  }

  bool timings_ = false;
  std::optional<ReliabilitySettings> reliability_;
  BoardSettings boards_;
};

}  // namespace

std::unique_ptr<ScenarioSections> recalibration_sections() {
  return std::make_unique<Sections>();
}

std::vector<CellDemand> recalibration_demand(const RecalibrationConfig& config) {
  std::vector<CellDemand> out;
  for (const RecalibrationCell& cell : config.cells) {
    CellDemand& d = out.emplace_back();
    d.cell = &cell;
    d.rows = {{static_cast<double>(cell.fit_size), "/fit_size"},
              {static_cast<double>(cell.test_size), "/test_size"}};
    d.bins = bins_of(cell.estimators, "/estimators");
    for (Demand& bins : bins_of(cell.methods, "/methods")) d.bins.push_back(std::move(bins));
    d.truth_draws = {{static_cast<double>(cell.truth_samples), "/truth_samples"}};
    // A decision task values every model on as many draws again (its own keyed stream).
    if (cell.decision)
      d.truth_draws.push_back({static_cast<double>(cell.truth_samples), "/truth_samples"});
    // Each replicate draws truth_samples rows again and passes them through every fitted
    // method and the uncalibrated model (composed_truth; the decision values once more).
    d.replicate_truth_draws = static_cast<double>(cell.truth_samples) * (cell.decision ? 2.0 : 1.0);
    d.replicate_models = static_cast<double>(cell.methods.size() + 1);
    for (const MethodConfig& method : cell.methods) {
      double rows = static_cast<double>(cell.fit_size);
      if (method.name == "subsample")  // the row cap (recalibrators/subsample.hpp)
        for (const NamedParam& p : method.params)
          if (const auto* cap = std::get_if<std::int64_t>(&p.value.data); cap && p.key == "rows")
            rows = std::min(rows, static_cast<double>(*cap));
      d.replicate_fit_rows += rows;
    }
    if (config.reliability) {
      d.truth_draws.push_back(
          {static_cast<double>(config.reliability->samples), "/reliability/samples"});
      d.reliability = true;
    }
  }
  return out;
}

}  // namespace calbench
