#include "runners/bench.hpp"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <ostream>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "data/model_outputs.hpp"
#include "estimators/binned_ece.hpp"
#include "estimators/convention.hpp"
#include "estimators/ece_sweep.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/proper_scores.hpp"
#include "experiment/experiment.hpp"
#include "recalibrators/logit_scaling.hpp"
#include "recalibrators/temperature_scaling.hpp"
#include "report/columns.hpp"
#include "report/value_format.hpp"
#include "runners/command.hpp"
#include "runners/progress.hpp"
#include "scenarios/estimator_bias/run.hpp"
#include "truth/truth_engine.hpp"

namespace calbench {
namespace {

struct Workload {
  std::string name;
  std::size_t classes;
  double alpha, temperature;
  std::size_t n, replicates;
};

// The workloads of shared/bench/peer_numpy.py (K, alpha, T, n, replicates).
const std::vector<Workload> workloads = {
    {"W1", 10, 0.5, 0.7, 10'000, 1'000},
    {"W2", 100, 0.1, 0.7, 10'000, 200},
    {"W3", 2, 1.0, 0.7, 1'000, 10'000},
};

// The estimator sets of BenchOptions::estimators. "baseline" is the numpy baseline's set:
// ECE 15 equal-width and equal-mass bins, classwise ECE (15 equal-width), Brier, NLL, accuracy.
std::vector<EstimatorConfig> bench_estimators(const std::string& set) {
  if (set == "none") return {};  // the sampler alone
  const auto binned = [](const char* name, const char* label, BinnedEceSpec spec) {
    return EstimatorConfig{name, label, {}, std::make_shared<BinnedEce>(spec)};
  };
  std::vector<EstimatorConfig> out = {
      binned("ece", "ece_ew15", {15, Binning::equal_width, Norm::l1}),
      binned("ece", "ece_em15", {15, Binning::equal_mass, Norm::l1}),
      {"brier", "brier", {}, std::make_shared<BrierEstimator>()},
      {"nll", "nll", {}, std::make_shared<NllEstimator>()},
      {"accuracy", "accuracy", {}, std::make_shared<AccuracyEstimator>()}};
  if (set == "first") return out;
  out.push_back(binned("classwise_ece", "cwece_ew15",
                       {15, Binning::equal_width, Norm::l1, Scope::classwise}));
  if (set == "baseline") return out;
  if (set != "binned")
    throw InputError("bench --estimators " + set + ": expected none, first, baseline or binned");
  BinnedEceSpec tace{15, Binning::equal_mass, Norm::l1, Scope::classwise, 0.001};
  BinnedEceSpec ace{15,  Binning::equal_mass,     Norm::l1, Scope::classwise,
                    0.0, find_convention("nixon")};
  BinnedEceSpec debiased{15, Binning::equal_mass, Norm::l2};
  debiased.debiased = true;
  out.push_back(binned("ece", "ece_ew15_l2", {15, Binning::equal_width, Norm::l2}));
  out.push_back(binned("ece", "mce_ew15", {15, Binning::equal_width, Norm::max}));
  out.push_back(binned("classwise_ece", "tace_em15", tace));
  out.push_back(binned("ace", "ace_em15", ace));
  out.push_back(binned("ece_debiased", "ece_debiased_em15", debiased));
  out.push_back({"ece_sweep", "ece_sweep_em", {}, std::make_shared<EceSweep>(EceSweepSpec{})});
  return out;
}

template <class F>
double median_seconds(std::size_t runs, F&& f) {
  std::vector<double> t;
  for (std::size_t r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

bool wanted(const BenchOptions& o, const std::string& name) {
  return o.workloads.empty() ||
         std::find(o.workloads.begin(), o.workloads.end(), name) != o.workloads.end();
}

// A line of the throughput figures, printf-formatted, at once (a run can take minutes).
[[gnu::format(printf, 2, 3)]] void say(std::ostream& out, const char* format, ...) {
  char line[256];
  std::va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  out << line << std::flush;
}

// An estimator timed on --data: a JSON line of its own (scripts/bench_references.py reads them).
struct DataTiming {
  const BenchOptions& options;
  const Sample& sample;
  const EstimatorConfig& config;
  double value, seconds;  // seconds: of one evaluation
};

const std::vector<ColumnSpec<DataTiming>> data_timing_columns = {
    {"data", [](const DataTiming& t) { return Value(t.options.data); }, show::json},
    {"n", [](const DataTiming& t) { return count_value(t.sample.size); }, show::json},
    {"classes", [](const DataTiming& t) { return count_value(t.sample.classes); }, show::json},
    {"estimator", [](const DataTiming& t) { return Value(t.config.label); }, show::json},
    {"value", field(&DataTiming::value), show::json},
    {"seconds", field(&DataTiming::seconds), show::json},
    {"runs", [](const DataTiming& t) { return count_value(t.options.runs); }, show::json},
    {"repeat", [](const DataTiming& t) { return count_value(t.options.repeat); }, show::json}};

// The --data mode (BenchOptions::data).
int bench_data(const BenchOptions& options, std::ostream& out) {
  const Sample sample = read_model_outputs(options.data, "", {.kind = ValueKind::probabilities});
  std::vector<std::string> texts = options.estimator;
  if (texts.empty())
    texts = {R"({"name": "smooth_ece"})", R"({"name": "kde_ece"})", R"({"name": "ece_sweep"})",
             R"({"name": "kde_canonical"})"};
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
  for (const std::string& text : texts) {
    Problems problems;
    const Json entry = parse_json_source(text, "--estimator", problems);
    Json resolved;
    const auto config =
        problems.empty() ? parse_estimator(entry, "", problems, resolved) : std::nullopt;
    if (!problems.empty()) throw ConfigError(problems.render("--estimator"));
    EstimatorWorkspace workspace;
    double value = config->estimator->estimate(sample, workspace);  // warm the workspace
    // CPU time of this thread, not wall time: the figures are per core, and a shared machine's
    // load stretches wall time without changing the work.
    std::vector<double> times;
    for (std::size_t run = 0; run < options.runs; ++run) {
      const double start = thread_cpu_seconds();
      for (std::size_t r = 0; r < options.repeat; ++r)
        value = config->estimator->estimate(sample, workspace);
      times.push_back(thread_cpu_seconds() - start);
    }
    std::sort(times.begin(), times.end());
    const double seconds = times[times.size() / 2];
    const DataTiming timing{options, sample, *config, value,
                            seconds / static_cast<double>(options.repeat)};
    out << to_json(TableView(data_timing_columns).object(timing)).dump() << '\n' << std::flush;
  }
  return 0;
}

}  // namespace

int run_bench(const BenchOptions& options, std::ostream& out) {
  if (!options.data.empty()) return bench_data(options, out);
  std::vector<std::size_t> thread_counts = options.threads;
  if (thread_counts.empty()) {
    thread_counts.push_back(1);
    const auto all = static_cast<std::size_t>(tbb::info::default_concurrency());
    if (all > 1) thread_counts.push_back(all);
  }
  for (const auto& name : options.workloads)
    if (name != "truth" && name != "recalibration" &&
        std::none_of(workloads.begin(), workloads.end(),
                     [&](const Workload& w) { return w.name == name; }))
      throw ConfigError(
          {"bench: unknown workload \"" + name + "\"; valid: W1, W2, W3, truth, recalibration"});
  for (const Workload& w : workloads) {
    if (!wanted(options, w.name)) continue;
    EstimatorBiasConfig config;
    config.seed = 1;
    EstimatorBiasCell cell;
    cell.sample_size = w.n;
    cell.replicates = std::max<std::size_t>(
        1, static_cast<std::size_t>(
               std::llround(static_cast<double>(w.replicates) * options.replicate_scale)));
    cell.generator = DirichletSpec{w.classes, {w.alpha}, TemperatureMap{w.temperature}};
    cell.estimators = bench_estimators(options.estimators);
    config.cells.push_back(cell);
    const double vectors = static_cast<double>(cell.sample_size * cell.replicates);
    for (std::size_t threads : thread_counts) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      const double s = median_seconds(options.runs, [&] { simulate_estimates(config, {}); });
      say(out,
          "%s K=%zu alpha=%g T=%g n=%zu R=%zu threads=%zu estimators=%s (%zu): %.3f s, "
          "%.3g vectors/s\n",
          w.name.c_str(), w.classes, w.alpha, w.temperature, w.n, cell.replicates, threads,
          options.estimators.c_str(), cell.estimators.size(), s, vectors / s);
    }
  }
  if (wanted(options, "truth")) {
    std::vector<Generator> generators;
    for (DirichletSpec spec : std::vector<DirichletSpec>{
             {2, {0.5}, TemperatureMap{0.7}},
             {3, {0.5}, TemperatureMap{0.7}},
             {10, {0.5}, TemperatureMap{0.7}},
             {100, {0.1}, TemperatureMap{0.7}},
             {10, {0.5}, PowerMap{{0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4}}},
             {10, {0.5}, TopLabelMap{2.0}}})
      generators.emplace_back(std::move(spec));
    // Issue #15's bar: class_conditional at K = 100 within 1 s on 2 cores.
    generators.emplace_back(ClassConditionalSpec{100, std::vector<double>(100, 0.01),
                                                 class_conditional_alpha(100, 1.0, 4.0)});
    for (const auto& gen : generators) {
      GroundTruth truth;
      const double s = median_seconds(1, [&] { truth = compute_truth(gen, TruthSettings{}); });
      double worst = 0.0;
      for (Quantity q : all_quantities) worst = std::max(worst, truth[q].error);
      say(out, "truth %s: %.3f s, largest error %.2e\n", gen.canonical_text().substr(0, 70).c_str(),
          s, worst);
    }
  }
  if (wanted(options, "recalibration")) {
    // Fit times of the recalibrators on n = 10,000, K = 100 (alpha 0.1, temperature 0.7):
    // single-threaded fits, as the recalibration scenario runs them inside its tasks.
    const DirichletGenerator gen({100, {0.1}, TemperatureMap{0.7}});
    Engine engine = make_engine({1, 0, 0, Purpose::fit});
    Sample sample;
    DirichletScratch scratch;
    gen.sample(engine, 10'000, sample, scratch);
    struct Case {
      std::string label;
      std::shared_ptr<const Recalibrator> method;
    };
    const std::vector<Case> cases = {
        {"temperature", std::make_shared<TemperatureScaling>()},
        {"vector",
         std::make_shared<LogitScaling>("vector", LogitScalingSpec{LogitScalingForm::vector})},
        {"dirichlet (ODIR lambda = mu = 0.01)",
         std::make_shared<LogitScaling>("dirichlet",
                                        LogitScalingSpec{LogitScalingForm::matrix, 0.01, 0.01})}};
    for (const auto& c : cases) {
      std::vector<FittedValue> parameters;
      const double s =
          median_seconds(options.runs, [&] { parameters = fit(*c.method, sample)->parameters(); });
      say(out, "recalibration fit %s n=10000 K=100: %.4f s (%s = %.4g)\n", c.label.c_str(), s,
          parameters.front().name.c_str(), parameters.front().value);
    }
  }
  return 0;
}

Command add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  auto* bench = app.add_subcommand("bench", "measure throughput (docs/performance.md)");
  bench->add_option("--workload", options->workloads,
                    "W1, W2, W3, truth, recalibration (default: all)");
  bench->add_option("--runs", options->runs, "repetitions; the median is reported")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
  bench
      ->add_option("--replicates", options->replicate_scale,
                   "fraction of each workload's replicates to run (default 1)")
      ->check(CLI::Range(1e-6, 1e3));
  bench->add_option("--threads", options->threads, "thread counts to measure (default 1 and all)")
      ->check(thread_range());
  bench->add_option(
      "--estimators", options->estimators,
      "none (the sampler alone) | first | baseline (default: the numpy baseline's set) | binned");
  bench->add_option(
      "--data", options->data,
      "time single evaluations of estimators on this CSV instead (docs/performance.md)");
  bench->add_option("--estimator", options->estimator,
                    "with --data: a JSON estimator, repeatable (default: the heavy ones)");
  bench->add_option("--repeat", options->repeat, "with --data: evaluations per run")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  return {bench, [options] { return run_bench(*options, std::cout); }};
}

}  // namespace calbench
