#include "runners/eval.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "config/finite_json.hpp"
#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/finite_guard.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "data/model_outputs.hpp"
#include "estimators/binned_reliability.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/interval_methods.hpp"
#include "estimators/uncertainty.hpp"
#include "report/reliability_record.hpp"
#include "report/reporter.hpp"
#include "report/value_format.hpp"
#include "runners/estimator_list.hpp"

namespace calbench {
namespace {

struct Skipped {
  std::string name, reason;
};

// Every registry row with its defaults; rows whose defaults do not apply are skipped, and so
// are quadratic ones: each estimator runs on 2 x resamples resampled data sets.
std::vector<EstimatorConfig> registry_estimators(std::vector<Skipped>& skipped) {
  std::vector<EstimatorConfig> out;
  for (const auto& row : estimator_registry()) {
    if (row.extra.cost == Cost::quadratic) {
      skipped.push_back({row.name, "O(n^2): give it with --estimators to run it"});
      continue;
    }
    if (row.extra.cost == Cost::external) {
      skipped.push_back({row.name, "runs a command: give it with --estimators to run it"});
      continue;
    }
    Problems problems;
    Json resolved;
    auto config = parse_estimator(Json{{"name", row.name}}, "", problems, resolved);
    if (config)
      out.push_back(std::move(*config));
    else
      skipped.push_back({row.name, problems.items().empty() ? "cannot be built with defaults"
                                                            : problems.items().front().message});
  }
  return out;
}

Json params_json(const std::vector<NamedParam>& params) {
  Json out = Json::object();
  for (const auto& p : params) out[p.key] = to_json(p.value);
  return out;
}

// The --interval value: "default" or a method.
IntervalChoice interval_choice(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& c : interval_choices()) {
    if (c.name == name) return c.value;
    names.emplace_back(c.name);
  }
  throw InputError("--interval: " + unknown_name("interval method", name, names));
}

// The note beside an interval whose method was measured below level - 0.05 in settings like
// these (EstimatorTraits::caveat, docs/intervals.md); empty otherwise.
std::string coverage_note(const EstimatorConfig& config, IntervalMethod method, std::size_t n,
                          std::size_t classes, bool rejected) {
  for (const auto& row : estimator_registry()) {
    if (row.name != config.name) continue;
    const CoverageCaveat& c = row.extra.caveat;
    if (method != row.extra.interval || c.text.empty()) return "";
    if (c.when_rejected && !rejected) return "";
    if (n > c.n_max || classes < c.classes_min) return "";
    return c.text;
  }
  return "";
}

// The model's binned reliability curves as reliability.csv rows (no key columns): the top label
// and each class, equal-width and equal-mass bins.
void write_curves(const EvalOptions& o, const Sample& sample) {
  constexpr std::size_t bins = 15;
  const std::size_t n = sample.size, K = sample.classes;
  std::vector<double> correct(n), scores(n), hits(n);
  for (std::size_t i = 0; i < n; ++i) correct[i] = sample.predicted[i] == sample.label[i];
  EstimatorWorkspace workspace;
  std::vector<CurveRecord> curves;
  for (const Binning binning : {Binning::equal_width, Binning::equal_mass}) {
    const char* name = binning == Binning::equal_width ? "equal_width" : "equal_mass";
    curves.push_back({"estimated", name, "top_label", std::nullopt,
                      binned_reliability(sample.confidence, correct, binning, bins, workspace)});
    for (std::size_t k = 0; k < K; ++k) {
      for (std::size_t i = 0; i < n; ++i) {
        scores[i] = sample.p[i * K + k];
        hits[i] = sample.label[i] == k ? 1.0 : 0.0;
      }
      curves.push_back({"estimated", name, "class", k,
                        binned_reliability(scores, hits, binning, bins, workspace)});
    }
  }
  const std::filesystem::path dir = o.plot;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    throw InputError("--plot " + o.plot + ": cannot create the directory: " + error.message());
  ResultMeta meta;
  meta.name = std::filesystem::path(o.data).filename().string();
  meta.scenario = "eval";
  meta.seed = o.seed;
  meta.config_hash = format_hash(
      hash64("eval|" + o.data + "|" + o.labels + "|" + (o.logits ? "logits" : "probabilities")));
  ReportHeader header;
  header.meta = meta;
  header.tables.push_back({"reliability.csv", curve_columns()});
  ReportRecord record;
  append_curve_rows("reliability.csv", {}, curves, record.rows);
  CsvReporter csv(dir);
  csv.begin(header);
  csv.record(record);
  csv.end();
}

}  // namespace

