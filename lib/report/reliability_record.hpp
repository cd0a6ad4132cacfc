#pragma once
// Reliability curves as result records: reliability.csv, one row per point (docs/config.md,
// "reliability"). The report layer only lays them out; the curves come from
// truth/reliability_curve.hpp (true) and estimators/binned_reliability.hpp (estimated).
#include <optional>
#include <string>
#include <vector>

#include "core/curve_point.hpp"
#include "estimators/binning.hpp"
#include "report/reporter.hpp"

namespace calbench {

// A true curve (the truth engine's fine bins) or one estimated from a sample by binning.
enum class CurveOrigin { true_curve, estimated };
// The top label's curve, one class's, or all classes' pooled (exchangeable classes).
enum class CurveScope { top_label, one_class, classes_pooled };
// How a curve's points group the rows: the truth engine's fine bins (true curves), a binning's
// bins, or CORP's isotonic (PAV) steps.
enum class CurveGrouping { fine, equal_width, equal_mass, isotonic };
std::string_view to_string(CurveOrigin kind);  // "true", "estimated"
std::string_view to_string(CurveScope scope);  // "top_label", "class", "classes_pooled"
// "fine", to_string(Binning) for a binning's, "isotonic": reliability.csv's `binning` column.
std::string_view to_string(CurveGrouping grouping);
CurveGrouping grouping_of(Binning binning);

struct CurveRecord {
  CurveOrigin curve = CurveOrigin::true_curve;
  CurveGrouping grouping = CurveGrouping::fine;
  CurveScope scope = CurveScope::top_label;
  std::optional<std::size_t> class_index{};  // scope one_class only
  std::vector<CurvePoint> points{};
};

// The data table "reliability" (reliability.csv): `key_columns`, then curve, binning, scope,
// class, lower, upper, score, frequency, error, count, weight.
Table curve_table(std::vector<std::string> key_columns);

// One row of curve_table per point of every curve: `key` (the key columns' fields), the point.
void append_curve_rows(const std::vector<Value>& key, const std::vector<CurveRecord>& curves,
                       std::vector<TableRow>& rows);

}  // namespace calbench
