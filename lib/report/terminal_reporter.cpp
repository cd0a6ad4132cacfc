// TerminalReporter (report/reporter.hpp): the display tables, aligned, and the records' prose.
#include <algorithm>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "report/reporter.hpp"
#include "report/value_format.hpp"

namespace calbench {
namespace {

std::string cell_text(const Value& value, const Column& column) {
  if (value.is_null()) return column.null;
  if (const auto* d = std::get_if<double>(&value.data)) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, column.notation == Notation::fixed ? "%.*f" : "%.*e",
                  column.precision, *d);
    return buffer;
  }
  if (const auto* s = std::get_if<std::string>(&value.data)) return *s;
  return to_text(value);
}

// One line: the indent, then each cell padded to its column's width, `gap` between them; no
// trailing blanks.
std::string line(const Table& table, const std::vector<std::string>& cells,
                 const std::vector<std::size_t>& width) {
  std::string out = table.indent;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) out += table.gap;
    const std::string pad(width[c] - std::min(width[c], cells[c].size()), ' ');
    out += table.columns[c].align == Align::left ? cells[c] + pad : pad + cells[c];
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + '\n';
}

}  // namespace

void TerminalReporter::begin(const ReportHeader& header) {
  tables_.clear();
  widths_.clear();
  for (const auto& table : header.tables)
    if (table.use == TableUse::display) tables_.push_back(table);
}

void TerminalReporter::record(const Record& record) {
  out_ << record.caption;
  for (const Table& table : tables_) {
    std::vector<std::vector<std::string>> rows;
    for (const TableRow& row : record.rows) {
      if (row.table != table.name) continue;
      std::vector<std::string> cells;
      for (std::size_t c = 0; c < table.columns.size() && c < row.fields.size(); ++c)
        cells.push_back(cell_text(row.fields[c], table.columns[c]));
      rows.push_back(std::move(cells));
    }
    if (rows.empty()) continue;
    std::vector<std::string> head;
    std::vector<std::size_t> width;
    for (const Column& column : table.columns) {
      head.push_back(column.name);
      width.push_back(std::max(static_cast<std::size_t>(column.width), column.name.size()));
    }
    for (const auto& cells : rows)
      for (std::size_t c = 0; c < cells.size(); ++c) width[c] = std::max(width[c], cells[c].size());
    // A header line after every caption, else once; rows below a header keep its widths. A
    // table whose columns have no names has no header line.
    const auto printed = widths_.find(table.name);
    if (!record.caption.empty() || printed == widths_.end()) {
      const bool named =
          std::any_of(head.begin(), head.end(), [](const auto& h) { return !h.empty(); });
      if (named) out_ << line(table, head, width);
      widths_[table.name] = width;
    } else {
      for (std::size_t c = 0; c < width.size(); ++c)
        width[c] = std::max(width[c], printed->second[c]);
    }
    for (const auto& cells : rows) out_ << line(table, cells, width);
  }
  out_ << record.note;
}

}  // namespace calbench
