#include "scenarios/estimator_bias/config.hpp"

#include <algorithm>

#include "estimators/binning.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/external.hpp"
#include "scenarios/common.hpp"

namespace calbench {
namespace {

// A probability strictly between 0 and 1.
constexpr auto unit_open = [](double x) { return x > 0.0 && x < 1.0; };

// Most resamples per replicate: more is a typo, and the streams' key holds 32 bits of index.
constexpr std::int64_t max_resamples = 1'000'000;

// `intervals.methods`: a non-empty array of distinct interval_choices() names; ["default"]
// when absent.
std::optional<std::vector<IntervalChoice>> parse_methods(ObjectReader& o) {
  const Json* value = o.find("methods");
  if (value == nullptr) {
    o.add_default("methods", Json::array({"default"}));
    return std::vector<IntervalChoice>{std::nullopt};
  }
  const std::string pointer = o.pointer_to("methods");
  if (!value->is_array() || value->empty()) {
    o.problems().add(pointer,
                     "expected a non-empty array of interval methods, found " + describe(*value));
    return std::nullopt;
  }
  std::vector<IntervalChoice> out;
  bool ok = true;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const auto method = read_choice((*value)[i], pointer_join(pointer, i), "interval method",
                                    interval_choices(), o.problems());
    if (!method) {
      ok = false;
      continue;
    }
    if (*method == IntervalMethod::fake) {
      o.problems().add(pointer_join(pointer, i),
                       "fake is calbench eval's interval (calibrated on a fake fitted to a "
                       "model's rows); a run's generator is known, so its intervals are the "
                       "other methods");
      ok = false;
      continue;
    }
    if (std::find(out.begin(), out.end(), *method) != out.end()) {
      o.problems().add(pointer_join(pointer, i), "method listed twice");
      ok = false;
    }
    out.push_back(*method);
  }
  if (!ok) return std::nullopt;
  return out;
}

// `intervals`: only when present (absent keeps every output as it was).
std::optional<IntervalSettings> parse_intervals(ObjectReader& top) {
  const Json* value = top.find("intervals");
  if (value == nullptr) return std::nullopt;
  ObjectReader o(*value, top.pointer_to("intervals"), top.problems());
  if (!o.is_object()) return std::nullopt;
  o.allow_only({"resamples", "level", "test_level", "methods", "jackknife_groups"});
  const IntervalSettings defaults;
  const auto resamples = o.integer("resamples", 1, static_cast<std::int64_t>(defaults.resamples));
  if (resamples && *resamples > max_resamples)
    top.problems().add(o.pointer_to("resamples"),
                       "resamples = " + std::to_string(*resamples) +
                           ": must be <= " + std::to_string(max_resamples));
  const auto level = o.number("level", defaults.level, unit_open, "> 0 and < 1");
  const auto test_level = o.number("test_level", defaults.test_level, unit_open, "> 0 and < 1");
  const auto methods = parse_methods(o);
  const auto groups =
      o.integer("jackknife_groups", 2, static_cast<std::int64_t>(defaults.jackknife_groups));
  top.set_resolved("intervals", o.take_resolved());
  if (!resamples || *resamples > max_resamples || !level || !test_level || !methods || !groups)
    return std::nullopt;
  return IntervalSettings{static_cast<std::size_t>(*resamples), *level, *test_level, *methods,
                          static_cast<std::size_t>(*groups)};
}

// `reliability`: only when present (absent keeps every output as it was).
std::optional<ReliabilityOutput> parse_reliability(ObjectReader& top) {
  const Json* value = top.find("reliability");
  if (value == nullptr) return std::nullopt;
  ObjectReader o(*value, top.pointer_to("reliability"), top.problems());
  if (!o.is_object()) return std::nullopt;
  o.allow_only({"points", "samples", "bins"});
  const ReliabilityOutput defaults;
  const auto points = o.integer("points", 2, static_cast<std::int64_t>(defaults.truth.points));
  const auto samples =
      o.unsigned_integer("samples", 1000, static_cast<std::uint64_t>(defaults.truth.samples));
  const auto bins = o.integer("bins", 1, static_cast<std::int64_t>(defaults.bins));
  // The estimators' bound (binning.hpp): 1e12 bins ran out of memory.
  if (bins && *bins > max_bins)
    top.problems().add(o.pointer_to("bins"), "bins = " + std::to_string(*bins) +
                                                 ": must be <= " + std::to_string(max_bins));
  top.set_resolved("reliability", o.take_resolved());
  if (!points || !samples || !bins || *bins > max_bins) return std::nullopt;
  return ReliabilityOutput{{static_cast<std::size_t>(*points), *samples},
                           static_cast<std::size_t>(*bins)};
}

class Sections : public ScenarioSections {
 public:
  std::unique_ptr<CellBase> parse_cell(ObjectReader& top) override {
    const auto replicates = parse_count(top, "replicates");
    const auto sample_size = parse_count(top, "sample_size");
    auto generator = parse_generator_section(top);
    // Labels name result rows, so two estimators may not share one.
    auto estimators =
        parse_labelled_array<EstimatorConfig>(top, "estimators", "estimators", parse_estimator);
    const auto truth = parse_truth_section(top);
    if (generator && estimators) check_estimator_classes(top, *generator, *estimators);
    if (!replicates || !sample_size || !generator || !estimators || !truth) return nullptr;
    auto cell = std::make_unique<EstimatorBiasCell>();
    set_cell_base(*cell, *replicates, std::move(*generator), *truth);
    cell->sample_size = *sample_size;
    cell->estimators = std::move(*estimators);
    return cell;
  }
  void parse_output(ObjectReader& output) override {
    if (const auto v = output.boolean("replicate_values", false)) replicate_values_ = *v;
  }
  void parse_after_sweep(ObjectReader& top, const std::vector<std::string>&,
                         const CellBase*) override {
    intervals_ = parse_intervals(top);
    reliability_ = parse_reliability(top);
  }
  // Intervals resample every replicate hundreds of times: an external estimator would start
  // its command for each resample.
  void check(const std::vector<std::unique_ptr<CellBase>>& cells, Problems& problems) override {
    if (!intervals_) return;
    for (const auto& cell : cells)
      for (const auto& e : static_cast<const EstimatorBiasCell&>(*cell).estimators)
        if (e.estimator->capabilities().external != nullptr) {
          problems.add_unique({"/intervals",
                               "intervals are not available with the external "
                               "estimator " +
                                   quote(e.label) +
                                   " (its command would start once per resample)"});
        }
  }
  std::unique_ptr<ExperimentBase> finish(ExperimentBase header,
                                         std::vector<std::unique_ptr<CellBase>> cells) override {
    auto out = std::make_unique<EstimatorBiasConfig>();
    static_cast<ExperimentBase&>(*out) = std::move(header);
    out->intervals = intervals_;
    out->reliability = reliability_;
    out->replicate_values = replicate_values_;
    for (auto& cell : cells)
      out->cells.push_back(std::move(static_cast<EstimatorBiasCell&>(*cell)));
    return out;
  }

