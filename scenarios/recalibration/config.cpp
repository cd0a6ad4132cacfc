#include "scenarios/recalibration/config.hpp"

#include "estimators/estimators_json.hpp"
#include "recalibrators/recalibrators_json.hpp"
#include "scenarios/common.hpp"

namespace calbench {
namespace {

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
    if (!replicates || !generator || !estimators || !truth || !fit_size || !test_size ||
        !truth_samples || !methods)
      return nullptr;
    auto cell = std::make_unique<RecalibrationCell>();
    set_cell_base(*cell, *replicates, std::move(*generator), *truth);
    cell->fit_size = static_cast<std::size_t>(*fit_size);
    cell->test_size = static_cast<std::size_t>(*test_size);
    cell->truth_samples = *truth_samples;
    cell->methods = std::move(*methods);
    cell->estimators = std::move(*estimators);
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
    if (config.reliability) {
      d.truth_draws.push_back(
          {static_cast<double>(config.reliability->samples), "/reliability/samples"});
      d.reliability = true;
    }
  }
  return out;
}

}  // namespace calbench
