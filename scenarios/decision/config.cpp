#include "scenarios/decision/config.hpp"

#include <algorithm>

#include "config/registry.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "decisions/decision_tasks_json.hpp"
#include "recalibrators/recalibrators_json.hpp"

namespace calbench {

std::optional<DecisionTaskConfig> parse_decision_section(ObjectReader& top,
                                                         std::optional<std::size_t> classes) {
  const Json* value = top.require("decision", "an object {\"task\": ..., parameters...}");
  if (value == nullptr) return std::nullopt;
  const std::string pointer = top.pointer_to("decision");
  ObjectReader d(*value, pointer, top.problems());
  std::optional<DecisionTaskConfig> out;
  const std::size_t before = top.problems().size();
  if (d.is_object()) {
    if (const DecisionEntry* row = lookup(d, "task", "decision task", decision_registry())) {
      d.allow_only(allowed_keys({"task"}, row->params));
      auto spec = row->parse(d, classes);
      if (spec && top.problems().size() == before) {
        try {
          const auto task = make_task(*spec);
          if (classes && task->classes() != *classes)
            d.problems().add(pointer, "the task has " + std::to_string(task->classes()) +
                                          " classes, the generator " + std::to_string(*classes));
          else
            out = DecisionTaskConfig{row->name, std::move(*spec), Value::Object{},
                                     task->figure_names()};
        } catch (const DomainError& error) {
          d.problems().add(pointer, error.what());
        }
      }
    }
  }
  Json resolved = d.take_resolved();
  if (out) {
    Value::Object params;
    for (const auto& item : resolved.items())
      if (item.key() != "task") params.emplace_back(item.key(), to_value(item.value()));
    out->params = std::move(params);
  }
  top.set_resolved("decision", std::move(resolved));
  if (top.problems().size() != before) return std::nullopt;
  return out;
}

namespace {

// Top-level `recalibrator` {"method": {...}, "fit_size": n, "samples": N} (optional). `ok` is
// set false when it is present and has a problem.
std::optional<DecisionRecalibratorConfig> parse_recalibrator_section(ObjectReader& top, bool& ok) {
  ok = true;
  const Json* value = top.find("recalibrator");
  if (value == nullptr) return std::nullopt;
  const std::size_t before = top.problems().size();
  ObjectReader r(*value, top.pointer_to("recalibrator"), top.problems());
  std::optional<MethodConfig> method;
  std::optional<std::int64_t> fit_size;
  std::optional<std::uint64_t> samples;
  if (r.is_object()) {
    r.allow_only({"method", "fit_size", "samples"});
    if (const Json* m = r.require("method",
                                  "a method object {\"name\": ..., ...} as in a "
                                  "recalibration config's \"methods\"")) {
      Json resolved;
      method = parse_recalibration_method(*m, r.pointer_to("method"), top.problems(), resolved);
      r.set_resolved("method", std::move(resolved));
      if (method && method->label == uncalibrated_label) {
        top.problems().add(r.pointer_to("method"),
                           "label \"uncalibrated\" is reserved for the uncalibrated model");
        method.reset();
      }
    }
    fit_size = r.integer("fit_size", 2);
    samples = r.unsigned_integer("samples", 1000, DecisionRecalibratorConfig{}.samples);
  }
  top.set_resolved("recalibrator", r.take_resolved());
  if (top.problems().size() != before || !method || !fit_size || !samples) {
    ok = false;
    return std::nullopt;
  }
  return DecisionRecalibratorConfig{std::move(*method), static_cast<std::size_t>(*fit_size),
                                    *samples};
}

// Top-level `requirement` (optional: nullopt without a problem when absent). The metric is
// checked against `figures` (the task's) and accuracy_key against `sweep_keys`.
std::optional<RequirementConfig> parse_requirement_section(
    ObjectReader& top, const std::vector<std::string>& sweep_keys,
    const std::vector<std::string>& figures) {
  const Json* value = top.find("requirement");
  if (value == nullptr) return std::nullopt;
  ObjectReader r(*value, top.pointer_to("requirement"), top.problems());
  if (!r.is_object()) return std::nullopt;
  const std::size_t before = top.problems().size();
  r.allow_only({"metric", "at_least", "at_most", "regret", "accuracy_key"});
  RequirementConfig out;
  // The bound: exactly one of at_least, at_most, regret.
  std::vector<std::string> given;
  for (const char* key : {"at_least", "at_most", "regret"})
    if (r.find(key) != nullptr) given.emplace_back(key);
  if (given.size() != 1) {
    top.problems().add(r.pointer(), given.empty()
                                        ? "expected one bound: \"at_least\": x, \"at_most\": x or "
                                          "\"regret\": x"
                                        : "give one bound, found " + join(given, " and "));
  } else {
    const std::string& key = given.front();
    const auto x = read_number(*r.find(key), r.pointer_to(key), top.problems());
    if (x) {
      out.requirement.value = *x;
      out.requirement.bound = key == "at_least" ? Bound::at_least : Bound::at_most;
      out.requirement.regret = key == "regret";
      if (out.requirement.regret && *x < 0.0)
        top.problems().add(r.pointer_to(key),
                           "regret = " + format_double(*x) + ": must be >= 0 (a cost bound)");
    }
  }
  std::vector<std::string> metrics = common_decision_metric_names();
  metrics.insert(metrics.end(), figures.begin(), figures.end());
  const bool regret = given.size() == 1 && given.front() == "regret";
  const std::string expected_utility(to_string(DecisionMetric::expected_utility));
  if (const auto metric = r.string("metric", expected_utility)) {
    if (std::find(metrics.begin(), metrics.end(), *metric) == metrics.end()) {
      top.problems().add(r.pointer_to("metric"), unknown_name("metric", *metric, metrics));
    } else if (regret && *metric != expected_utility) {
      top.problems().add(r.pointer_to("metric"),
                         "a regret bound is on expected_utility (it bounds miscalibration_cost = "
                         "oracle - policy), found metric " +
                             quote(*metric));
    }
    if (regret) {
      out.requirement.metric = DecisionMetric::miscalibration_cost;
    } else {
      out.requirement.metric = DecisionMetric::figure;
      out.requirement.figure = *metric;
      for (const DecisionMetric m : common_decision_metrics)
        if (*metric == to_string(m)) {
          out.requirement.metric = m;
          out.requirement.figure.clear();
        }
    }
  }
  if (const Json* key = r.find("accuracy_key")) {
    if (const auto k = read_string(*key, r.pointer_to("accuracy_key"), top.problems())) {
      if (std::find(sweep_keys.begin(), sweep_keys.end(), *k) == sweep_keys.end())
        top.problems().add(r.pointer_to("accuracy_key"),
                           quote(*k) + " is not a sweep key; the sweep keys are: " +
                               (sweep_keys.empty() ? std::string("none") : join(sweep_keys, ", ")));
      else
        out.accuracy_key = *k;
    }
  } else {
    // The parameter that sets accuracy: a target accuracy when one is swept, else alpha.
    for (const char* k : {"generator.target.accuracy", "generator.alpha"})
      if (out.accuracy_key.empty() &&
          std::find(sweep_keys.begin(), sweep_keys.end(), k) != sweep_keys.end())
        out.accuracy_key = k;
    r.add_default("accuracy_key",
                  out.accuracy_key.empty() ? Json(nullptr) : Json(out.accuracy_key));
  }
  top.set_resolved("requirement", r.take_resolved());
  if (top.problems().size() != before) return std::nullopt;
  return out;
}

class Sections : public ScenarioSections {
 public:
  std::unique_ptr<CellBase> parse_cell(ObjectReader& top) override {
    const auto replicates = parse_count(top, "replicates");
    const auto sample_size = parse_count(top, "sample_size");
    auto generator = parse_generator_section(top);
    auto decision = parse_decision_section(
        top, generator ? std::optional<std::size_t>(spec_classes(generator->spec)) : std::nullopt);
    bool recalibrator_ok = true;
    auto recalibrator = parse_recalibrator_section(top, recalibrator_ok);
    const auto truth = parse_truth_section(top);
    if (!replicates || !sample_size || !generator || !decision || !recalibrator_ok || !truth)
      return nullptr;
    auto cell = std::make_unique<DecisionCell>();
    set_cell_base(*cell, *replicates, std::move(*generator), *truth);
    cell->sample_size = *sample_size;
    cell->decision = std::move(*decision);
    cell->recalibrator = std::move(recalibrator);
    return cell;
  }
  // output.replicate_values is accepted (it always was) but a decision run has no estimator
  // values to write.
  void parse_output(ObjectReader& output) override {
    (void)output.boolean("replicate_values", false);
  }
  // The requirement's metric may be one of the task's figures, known from the base document's
  // task when that reads cleanly.
  void parse_after_sweep(ObjectReader& top, const std::vector<std::string>& keys,
                         const CellBase* base) override {
    std::vector<std::string> figures;
    if (base != nullptr) figures = static_cast<const DecisionCell&>(*base).decision.figures;
    requirement_ = parse_requirement_section(top, keys, figures);
  }
  // A requirement on a task figure needs that figure in every cell (the task may be swept).
  void check(const std::vector<std::unique_ptr<CellBase>>& cells, Problems& problems) override {
    if (!requirement_) return;
    if (requirement_->requirement.metric != DecisionMetric::figure) return;
    const std::string& metric = requirement_->requirement.figure;
    for (const auto& base : cells) {
      const auto& cell = static_cast<const DecisionCell&>(*base);
      const auto& f = cell.decision.figures;
      if (std::find(f.begin(), f.end(), metric) == f.end()) {
        problems.add("/requirement/metric", "metric " + quote(metric) +
                                                " is not a figure of task " +
                                                quote(cell.decision.task) + " (sweep cell " +
                                                std::to_string(cell.index) + ")");
        return;
      }
    }
  }
  std::unique_ptr<ExperimentBase> finish(ExperimentBase header,
                                         std::vector<std::unique_ptr<CellBase>> cells) override {
    auto out = std::make_unique<DecisionConfig>();
    static_cast<ExperimentBase&>(*out) = std::move(header);
    out->requirement = requirement_;
    for (auto& cell : cells) out->cells.push_back(std::move(static_cast<DecisionCell&>(*cell)));
    return out;
  }

 private:
  std::optional<RequirementConfig> requirement_;
};

}  // namespace

std::unique_ptr<ScenarioSections> decision_sections() {
  return std::make_unique<Sections>();
}

std::vector<CellDemand> decision_demand(const DecisionConfig& config) {
  std::vector<CellDemand> out;
  for (const DecisionCell& cell : config.cells) {
    CellDemand& d = out.emplace_back();
    d.cell = &cell;
    d.rows = {{static_cast<double>(cell.sample_size), "/sample_size"}};
    if (const auto& r = cell.recalibrator) {
      d.rows.push_back({static_cast<double>(r->fit_size), "/recalibrator/fit_size"});
      if (auto bins = bins_of(r->method.params, "/recalibrator/method"))
        d.bins.push_back(std::move(*bins));
      d.truth_draws = {{static_cast<double>(r->samples), "/recalibrator/samples"}};
    }
  }
  return out;
}

}  // namespace calbench
