#include "report/reporter.hpp"

#include <algorithm>
#include <ostream>
#include <stdexcept>

#include "core/atomic_file.hpp"
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

Table data_table(std::string name, const std::vector<std::string>& columns) {
  Table table{.name = std::move(name)};
  for (const auto& c : columns) table.columns.push_back({.name = c});
  return table;
}

// ---- summary.json ---------------------------------------------------------------------------

struct JsonReporter::State {
  nlohmann::ordered_json summary;
};

JsonReporter::JsonReporter(std::filesystem::path directory)
    : directory_(std::move(directory)), state_(std::make_unique<State>()) {}
JsonReporter::JsonReporter(std::ostream& out) : out_(&out), state_(std::make_unique<State>()) {}
JsonReporter::~JsonReporter() = default;

void JsonReporter::begin(const ReportHeader& header) {
  auto& s = state_->summary;
  s = nlohmann::ordered_json::object();
  if (out_ == nullptr) s["meta"] = to_json(meta_value(header.meta));
  for (const auto& [key, value] : header.blocks) s[key] = to_json(value);
  if (out_ == nullptr) s["cells"] = nlohmann::ordered_json::array();
}

void JsonReporter::record(const Record& record) {
  if (record.document.is_null()) return;
  if (record.block == "cells")
    state_->summary["cells"].push_back(to_json(record.document));
  else
    state_->summary[record.block] = to_json(record.document);
}

void JsonReporter::end() {
  if (out_ != nullptr) {
    *out_ << state_->summary.dump(2) << '\n';
    return;
  }
  write_file_atomically(directory_ / "summary.json", state_->summary.dump(2) + "\n");
}

// ---- CSV tables -----------------------------------------------------------------------------

namespace {

// Tables a run writes only on request; a stale one is removed.
const std::vector<std::string> optional_tables = {
    "replicates",  "requirements",          "reliability",
    "leaderboard", "leaderboard_agreement", "leaderboard_contrast"};

std::string csv_file(const std::string& table) {
  return table + ".csv";
}

}  // namespace

CsvReporter::CsvReporter(std::filesystem::path directory) : directory_(std::move(directory)) {}

void CsvReporter::begin(const ReportHeader& header) {
  tables_.clear();
  display_.clear();
  for (const auto& table : header.tables) {
    if (table.use != TableUse::data) {
      display_.push_back(table.name);
      continue;
    }
    std::string text;
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) text.push_back(',');
      text += csv_escape(table.columns[i].name);
    }
    text.push_back('\n');
    tables_.push_back({table.name, table.columns.size(), std::move(text)});
  }
}

void CsvReporter::record(const Record& record) {
  for (const auto& row : record.rows) {
    const auto it = std::find_if(tables_.begin(), tables_.end(),
                                 [&](const Text& t) { return t.table == row.table; });
    if (it == tables_.end()) {
      if (std::find(display_.begin(), display_.end(), row.table) != display_.end()) continue;
      throw std::logic_error("a row for table " + row.table +
                             ", which the header does not declare");
    }
    if (row.fields.size() != it->columns)
      throw std::logic_error("internal error: a row of " + row.table + ".csv has " +
                             std::to_string(row.fields.size()) + " fields, its header " +
                             std::to_string(it->columns) + " columns");
    std::string& text = it->text;
    for (std::size_t i = 0; i < row.fields.size(); ++i) {
      if (i > 0) text.push_back(',');
      text += csv_field(row.fields[i]);
    }
    text += '\n';
  }
}

void CsvReporter::end() {
  for (const Text& t : tables_) write_file_atomically(directory_ / csv_file(t.table), t.text);
  for (const auto& table : optional_tables) {
    const bool declared = std::any_of(tables_.begin(), tables_.end(),
                                      [&](const Text& t) { return t.table == table; });
    if (declared) continue;
    std::error_code ignored;
    std::filesystem::remove(directory_ / csv_file(table), ignored);
  }
}

void emit(Reporter& reporter, const ReportHeader& header, std::span<const Record> records) {
  reporter.begin(header);
  for (const Record& r : records) reporter.record(r);
  reporter.end();
}

// ---- fan-out --------------------------------------------------------------------------------

void FanOut::begin(const ReportHeader& header) {
  for (auto* r : reporters_) r->begin(header);
}
void FanOut::record(const Record& record) {
  for (auto* r : reporters_) r->record(record);
}
void FanOut::end() {
  for (auto* r : reporters_) r->end();
}

}  // namespace calbench
