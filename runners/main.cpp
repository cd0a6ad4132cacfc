// The `calbench` command line: parses flags, loads a config, calls a scenario, writes results.
// Exit status: 0 success, 2 bad input (config, data, usage), 1 anything else.
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/version.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/version.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "config/experiment.hpp"
#include "config/registry.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "runners/bench.hpp"
#include "runners/eval.hpp"
#include "runners/fit.hpp"
#include "runners/progress.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/results.hpp"

namespace calbench {
namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? buf : "unknown";
}

int run_command(const std::string& file, std::size_t threads, const std::string& out_dir,
                bool quiet) {
  std::unique_ptr<ExperimentBase> config = load_experiment(file);
  if (!out_dir.empty()) config->output.directory = out_dir;
  const ScenarioModule& scenario = module_of(*config);
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);

  Progress progress(config->name, !quiet);
  RunControl control;
  control.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
  const auto start = std::chrono::steady_clock::now();
  RunInfo info;
  info.started_utc = utc_now();
  scenario.prepare(*config);
  const std::unique_ptr<ScenarioResults> results = scenario.run(*config, control);
  progress.finish();
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  info.host = host_name();
  info.threads = threads;
  info.compiler = std::string("g++ ") + __VERSION__;
  info.libraries = "boost " + std::to_string(BOOST_VERSION / 100000) + "." +
                   std::to_string(BOOST_VERSION / 100 % 1000) + ", oneTBB " +
                   std::to_string(TBB_VERSION_MAJOR) + "." + std::to_string(TBB_VERSION_MINOR) +
                   ", nlohmann_json " + std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                   std::to_string(NLOHMANN_JSON_VERSION_MINOR);
  const std::filesystem::path& dir = config->output.directory;
  write_results(scenario, *results, config->resolved, info, dir, quiet ? nullptr : &std::cout);
  if (!quiet)
    std::cout << "wrote " << dir.string() << " (" << results->cells << " cells, " << info.seconds
              << " s, " << threads << " threads)\n";
  return 0;
}

}  // namespace
}  // namespace calbench

