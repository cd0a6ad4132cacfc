// The reporters over plain result records (lib/report/reporter.hpp): each lays out the same
// stream its own way — data tables as CSV files, documents as summary.json, display tables and
// prose on the terminal — and a table's use decides which reporter shows it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "report/columns.hpp"
#include "report/reporter.hpp"
#include "report/text_report.hpp"
#include "temp_files.hpp"

namespace {

using calbench::Align;
using calbench::Notation;
using calbench::Record;
using calbench::ReportHeader;
using calbench::Table;
using calbench::TableUse;
using calbench::Value;

ReportHeader header() {
  ReportHeader h;
  h.meta = {.name = "t", .scenario = "estimator_bias", .seed = 7, .config_hash = "abc"};
  h.blocks = {{"sweep_keys", Value::Array{Value("alpha")}}};
  h.tables.push_back(calbench::data_table("cells", {"cell", "value", "note"}));
  Table display{.name = "summary", .use = TableUse::display, .indent = "  "};
  display.columns = {{.name = "name", .width = 6, .align = Align::left},
                     {.name = "value", .width = 8, .precision = 3},
                     {.name = "cost", .precision = 1, .notation = Notation::scientific}};
  h.tables.push_back(display);
  return h;
}

// Two cells, each with one data row and one display row, and a closing block.
void stream(calbench::Reporter& reporter) {
  reporter.begin(header());
  Record first;
  first.document = Value::Object{{"cell", std::uint64_t{0}}};
  first.rows = {{"cells", {std::uint64_t{0}, 0.25, Value("a,b")}},
                {"summary", {Value("accuracy"), 0.25, 0.00123}}};
  first.caption = "cell 0:\n";
  reporter.record(first);
  Record second;
  second.document = Value::Object{{"cell", std::uint64_t{1}}};
  second.rows = {{"cells", {std::uint64_t{1}, Value(), Value("x")}},
                 {"summary", {Value("nll"), Value(), 12.0}}};
  reporter.record(second);
  Record block;
  block.block = "verdict";
  block.document = Value("met");
  block.note = "met everywhere\n";
  reporter.record(block);
  reporter.end();
}

}  // namespace

TEST_CASE("the CSV reporter writes each data table, never a display table", "[unit]") {
  calbench::testing::TempDir dir;
  calbench::CsvReporter csv(dir.path);
  stream(csv);
  CHECK(calbench::testing::read_text(dir.path / "cells.csv") ==
        "cell,value,note\n0,0.25,\"a,b\"\n1,,x\n");
  CHECK_FALSE(std::filesystem::exists(dir.path / "summary.csv"));
}

TEST_CASE("the CSV reporter refuses a row of a table the header does not declare", "[unit]") {
  calbench::testing::TempDir dir;
  calbench::CsvReporter csv(dir.path);
  csv.begin(header());
  Record stray;
  stray.rows = {{"leaderboard", {Value(1.0)}}};
  CHECK_THROWS_AS(csv.record(stray), std::logic_error);
}

TEST_CASE("the CSV reporter refuses a row whose length is not its header's", "[unit]") {
  // A row shorter or longer than its header would shift every later column of its line under
  // the wrong name; the reporter throws an internal error naming the table instead.
  calbench::testing::TempDir dir;
  for (const std::size_t fields : {2, 4}) {
    calbench::CsvReporter csv(dir.path);
    csv.begin(header());
    Record shifted;
    shifted.rows = {{"cells", std::vector<Value>(fields, Value(1.0))}};
    CHECK_THROWS_WITH(csv.record(shifted),
                      Catch::Contains("cells.csv has " + std::to_string(fields) +
                                      " fields, its header 3 columns"));
  }
  CHECK_FALSE(std::filesystem::exists(dir.path / "cells.csv"));
}

namespace {

// A record type and its one column table: every layout below derives from it.
struct Fit {
  std::string label;
  double mean = 0.0;
  std::optional<double> error;
  std::size_t fits = 0;
};

const std::vector<calbench::ColumnSpec<Fit>> fit_columns = {
    {"label",
     calbench::field(&Fit::label),
     calbench::show::csv | calbench::show::terminal,
     {.heading = "method", .width = 8, .align = Align::left}},
    {"mean", calbench::field(&Fit::mean), calbench::show::all, {.precision = 2}},
    {"error", calbench::field(&Fit::error), calbench::show::csv | calbench::show::json_set},
    {"fits", calbench::field(&Fit::fits), calbench::show::data}};

}  // namespace

TEST_CASE("one column table gives the CSV header and rows, the JSON object, the terminal",
          "[unit]") {
  const calbench::TableView view(fit_columns);
  const Fit a{"platt", 0.126, 0.5, 3}, b{"none", 0.25, std::nullopt, 0};
  ReportHeader h;
  h.tables = {view.table("fits", calbench::show::csv),
              view.table("methods", calbench::show::terminal, "  ")};
  Record record;
  for (const Fit* f : {&a, &b}) record.rows.push_back(view.row("fits", *f, calbench::show::csv));
  for (const Fit* f : {&a, &b})
    record.rows.push_back(view.row("methods", *f, calbench::show::terminal));

  calbench::testing::TempDir dir;
  calbench::CsvReporter csv(dir.path);
  csv.begin(h);
  csv.record(record);
  csv.end();
  CHECK(calbench::testing::read_text(dir.path / "fits.csv") ==
        "label,mean,error,fits\nplatt,0.126,0.5,3\nnone,0.25,,0\n");

  std::ostringstream out;
  calbench::TerminalReporter terminal(out);
  terminal.begin(h);
  terminal.record(record);
  CHECK(out.str() == "  method   mean\n  platt    0.13\n  none     0.25\n");

  // JSON: its columns by name, `error` only when set, `label` not at all.
  CHECK(view.object(a) ==
        Value::Object{{"mean", 0.126}, {"error", 0.5}, {"fits", std::uint64_t{3}}});
  CHECK(view.object(b) == Value::Object{{"mean", 0.25}, {"fits", std::uint64_t{0}}});
}

