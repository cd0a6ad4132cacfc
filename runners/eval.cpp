#include "runners/eval.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>
#include <variant>
#include <vector>

#include "config/finite_json.hpp"
#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/finite_guard.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "data/model_outputs.hpp"
#include "estimators/binned_reliability.hpp"
#include "estimators/coverage_caveats.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/interval_methods.hpp"
#include "estimators/isotonic_fit.hpp"
#include "estimators/uncertainty.hpp"
#include "fit/fake_advice.hpp"
#include "report/columns.hpp"
#include "report/reliability_record.hpp"
#include "report/reporter.hpp"
#include "report/value_format.hpp"
#include "runners/command.hpp"
#include "runners/estimator_list.hpp"
#include "runners/fit.hpp"
#include "runners/progress.hpp"
#include "runners/report.hpp"

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
    if (row.extra.cost == Cost::refit) {
      skipped.push_back({row.name,
                         "fits a recalibrator on k folds per evaluation: give it with "
                         "--estimators to run it"});
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

// The note beside an interval whose method was measured below 0.90 - 0.05 for data of this
// shape (estimators/coverage_caveats.hpp, docs/intervals.md); empty otherwise. Only the
// estimators' default parameters were measured, so another configuration gets no note.
std::string coverage_note(const EstimatorConfig& config, IntervalMethod method, std::size_t n,
                          std::size_t classes) {
  Problems problems;
  Json resolved;
  const auto defaults = parse_estimator(Json{{"name", config.name}}, "", problems, resolved);
  if (!defaults || params_json(defaults->params) != params_json(config.params)) return "";
  const auto miss = coverage_miss(defaults->label, method, classes, n);
  return miss ? coverage_note(*miss) : "";
}

// What eval says of an interval beside its coverage note (docs/eval.md, "Bounds and notes"):
// a bound below the least value of what the interval is for is raised to it (the truth is
// never below it, so coverage cannot drop); an interval wholly below it, a zero width and an
// estimate outside its own interval are explained. Returns the note, `note` first.
std::string settle_interval(Interval& interval, double estimate, IntervalMethod method,
                            const EstimatorConfig& config, const std::string& note) {
  const std::string name(to_string(method));
  std::vector<std::string> said;
  if (!note.empty()) said.push_back(note);
  const bool zero_width = interval.hi == interval.lo;
  const auto target = config.estimator->target();
  bool below_least = false;
  if (target || !config.may_be_negative) {
    const double least = target ? least_value(*target) : 0.0;
    below_least = estimate < least;
    if (below_least)
      said.push_back("estimate below " + format_double(least) +
                     ", the least value of its target (an unbiased estimator can be): the "
                     "interval starts there");
    else if (interval.hi < least)
      said.push_back("the whole " + name + " interval lay below " + format_double(least) +
                     ", the least value of its target: only that value is consistent with "
                     "the data");
    interval.lo = std::max(interval.lo, least);
    interval.hi = std::max(interval.hi, least);
  }
  const bool corrects_bias = method == IntervalMethod::basic || method == IntervalMethod::bca ||
                             method == IntervalMethod::bias_corrected ||
                             method == IntervalMethod::fake;
  const std::string shown_by =
      method == IntervalMethod::fake ? "the fake's samples predict" : "the resamples show";
  if (zero_width)
    said.push_back(
        "zero width: every resample gave the same value, so the interval shows no "
        "uncertainty; do not read it as exact");
  else if (!below_least && (estimate < interval.lo || estimate > interval.hi))
    said.push_back("estimate outside its interval: " +
                   (corrects_bias ? "the " + name +
                                        " interval corrects the estimator's bias, which " + shown_by
                                  : "the resampled values lie to one side of the estimate (the "
                                    "estimator's bias), and the " +
                                        name + " interval follows them"));
  return join(said, "; ");
}

// The model's binned reliability curves as reliability.csv rows (no key columns): the top label
// and each class, equal-width and equal-mass bins.
void write_curves(const EvalOptions& o, const Sample& sample) {
  constexpr std::size_t bins = 15;
  const std::size_t n = sample.size, K = sample.classes;
  std::vector<double> correct(n), scores(n), hits(n);
  for (std::size_t i = 0; i < n; ++i) correct[i] = sample.predicted[i] == sample.label[i];
  // Class k's probabilities and one-vs-rest outcomes, into scores and hits.
  const auto select_class = [&](std::size_t k) {
    for (std::size_t i = 0; i < n; ++i) {
      scores[i] = sample.p[i * K + k];
      hits[i] = sample.label[i] == k ? 1.0 : 0.0;
    }
  };
  EstimatorWorkspace workspace;
  std::vector<CurveRecord> curves;
  for (const Binning binning : {Binning::equal_width, Binning::equal_mass}) {
    curves.push_back(
        {.curve = CurveOrigin::estimated,
         .grouping = grouping_of(binning),
         .points = binned_reliability(sample.confidence, correct, binning, bins, workspace)});
    for (std::size_t k = 0; k < K; ++k) {
      select_class(k);
      curves.push_back({.curve = CurveOrigin::estimated,
                        .grouping = grouping_of(binning),
                        .scope = CurveScope::one_class,
                        .class_index = k,
                        .points = binned_reliability(scores, hits, binning, bins, workspace)});
    }
  }
  // CORP's isotonic (PAV) curves, one point per step (estimators/isotonic_fit.hpp).
  curves.push_back({.curve = CurveOrigin::estimated,
                    .grouping = CurveGrouping::isotonic,
                    .points = isotonic_reliability(sample.confidence, correct)});
  for (std::size_t k = 0; k < K; ++k) {
    select_class(k);
    curves.push_back({.curve = CurveOrigin::estimated,
                      .grouping = CurveGrouping::isotonic,
                      .scope = CurveScope::one_class,
                      .class_index = k,
                      .points = isotonic_reliability(scores, hits)});
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
  meta.config_hash = format_hash(hash64("eval|" + o.data + "|" + o.labels + "|" +
                                        (o.logits ? "logits" : "probabilities") +
                                        (o.renormalize ? "|renormalized" : "")));
  ReportHeader header;
  header.meta = meta;
  header.tables.push_back(curve_table({}));
  Record record;
  append_curve_rows({}, curves, record.rows);
  // The table in reliability.csv, its meta block (no CSV comment lines) in summary.json.
  CsvReporter csv(dir);
  JsonReporter json(dir);
  FanOut reporters({&csv, &json});
  emit(reporters, header, {&record, 1});
}

// Eval's phases on stderr (runners/progress.hpp): a line once a phase has run for 2 s, named
// after the phase and the estimators that take most of the time (from their timed evaluation
// on the data, in CPU time), and an estimate of the whole before the resampling starts: the
// work over the threads, which a loaded machine stretches.
class EvalProgress {
 public:
  static constexpr std::chrono::milliseconds silent_below{2000};

  // seconds[e]: estimator e's one evaluation on the data.
  EvalProgress(const std::vector<EstimatorConfig>& used, const std::vector<double>& seconds) {
    std::vector<std::size_t> order(used.size());
    for (std::size_t e = 0; e < order.size(); ++e) order[e] = e;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return seconds[a] > seconds[b]; });
    for (double s : seconds) per_resample_ += s;
    for (std::size_t r = 0; r < std::min<std::size_t>(2, order.size()); ++r) {
      const std::size_t e = order[r];
      if (per_resample_ <= 0.0) break;
      heaviest_ += (r ? ", " : "") + used[e].label + " " +
                   format_fixed(100.0 * seconds[e] / per_resample_, 0) + "%";
    }
  }

  // "eval: about 9 s: 11 estimators on 2,100 resampled data sets, 2 threads" when over 2 s.
  void announce(std::size_t estimators, std::size_t resampled) const {
    const auto threads = static_cast<double>(std::min<std::size_t>(
        tbb::this_task_arena::max_concurrency(),
        tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)));
    const double seconds = per_resample_ * static_cast<double>(resampled) / threads;
    if (seconds * 1000.0 < static_cast<double>(silent_below.count())) return;
    std::fprintf(stderr,
                 "eval: about %s s: %zu estimators on %zu resampled data sets, %d threads "
                 "(most time: %s)\n",
                 format_fixed(seconds, 0).c_str(), estimators, resampled, static_cast<int>(threads),
                 heaviest_.c_str());
    std::fflush(stderr);
  }

  // The hooks of sample_intervals; begin runs between phases, when no resample is running.
  IntervalProgress hooks() {
    IntervalProgress out;
    out.begin = [this](std::string_view phase, std::size_t) {
      if (current_) current_->finish();
      current_ = std::make_unique<Progress>(
          "eval " + std::string(phase) + " (most time: " + heaviest_ + ")", true,
          ProgressStyle{.unit = "resamples",
                        .first_after = silent_below,
                        .plain_every = std::chrono::milliseconds(5000)});
    };
    out.counter = [this](std::size_t done, std::size_t total) { current_->update(done, total); };
    return out;
  }

  void finish() {
    if (current_) current_->finish();
  }

 private:
  double per_resample_ = 0.0;  // seconds of one evaluation of every estimator
  std::string heaviest_;
  std::unique_ptr<Progress> current_;
};