 private:
  std::optional<IntervalSettings> intervals_;
  std::optional<ReliabilityOutput> reliability_;
  bool replicate_values_ = false;
};

}  // namespace

std::unique_ptr<ScenarioSections> estimator_bias_sections() {
  return std::make_unique<Sections>();
}

std::vector<CellDemand> estimator_bias_demand(const EstimatorBiasConfig& config) {
  std::vector<CellDemand> out;
  for (const EstimatorBiasCell& cell : config.cells) {
    CellDemand& d = out.emplace_back();
    d.cell = &cell;
    d.rows = {{static_cast<double>(cell.sample_size), "/sample_size"}};
    d.bins = bins_of(cell.estimators, "/estimators");
    if (config.reliability) {
      // The true curves are computed once per distinct generator (run.cpp's cache).
      d.generator_draws = {
          {static_cast<double>(config.reliability->truth.samples), "/reliability/samples"}};
      d.reliability = true;
    }
    if (const auto& is = config.intervals) {
      // Per replicate: `resamples` bootstrap and `resamples` consistency evaluations of the
      // estimators, and bca's jackknife groups (sample_intervals, docs/config.md §5a).
      const bool bca = std::find(is->methods.begin(), is->methods.end(),
                                 std::optional(IntervalMethod::bca)) != is->methods.end();
      d.evaluations = {
          2.0 * static_cast<double>(is->resamples) +
              (bca ? static_cast<double>(std::min(is->jackknife_groups, cell.sample_size)) : 0.0),
          "/intervals/resamples"};
    }
  }
  return out;
}

}  // namespace calbench