int main(int argc, char** argv) {
  using namespace calbench;
  CLI::App app{
      "calbench: fake classifiers with known calibration, for benchmarking calibration "
      "metrics, recalibration and decisions"};
  app.set_version_flag("--version", std::string("calbench ") + version + " (" + git_revision + ")");
  app.require_subcommand(1);

  // Integer options are range-checked on their text: CLI11 would otherwise read "-1" into an
  // unsigned option as 2^64 - 1.
  const auto thread_range = CLI::Range(std::size_t{1}, std::size_t{4096});
  const auto uint64_text = CLI::Validator(
      [](const std::string& text) {
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        return error != std::errc() || end != text.data() + text.size()
                   ? "must be an integer in [0, 2^64 - 1], found " + text
                   : std::string();
      },
      "UINT64");
  std::string config_file, out_dir, kind;
  std::size_t threads = static_cast<std::size_t>(tbb::info::default_concurrency());
  bool quiet = false;

  auto* run = app.add_subcommand("run", "run an experiment config and write its results");
  run->add_option("CONFIG", config_file, "experiment config (JSON)")->required();
  run->add_option("--threads", threads, "worker threads (default: all cores)")->check(thread_range);
  run->add_option("--out", out_dir, "output directory (overrides output.directory)")
      ->check(CLI::Validator(
          [](const std::string& dir) {
            return dir.empty() ? std::string("must not be empty") : "";
          },
          "DIR"));
  run->add_flag("--quiet", quiet, "no progress and no summary table");

  auto* validate = app.add_subcommand("validate", "check a config and print its expanded cells");
  validate->add_option("CONFIG", config_file, "experiment config (JSON)")->required();

  auto* list = app.add_subcommand("list", "print the registry: estimators, maps, families, ...");
  list->add_option("KIND", kind,
                   "estimators | maps | families | scenarios | quantities | decisions | "
                   "recalibrators");

  BenchOptions bench_options;
  auto* bench = app.add_subcommand("bench", "measure throughput (docs/performance.md)");
  bench->add_option("--workload", bench_options.workloads,
                    "W1, W2, W3, truth, recalibration (default: all)");
  bench->add_option("--runs", bench_options.runs, "repetitions; the median is reported")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
  bench
      ->add_option("--replicates", bench_options.replicate_scale,
                   "fraction of each workload's replicates to run (default 1)")
      ->check(CLI::Range(1e-6, 1e3));
  bench
      ->add_option("--threads", bench_options.threads,
                   "thread counts to measure (default 1 and all)")
      ->check(thread_range);
  bench->add_option(
      "--estimators", bench_options.estimators,
      "none (the sampler alone) | first | baseline (default: the numpy baseline's set) | binned");

  EvalOptions eval_options;
  std::size_t eval_threads = threads;
  auto* eval = app.add_subcommand(
      "eval", "metrics with bootstrap intervals and calibration p-values on a model's outputs");
  eval->add_option("DATA", eval_options.data,
                   "CSV (label, K probabilities per line) or NPY (n x K) with --labels")
      ->required();
  eval->add_option("--labels", eval_options.labels, "NPY array of integer labels (NPY data)");
  eval->add_flag("--logits", eval_options.logits, "the values are logits (softmax applied)");
  eval->add_option("--estimators", eval_options.estimators,
                   "JSON array like a config's estimators, inline or a file (default: all)");
  eval->add_option("--resamples", eval_options.resamples,
                   "bootstrap and consistency resamples (default 1000)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  eval->add_option("--level", eval_options.level, "interval level (default 0.95)");
  eval->add_option("--interval", eval_options.interval,
                   "interval method: default (each estimator's), percentile, basic, bca, "
                   "consistency, analytic (docs/intervals.md)");
  eval->add_option("--jackknife-groups", eval_options.jackknife_groups,
                   "groups of BCa's grouped jackknife (default 100)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1'000'000}));
  eval->add_option("--seed", eval_options.seed, "seed of the resample streams (default 0)")
      ->check(uint64_text);
  eval->add_option("--threads", eval_threads, "worker threads (default: all cores)")
      ->check(thread_range);
  eval->add_flag("--json", eval_options.json, "print JSON instead of the table");

  FitOptions fit_options;
  auto* fit = app.add_subcommand("fit", "fit a fake classifier to a model's outputs (docs/fit.md)");
  fit->add_option("DATA", fit_options.data,
                  "CSV (label, K probabilities per line) or NPY (n x K) with --labels")
      ->required();
  fit->add_option("--labels", fit_options.labels, "NPY array of integer labels (NPY data)");
  fit->add_flag("--logits", fit_options.logits, "the values are logits (softmax applied)");
  fit->add_option("--map", fit_options.map,
                  "auto (lowest AIC) | identity | temperature | power (default auto)")
      ->check(CLI::IsMember({"auto", "identity", "temperature", "power"}));
  fit->add_option("--seed", fit_options.seed, "seed of the fake sample compared (default 0)")
      ->check(uint64_text);
  fit->add_option("--out", fit_options.out,
                  "write an estimator_bias config on the fitted generator to this file");
  fit->add_flag("--json", fit_options.json, "print JSON instead of the tables");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*run) return run_command(config_file, threads, out_dir, quiet);
    if (*validate) {
      const auto config = load_experiment(config_file);
      std::cout << module_of(*config).describe(*config);
      return 0;
    }
    if (*list) {
      std::vector<ScenarioEntry> scenarios;
      for (const auto& module : scenario_table())
        scenarios.push_back({std::string(module.syntax.name), std::string(module.summary)});
      std::cout << format_registry(kind, scenarios);
      return 0;
    }
    if (*bench) return run_bench(bench_options, std::cout);
    if (*eval) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, eval_threads);
      return run_eval(eval_options, std::cout);
    }
    if (*fit) return run_fit(fit_options, std::cout);
  } catch (const ConfigError& e) {
    for (const auto& p : e.problems()) std::cerr << "error: " << p << '\n';
    return 2;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "calbench: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
