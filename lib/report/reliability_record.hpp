#pragma once
// Reliability curves as result records: reliability.csv, one row per point (docs/config.md,
// "reliability"). The report layer only lays them out; the curves come from
// truth/reliability_curve.hpp (true) and estimators/binned_reliability.hpp (estimated).
#include <optional>
#include <string>
#include <vector>

#include "core/curve_point.hpp"
#include "report/reporter.hpp"

namespace calbench {

struct CurveRecord {
  std::string curve;                       // "true" or "estimated"
  std::string binning;                     // "fine" (true curves), "equal_width" or "equal_mass"
  std::string scope;                       // "top_label", "class" or "classes_pooled"
  std::optional<std::size_t> class_index;  // scope "class" only
  std::vector<CurvePoint> points;
};

// The columns after a table's key columns: curve, binning, scope, class, lower, upper, score,
// frequency, error, count, weight.
const std::vector<std::string>& curve_columns();

// One row of `table` per point of every curve: `key` (the key columns' fields) then the point.
void append_curve_rows(const std::string& table, const std::vector<Value>& key,
                       const std::vector<CurveRecord>& curves, std::vector<TableRow>& rows);

}  // namespace calbench