int run_eval(const EvalOptions& o, std::ostream& out) {
  if (!(o.level > 0.0 && o.level < 1.0))
    throw InputError("--level " + std::to_string(o.level) + ": must be > 0 and < 1");
  if (o.resamples < 1) throw InputError("--resamples must be >= 1");
  if (o.jackknife_groups < 2) throw InputError("--jackknife-groups must be >= 2");
  const Sample sample =
      read_model_outputs(o.data, o.labels, o.logits ? ValueKind::logits : ValueKind::probabilities);
  std::vector<Skipped> skipped;
  const bool by_default = o.estimators.empty();
  std::vector<EstimatorConfig> candidates =
      by_default ? registry_estimators(skipped) : requested_estimators(o.estimators);

  // The observed values; an estimator that does not apply to this K throws DomainError.
  std::vector<EstimatorConfig> used;
  std::vector<double> observed;
  EstimatorWorkspace workspace;
  for (auto& c : candidates) {
    try {
      observed.push_back(c.estimator->estimate(sample, workspace));
      used.push_back(std::move(c));
    } catch (const DomainError& error) {
      if (!by_default)
        throw InputError(o.data + ": estimator " + quote(c.label) + ": " + error.what());
      skipped.push_back({c.label, error.what()});
    }
  }
  if (used.empty()) throw InputError(o.data + ": no estimator applies to this data");

  const IntervalChoice choice = interval_choice(o.interval);
  std::vector<const Estimator*> estimators;
  std::vector<std::vector<IntervalMethod>> methods(1);
  for (const auto& c : used) {
    estimators.push_back(c.estimator.get());
    methods[0].push_back(choice.value_or(c.interval));
  }
  const std::size_t E = used.size();
  ResampleWorkspace unused;
  const auto computed = sample_intervals(sample, estimators, observed, methods,
                                         {o.resamples, o.level, o.jackknife_groups}, {o.seed, 0, 0},
                                         Execution::parallel, unused, workspace);
  const std::vector<double>& p = computed.p_values;
  const std::vector<std::optional<Interval>>& intervals = computed.intervals;
  std::vector<std::string> notes(E);
  for (std::size_t e = 0; e < E; ++e) {
    if (!intervals[e])
      notes[e] = std::string(to_string(methods[0][e])) + " does not apply";
    else
      notes[e] =
          coverage_note(used[e], methods[0][e], sample.size, sample.classes, p[e] <= 1.0 - o.level);
  }

  // An estimate that is not finite is an error naming the estimator, in either format (the
  // text table would print "nan", the JSON null).
  for (std::size_t e = 0; e < E; ++e)
    require_finite(observed[e], [&] { return o.data + ": estimator " + used[e].label; });
  std::ostringstream text;
  if (o.json) {
    Json doc = {{"n", sample.size}, {"classes", sample.classes}};
    Json entries = Json::object();
    for (std::size_t e = 0; e < E; ++e)
      entries[used[e].label] = {
          {"name", used[e].name},
          {"params", params_json(used[e].params)},
          {"value", observed[e]},
          {"interval", std::string(to_string(methods[0][e]))},
          {"ci", intervals[e] ? Json{intervals[e]->lo, intervals[e]->hi} : Json()},
          {"p_calibrated", p[e]},
          {"note", notes[e].empty() ? Json() : Json(notes[e])}};
    doc["estimators"] = std::move(entries);
    require_finite_json(doc, o.data);
    text << doc.dump(2) << '\n';
  } else {
    text << o.data << ": n = " << sample.size << ", K = " << sample.classes << "; " << o.resamples
         << " resamples, seed " << o.seed << "\n\n";
    const std::string ci_head = format_fixed(100.0 * o.level, 0) + "% CI";
    std::vector<std::vector<std::string>> rows = {
        {"label", "value", ci_head, "method", "p_calibrated", "note"}};
    for (std::size_t e = 0; e < E; ++e)
      rows.push_back({used[e].label, format_fixed(observed[e], 6),
                      intervals[e] ? std::string("[")
                                             .append(format_fixed(intervals[e]->lo, 6))
                                             .append(", ")
                                             .append(format_fixed(intervals[e]->hi, 6)) +
                                         "]"  // not "[" + ...: GCC 12 -Wrestrict
                                   : std::string("-"),
                      std::string(to_string(methods[0][e])), format_fixed(p[e], 4), notes[e]});
    text << aligned_columns(rows, "  ");
    text << "\nCI: the method's interval (docs/intervals.md); a note says where its coverage "
            "was measured\n  below nominal for data like these (or that the method does not "
            "apply)\n"
            "p_calibrated: consistency resampling (Bröcker & Smith 2007), labels redrawn from "
            "p;\n  (1 + #{T* >= T}) / (1 + R), small when the data are less calibrated than "
            "calibration allows\n";
    for (const auto& s : skipped) text << "skipped " << s.name << ": " << s.reason << '\n';
  }
  if (!o.plot.empty()) write_curves(o, sample);
  out << text.str();
  return 0;
}

}  // namespace calbench
