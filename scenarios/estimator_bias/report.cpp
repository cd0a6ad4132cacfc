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

// The terminal's summary: per cell, each estimator's headline numbers (and with more than one
// interval method, each method's coverage).
std::vector<Table> display_tables(const EstimatorBiasResults& r, bool by_method) {
  std::vector<Table> out;
  Table estimators{.name = "estimators", .use = TableUse::display, .indent = "  "};
  estimators.columns = {{.name = "estimator", .width = 16, .align = Align::left},
                        {.name = "target", .width = 17, .align = Align::left}};
  for (const char* name : {"truth", "mean", "bias", "sd", "rmse", "binning"})
    estimators.columns.push_back({.name = name, .width = 10});
  if (r.intervals)
    for (const char* name : {"coverage", "rejected"})
      estimators.columns.push_back({.name = name, .width = 10});
  out.push_back(std::move(estimators));
  if (by_method) {
    Table coverage{
        .name = "coverage_by_method", .use = TableUse::display, .indent = "  ", .gap = "  "};
    coverage.columns.push_back({.name = "coverage by method", .align = Align::left});
    for (const auto& m : r.intervals->methods)
      coverage.columns.push_back({.name = m ? std::string(to_string(*m)) : std::string("default"),
                                  .align = Align::left,
                                  .precision = 3});
    out.push_back(std::move(coverage));
  }
  return out;
}

void append_display_rows(const EstimatorBiasCellRecord& c, bool intervals, bool by_method,
                         std::vector<TableRow>& rows) {
  for (const auto& e : c.estimators) {
    const std::string target = target_name(e);
    std::vector<Value> fields = {e.label,
                                 target.empty() ? Value() : Value(target),
                                 optional_value(e.truth),
                                 e.mean,
                                 optional_value(e.bias),
                                 e.sd,
                                 optional_value(e.rmse),
                                 optional_value(e.binning_bias)};
    if (intervals)
      fields.insert(fields.end(), {optional_value(e.coverage), optional_value(e.rejection_rate)});
    rows.push_back({"estimators", std::move(fields)});
  }
  if (!by_method) return;
  for (const auto& e : c.estimators) {
    std::vector<Value> fields = {e.label};
    for (const auto& ir : e.intervals)
      fields.push_back(ir.applies ? optional_value(ir.coverage) : Value("n/a"));
    rows.push_back({"coverage_by_method", std::move(fields)});
  }
}

std::string caption(const EstimatorBiasCellRecord& c, bool swept) {
  std::ostringstream out;
  out << "cell " << c.cell.index << ":";
  for (const auto& s : c.cell.swept) out << "  " << s.key << " = " << to_text(s.value);
  if (!swept) out << "  " << c.cell.generator;
  out << "  (n = " << c.sample_size << ", " << c.cell.replicates << " replicates)\n";
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
    header.blocks.emplace_back(
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
  header.tables.push_back(data_table("cells", columns));
  if (intervals) {
    std::vector<std::string> interval_columns = lead_columns(r.sweep_keys, targets);
    interval_columns.insert(interval_columns.end(),
                            {"requested", "method", "coverage", "coverage_se", "truth_below",
                             "truth_above", "mean_width"});
    header.tables.push_back(data_table("intervals", interval_columns));
  }
  if (r.replicate_values)
    header.tables.push_back(data_table("replicates", {"cell", "replicate", "estimator", "value"}));
  if (r.reliability) {
    header.blocks.emplace_back("reliability",
                               Value::Object{{"points", count_value(r.reliability->truth.points)},
                                             {"samples", r.reliability->truth.samples},
                                             {"bins", count_value(r.reliability->bins)}});
    std::vector<std::string> curve_table = key_columns(r.sweep_keys, targets, own_columns);
    curve_table.push_back("sample_size");
    curve_table.insert(curve_table.end(), curve_columns().begin(), curve_columns().end());
    header.tables.push_back(data_table("reliability", curve_table));
  }
  const bool by_method = r.intervals && r.intervals->methods.size() > 1;
  for (auto& table : display_tables(r, by_method)) header.tables.push_back(std::move(table));
  reporter.begin(header);

  for (const auto& c : r.records) {
    Record record;
    Value::Object summary =
        cell_summary_head(c.cell, {{"sample_size", count_value(c.sample_size)}});
    Value::Object estimators;
    for (const auto& e : c.estimators)
      estimators.emplace_back(e.label, estimator_summary(e, intervals));
    summary.emplace_back("estimators", std::move(estimators));
    record.document = std::move(summary);
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
      record.rows.push_back({"cells", std::move(row)});
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
        record.rows.push_back({"intervals", std::move(irow)});
      }
    }
    if (r.replicate_values)
      for (std::size_t rep = 0; rep < c.replicate_values.size(); ++rep)
        for (std::size_t e = 0; e < c.estimators.size(); ++e)
          record.rows.push_back({"replicates",
                                 {count_value(c.cell.index), count_value(rep),
                                  c.estimators[e].label, c.replicate_values[rep][e]}});
    if (r.reliability) {
      std::vector<Value> key = key_fields(c.cell, targets, own_columns);
      key.push_back(count_value(c.sample_size));
      append_curve_rows("reliability", key, c.reliability, record.rows);
    }
    append_display_rows(c, intervals, by_method, record.rows);
    record.caption = caption(c, !r.sweep_keys.empty());
    reporter.record(record);
  }
  if (r.intervals) {
    Record legend;
    std::ostringstream out;
    out << "coverage: fraction of replicates whose " << 100.0 * r.intervals->level
        << "% interval (the first of intervals.methods; docs/intervals.md) holds the\n"
           "target's truth; rejected: fraction where the\n"
           "consistency test rejected calibration at level "
        << r.intervals->test_level << " (its size when calibrated, its power otherwise)\n";
    legend.note = out.str();
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
