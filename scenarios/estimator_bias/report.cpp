#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/format.hpp"
#include "report/value_format.hpp"
#include "scenarios/common.hpp"
#include "scenarios/estimator_bias/run.hpp"

namespace calbench {
namespace {

// Columns of their own in cells.csv: a swept one is not repeated as a parameter column.
const std::vector<std::string> own_columns = {"sample_size", "replicates"};

// The lead columns of cells.csv and intervals.csv: the cell's keys, then these.
const std::vector<std::string> estimator_columns = {"sample_size", "replicates", "estimator",
                                                    "name",        "target",     "truth"};

std::vector<std::string> lead_columns(const std::vector<std::string>& sweep_keys, bool targets) {
  std::vector<std::string> out = key_columns(sweep_keys, targets, own_columns);
  out.insert(out.end(), estimator_columns.begin(), estimator_columns.end());
  return out;
}

std::vector<Value> lead_fields(const EstimatorBiasCellRecord& c, const EstimatorRecord& e,
                               bool targets) {
  std::vector<Value> out = key_fields(c.cell, targets, own_columns);
  out.insert(out.end(), {count_value(c.sample_size), count_value(c.cell.replicates), e.label,
                         e.name, target_name(e), optional_value(e.truth)});
  return out;
}

std::string requested_name(const IntervalRecord& ir) {
  return ir.requested ? std::string(to_string(*ir.requested)) : "default";
}

Value interval_summary(const IntervalRecord& ir) {
  return Value::Object{{"requested", requested_name(ir)},
                       {"method", std::string(to_string(ir.method))},
                       {"applies", ir.applies},
                       {"coverage", optional_value(ir.coverage)},
                       {"coverage_se", optional_value(ir.coverage_se)},
                       {"truth_below", optional_value(ir.truth_below)},
                       {"truth_above", optional_value(ir.truth_above)},
                       {"mean_width", optional_value(ir.mean_width)}};
}

Value estimator_summary(const EstimatorRecord& e, bool intervals) {
  const std::string target = target_name(e);
  Value::Object out = {
      {"name", e.name},
      {"params", e.params},
      {"target", target.empty() ? Value() : Value(target)},
      {"truth", optional_value(e.truth)},
      {"mean", e.mean},
      {"sd", e.sd},
      {"bias", optional_value(e.bias)},
      {"rmse", optional_value(e.rmse)},
      {"se_bias", optional_value(e.se_bias)},
      {"population", e.population ? Value(Value::Object{{"value", *e.population},
                                                        {"error", *e.population_error},
                                                        {"samples", e.population_samples}})
                                  : Value()},
      {"binning_bias", optional_value(e.binning_bias)},
      {"finite_sample_bias", optional_value(e.finite_sample_bias)},
      {"replicates", count_value(e.replicates)}};
  if (intervals) {
    out.emplace_back("coverage", optional_value(e.coverage));
    out.emplace_back("coverage_se", optional_value(e.coverage_se));
    out.emplace_back("rejection_rate", optional_value(e.rejection_rate));
    out.emplace_back("rejection_se", optional_value(e.rejection_se));
    Value::Array methods;
    for (const auto& ir : e.intervals) methods.push_back(interval_summary(ir));
    out.emplace_back("intervals", std::move(methods));
  }
  return out;
}

std::string terminal_cell(const EstimatorBiasCellRecord& c, bool swept, bool intervals) {
  std::ostringstream out;
  char line[320];
  const auto num = [](const std::optional<double>& v) {
    char b[32];
    if (v)
      std::snprintf(b, sizeof b, "%10.5f", *v);
    else
      std::snprintf(b, sizeof b, "%10s", "-");
    return std::string(b);
  };
  out << "cell " << c.cell.index << ":";
  for (const auto& s : c.cell.swept) out << "  " << s.key << " = " << to_text(s.value);
  if (!swept) out << "  " << c.cell.generator;
  out << "  (n = " << c.sample_size << ", " << c.cell.replicates << " replicates)\n";
  int label_width = 16;
  for (const auto& e : c.estimators)
    label_width = std::max(label_width, static_cast<int>(e.label.size()));
  std::snprintf(line, sizeof line, "  %-*s %-17s %10s %10s %10s %10s %10s %10s", label_width,
                "estimator", "target", "truth", "mean", "bias", "sd", "rmse", "binning");
  out << line;
  if (intervals) out << "   coverage   rejected";
  out << '\n';
  for (const auto& e : c.estimators) {
    const std::string target = target_name(e);
    std::snprintf(line, sizeof line, "  %-*s %-17s %s %10.5f %s %10.5f %s %s", label_width,
                  e.label.c_str(), target.empty() ? "-" : target.c_str(), num(e.truth).c_str(),
                  e.mean, num(e.bias).c_str(), e.sd, num(e.rmse).c_str(),
                  num(e.binning_bias).c_str());
    out << line;
    if (intervals) out << ' ' << num(e.coverage) << ' ' << num(e.rejection_rate);
    out << '\n';
  }
  // More than one method: each method's coverage, estimator by estimator.
  if (intervals && !c.estimators.empty() && c.estimators.front().intervals.size() > 1) {
    std::vector<std::vector<std::string>> rows = {{"coverage by method"}};
    for (const auto& ir : c.estimators.front().intervals)
      rows.front().push_back(requested_name(ir));
    for (const auto& e : c.estimators) {
      std::vector<std::string> row = {e.label};
      for (const auto& ir : e.intervals)
        row.push_back(!ir.applies ? "n/a" : ir.coverage ? format_fixed(*ir.coverage, 3) : "-");
      rows.push_back(std::move(row));
    }
    out << aligned_columns(rows, "  ");
  }
  return out.str();
}

}  // namespace

void report_estimator_bias(const EstimatorBiasResults& r, Reporter& reporter) {
  const bool targets = any_target(r.records);
  const bool intervals = r.intervals.has_value();
  ReportHeader header = report_header(r.meta, r.sweep_keys);
  if (r.intervals) {
    Value::Array methods;
    for (const auto& m : r.intervals->methods)
      methods.emplace_back(m ? std::string(to_string(*m)) : std::string("default"));
    header.summary_blocks.emplace_back(
        "intervals",
        Value::Object{{"resamples", count_value(r.intervals->resamples)},
                      {"level", r.intervals->level},
                      {"test_level", r.intervals->test_level},
                      {"methods", std::move(methods)},
                      {"jackknife_groups", count_value(r.intervals->jackknife_groups)}});
  }
  std::vector<std::string> columns = lead_columns(r.sweep_keys, targets);
  columns.insert(columns.end(),
                 {"truth_method", "truth_error", "mean", "sd", "bias", "rmse", "se_bias",
                  "population", "population_error", "binning_bias", "finite_sample_bias"});
  if (intervals)
    columns.insert(columns.end(), {"coverage", "coverage_se", "rejection_rate", "rejection_se"});
  header.tables.push_back({"cells.csv", columns});
  if (intervals) {
    std::vector<std::string> interval_columns = lead_columns(r.sweep_keys, targets);
    interval_columns.insert(interval_columns.end(),
                            {"requested", "method", "coverage", "coverage_se", "truth_below",
                             "truth_above", "mean_width"});
    header.tables.push_back({"intervals.csv", interval_columns});
  }
  if (r.replicate_values)
    header.tables.push_back({"replicates.csv", {"cell", "replicate", "estimator", "value"}});
  if (r.reliability) {
    header.summary_blocks.emplace_back(
        "reliability", Value::Object{{"points", count_value(r.reliability->truth.points)},
                                     {"samples", r.reliability->truth.samples},
                                     {"bins", count_value(r.reliability->bins)}});
    std::vector<std::string> curve_table = key_columns(r.sweep_keys, targets, own_columns);
    curve_table.push_back("sample_size");
    curve_table.insert(curve_table.end(), curve_columns().begin(), curve_columns().end());
    header.tables.push_back({"reliability.csv", std::move(curve_table)});
  }
  reporter.begin(header);

  for (const auto& c : r.records) {
    ReportRecord record;
    Value::Object summary =
        cell_summary_head(c.cell, {{"sample_size", count_value(c.sample_size)}});
    Value::Object estimators;
    for (const auto& e : c.estimators)
      estimators.emplace_back(e.label, estimator_summary(e, intervals));
    summary.emplace_back("estimators", std::move(estimators));
    record.summary = std::move(summary);
    for (const auto& e : c.estimators) {
      std::vector<Value> row = lead_fields(c, e, targets);
      const TruthValue* truth = e.target ? c.cell.find_truth(*e.target) : nullptr;
      const std::vector<Value> rest = {
          truth != nullptr ? Value(std::string(to_string(truth->method))) : Value(),
          truth != nullptr ? Value(truth->error) : Value(),
          e.mean,
          e.sd,
          optional_value(e.bias),
          optional_value(e.rmse),
          optional_value(e.se_bias),
          optional_value(e.population),
          optional_value(e.population_error),
          optional_value(e.binning_bias),
          optional_value(e.finite_sample_bias)};
      row.insert(row.end(), rest.begin(), rest.end());
      if (intervals)
        row.insert(row.end(), {optional_value(e.coverage), optional_value(e.coverage_se),
                               optional_value(e.rejection_rate), optional_value(e.rejection_se)});
      record.rows.push_back({"cells.csv", std::move(row)});
      for (const auto& ir : e.intervals) {
        if (!ir.applies) continue;
        std::vector<Value> irow = lead_fields(c, e, targets);
        const std::vector<Value> fields = {requested_name(ir),
                                           std::string(to_string(ir.method)),
                                           optional_value(ir.coverage),
                                           optional_value(ir.coverage_se),
                                           optional_value(ir.truth_below),
                                           optional_value(ir.truth_above),
                                           optional_value(ir.mean_width)};
        irow.insert(irow.end(), fields.begin(), fields.end());
        record.rows.push_back({"intervals.csv", std::move(irow)});
      }
    }
    if (r.replicate_values)
      for (std::size_t rep = 0; rep < c.replicate_values.size(); ++rep)
        for (std::size_t e = 0; e < c.estimators.size(); ++e)
          record.rows.push_back({"replicates.csv",
                                 {count_value(c.cell.index), count_value(rep),
                                  c.estimators[e].label, c.replicate_values[rep][e]}});
    if (r.reliability) {
      std::vector<Value> key = key_fields(c.cell, targets, own_columns);
      key.push_back(count_value(c.sample_size));
      append_curve_rows("reliability.csv", key, c.reliability, record.rows);
    }
    record.terminal = terminal_cell(c, !r.sweep_keys.empty(), intervals);
    reporter.record(record);
  }
  if (r.intervals) {
    ReportRecord legend;
    std::ostringstream out;
    out << "coverage: fraction of replicates whose " << 100.0 * r.intervals->level
        << "% interval (the first of intervals.methods; docs/intervals.md) holds the\n"
           "target's truth; rejected: fraction where the\n"
           "consistency test rejected calibration at level "
        << r.intervals->test_level << " (its size when calibrated, its power otherwise)\n";
    legend.terminal = out.str();
    reporter.record(legend);
  }
  reporter.end();
}

std::string describe_estimator_bias(const EstimatorBiasConfig& config) {
  const auto labels_of = [](const EstimatorBiasCell& cell) {
    std::vector<std::string> labels;
    for (const auto& e : cell.estimators) labels.push_back(e.label);
    return join(labels, ", ");
  };
  const std::string labels = config.cells.empty() ? "" : labels_of(config.cells.front());
  std::vector<std::vector<std::string>> rows;
  for (const auto& cell : config.cells) {
    auto row =
        describe_cell(cell, {"sample_size=" + std::to_string(cell.sample_size)}, {"sample_size"});
    // Labels built from swept parameters differ between cells; those are shown per cell.
    if (labels_of(cell) != labels) row.push_back("estimators: " + labels_of(cell));
    rows.push_back(std::move(row));
  }
  return describe_experiment(config, {"estimators:", labels}, rows);
}

}  // namespace calbench
