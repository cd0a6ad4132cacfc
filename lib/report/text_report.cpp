#include "report/text_report.hpp"

#include <algorithm>

namespace calbench {

std::string aligned_text(const std::vector<std::vector<std::string>>& rows, std::string indent) {
  using Row = std::vector<std::string>;
  std::size_t width = 0;
  for (const Row& row : rows) width = std::max(width, row.size());
  // Column c of a row: its c-th cell, empty past its end (a blank the layout trims).
  std::vector<ColumnSpec<Row>> columns;
  for (std::size_t c = 0; c < width; ++c)
    columns.push_back(
        text_column<Row>([c](const Row& row) { return c < row.size() ? row[c] : std::string(); }));
  return terminal_text(columns, rows, {.indent = std::move(indent)});
}

}  // namespace calbench
