#pragma once
// A command's text as records (fit, plan, gate, check, recalibrate): each table — a column
// table's terminal columns over its rows — under its caption with its note, and prose between
// the tables, gathered first and emitted at the end through a Reporter (the terminal's), so
// that nothing is printed before everything is computed and no command lays out a table itself.
// And the same layout as a string, for listings that are not a command's records (`calbench
// list`'s parameter tables, `calbench validate`'s cells): one layout of aligned columns.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "report/columns.hpp"
#include "report/reporter.hpp"

namespace calbench {

// Where a text table's lines start and what separates its columns.
struct TextLayout {
  std::string indent = "  ";
  std::string gap = "  ";
};

class TextReport {
 public:
  // The rows as table `name`, `caption` above and `note` below; the record, to name its block.
  template <typename R>
  Record& table(std::string caption, const std::string& name,
                const std::vector<ColumnSpec<R>>& columns, const std::vector<R>& rows,
                std::string note = {}, TextLayout layout = {}) {
    const TableView view(columns);
    header_.tables.push_back(
        view.table(name, show::terminal, std::move(layout.indent), std::move(layout.gap)));
    Record record{.caption = std::move(caption), .note = std::move(note)};
    for (const R& r : rows) record.rows.push_back(view.row(name, r, show::terminal));
    return records_.emplace_back(std::move(record));
  }
  void prose(std::string text) { records_.push_back({.note = std::move(text)}); }
  void emit(Reporter& reporter) const { calbench::emit(reporter, header_, records_); }

 private:
  ReportHeader header_;
  std::vector<Record> records_;
};

// The rows' terminal columns as text, as the terminal reporter lays them out.
template <typename R>
std::string terminal_text(const std::vector<ColumnSpec<R>>& columns, const std::vector<R>& rows,
                          TextLayout layout) {
  TextReport report;
  report.table("", "text", columns, rows, "", std::move(layout));
  std::ostringstream out;
  TerminalReporter terminal(out);
  report.emit(terminal);
  return out.str();
}

// A column of text with no header, left-aligned: a cell of an aligned listing.
template <typename R, typename Text>
ColumnSpec<R> text_column(Text text) {
  return {"",
          [text](const R& r) { return Value(std::string(text(r))); },
          show::terminal,
          {.align = Align::left}};
}

// Rows of text cells (a row may be shorter than others) aligned on two spaces.
std::string aligned_text(const std::vector<std::vector<std::string>>& rows, std::string indent);

}  // namespace calbench
