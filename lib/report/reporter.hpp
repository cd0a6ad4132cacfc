#pragma once
// Reporters: each lays out the one stream of result records (report/result_record.hpp) in its
// own format — begin(header), record(r) for every cell (and once for a block of the whole run,
// such as the requirements), end(). JsonReporter writes the document (summary.json),
// CsvReporter the data tables, TerminalReporter the display tables and prose; a new format (a
// plot, a database) is one more Reporter here, and no scenario changes. The report layer knows
// only these records, never a scenario.
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "report/result_record.hpp"

namespace calbench {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const ReportHeader& header) = 0;
  virtual void record(const Record& record) = 0;
  virtual void end() = 0;
};

// summary.json in `directory`: {"meta", header blocks..., "cells": [...], other blocks...}, from
// the records' documents. On a stream (a command's `--json` on stdout): {header blocks...,
// "cells" when any, other blocks...}, no meta block: what a command prints for --json, in the
// order its blocks were given.
class JsonReporter : public Reporter {
 public:
  explicit JsonReporter(std::filesystem::path directory);
  explicit JsonReporter(std::ostream& out);
  ~JsonReporter() override;
  void begin(const ReportHeader& header) override;
  void record(const Record& record) override;
  void end() override;

 private:
  struct State;
  std::filesystem::path directory_;
  std::ostream* out_ = nullptr;  // the stream, else summary.json in directory_
  std::unique_ptr<State> state_;
};

// Every data table of the header into `directory` as NAME.csv, each starting with its header
// line (no comment lines: pandas.read_csv(path), R's read.csv and DuckDB read it with no
// options; the meta block is summary.json's `meta`). A row whose length is not its header's
// is an internal error (std::logic_error), never a shifted line. The optional tables a run did not
// declare (replicates, requirements, reliability, leaderboard, leaderboard_agreement,
// leaderboard_contrast) are removed, since one left by an earlier run would not belong to these
// results.
class CsvReporter : public Reporter {
 public:
  explicit CsvReporter(std::filesystem::path directory);
  void begin(const ReportHeader& header) override;
  void record(const Record& record) override;
  void end() override;

 private:
  std::filesystem::path directory_;
  struct Text {
    std::string table;
    std::size_t columns = 0;
    std::string text;  // so far
  };
  std::vector<Text> tables_;
  std::vector<std::string> display_;  // the tables not written
};

// The display tables and the records' prose on a stream (the terminal): per record its
// caption, its rows of each display table under the table's header line (again after every
// caption, else once), then its note. A column is as wide as its width, its header, its
// longest value in the record and the header line above; null shows as its `null` text ("-").
class TerminalReporter : public Reporter {
 public:
  explicit TerminalReporter(std::ostream& out) : out_(out) {}
  void begin(const ReportHeader& header) override;
  void record(const Record& record) override;
  void end() override {}

 private:
  std::ostream& out_;
  std::vector<Table> tables_;                               // the display tables
  std::map<std::string, std::vector<std::size_t>> widths_;  // of a table's last header line
};

// A whole stream at once: begin(header), each of `records` in order, end(). For output whose
// records are all known before any is laid out (a command's, once it has computed them).
void emit(Reporter& reporter, const ReportHeader& header, std::span<const Record> records);

// Passes the stream on to several reporters.
class FanOut : public Reporter {
 public:
  explicit FanOut(std::vector<Reporter*> reporters) : reporters_(std::move(reporters)) {}
  void begin(const ReportHeader& header) override;
  void record(const Record& record) override;
  void end() override;

 private:
  std::vector<Reporter*> reporters_;
};

}  // namespace calbench
