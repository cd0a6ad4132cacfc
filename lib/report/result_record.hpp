#pragma once
// Result records: what a run's results are before any file format (DESIGN.md §4). As Google
// Benchmark's reporters take a stream of plain runs and each lays them out its own way, a
// scenario's report section (scenarios/*/report.cpp) declares its record types as column tables
// and streams plain records — typed Values, no file format in them — to the Reporters
// (report/reporter.hpp), each of which lays them out itself: CSV files, summary.json, the
// terminal's summary. A new format is one new Reporter; a new result table is one more Table
// in the header and its rows in the records.
#include <cstdint>
#include <string>
#include <vector>

#include "core/value.hpp"

namespace calbench {

inline constexpr int results_schema_version = 1;

// What every result set carries (summary.json's and run.json's "meta"): schema version,
// calbench version, git revision, and the run's name, scenario, seed and config hash. Nothing
// volatile: that is run.json's alone.
struct ResultMeta {
  std::string name, scenario;
  std::uint64_t seed = 0;
  std::string config_hash;  // of the resolved config
};
Value meta_value(const ResultMeta& meta);

// Who a table is for. Data tables are the result tables a program reads (the CSV reporter
// writes each as NAME.csv); a display table is the short summary a person reads as the run
// ends (the terminal reporter lays it out), never a file.
enum class TableUse { data, display };

enum class Align { left, right };
enum class Notation { fixed, scientific };

// A column. The layout fields serve text layouts only (the terminal); file formats ignore them.
struct Column {
  std::string name{};
  int width = 0;  // at least this wide; the header and longer values widen it
  Align align = Align::right;
  int precision = 5;  // digits after the point of a double
  Notation notation = Notation::fixed;
  std::string null = "-";  // how a null value shows
};

// A record type: a column table.
struct Table {
  std::string name{};  // "cells": cells.csv for the CSV reporter
  std::vector<Column> columns{};
  TableUse use = TableUse::data;
  std::string indent{};   // text layouts: before each line
  std::string gap = " ";  // text layouts: between columns
};

// A data table of plain columns.
Table data_table(std::string name, const std::vector<std::string>& columns);

struct TableRow {
  std::string table{};          // the Table it belongs to
  std::vector<Value> fields{};  // in the table's column order; null is an empty field
};

// Given once, first: the run's meta block, its document blocks and its tables. The tables'
// columns are known before the rows because a report section sees all its records first (a
// decision task's figures may differ between cells).
struct ReportHeader {
  ResultMeta meta;
  Value::Object blocks;       // the document's blocks between "meta" and "cells" (summary.json)
  std::vector<Table> tables;  // every table of this run; a table not declared is not written
};

// One record: a cell, or a block of the whole run (`block` other than "cells"). A record has
// two shapes, each format-neutral: its rows of the run's tables (for table formats) and the
// same facts as a tree (`document`, for document formats: summary.json). Text layouts put its
// `caption` above its rows and its `note` below them.
struct Record {
  std::string block = "cells";  // "cells": an entry of the document's array; else a top-level block
  Value document{};             // null: nothing for the document
  std::vector<TableRow> rows{};
  std::string caption{};  // prose heading the record ("cell 3: alpha = 0.5 ..."), lines ending '\n'
  std::string note{};     // prose after its tables (a legend, a verdict), lines ending '\n'
};

}  // namespace calbench