// The estimators that apply to the data, each with its value on it and the CPU time of that
// evaluation (for the progress lines; a quadratic one asked for by name can take long itself).
struct Observed {
  std::vector<EstimatorConfig> used;
  std::vector<double> values, seconds;
};

Observed observe(const EvalOptions& o, const Sample& sample, std::vector<Skipped>& skipped) {
  const bool by_default = o.estimators.empty();
  std::vector<EstimatorConfig> candidates =
      by_default ? registry_estimators(skipped) : requested_estimators(o.estimators);
  Observed out;
  EstimatorWorkspace workspace;
  Progress observing(
      "eval observed values", true,
      ProgressStyle{.unit = "estimators",
                    .first_after = EvalProgress::silent_below,
                    .plain_every = std::chrono::milliseconds(5000),
                    .heartbeat = true});  // one estimator can take a minute at K = 1,000
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    observing.update(c, candidates.size());
    // An estimator that does not apply to this K throws DomainError.
    try {
      const auto timed = [&] {
        const double start = thread_cpu_seconds();
        const double value = candidates[c].estimator->estimate(sample, workspace);
        return std::pair(value, thread_cpu_seconds() - start);
      };
      // A first evaluation pays for its workspace (allocations, FFT plans); a cheap one is
      // timed again, warm, as the resamples will run it.
      auto [value, took] = timed();
      if (took < 0.05) took = timed().second;
      out.values.push_back(value);
      out.seconds.push_back(took);
      out.used.push_back(std::move(candidates[c]));
    } catch (const DomainError& error) {
      if (!by_default)
        throw InputError(o.data + ": estimator " + quote(candidates[c].label) + ": " +
                         error.what());
      skipped.push_back({candidates[c].label, error.what()});
    }
  }
  observing.update(candidates.size(), candidates.size());
  observing.finish();
  if (out.used.empty()) throw InputError(o.data + ": no estimator applies to this data");
  return out;
}

