#pragma once
// Reporters: the writers of result files, over one stream of result records (DESIGN.md §4).
// A scenario's report section (scenarios/*/report.cpp) turns its typed records into
// ReportRecords — format-neutral typed values, no file format in them — and streams them to a
// Reporter: begin(header), record(r) for every cell (and once for blocks such as the
// requirements), end(). The JSON writer (summary.json), the CSV writer (cells.csv and the other
// tables) and the terminal writer implement it; a plot-data writer is one more implementation.
// The report layer knows only these records, never a scenario.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/value.hpp"

namespace calbench {

inline constexpr int results_schema_version = 1;

// What every result file carries (summary.json and run.json as "meta", CSV files as leading
// "# key: value" lines): schema version, calbench version, git revision, and the run's
// name, scenario, seed and config hash. Nothing volatile: that is run.json's alone.
struct ResultMeta {
  std::string name, scenario;
  std::uint64_t seed = 0;
  std::string config_hash;  // of the resolved config
};
Value meta_value(const ResultMeta& meta);

// A CSV table: its file name and columns.
struct TableLayout {
  std::string file;  // "cells.csv"
  std::vector<std::string> columns;
};

// Given once, first. The tables' columns are known before the rows because a report section
// sees all its records first (a decision task's figures may differ between cells).
struct ReportHeader {
  ResultMeta meta;
  Value::Object summary_blocks;     // summary.json's blocks between "meta" and "cells"
  std::vector<TableLayout> tables;  // every CSV table of this run; others are not written
  std::string terminal;             // text before the records (a table head)
};

struct TableRow {
  std::string file;           // the TableLayout it belongs to
  std::vector<Value> fields;  // in the layout's column order; null is an empty field
};

// One record: a cell, or a block of the whole run (summary_key other than "cells").
struct ReportRecord {
  std::string summary_key = "cells";  // "cells": an entry of the array; else a top-level block
  Value summary;                      // null: nothing for summary.json
  std::vector<TableRow> rows;
  std::string terminal;  // its lines for the terminal
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const ReportHeader& header) = 0;
  virtual void record(const ReportRecord& record) = 0;
  virtual void end() = 0;
};

// summary.json in `directory`: {"meta", header blocks..., "cells": [...], other blocks...}.
class JsonReporter : public Reporter {
 public:
  explicit JsonReporter(std::filesystem::path directory);
  ~JsonReporter() override;
  void begin(const ReportHeader& header) override;
  void record(const ReportRecord& record) override;
  void end() override;

 private:
  struct State;
  std::filesystem::path directory_;
  std::unique_ptr<State> state_;
};

// Every table of the header into `directory`, each starting with its header line (no comment
// lines: pandas.read_csv(path), R's read.csv and DuckDB read it with no options; the meta block
// is summary.json's `meta`). The optional tables a run did not declare (replicates.csv,
// requirements.csv, reliability.csv) are removed, since one left by an earlier run would not belong
// to these results.
class CsvReporter : public Reporter {
 public:
  explicit CsvReporter(std::filesystem::path directory);
  void begin(const ReportHeader& header) override;
  void record(const ReportRecord& record) override;
  void end() override;

 private:
  std::filesystem::path directory_;
  std::vector<std::pair<std::string, std::string>> tables_;  // file, text so far
};

// The readable table on the terminal (or any stream).
class TerminalReporter : public Reporter {
 public:
  explicit TerminalReporter(std::ostream& out) : out_(out) {}
  void begin(const ReportHeader& header) override;
  void record(const ReportRecord& record) override;
  void end() override {}

 private:
  std::ostream& out_;
};

// Passes the stream on to several reporters.
class FanOut : public Reporter {
 public:
  explicit FanOut(std::vector<Reporter*> reporters) : reporters_(std::move(reporters)) {}
  void begin(const ReportHeader& header) override;
  void record(const ReportRecord& record) override;
  void end() override;

 private:
  std::vector<Reporter*> reporters_;
};

}  // namespace calbench
