// The reporters over plain result records (lib/report/reporter.hpp): each lays out the same
// stream its own way — data tables as CSV files, documents as summary.json, display tables and
// prose on the terminal — and a table's use decides which reporter shows it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "report/reporter.hpp"
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
