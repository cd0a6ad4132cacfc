#include <sstream>

#include "core/format.hpp"
#include "report/columns.hpp"
#include "scenarios/common.hpp"
#include "scenarios/estimator_bias/run.hpp"

namespace calbench {
namespace {

// Columns of their own in cells.csv: a swept one is not repeated as a parameter column.
const std::vector<std::string> own_columns = {"sample_size", "replicates"};

// An estimator in a cell: a row of cells.csv and of the terminal's table, an entry of
// summary.json's "estimators"; with one of its interval methods, a row of intervals.csv.
struct EstimatorRow {
  const EstimatorBiasCellRecord& c;
  const EstimatorRecord& e;
};
struct IntervalRow : EstimatorRow {
  const IntervalRecord& i;
};
struct ReplicateRow {
  const EstimatorBiasCellRecord& c;
  std::size_t replicate, estimator;
};

template <auto member>
Value of(const EstimatorRow& r) {
  return field_value(r.e.*member);
}
const TruthValue* truth_of(const EstimatorRow& r) {
  return r.e.target ? r.c.cell.find_truth(*r.e.target) : nullptr;
}
std::string method_name(const std::optional<IntervalMethod>& m) {
  return m ? std::string(to_string(*m)) : std::string("default");
}

const Display number{.width = 10};

// cells.csv and intervals.csv after the cell's keys; the terminal's first columns.
const std::vector<ColumnSpec<EstimatorRow>> lead_columns = {
    {"sample_size", [](const auto& r) { return count_value(r.c.sample_size); }, show::csv},
    {"replicates", [](const auto& r) { return count_value(r.c.cell.replicates); }, show::csv},
    {"estimator",
     of<&EstimatorRecord::label>,
     show::csv | show::terminal,
     {.width = 16, .align = Align::left}},
    {"name", of<&EstimatorRecord::name>},
    {"params", of<&EstimatorRecord::params>, show::json},
    {"target",
     [](const auto& r) { return target_name(r.e).empty() ? Value() : Value(target_name(r.e)); },
     show::all,
     {.width = 17, .align = Align::left}},
    {"truth", of<&EstimatorRecord::truth>, show::all, number}};

const std::vector<ColumnSpec<EstimatorRow>> estimate_columns = {
    {"truth_method",
     [](const auto& r) {
       return truth_of(r) ? Value(std::string(to_string(truth_of(r)->method))) : Value();
     },
     show::csv},
    {"truth_error", [](const auto& r) { return truth_of(r) ? Value(truth_of(r)->error) : Value(); },
     show::csv},
    {"mean", of<&EstimatorRecord::mean>, show::all, number},
    {"sd", of<&EstimatorRecord::sd>, show::all, number},
    {"bias", of<&EstimatorRecord::bias>, show::all, number},
    {"rmse", of<&EstimatorRecord::rmse>, show::all, number},
    {"se_bias", of<&EstimatorRecord::se_bias>},
    {"population",
     [](const auto& r) {
       if (!r.e.population) return Value();
       return Value(Value::Object{{"value", *r.e.population},
                                  {"error", *r.e.population_error},
                                  {"samples", r.e.population_samples}});
     },
     show::json},
    {"population", of<&EstimatorRecord::population>, show::csv},
    {"population_error", of<&EstimatorRecord::population_error>, show::csv},
    {"binning_bias",
     of<&EstimatorRecord::binning_bias>,
     show::all,
     {.heading = "binning", .width = 10}},
    {"finite_sample_bias", of<&EstimatorRecord::finite_sample_bias>},
    {"replicates", of<&EstimatorRecord::replicates>, show::json}};

const std::vector<ColumnSpec<IntervalRecord>> interval_columns = {
    {"requested", [](const auto& i) { return Value(method_name(i.requested)); }},
    {"method", [](const auto& i) { return Value(std::string(to_string(i.method))); }},
    {"applies", field(&IntervalRecord::applies), show::json},
    {"coverage", field(&IntervalRecord::coverage)},
    {"coverage_se", field(&IntervalRecord::coverage_se)},
    {"truth_below", field(&IntervalRecord::truth_below)},
    {"truth_above", field(&IntervalRecord::truth_above)},
    {"mean_width", field(&IntervalRecord::mean_width)}};

// With intervals: the first method's coverage and the consistency test's rejections.
const std::vector<ColumnSpec<EstimatorRow>> coverage_columns = {
    {"coverage", of<&EstimatorRecord::coverage>, show::all, number},
    {"coverage_se", of<&EstimatorRecord::coverage_se>},
    {"rejection_rate",
     of<&EstimatorRecord::rejection_rate>,
     show::all,
     {.heading = "rejected", .width = 10}},
    {"rejection_se", of<&EstimatorRecord::rejection_se>},
    {"intervals",
     [](const auto& r) {
       Value::Array out;
       for (const auto& i : r.e.intervals) out.emplace_back(TableView(interval_columns).object(i));
       return Value(std::move(out));
     },
     show::json}};

const std::vector<ColumnSpec<ReplicateRow>> replicate_columns = {
    {"cell", [](const auto& r) { return count_value(r.c.cell.index); }},
    {"replicate", [](const auto& r) { return count_value(r.replicate); }},
    {"estimator", [](const auto& r) { return Value(r.c.estimators[r.estimator].label); }},
    {"value", [](const auto& r) { return Value(r.c.replicate_values[r.replicate][r.estimator]); }}};

// The terminal's coverage of each interval method, with more than one.
std::vector<ColumnSpec<EstimatorRow>> by_method_columns(const IntervalSettings& s) {
  std::vector<ColumnSpec<EstimatorRow>> out = {
      {"coverage by method", of<&EstimatorRecord::label>, show::terminal, {.align = Align::left}}};
  for (std::size_t k = 0; k < s.methods.size(); ++k)
    out.push_back({method_name(s.methods[k]),
                   [k](const auto& r) {
                     const IntervalRecord& i = r.e.intervals[k];
                     return i.applies ? field_value(i.coverage) : Value("n/a");
                   },
                   show::terminal,
                   {.align = Align::left, .precision = 3}});
  return out;
}

Value intervals_block(const IntervalSettings& s) {
  Value::Array methods;
  for (const auto& m : s.methods) methods.emplace_back(method_name(m));
  return Value::Object{{"resamples", count_value(s.resamples)},
                       {"level", s.level},
                       {"test_level", s.test_level},
                       {"methods", std::move(methods)},
                       {"jackknife_groups", count_value(s.jackknife_groups)}};
}

std::string legend(const IntervalSettings& s) {
  std::ostringstream out;
  out << "coverage: fraction of replicates whose " << 100.0 * s.level
      << "% interval (the first of intervals.methods; docs/intervals.md) holds the\n"
         "target's truth; rejected: fraction where the\n"
         "consistency test rejected calibration at level "
      << s.test_level << " (its size when calibrated, its power otherwise)\n";
  return out.str();
}

}  // namespace

void report_estimator_bias(const EstimatorBiasResults& r, Reporter& reporter) {
  const bool targets = any_target(r.records);
  auto lead = key_column_specs<EstimatorRow>(
      r.sweep_keys, targets, own_columns, [](const auto& x) -> auto& { return x.c.cell; });
  append<EstimatorRow>(lead, lead_columns);
  auto columns = lead;
  append<EstimatorRow>(columns, estimate_columns);
  auto by_interval = project<IntervalRow, EstimatorRow>(
      lead, [](const auto& x) -> auto& { return static_cast<const EstimatorRow&>(x); });
  append<IntervalRow>(by_interval,
                      project<IntervalRow, IntervalRecord>(
                          interval_columns, [](const auto& x) -> auto& { return x.i; }));
  const bool by_method_table = r.intervals && r.intervals->methods.size() > 1;
  const auto by_method =
      by_method_table ? by_method_columns(*r.intervals) : std::vector<ColumnSpec<EstimatorRow>>{};
  if (r.intervals) append<EstimatorRow>(columns, coverage_columns);
  const TableView cells(columns), methods(by_method);
  const TableView intervals(by_interval);

  ReportHeader header = report_header(r.meta, r.sweep_keys);
  if (r.intervals) header.blocks.emplace_back("intervals", intervals_block(*r.intervals));
  header.tables.push_back(cells.table("cells", show::csv));
  if (r.intervals) header.tables.push_back(intervals.table("intervals", show::csv));
  if (r.replicate_values)
    header.tables.push_back(TableView(replicate_columns).table("replicates", show::csv));
  if (r.reliability) {
    header.blocks.emplace_back("reliability",
                               Value::Object{{"points", count_value(r.reliability->truth.points)},
                                             {"samples", r.reliability->truth.samples},
                                             {"bins", count_value(r.reliability->bins)}});
    std::vector<std::string> keys = key_columns(r.sweep_keys, targets, own_columns);
    keys.push_back("sample_size");
    header.tables.push_back(curve_table(keys));
  }
  header.tables.push_back(cells.table("estimators", show::terminal, "  "));
  if (by_method_table)
    header.tables.push_back(methods.table("coverage_by_method", show::terminal, "  ", "  "));
  reporter.begin(header);

  for (const auto& c : r.records) {
    Record record;
    Value::Object estimators;
    for (const auto& e : c.estimators) {
      estimators.emplace_back(e.label, cells.object({c, e}));
      record.rows.push_back(cells.row("cells", {c, e}, show::csv));
      for (const auto& i : e.intervals)
        if (i.applies) record.rows.push_back(intervals.row("intervals", {{c, e}, i}, show::csv));
      record.rows.push_back(cells.row("estimators", {c, e}, show::terminal));
      if (by_method_table)
        record.rows.push_back(methods.row("coverage_by_method", {c, e}, show::terminal));
    }
    Value::Object summary =
        cell_summary_head(c.cell, {{"sample_size", count_value(c.sample_size)}});
    summary.emplace_back("estimators", std::move(estimators));
    record.document = std::move(summary);
    for (std::size_t rep = 0; rep < c.replicate_values.size() && r.replicate_values; ++rep)
      for (std::size_t e = 0; e < c.estimators.size(); ++e)
        record.rows.push_back(
            TableView(replicate_columns).row("replicates", {c, rep, e}, show::csv));
    if (r.reliability) {
      std::vector<Value> key = key_fields(c.cell, targets, own_columns);
      key.push_back(count_value(c.sample_size));
      append_curve_rows(key, c.reliability, record.rows);
    }
    record.caption = caption_head(c.cell) + (r.sweep_keys.empty() ? "  " + c.cell.generator : "") +
                     "  (n = " + std::to_string(c.sample_size) + ", " +
                     std::to_string(c.cell.replicates) + " replicates)\n";
    reporter.record(record);
  }
  if (r.intervals) reporter.record(Record{.note = legend(*r.intervals)});
  reporter.end();
}

std::string describe_estimator_bias(const EstimatorBiasConfig& config) {
  const auto estimators = [](const EstimatorBiasCell& cell) {
    return joined_labels(cell.estimators);
  };
  return describe_cells(config, "estimators:", estimators, [](const EstimatorBiasCell& cell) {
    return CellSizes{{"sample_size", cell.sample_size}};
  });
}

}  // namespace calbench
