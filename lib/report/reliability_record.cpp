#include "report/reliability_record.hpp"

#include "report/cell_record.hpp"

namespace calbench {

std::string_view to_string(CurveOrigin kind) {
  return kind == CurveOrigin::true_curve ? "true" : "estimated";
}

std::string_view to_string(CurveScope scope) {
  switch (scope) {
    case CurveScope::top_label:
      return "top_label";
    case CurveScope::one_class:
      return "class";
    case CurveScope::classes_pooled:
      break;
  }
  return "classes_pooled";
}

CurveGrouping grouping_of(Binning binning) {
  return binning == Binning::equal_width ? CurveGrouping::equal_width : CurveGrouping::equal_mass;
}

std::string_view to_string(CurveGrouping grouping) {
  switch (grouping) {
    case CurveGrouping::fine:
      return "fine";
    case CurveGrouping::equal_width:
      return to_string(Binning::equal_width);
    case CurveGrouping::equal_mass:
      return to_string(Binning::equal_mass);
    case CurveGrouping::isotonic:
      break;
  }
  return "isotonic";
}

Table curve_table(std::vector<std::string> key_columns) {
  key_columns.insert(key_columns.end(), {"curve", "binning", "scope", "class", "lower", "upper",
                                         "score", "frequency", "error", "count", "weight"});
  return data_table("reliability", key_columns);
}

void append_curve_rows(const std::vector<Value>& key, const std::vector<CurveRecord>& curves,
                       std::vector<TableRow>& rows) {
  for (const CurveRecord& curve : curves)
    for (const CurvePoint& p : curve.points) {
      std::vector<Value> fields = key;
      fields.insert(fields.end(),
                    {std::string(to_string(curve.curve)), std::string(to_string(curve.grouping)),
                     std::string(to_string(curve.scope)), optional_value(curve.class_index),
                     p.lower, p.upper, p.score, p.frequency, p.error, Value(p.count), p.weight});
      rows.push_back({"reliability", std::move(fields)});
    }
}

}  // namespace calbench
