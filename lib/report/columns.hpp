#pragma once
// Column tables: a record type's columns declared once — name, accessor, display format and
// where the column is shown — and the three layouts derived from that one table: the CSV
// header and rows, the JSON object of a record (summary.json, `--json`) and the terminal's
// display table. As Google Benchmark's reporters each pick the fields of one plain `Run`, a
// scenario declares `ColumnSpec<Row>`s and every reporter reads them, so a CSV row cannot
// disagree with its header (the CSV reporter checks it too) and a new column is one line.
//
//   struct Row { const CellRecord& cell; const EstimatorRecord& e; };
//   const std::vector<ColumnSpec<Row>> columns = {
//       {"mean", [](const Row& r) -> Value { return r.e.mean; }, show::all, {.width = 10}},
//       {"params", [](const Row& r) { return r.e.params; }, show::json}};
//   TableView<Row>{columns}.table("cells", show::csv);   // the header, into ReportHeader
//   TableView<Row>{columns}.row("cells", row, show::csv); // a row of it
//   TableView<Row>{columns}.object(row);                  // {"mean": ..., "params": ...}
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/quantity.hpp"
#include "core/value.hpp"
#include "report/result_record.hpp"

namespace calbench {

// Where a column is shown, a bit set: the CSV table, the JSON object, the terminal table.
// `json_set` shows it in the JSON object only when its value is not null; `json_members` adds
// the members of its value, an object whose keys vary by record (a task's figures), instead.
enum class Shown : unsigned {
  none = 0,
  csv = 1,
  json = 2,
  terminal = 4,
  json_set = 8,
  json_members = 16
};
constexpr Shown operator|(Shown a, Shown b) {
  return static_cast<Shown>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr bool shown_in(Shown set, Shown where) {
  return (static_cast<unsigned>(set) & static_cast<unsigned>(where)) != 0;
}
namespace show {
inline constexpr Shown csv = Shown::csv, json = Shown::json, terminal = Shown::terminal;
inline constexpr Shown json_set = Shown::json_set, json_members = Shown::json_members;
inline constexpr Shown data = csv | json;  // the result files, not the terminal
inline constexpr Shown all = csv | json | terminal;
}  // namespace show

// How a column looks on the terminal (report/reporter.hpp's TerminalReporter): `heading`, when
// given, replaces the column's name there; `null` is how a null value shows.
struct Display {
  std::string heading{};
  int width = 0;
  Align align = Align::right;
  int precision = 5;
  Notation notation = Notation::fixed;
  std::string null = "-";
};

template <typename R>
struct ColumnSpec {
  std::string name;
  std::function<Value(const R&)> value;
  Shown shown = show::data;
  Display display{};
};

// Plain fields as values: counts unsigned, absent optionals null.
inline Value field_value(const Value& v) {
  return v;
}
inline Value field_value(double v) {
  return v;
}
inline Value field_value(bool v) {
  return v;
}
inline Value field_value(std::size_t v) {
  return count_value(v);
}
inline Value field_value(const std::string& v) {
  return v;
}
inline Value field_value(const std::optional<double>& v) {
  return v ? Value(*v) : Value();
}
inline Value field_value(const std::optional<std::size_t>& v) {
  return v ? count_value(*v) : Value();
}
inline Value field_value(const std::optional<Quantity>& q) {
  return q ? Value(std::string(to_string(*q))) : Value();
}

// The accessor of a data member: `field(&EstimatorRecord::mean)`.
template <typename R, typename T>
std::function<Value(const R&)> field(T R::*member) {
  return [member](const R& r) { return field_value(r.*member); };
}

// The columns of one record type read through another that holds it: the estimator's columns
// as columns of an (cell, estimator) row.
template <typename To, typename From, typename Project>
std::vector<ColumnSpec<To>> project(std::span<const ColumnSpec<From>> columns, Project part) {
  std::vector<ColumnSpec<To>> out;
  for (const auto& c : columns)
    out.push_back({c.name, [value = c.value, part](const To& r) { return value(part(r)); }, c.shown,
                   c.display});
  return out;
}

template <typename R>
void append(std::vector<ColumnSpec<R>>& to, std::span<const ColumnSpec<R>> columns) {
  to.insert(to.end(), columns.begin(), columns.end());
}

// A column table seen by a reporter: the columns shown in one place, laid out for it.
template <typename R>
class TableView {
 public:
  TableView(std::span<const ColumnSpec<R>> columns) : columns_(columns) {}

  // The header: a data table of the CSV columns, or the display table of the terminal ones.
  Table table(std::string name, Shown where, std::string indent = {}, std::string gap = " ") const {
    Table out{.name = std::move(name),
              .use = where == show::terminal ? TableUse::display : TableUse::data,
              .indent = std::move(indent),
              .gap = std::move(gap)};
    for (const auto& c : columns_) {
      if (!shown_in(c.shown, where)) continue;
      if (where != show::terminal) {
        out.columns.push_back({.name = c.name});
        continue;
      }
      const Display& d = c.display;
      out.columns.push_back({.name = d.heading.empty() ? c.name : d.heading,
                             .width = d.width,
                             .align = d.align,
                             .precision = d.precision,
                             .notation = d.notation,
                             .null = d.null});
    }
    return out;
  }

  // A row of `table` from one record: the values of the columns shown in `where`, in order.
  TableRow row(std::string table, const R& record, Shown where) const {
    TableRow out{.table = std::move(table)};
    for (const auto& c : columns_)
      if (shown_in(c.shown, where)) out.fields.push_back(c.value(record));
    return out;
  }

  // The JSON object of one record: its JSON columns by name (`json_set` ones when not null,
  // `json_members` ones spliced in).
  Value::Object object(const R& record) const {
    Value::Object out;
    for (const auto& c : columns_) {
      if (shown_in(c.shown, show::json)) {
        out.emplace_back(c.name, c.value(record));
      } else if (shown_in(c.shown, show::json_set)) {
        Value v = c.value(record);
        if (!v.is_null()) out.emplace_back(c.name, std::move(v));
      } else if (shown_in(c.shown, show::json_members)) {
        Value v = c.value(record);
        if (auto* members = std::get_if<Value::Object>(&v.data))
          out.insert(out.end(), members->begin(), members->end());
      }
    }
    return out;
  }

 private:
  std::span<const ColumnSpec<R>> columns_;
};

template <typename R>
TableView(const std::vector<ColumnSpec<R>>&) -> TableView<R>;

}  // namespace calbench