// The fake `calbench fit` fits to the rows, with its verdict, and what its samples at the rows'
// n predict of each estimator used (fit/fake_advice.hpp): of every one when asked for (--advice,
// --interval fake), else of those whose default is the fake interval (EstimatorTraits::eval_fake).
struct FakeRun {
  bool asked = false;  // --advice or --interval fake: the advice is reported
  JudgedFake judged;
  FakeAdvice advice;  // asked: of every estimator used, in their order
  // [e]: estimator e's deviations T_r - theta_F; empty where it was not sampled.
  std::vector<std::vector<double>> deviations;
};

// Why no fake could be fitted for the estimators whose eval default is the fake interval (the
// option that asks for one makes that an error instead); empty when one was, or none was needed.
struct FakeUnavailable {
  std::string reason;
};

// The fake for the estimators `sampled` (every one when `asked`). Data no fake can be fitted to
// are an input error of the option that asked for one; without one, the reason is returned
// and the estimators fall back to their default interval.
std::variant<FakeRun, FakeUnavailable> run_fake(const EvalOptions& o, const Sample& sample,
                                                const Observed& observed, bool asked,
                                                const std::vector<std::size_t>& sampled) {
  FitOptions fit;
  fit.data = o.data;
  fit.seed = o.seed;
  FakeRun out{.asked = asked, .judged = {}, .advice = {}, .deviations = {}};
  std::vector<LabelledEstimator> estimators;
  for (const std::size_t e : sampled)
    estimators.push_back({observed.used[e].label, observed.used[e].estimator.get()});
  try {
    out.judged = fit_judged_fake(sample, fit);
    Progress sampling("eval: the fake's samples", true,
                      ProgressStyle{.unit = "samples",
                                    .first_after = EvalProgress::silent_below,
                                    .plain_every = std::chrono::milliseconds(5000)});
    try {
      out.advice = advise_on_fake(
          Generator(out.judged.fit.generator), out.judged.fit.truth, sample, estimators,
          {.replicates = o.fake_samples, .seed = o.seed},
          [&](std::size_t done, std::size_t total) { sampling.update(done, total); });
    } catch (const DomainError& error) {
      throw InputError(o.data + ": the fake fitted to these rows: " + error.what());
    }
    sampling.finish();
  } catch (const InputError& error) {
    if (!asked) return FakeUnavailable{error.what()};
    throw InputError(std::string(error.what()) +
                     " (the fake of --advice and --interval fake; eval's other intervals "
                     "need none)");
  }
  out.deviations.resize(observed.used.size());
  for (std::size_t i = 0; i < sampled.size(); ++i)
    out.deviations[sampled[i]] = out.advice.estimators[i].deviations;
  return out;
}

