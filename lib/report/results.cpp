#include "report/results.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/format.hpp"
#include "core/version.hpp"
#include "report/decision_results.hpp"

namespace calbench {

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_value(const nlohmann::ordered_json& v) {
  if (v.is_string()) return csv_escape(v.get<std::string>());
  if (v.is_number_float()) return format_double(v.get<double>());
  return csv_escape(v.dump());
}

namespace {

// sample_size and replicates always have their own columns in cells.csv; a swept one is not
// repeated as a parameter column, since two columns of one name make a table that pandas reads
// as "sample_size.1" and other readers reject.
bool has_own_column(const std::string& key) {
  return key == "sample_size" || key == "replicates" || key == "fit_size" || key == "test_size";
}

// A solved target's parameter, by key, as a CSV field ("" when absent).
std::string solved_value(const CellRecord& c, const char* key) {
  if (c.target.is_null() || !c.target["solved"].contains(key)) return "";
  return format_double(c.target["solved"][key].get<double>());
}

}  // namespace

bool has_solved_targets(const ResultSet& r) {
  return std::any_of(r.cells.begin(), r.cells.end(),
                     [](const CellRecord& c) { return !c.target.is_null(); });
}

std::string key_columns_header(const ResultSet& r, bool targets) {
  std::string out = "cell";
  for (const auto& k : r.sweep_keys)
    if (!has_own_column(k)) out += ',' + csv_escape(k);
  if (targets) out += ",solved_alpha,solved_temperature,solved_gamma";
  return out;
}

std::string key_columns(const CellRecord& c, bool targets) {
  std::string out = std::to_string(c.index);
  for (const auto& [k, v] : c.swept)
    if (!has_own_column(k)) out += ',' + csv_value(v);
  if (targets)
    out += ',' + solved_value(c, "alpha") + ',' + solved_value(c, "temperature") + ',' +
           solved_value(c, "gamma");
  return out;
}

namespace {

using ojson = nlohmann::ordered_json;

ojson optional_number(const std::optional<double>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

std::string csv_optional(const std::optional<double>& v) {
  return v ? format_double(*v) : "";
}

bool has_methods(const ResultSet& r) {
  return std::any_of(r.cells.begin(), r.cells.end(),
                     [](const CellRecord& c) { return !c.methods.empty(); });
}

ojson stat_json(const MethodStat& s) {
  ojson out = {{"mean", s.mean}, {"sd", s.sd}};
  if (!s.target.empty()) out["target"] = s.target;
  if (s.error) out["error"] = *s.error;
  out["improvement"] = optional_number(s.improvement);
  if (s.rank_disagreement) out["rank_disagreement"] = *s.rank_disagreement;
  return out;
}

ojson methods_json(const CellRecord& c, bool timings) {
  ojson methods = ojson::object();
  for (const auto& m : c.methods) {
    ojson entry;
    entry["name"] = m.name;
    entry["params"] = m.params;
    ojson truth = ojson::object(), estimates = ojson::object(), parameters = ojson::object();
    for (const auto& t : m.truth) truth[t.key] = stat_json(t);
    for (const auto& e : m.estimates) estimates[e.key] = stat_json(e);
    for (const auto& p : m.parameters) parameters[p.key] = p.mean;
    entry["truth"] = std::move(truth);
    entry["estimates"] = std::move(estimates);
    entry["parameters"] = std::move(parameters);
    entry["fits"] = m.fits;
    entry["failed_fits"] = m.failed_fits;
    entry["failure"] = m.failure.empty() ? ojson(nullptr) : ojson(m.failure);
    if (timings) entry["fit_seconds"] = optional_number(m.fit_seconds);
    methods[m.label] = std::move(entry);
  }
  return methods;
}

ojson rankings_json(const CellRecord& c) {
  ojson out = ojson::object();
  for (const auto& r : c.rankings)
    out[r.estimator] = {{"target", r.target},
                        {"disagreement", r.disagreement},
                        {"best_disagreement", r.best_disagreement},
                        {"replicates", r.replicates}};
  return out;
}

// cells.csv for results with methods: one row per (cell, method, quantity), quantity being a
// truth quantity, an estimate or a fitted parameter (column `kind`).
std::string methods_csv(const ResultSet& r) {
  std::ostringstream out;
  const bool targets = has_solved_targets(r);
  out << key_columns_header(r, targets);
  std::vector<std::string> size_keys;
  if (!r.cells.empty())
    for (const auto& [k, v] : r.cells.front().sizes) size_keys.push_back(k);
  for (const auto& k : size_keys) out << ',' << k;
  out << ",replicates,method,name,kind,quantity,target,mean,sd,truth_error,improvement,"
         "rank_disagreement,fits,failed_fits\n";
  for (const auto& c : r.cells) {
    for (const auto& m : c.methods) {
      auto row = [&](const char* kind, const MethodStat& s) {
        out << key_columns(c, targets);
        for (const auto& [k, v] : c.sizes) out << ',' << v;
        out << ',' << c.replicates << ',' << csv_escape(m.label) << ',' << m.name << ',' << kind
            << ',' << csv_escape(s.key) << ',' << s.target << ',' << format_double(s.mean) << ','
            << format_double(s.sd) << ',' << csv_optional(s.error) << ','
            << csv_optional(s.improvement) << ',' << csv_optional(s.rank_disagreement) << ','
            << m.fits << ',' << m.failed_fits << '\n';
      };
      for (const auto& s : m.truth) row("truth", s);
      for (const auto& s : m.estimates) row("estimate", s);
      for (const auto& s : m.parameters) row("parameter", s);
    }
  }
  return out.str();
}

ojson summary_json(const ResultSet& r) {
  ojson out;
  out["meta"] = meta_block(r);
  out["sweep_keys"] = r.sweep_keys;
  if (r.intervals)
    out["intervals"] = {{"resamples", r.intervals->resamples},
                        {"level", r.intervals->level},
                        {"test_level", r.intervals->test_level}};
  ojson cells = ojson::array();
  for (const auto& c : r.cells) {
    ojson cell;
    cell["index"] = c.index;
    ojson swept = ojson::object();
    for (const auto& [k, v] : c.swept) swept[k] = v;
    cell["parameters"] = swept;
    if (c.sizes.empty()) cell["sample_size"] = c.sample_size;
    for (const auto& [k, v] : c.sizes) cell[k] = v;
    cell["replicates"] = c.replicates;
    cell["generator"] = c.generator;
    if (!c.target.is_null()) cell["target"] = c.target;
    ojson truth = ojson::object();
    for (const auto& t : c.truth)
      truth[t.quantity] = {{"value", t.value}, {"method", t.method}, {"error", t.error}};
    cell["truth"] = truth;
    if (c.decision) {
      cell["decision"] = decision_json(*c.decision);
      cells.push_back(std::move(cell));
      continue;
    }
    ojson ests = ojson::object();
    for (const auto& e : c.estimators) {
      ests[e.label] = {{"name", e.name},
                       {"params", e.params},
                       {"target", e.target.empty() ? ojson(nullptr) : ojson(e.target)},
                       {"truth", optional_number(e.truth)},
                       {"mean", e.mean},
                       {"sd", e.sd},
                       {"bias", optional_number(e.bias)},
                       {"rmse", optional_number(e.rmse)},
                       {"se_bias", optional_number(e.se_bias)},
                       {"population", e.population ? ojson{{"value", *e.population},
                                                           {"error", *e.population_error},
                                                           {"samples", e.population_samples}}
                                                   : ojson(nullptr)},
                       {"binning_bias", optional_number(e.binning_bias)},
                       {"finite_sample_bias", optional_number(e.finite_sample_bias)},
                       {"replicates", e.replicates}};
      if (r.intervals) {
        ests[e.label]["coverage"] = optional_number(e.coverage);
        ests[e.label]["coverage_se"] = optional_number(e.coverage_se);
        ests[e.label]["rejection_rate"] = optional_number(e.rejection_rate);
        ests[e.label]["rejection_se"] = optional_number(e.rejection_se);
      }
    }
    if (c.methods.empty()) {
      cell["estimators"] = ests;
    } else {
      cell["methods"] = methods_json(c, r.timings_in_summary);
      cell["rankings"] = rankings_json(c);
    }
    cells.push_back(std::move(cell));
  }
  out["cells"] = std::move(cells);
  if (r.requirements) out["requirements"] = requirements_json(*r.requirements);
  return out;
}

std::string cells_csv(const ResultSet& r) {
  if (has_methods(r)) return methods_csv(r);
  if (!r.cells.empty() && r.cells.front().decision) return decision_cells_csv(r);
  std::ostringstream out;
  const bool targets = has_solved_targets(r);
  out << key_columns_header(r, targets);
  out << ",sample_size,replicates,estimator,name,target,truth,truth_method,truth_error,mean,sd,"
         "bias,rmse,se_bias,population,population_error,binning_bias,finite_sample_bias";
  if (r.intervals) out << ",coverage,coverage_se,rejection_rate,rejection_se";
  out << '\n';
  for (const auto& c : r.cells) {
    for (const auto& e : c.estimators) {
      out << key_columns(c, targets);
      std::string method, error;
      for (const auto& t : c.truth)
        if (t.quantity == e.target) {
          method = t.method;
          error = format_double(t.error);
        }
      out << ',' << c.sample_size << ',' << c.replicates << ',' << csv_escape(e.label) << ','
          << e.name << ',' << e.target << ',' << csv_optional(e.truth) << ',' << method << ','
          << error << ',' << format_double(e.mean) << ',' << format_double(e.sd) << ','
          << csv_optional(e.bias) << ',' << csv_optional(e.rmse) << ',' << csv_optional(e.se_bias)
          << ',' << csv_optional(e.population) << ',' << csv_optional(e.population_error) << ','
          << csv_optional(e.binning_bias) << ',' << csv_optional(e.finite_sample_bias);
      if (r.intervals)
        out << ',' << csv_optional(e.coverage) << ',' << csv_optional(e.coverage_se) << ','
            << csv_optional(e.rejection_rate) << ',' << csv_optional(e.rejection_se);
      out << '\n';
    }
  }
  return out.str();
}

std::string replicates_csv(const ResultSet& r) {
  std::ostringstream out;
  out << "cell,replicate,estimator,value\n";
  for (const auto& c : r.cells)
    for (std::size_t rep = 0; rep < c.replicate_values.size(); ++rep)
      for (std::size_t e = 0; e < c.estimators.size(); ++e)
        out << c.index << ',' << rep << ',' << csv_escape(c.estimators[e].label) << ','
            << format_double(c.replicate_values[rep][e]) << '\n';
  return out.str();
}

}  // namespace

ojson meta_block(const ResultSet& r) {
  return {{"schema_version", results_schema_version},
          {"calbench_version", version},
          {"git_revision", git_revision},
          {"name", r.name},
          {"scenario", r.scenario},
          {"seed", r.seed},
          {"config_hash", r.config_hash}};
}

void write_results(const ResultSet& r, const ojson& resolved, const RunInfo& run,
                   bool replicate_values, const std::filesystem::path& dir) {
  ojson config = resolved;
  config["calbench"] = {{"version", version}, {"git_revision", git_revision}};
  write_file_atomically(dir / "config.resolved.json", config.dump(2) + "\n");
  write_file_atomically(dir / "summary.json", summary_json(r).dump(2) + "\n");
  write_file_atomically(dir / "cells.csv", cells_csv(r));
  if (replicate_values) {
    write_file_atomically(dir / "replicates.csv", replicates_csv(r));
  } else {
    // A replicates.csv left by an earlier run would not belong to these results.
    std::error_code ignored;
    std::filesystem::remove(dir / "replicates.csv", ignored);
  }
  if (r.requirements) {
    write_file_atomically(dir / "requirements.csv", requirements_csv(r));
  } else {
    std::error_code ignored;
    std::filesystem::remove(dir / "requirements.csv", ignored);
  }
  ojson info = {{"meta", meta_block(r)},     {"started_utc", run.started_utc},
                {"seconds", run.seconds},    {"host", run.host},
                {"threads", run.threads},    {"compiler", run.compiler},
                {"libraries", run.libraries}};
  if (has_methods(r)) {
    // Fit times are volatile: here always, in summary.json only on request.
    ojson times = ojson::object();
    for (const auto& c : r.cells) {
      ojson cell = ojson::object();
      for (const auto& m : c.methods) cell[m.label] = optional_number(m.fit_seconds);
      times[std::to_string(c.index)] = std::move(cell);
    }
    info["fit_seconds"] = std::move(times);
  }
  write_file_atomically(dir / "run.json", info.dump(2) + "\n");
}

// The methods' mean truth per quantity, one row per method.
std::string format_methods_table(const CellRecord& c) {
  std::ostringstream out;
  char cell[64];
  std::snprintf(cell, sizeof cell, "  %-30s", "method");
  out << cell;
  for (const auto& t : c.methods.front().truth) {
    std::snprintf(cell, sizeof cell, " %16s", t.key.c_str());
    out << cell;
  }
  out << "  failed\n";
  for (const auto& m : c.methods) {
    std::snprintf(cell, sizeof cell, "  %-30s", m.label.substr(0, 30).c_str());
    out << cell;
    for (const auto& key : c.methods.front().truth) {
      const auto it = std::find_if(m.truth.begin(), m.truth.end(),
                                   [&](const MethodStat& s) { return s.key == key.key; });
      if (it == m.truth.end())
        std::snprintf(cell, sizeof cell, " %16s", "-");
      else
        std::snprintf(cell, sizeof cell, " %16.5f", it->mean);
      out << cell;
    }
    out << "  " << m.failed_fits << "\n";
  }
  return out.str();
}

std::string format_summary_table(const ResultSet& r) {
  if (!r.cells.empty() && r.cells.front().decision) return format_decision_table(r);
  std::ostringstream out;
  char line[320];
  const bool intervals = r.intervals.has_value();
  const auto num = [](const std::optional<double>& v) {
    char b[32];
    if (v)
      std::snprintf(b, sizeof b, "%10.5f", *v);
    else
      std::snprintf(b, sizeof b, "%10s", "-");
    return std::string(b);
  };
  for (const auto& c : r.cells) {
    if (!c.methods.empty()) {
      out << "cell " << c.index << ":";
      for (const auto& [k, v] : c.swept) out << "  " << k << " = " << v.dump();
      out << "  (";
      for (const auto& [k, v] : c.sizes) {
        const bool swept = std::any_of(c.swept.begin(), c.swept.end(),
                                       [&](const auto& s) { return s.first == k; });
        if (!swept) out << k << " = " << v << ", ";
      }
      out << c.replicates << " replicates; true values, mean over replicates)\n";
      out << format_methods_table(c);
      continue;
    }
    out << "cell " << c.index << ":";
    for (const auto& [k, v] : c.swept) out << "  " << k << " = " << v.dump();
    if (r.sweep_keys.empty()) out << "  " << c.generator;
    out << "  (n = " << c.sample_size << ", " << c.replicates << " replicates)\n";
    int label_width = 16;
    for (const auto& e : c.estimators)
      label_width = std::max(label_width, static_cast<int>(e.label.size()));
    std::snprintf(line, sizeof line, "  %-*s %-17s %10s %10s %10s %10s %10s %10s", label_width,
                  "estimator", "target", "truth", "mean", "bias", "sd", "rmse", "binning");
    out << line;
    if (intervals) out << "   coverage   rejected";
    out << '\n';
    for (const auto& e : c.estimators) {
      std::snprintf(line, sizeof line, "  %-*s %-17s %s %10.5f %s %10.5f %s %s", label_width,
                    e.label.c_str(), e.target.empty() ? "-" : e.target.c_str(),
                    num(e.truth).c_str(), e.mean, num(e.bias).c_str(), e.sd, num(e.rmse).c_str(),
                    num(e.binning_bias).c_str());
      out << line;
      if (intervals) out << ' ' << num(e.coverage) << ' ' << num(e.rejection_rate);
      out << '\n';
    }
  }
  if (intervals)
    out << "coverage: fraction of replicates whose " << 100.0 * r.intervals->level
        << "% bootstrap interval holds the target's truth; rejected: fraction where the\n"
           "consistency test rejected calibration at level "
        << r.intervals->test_level << " (its size when calibrated, its power otherwise)\n";
  return out.str();
}

}  // namespace calbench
