#include "report/cell_record.hpp"

#include <algorithm>

#include "report/value_format.hpp"

namespace calbench {

const TruthValue* CellHeader::find_truth(Quantity q) const {
  for (const auto& t : truth)
    if (t.quantity == q) return &t.value;
  return nullptr;
}

double CellHeader::truth_value(Quantity q) const {
  const TruthValue* v = find_truth(q);
  return v != nullptr ? v->value : 0.0;
}

std::vector<TruthRecord> truth_records(const GroundTruth& truth) {
  std::vector<TruthRecord> out;
  for (Quantity q : all_quantities) out.push_back({q, truth[q]});
  return out;
}

namespace {

Value truth_value_block(const TruthValue& v) {
  return Value::Object{
      {"value", v.value}, {"method", std::string(to_string(v.method))}, {"error", v.error}};
}

}  // namespace

Value target_value(const TargetRecord& t) {
  return Value::Object{
      {"accuracy", t.target.accuracy},
      {"ece_top_l1", t.target.ece_top_l1},
      {"direction", std::string(to_string(t.target.direction))},
      {"map", std::string(to_string(t.target.map))},
      {"solved", Value::Object{{"alpha", t.alpha},
                               {t.target.map == TargetMap::temperature ? "temperature" : "gamma",
                                t.parameter}}},
      {"achieved", Value::Object{{"accuracy", truth_value_block(t.accuracy)},
                                 {"ece_top_l1", truth_value_block(t.ece_top_l1)}}}};
}

Value::Object cell_summary_head(const CellHeader& c, Value::Object sizes) {
  Value::Object swept;
  for (const auto& s : c.swept) swept.emplace_back(s.key, s.value);
  Value::Object out = {{"index", count_value(c.index)}, {"parameters", std::move(swept)}};
  for (auto& size : sizes) out.push_back(std::move(size));
  out.emplace_back("replicates", count_value(c.replicates));
  out.emplace_back("generator", c.generator);
  if (c.target) out.emplace_back("target", target_value(*c.target));
  Value::Object truth;
  for (const auto& t : c.truth)
    truth.emplace_back(std::string(to_string(t.quantity)), truth_value_block(t.value));
  out.emplace_back("truth", std::move(truth));
  return out;
}

namespace {

bool own(const std::vector<std::string>& own_columns, const std::string& key) {
  return std::find(own_columns.begin(), own_columns.end(), key) != own_columns.end();
}

}  // namespace

std::vector<std::string> key_columns(const std::vector<std::string>& sweep_keys, bool targets,
                                     const std::vector<std::string>& own_columns) {
  // A swept sample_size is not repeated as a parameter column: two columns of one name make a
  // table that pandas reads as "sample_size.1" and other readers reject.
  std::vector<std::string> out = {"cell"};
  for (const auto& k : sweep_keys)
    if (!own(own_columns, k)) out.push_back(k);
  if (targets) out.insert(out.end(), {"solved_alpha", "solved_temperature", "solved_gamma"});
  return out;
}

std::vector<Value> key_fields(const CellHeader& c, bool targets,
                              const std::vector<std::string>& own_columns) {
  std::vector<Value> out = {count_value(c.index)};
  for (const auto& s : c.swept)
    if (!own(own_columns, s.key)) out.push_back(s.value);
  if (targets) {
    if (c.target) {
      out.emplace_back(c.target->alpha);
      out.resize(out.size() + 2);
      const bool temperature = c.target->target.map == TargetMap::temperature;
      out[out.size() - (temperature ? 2 : 1)] = Value(c.target->parameter);
    } else {
      out.insert(out.end(), 3, Value());
    }
  }
  return out;
}

std::string caption_head(const CellHeader& c) {
  std::string out = "cell " + std::to_string(c.index) + ":";
  for (const auto& s : c.swept) out += "  " + s.key + " = " + to_text(s.value);
  return out;
}

ReportHeader report_header(const ResultMeta& meta, const std::vector<std::string>& sweep_keys) {
  ReportHeader header;
  header.meta = meta;
  Value::Array keys;
  for (const auto& k : sweep_keys) keys.emplace_back(k);
  header.blocks.emplace_back("sweep_keys", std::move(keys));
  return header;
}

}  // namespace calbench