// An estimator's result on the data: a row of eval's table, an entry of --json's "estimators".
struct EvalRecord {
  const EstimatorConfig& config;
  double value = 0.0;
  IntervalMethod method = IntervalMethod::basic;
  std::optional<Interval> ci;
  // With --interval fake: the estimator's default interval joined in the hull, as
  // `--interval default` reports it (--json's "default_ci").
  std::optional<Interval> default_ci;
  double p_calibrated = 0.0;
  std::string note;       // a coverage caveat, that the method does not apply, or why not estimable
  bool estimable = true;  // false: no value, interval or p-value (rounded input, too few rows)
};

// The intervals and p-values: every method but analytic resamples.
std::vector<EvalRecord> resample(const EvalOptions& o, const Sample& sample,
                                 const Observed& observed, const ZeroCount& zeros,
                                 const std::optional<FakeRun>& fake,
                                 const FakeUnavailable& unavailable) {
  const IntervalChoice choice = interval_choice(o.interval);
  std::vector<const Estimator*> estimators;
  // Row 0: the method asked for, or the estimator's eval default (the fake interval where its
  // traits say so and a fake was fitted). The fake's interval is reported as its hull with the
  // estimator's default interval, row 1 (docs/intervals.md, "Fake-calibrated intervals").
  std::vector<std::vector<IntervalMethod>> methods(2);
  for (const auto& c : observed.used) {
    estimators.push_back(c.estimator.get());
    methods[0].push_back(choice.value_or(c.eval_fake && fake ? IntervalMethod::fake : c.interval));
    methods[1].push_back(c.interval);
  }
  const bool fake_hull = std::ranges::find(methods[0], IntervalMethod::fake) != methods[0].end();
  if (!fake_hull) methods.pop_back();
  EvalProgress progress(observed.used, observed.seconds);
  IntervalRequest request{o.resamples, o.level, o.jackknife_groups};
  request.progress = progress.hooks();
  if (fake) request.fake_deviations = fake->deviations;
  // The bias correction's and the jackknife's data sets are fewer or cheaper, so 2 R is the
  // estimate's count.
  progress.announce(estimators.size(), 2 * o.resamples);
  ResampleWorkspace unused;
  EstimatorWorkspace workspace;
  const auto computed = sample_intervals(sample, estimators, observed.values, methods, request,
                                         {o.seed, 0, 0}, Execution::parallel, unused, workspace);
  progress.finish();
  std::vector<EvalRecord> out;
  for (std::size_t e = 0; e < estimators.size(); ++e) {
    const EstimatorConfig& config = observed.used[e];
    EvalRecord r{config,
                 observed.values[e],
                 methods[0][e],
                 computed.intervals[e],
                 {},
                 computed.p_values[e],
                 {},
                 true};
    if (r.method == IntervalMethod::fake && r.ci && computed.intervals[estimators.size() + e]) {
      const Interval& by_default = *computed.intervals[estimators.size() + e];
      r.ci = Interval{std::min(r.ci->lo, by_default.lo), std::max(r.ci->hi, by_default.hi)};
      r.default_ci = by_default;
    }
    // Rows whose label has probability exactly 0 (rounded input) leave an NLL not estimable.
    const MinimumRows* minimum = config.estimator->capabilities().minimum_rows;
    if (config.logs_label_probability && zeros.true_label_zeros > 0) {
      r.estimable = false;
      r.note = "not estimable: " + std::to_string(zeros.true_label_zeros) +
               " rows with label probability 0";
    } else if (minimum && sample.size < minimum->minimum_rows()) {
      r.estimable = false;
      r.note = "not estimable: " + minimum->why();
    } else if (!r.ci) {
      r.note = std::string(to_string(r.method)) + " does not apply";
    } else {
      r.note = coverage_note(config, r.method, sample.size, sample.classes);
      if (!choice && config.eval_fake && !unavailable.reason.empty()) {
        std::vector<std::string> said{"no fake interval, its default here: " + unavailable.reason +
                                      "; the " + std::string(to_string(r.method)) +
                                      " interval instead"};
        if (!r.note.empty()) said.push_back(r.note);
        r.note = join(said, "; ");
      }
    }
    if (r.estimable && r.ci) r.note = settle_interval(*r.ci, r.value, r.method, config, r.note);
    // The joined default interval's bounds are settled as its own row's would be; its notes
    // are that row's, not this one's.
    if (r.estimable && r.default_ci)
      settle_interval(*r.default_ci, r.value, config.interval, config, "");
    else
      r.default_ci.reset();
    // An estimate that is not finite is an error naming the estimator, in either format (the
    // text table would print "nan", the JSON null).
    if (r.estimable)
      require_finite(r.value, [&] { return o.data + ": estimator " + config.label; });
    out.push_back(std::move(r));
  }
  return out;
}