TEST_CASE("a column table projected through a wider row keeps its columns", "[unit]") {
  struct Row {
    std::size_t cell;
    Fit fit;
  };
  std::vector<calbench::ColumnSpec<Row>> columns = {
      {"cell", calbench::field(&Row::cell), calbench::show::csv}};
  calbench::append<Row>(columns, calbench::project<Row, Fit>(std::span(fit_columns),
                                                             [](const Row& r) { return r.fit; }));
  const calbench::TableView view(columns);
  const Row row{4, {"platt", 0.125, 0.5, 3}};
  CHECK(view.table("fits", calbench::show::csv).columns.size() == 5);
  CHECK(view.row("fits", row, calbench::show::csv).fields ==
        std::vector<Value>{std::uint64_t{4}, Value("platt"), 0.125, 0.5, std::uint64_t{3}});
}

TEST_CASE("the JSON reporter writes the documents: cells in order, blocks by name", "[unit]") {
  calbench::testing::TempDir dir;
  calbench::JsonReporter json(dir.path);
  stream(json);
  const auto summary =
      nlohmann::ordered_json::parse(calbench::testing::read_text(dir.path / "summary.json"));
  CHECK(summary["meta"]["seed"] == 7);
  CHECK(summary["sweep_keys"] == nlohmann::json::array({"alpha"}));
  CHECK(summary["cells"].size() == 2);
  CHECK(summary["cells"][1]["cell"] == 1);
  CHECK(summary["verdict"] == "met");
}

TEST_CASE("the terminal reporter aligns the display tables under captions and notes", "[unit]") {
  std::ostringstream out;
  calbench::TerminalReporter terminal(out);
  stream(terminal);
  // "name" is widened to the longest value (8 > 6); "value" keeps its width 8; "cost" is as
  // wide as its longest value; null is "-". The second record has no caption: no header line,
  // and its rows keep the widths of the header above.
  CHECK(out.str() ==
        "cell 0:\n"
        "  name        value    cost\n"
        "  accuracy    0.250 1.2e-03\n"
        "  nll             - 1.2e+01\n"
        "met everywhere\n");
}

TEST_CASE("the terminal reporter prints no header line for a table of unnamed columns", "[unit]") {
  Table moved{.name = "moved", .use = TableUse::display, .indent = "  ", .gap = "  "};
  moved.columns = {{.name = "", .align = Align::left}, {.name = "", .align = Align::left}};
  ReportHeader h;
  h.tables = {moved};
  Record record;
  record.caption = "moved:\n";
  record.rows = {{"moved", {Value("cell 0"), Value("z = 4.1")}},
                 {"moved", {Value("cell 12"), Value("z = -3.0")}}};
  std::ostringstream out;
  calbench::TerminalReporter terminal(out);
  terminal.begin(h);
  terminal.record(record);
  CHECK(out.str() == "moved:\n  cell 0   z = 4.1\n  cell 12  z = -3.0\n");
}

TEST_CASE("a text report emits its tables and prose in order, each table's header once", "[unit]") {
  struct Point {
    std::string name;
    double value;
  };
  const std::vector<calbench::ColumnSpec<Point>> columns = {
      {"name",
       [](const Point& p) { return Value(p.name); },
       calbench::show::terminal,
       {.align = Align::left}},
      {"value",
       [](const Point& p) { return Value(p.value); },
       calbench::show::terminal,
       {.precision = 2}}};
  calbench::TextReport report;
  report.prose("first\n");
  report.table("points:\n", "points", columns, std::vector<Point>{{"a", 1.0}, {"bcd", 22.5}},
               "after\n");
  report.prose("wrote x\n");
  std::ostringstream out;
  calbench::TerminalReporter terminal(out);
  report.emit(terminal);
  CHECK(out.str() ==
        "first\npoints:\n  name  value\n  a      1.00\n  bcd   22.50\nafter\nwrote x\n");
}

// The cells of `calbench validate` and the parameters of `calbench list`: a row may be shorter
// than the others; every column is as wide as its widest cell plus two spaces, no trailing
// blanks (the layout the listing had before it went through the terminal reporter).
TEST_CASE("aligned text: columns on two spaces, short rows, no trailing blanks", "[unit]") {
  CHECK(calbench::aligned_text({{"cell 0", "n=10", "replicates=5"}, {"cell 12", "n=1000"}}, "  ") ==
        "  cell 0   n=10    replicates=5\n  cell 12  n=1000\n");
  CHECK(calbench::aligned_text({{"seed:", "1"}, {"output:", ""}, {"cells:", "3"}}, "") ==
        "seed:    1\noutput:\ncells:   3\n");
  CHECK(calbench::aligned_text({}, "  ").empty());
}
