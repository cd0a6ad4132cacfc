#include "report/reporter.hpp"

#include <algorithm>
#include <ostream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "report/value_format.hpp"

namespace calbench {

Value meta_value(const ResultMeta& meta) {
  return Value::Object{{"schema_version", std::int64_t{results_schema_version}},
                       {"calbench_version", version},
                       {"git_revision", git_revision},
                       {"name", meta.name},
                       {"scenario", meta.scenario},
                       {"seed", meta.seed},
                       {"config_hash", meta.config_hash}};
}

// ---- summary.json ---------------------------------------------------------------------------

struct JsonReporter::State {
  nlohmann::ordered_json summary;
};

JsonReporter::JsonReporter(std::filesystem::path directory)
    : directory_(std::move(directory)), state_(std::make_unique<State>()) {}
JsonReporter::~JsonReporter() = default;

void JsonReporter::begin(const ReportHeader& header) {
  auto& s = state_->summary;
  s = nlohmann::ordered_json::object();
  s["meta"] = to_json(meta_value(header.meta));
  for (const auto& [key, value] : header.summary_blocks) s[key] = to_json(value);
  s["cells"] = nlohmann::ordered_json::array();
}

void JsonReporter::record(const ReportRecord& record) {
  if (record.summary.is_null()) return;
  if (record.summary_key == "cells")
    state_->summary["cells"].push_back(to_json(record.summary));
  else
    state_->summary[record.summary_key] = to_json(record.summary);
}

void JsonReporter::end() {
  write_file_atomically(directory_ / "summary.json", state_->summary.dump(2) + "\n");
}

// ---- CSV tables -----------------------------------------------------------------------------

namespace {

// Tables a run writes only on request; a stale one is removed.
const std::vector<std::string> optional_tables = {"replicates.csv", "requirements.csv",
                                                  "reliability.csv", "leaderboard.csv",
                                                  "leaderboard_agreement.csv"};

}  // namespace

CsvReporter::CsvReporter(std::filesystem::path directory) : directory_(std::move(directory)) {}

void CsvReporter::begin(const ReportHeader& header) {
  tables_.clear();
  for (const auto& table : header.tables) {
    std::string text;
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) text.push_back(',');
      text += csv_escape(table.columns[i]);
    }
    text.push_back('\n');
    tables_.emplace_back(table.file, std::move(text));
  }
}

void CsvReporter::record(const ReportRecord& record) {
  for (const auto& row : record.rows) {
    const auto it = std::find_if(tables_.begin(), tables_.end(),
                                 [&](const auto& t) { return t.first == row.file; });
    if (it == tables_.end())
      throw std::logic_error("a row for table " + row.file + ", which the header does not declare");
    std::string& text = it->second;
    for (std::size_t i = 0; i < row.fields.size(); ++i) {
      if (i > 0) text.push_back(',');
      text += csv_field(row.fields[i]);
    }
    text += '\n';
  }
}

void CsvReporter::end() {
  for (const auto& [file, text] : tables_) write_file_atomically(directory_ / file, text);
  for (const auto& file : optional_tables) {
    const bool declared =
        std::any_of(tables_.begin(), tables_.end(), [&](const auto& t) { return t.first == file; });
    if (declared) continue;
    std::error_code ignored;
    std::filesystem::remove(directory_ / file, ignored);
  }
}

// ---- terminal -------------------------------------------------------------------------------

void TerminalReporter::begin(const ReportHeader& header) {
  out_ << header.terminal;
}

void TerminalReporter::record(const ReportRecord& record) {
  out_ << record.terminal;
}

// ---- fan-out --------------------------------------------------------------------------------

void FanOut::begin(const ReportHeader& header) {
  for (auto* r : reporters_) r->begin(header);
}
void FanOut::record(const ReportRecord& record) {
  for (auto* r : reporters_) r->record(record);
}
void FanOut::end() {
  for (auto* r : reporters_) r->end();
}

}  // namespace calbench