// Eval's columns: the table (label, value, the level's CI, method, p_calibrated, note) and
// --json's entries (name, params, value, interval, ci, p_calibrated, note).
std::vector<ColumnSpec<EvalRecord>> eval_columns(double level) {
  using R = EvalRecord;
  const Display text{.align = Align::left};
  const auto method = [](const R& r) { return Value(std::string(to_string(r.method))); };
  // What an estimator that is not estimable lacks: null, "-" in the table.
  const auto if_estimable = [](const R& r, Value v) { return r.estimable ? v : Value(); };
  return {
      {"label", [](const R& r) { return Value(r.config.label); }, show::terminal, text},
      {"name", [](const R& r) { return Value(r.config.name); }, show::json},
      {"params",
       [](const R& r) {
         Value::Object params;
         for (const auto& p : r.config.params) params.emplace_back(p.key, p.value);
         return Value(std::move(params));
       },
       show::json},
      {"value",
       [=](const R& r) { return if_estimable(r, r.value); },
       show::json | show::terminal,
       {.align = Align::left, .precision = 6, .null = "not estimable"}},
      {"interval", method, show::json},
      {"ci",
       [=](const R& r) {
         return r.ci ? if_estimable(r, Value::Array{r.ci->lo, r.ci->hi}) : Value();
       },
       show::json},
      {"ci_text",
       [=](const R& r) {
         if (!r.ci) return Value();
         return if_estimable(
             r, "[" + format_fixed(r.ci->lo, 6) + ", " + format_fixed(r.ci->hi, 6) + "]");
       },
       show::terminal,
       {.heading = format_fixed(100.0 * level, 0) + "% CI", .align = Align::left}},
      {"method", method, show::terminal, text},
      {"p_calibrated",
       [=](const R& r) { return if_estimable(r, r.p_calibrated); },
       show::json | show::terminal,
       {.align = Align::left, .precision = 4}},
      {"note",
       [](const R& r) { return r.note.empty() ? Value() : Value(r.note); },
       show::json | show::terminal,
       {.align = Align::left, .null = ""}},
      {"estimable", [](const R& r) { return r.estimable ? Value() : Value(false); },
       show::json_set},
      {"default_ci",
       [](const R& r) {
         return r.default_ci ? Value(Value::Array{r.default_ci->lo, r.default_ci->hi}) : Value();
       },
       show::json_set}};
}

const char* const eval_legend =
    R"(
CI: the method's interval (docs/intervals.md); a note names the coverage measured below
  nominal - 0.05 for data of this K and n (or says that the method does not apply)
p_calibrated: consistency resampling (Bröcker & Smith 2007), labels redrawn from p;
  (1 + #{T* >= T}) / (1 + R), small when the data are less calibrated than calibration allows
)";

// An estimator's advice: a row of the advice table, an entry of --json's "advice".
struct AdviceRecord {
  const EstimatorConfig& config;
  const EstimatorAdvice& advice;
  bool recommended = false;  // the least predicted RMSE among the estimators of its target
};

// The advice's columns: what the fake predicts of T against its reference theta_F at the data's n.
std::vector<ColumnSpec<AdviceRecord>> advice_columns() {
  using R = AdviceRecord;
  const Display text{.align = Align::left};
  const Display number{.align = Align::left, .precision = 6};
  const auto target = [](const R& r) { return field_value(r.config.estimator->target()); };
  return {
      {"label", [](const R& r) { return Value(r.config.label); }, show::terminal, text},
      {"target", target, show::json | show::terminal, {.align = Align::left, .null = "own"}},
      {"reference",
       [](const R& r) { return Value(r.advice.reference.value); },
       show::json | show::terminal,
       {.heading = "theta_fake", .align = Align::left, .precision = 6}},
      {"reference_error", [](const R& r) { return Value(r.advice.reference.error); }, show::json},
      {"bias", [](const R& r) { return Value(r.advice.bias); }, show::json | show::terminal,
       number},
      {"bias_se", [](const R& r) { return Value(r.advice.bias_se); }, show::json},
      {"sd", [](const R& r) { return Value(r.advice.sd); }, show::json | show::terminal, number},
      {"rmse", [](const R& r) { return Value(r.advice.rmse); }, show::json | show::terminal,
       number},
      {"recommended", [](const R& r) { return Value(r.recommended); }, show::json},
      {"report",
       [](const R& r) { return r.recommended ? Value(std::string("<- report")) : Value(); },
       show::terminal,
       {.align = Align::left, .null = ""}}};
}

std::string advice_legend() {
  return "\ntheta_fake: the estimator's reference under the fake: the truth of its target, or "
         "(target\n  \"own\") its own population value on " +
         std::to_string(FakeAdviceSettings{}.population_samples) +
         " of the fake's rows; bias, sd and rmse:\n  of the estimate against it over the "
         "fake's samples of n rows (docs/eval.md, \"Advice\")\n";
}

// The advice as a record of the "advice" block: the fake, its verdict, the recommendations and
// each estimator's predictions.
Record advice_record(const EvalOptions& o, const FakeRun& fake, const Observed& observed,
                     const std::vector<ColumnSpec<AdviceRecord>>& columns) {
  const FakeAdvice& advice = fake.advice;
  const FitVerdict& verdict = fake.judged.verdict;
  const TableView view(columns);
  std::vector<AdviceRecord> rows;
  for (std::size_t e = 0; e < observed.used.size(); ++e) {
    bool recommended = false;
    for (const auto& r : advice.recommendations) recommended |= r.estimator == e;
    rows.push_back({observed.used[e], advice.estimators[e], recommended});
  }
  Value::Object estimators;
  for (const auto& r : rows) estimators.emplace_back(r.config.label, view.object(r));
  Value::Array recommendations;
  std::string said;
  for (const auto& r : advice.recommendations) {
    const std::string& label = observed.used[r.estimator].label;
    recommendations.push_back(Value::Object{{"target", std::string(to_string(r.target))},
                                            {"estimator", label},
                                            {"compared", count_value(r.compared)}});
    said += "report " + label + " for " + std::string(to_string(r.target)) +
            ": the least predicted RMSE (" + format_fixed(advice.estimators[r.estimator].rmse, 6) +
            ") of the " + std::to_string(r.compared) + " estimators of that target\n";
  }
  Value::Array reasons;
  for (const auto& reason : verdict.reasons) reasons.push_back(reason);
  const std::string family(to_string(fake.judged.fit.family));
  Record out{.block = "advice",
             .document = Value::Object{{"n", count_value(advice.n)},
                                       {"fake_samples", count_value(advice.replicates)},
                                       {"family", family},
                                       {"verdict", verdict_word(verdict)},
                                       {"verdict_reasons", std::move(reasons)},
                                       {"recommended", std::move(recommendations)},
                                       {"estimators", std::move(estimators)}}};
  for (const auto& r : rows) out.rows.push_back(view.row("advice", r, show::terminal));
  out.caption = "\nadvice: the fake fitted to these rows (" + family +
                " family, as `calbench fit " + o.data + "` fits it; verdict " +
                verdict_word(verdict) + "), " + std::to_string(advice.replicates) +
                " samples of n = " + std::to_string(advice.n) + "\n\n";
  out.note = advice_legend() + said;
  for (const auto& reason : verdict.reasons)
    out.note += "the verdict is POOR: " + reason +
                "; the advice and any fake interval rest on "
                "a fake unlike the model\n";
  return out;
}

// The estimators' record, then the advice's when there is one.
std::vector<Record> with_advice(Record estimators, std::optional<Record>& advice) {
  std::vector<Record> out{std::move(estimators)};
  if (advice) out.push_back(std::move(*advice));
  return out;
}

// The records through the JSON reporter (--json) or the terminal's.
void report_eval(const EvalOptions& o, const Sample& sample, const ZeroCount& zeros,
                 const std::vector<EvalRecord>& records, const std::vector<Skipped>& skipped,
                 const Observed& observed, const std::optional<FakeRun>& fake, std::ostream& out) {
  const auto columns = eval_columns(o.level);
  const TableView view(columns);
  Value::Object estimators;
  for (const auto& r : records) estimators.emplace_back(r.config.label, view.object(r));
  ReportHeader header;
  header.blocks = {{"n", count_value(sample.size)}, {"classes", count_value(sample.classes)}};
  const std::string zero_warning = zeros.true_label_zeros == 0
                                       ? ""
                                       : describe_label_zeros(zeros, sample.size) +
                                             ": -log 0 is infinite, so the NLL is not estimable; " +
                                             full_precision_advice;
  if (zeros.true_label_zeros > 0)
    header.blocks.emplace_back(
        "label_probability_zeros",
        Value::Object{{"rows", count_value(zeros.true_label_zeros)},
                      {"decimals", zeros.decimals ? Value(std::int64_t{*zeros.decimals}) : Value()},
                      {"warning", zero_warning}});
  header.tables.push_back(view.table("estimators", show::terminal, "  ", "  "));
  Record record{.block = "estimators", .document = std::move(estimators)};
  const auto advice_table = advice_columns();
  std::optional<Record> advice;
  if (fake && fake->asked) {
    header.tables.push_back(TableView(advice_table).table("advice", show::terminal, "  ", "  "));
    advice = advice_record(o, *fake, observed, advice_table);
  }
  if (o.json) {
    // A value that is not finite would print as null: an error naming it.
    require_finite_json(to_json(record.document), o.data, "/estimators");
    if (advice) require_finite_json(to_json(advice->document), o.data, "/advice");
    JsonReporter json(out);
    emit(json, header, with_advice(std::move(record), advice));
    return;
  }
  for (const auto& r : records) record.rows.push_back(view.row("estimators", r, show::terminal));
  record.caption = o.data + ": n = " + std::to_string(sample.size) +
                   ", K = " + std::to_string(sample.classes) + "; " + std::to_string(o.resamples) +
                   " resamples, seed " + std::to_string(o.seed) + "\n" +
                   (zero_warning.empty() ? "" : "warning: " + zero_warning + '\n') + "\n";
  record.note = eval_legend;
  for (const auto& s : skipped) record.note += "skipped " + s.name + ": " + s.reason + '\n';
  TerminalReporter terminal(out);
  emit(terminal, header, with_advice(std::move(record), advice));
}

}  // namespace

std::string interval_help() {
  std::string out = "interval method: default (each estimator's)";
  for (const IntervalMethod method : interval_methods())
    out += ", " + std::string(to_string(method));
  return out + " (docs/intervals.md)";
}

// A class no label names (issue #38): its classwise terms rest on its probabilities alone and
// its frequency is estimated as 0, so the user hears of it (on stderr; the results stand).
void warn_missing_classes(const Sample& sample, const std::string& data) {
  std::vector<std::string> missing;
  for (const std::size_t k : absent_classes(sample)) missing.push_back(std::to_string(k));
  if (missing.empty()) return;
  const bool several = missing.size() > 1;
  warn("calbench eval", data + ": class" + (several ? "es " : " ") + join(missing, ", ") + " of " +
                            std::to_string(sample.classes) + " never occur" + (several ? "" : "s") +
                            " among the " + std::to_string(sample.size) +
                            " labels: classwise estimates of " + (several ? "them" : "it") +
                            " rest on the probabilities alone");
}

int run_eval(const EvalOptions& o, std::ostream& out) {
  if (!(o.level > 0.0 && o.level < 1.0))
    throw InputError("--level " + std::to_string(o.level) + ": must be > 0 and < 1");
  if (o.resamples < 1) throw InputError("--resamples must be >= 1");
  if (o.jackknife_groups < 2) throw InputError("--jackknife-groups must be >= 2");
  if (o.fake_samples < 2) throw InputError("--fake-samples must be >= 2");
  const bool fake_interval = interval_choice(o.interval) == IntervalMethod::fake;
  const Sample sample =
      read_model_outputs(o.data, o.labels,
                         {.kind = o.logits ? ValueKind::logits : ValueKind::probabilities,
                          .renormalize = o.renormalize});
  warn_missing_classes(sample, o.data);
  std::vector<Skipped> skipped;
  const ZeroCount zeros = count_zeros(sample);
  const Observed observed = observe(o, sample, skipped);
  // The fake: for the advice and the fake intervals asked for, or for the estimators whose eval
  // default is the fake interval (EstimatorTraits::eval_fake; without a fake, their default).
  const bool asked = o.advice || fake_interval;
  std::vector<std::size_t> sampled;
  for (std::size_t e = 0; e < observed.used.size(); ++e)
    if (asked || (interval_choice(o.interval) == std::nullopt && observed.used[e].eval_fake))
      sampled.push_back(e);
  std::optional<FakeRun> fake;
  FakeUnavailable unavailable;
  if (!sampled.empty()) {
    auto got = run_fake(o, sample, observed, asked, sampled);
    if (auto* run = std::get_if<FakeRun>(&got))
      fake = std::move(*run);
    else
      unavailable = std::get<FakeUnavailable>(got);
  }
  const std::vector<EvalRecord> records = resample(o, sample, observed, zeros, fake, unavailable);
  // Everything is computed before anything is written: on an error, nothing is.
  std::ostringstream text;
  report_eval(o, sample, zeros, records, skipped, observed, fake, text);
  if (!o.plot.empty()) write_curves(o, sample);
  out << text.str();
  return 0;
}

Command add_eval_command(CLI::App& app) {
  struct Arguments {
    EvalOptions options;
    std::size_t threads = default_threads();
  };
  auto a = std::make_shared<Arguments>();
  EvalOptions& o = a->options;
  auto* eval = app.add_subcommand(
      "eval", "metrics with bootstrap intervals and calibration p-values on a model's outputs");
  eval->add_option("DATA", o.data,
                   "CSV (label, K probabilities per line) or NPY (n x K) with --labels")
      ->required();
  eval->add_option("--labels", o.labels, "NPY array of integer labels (NPY data)");
  auto* logits = eval->add_flag("--logits", o.logits, "the values are logits (softmax applied)");
  eval->add_flag("--renormalize", o.renormalize,
                 "divide each probability row by its sum (rows rounded to >= 3 decimals)")
      ->excludes(logits);  // logits have no row sum to restore
  eval->add_option("--estimators", o.estimators,
                   "JSON array like a config's estimators, inline or a file (default: all)");
  eval->add_option("--resamples", o.resamples, "bootstrap and consistency resamples (default 1000)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  eval->add_option("--level", o.level, "interval level (default 0.95)");
  eval->add_option("--interval", o.interval, interval_help());
  eval->add_option("--jackknife-groups", o.jackknife_groups,
                   "groups of BCa's grouped jackknife (default 100)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1'000'000}));
  eval->add_option("--seed", o.seed, "seed of the resample streams (default 0)")
      ->check(uint64_text());
  eval->add_option("--threads", a->threads, "worker threads (default: all cores)")
      ->check(thread_range());
  eval->add_flag("--advice", o.advice,
                 "fit a fake to the rows (as calbench fit does) and print each estimator's "
                 "predicted bias, sd and RMSE at this n, and the one to report");
  eval->add_option("--fake-samples", o.fake_samples,
                   "samples of n rows drawn from the fake for --advice and --interval fake "
                   "(default 200)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{100'000}));
  eval->add_flag("--json", o.json, "print JSON instead of the table");
  eval->add_option("--plot", o.plot,
                   "write reliability.csv and the reliability diagrams (index.html, SVG) to DIR")
      ->check(directory_text());
  return {eval, [a] {
            tbb::global_control limit(tbb::global_control::max_allowed_parallelism, a->threads);
            const int status = run_eval(a->options, std::cout);
            if (status != 0 || a->options.plot.empty()) return status;
            return write_report(a->options.plot, a->options.json, {"--eval"});
          }};
}

}  // namespace calbench
