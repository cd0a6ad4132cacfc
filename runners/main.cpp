// The `calbench` command line: parses flags, loads a config, calls a scenario, writes results.
// Exit status: 0 success, 2 bad input (config, data, usage), 1 anything else.
#include <tbb/global_control.h>
#include <tbb/info.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <new>
#include <optional>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/journal.hpp"
#include "core/read_file.hpp"
#include "core/rng.hpp"
#include "core/version.hpp"
#include "experiment/experiment.hpp"
#include "experiment/preflight.hpp"
#include "report/listing.hpp"
#include "report/result_set.hpp"
#include "runners/bench.hpp"
#include "runners/check.hpp"
#include "runners/eval.hpp"
#include "runners/export_cases.hpp"
#include "runners/fit.hpp"
#include "runners/plan.hpp"
#include "runners/progress.hpp"
#include "runners/report.hpp"
#include "runners/slurm.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/results.hpp"

namespace calbench {
namespace {

// SIGINT and SIGTERM ask the run to stop: no task starts, the running ones finish and are
// journaled, and the run exits 128 + the signal with the command that resumes it. The handler
// is reset after the first signal, so a second one ends the process at once (the journal
// survives that too: a torn last record is dropped on resume).
std::atomic<bool> stop_requested{false};
volatile std::sig_atomic_t stop_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag is set in a signal handler");

// Renders DIR/report/index.html (runners/report.hpp). Without python3 or its packages: one
// warning, and the run still succeeds; a failure of the report itself is an error (status 1),
// though every result file is complete.
// `options` go before the directory (--eval: eval's diagrams, written into DIR itself).
int write_report(const std::filesystem::path& dir, bool quiet,
                 std::vector<std::string> options = {}) {
  options.push_back(dir.string());
  const ReportOutcome outcome = run_report_module(options);
  if (outcome.status == ReportStatus::written) {
    const std::filesystem::path page =
        options.size() > 1 ? dir / "index.html" : dir / "report" / "index.html";
    if (!quiet) std::cout << "report: " << page.string() << '\n';
    return 0;
  }
  if (outcome.status == ReportStatus::unavailable) {
    std::cerr << "calbench: warning: no HTML report: " << outcome.message
              << " (scripts/setup.sh installs python3-matplotlib); the results are in "
              << dir.string() << '\n';
    return 0;
  }
  std::cerr << "calbench: the HTML report failed (the results in " << dir.string()
            << " are complete):\n"
            << outcome.message << '\n';
  return 1;
}

extern "C" void request_stop(int signal) {
  stop_signal = signal;
  stop_requested.store(true);
}

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

enum class Continue { no, resume, restart };

struct RunOptions {
  std::size_t threads = 1;
  std::optional<std::string> out;
  bool quiet = false;
  Continue mode = Continue::no;
  std::optional<RunControl::Shard> shard;
  bool report = true;  // render OUT/report/index.html after the results (not for a shard)
};

// The journal of this run: the interrupted run's, continued (--resume), or a new one.
TaskJournal open_journal(ResultSetTransaction& results, const std::string& identity,
                         const std::string& shown_out, const RunOptions& options) {
  const auto previous = results.previous_journal();
  if (previous && options.mode == Continue::no)
    throw OutputError(shown_out + " has the journal of an interrupted run (" + previous->string() +
                      "): --resume continues it, --restart discards it");
  if (previous && options.mode == Continue::resume) {
    try {
      TaskJournal journal = TaskJournal::resume(*previous, identity);
      if (!options.quiet) {
        std::cerr << "calbench: resuming " << shown_out << ": " << journal.records()
                  << " finished tasks in the journal";
        if (journal.dropped_bytes() > 0)
          std::cerr << " (a torn last record of " << journal.dropped_bytes() << " bytes dropped)";
        std::cerr << '\n';
      }
      return journal;
    } catch (const JournalMismatch& e) {
      throw JournalMismatch(std::string(e.what()) + ": --restart discards it");
    }
  }
  if (previous) results.discard_previous();
  if (options.mode == Continue::resume && !options.quiet)
    std::cerr << "calbench: nothing to resume in " << shown_out << "; starting the run\n";
  return TaskJournal::create(results.journal_path(), identity);
}

std::string run_identity(const ExperimentBase& config) {
  return "config " + format_hash(hash64(config.resolved.dump())) + ", calbench " + version + " (" +
         git_revision + ")";
}

std::string shard_text(const RunControl::Shard& shard) {
  return std::to_string(shard.index + 1) + "/" + std::to_string(shard.count);
}

// A shard's result set: its journal, the config it ran (config.json, what `merge` loads),
// config.resolved.json, and shard.json.
void write_shard(const std::string& config_file, const ExperimentBase& config,
                 const RunControl::Shard& shard, const std::string& identity, TaskJournal& journal,
                 ResultSetTransaction& results_set) {
  const std::filesystem::path staged = results_set.staging();
  const FileBytes text = read_file(config_file);
  if (!text) throw InputError("cannot read " + config_file + " again to keep it with the shard");
  write_file_atomically(staged / "config.json", text.bytes);
  write_resolved_config(config.resolved, staged);
  const nlohmann::ordered_json info = {{"shard", shard.index + 1},
                                       {"shards", shard.count},
                                       {"identity", identity},
                                       {"records", journal.records()}};
  write_file_atomically(staged / "shard.json", info.dump(2) + "\n");
  journal.flush(true);
  std::filesystem::rename(journal.path(), staged / "journal.bin");
}

// The run itself, once its result set is locked and its journal open: run.cpp and merge.
int execute(const std::string& config_file, ExperimentBase& config, const std::string& shown_out,
            ResultSetTransaction& results_set, TaskJournal& journal, const RunOptions& options,
            const std::string& resume_command) {
  const ScenarioModule& scenario = module_of(config);
  install_stop_handlers();
  Progress progress(config.name, !options.quiet);
  RunControl control;
  control.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
  control.journal = &journal;
  control.stop = &stop_requested;
  control.shard = options.shard;
  const auto start = std::chrono::steady_clock::now();
  RunInfo info = start_run_info(options.threads);
  std::unique_ptr<ScenarioResults> results;
  try {
    scenario.prepare(config);
    results = scenario.run(config, control);
  } catch (const Interrupted&) {
    progress.finish();
    results_set.keep_journal(true);
    const int signal = stop_signal;
    std::cerr << "calbench: stopped by " << (signal == SIGTERM ? "SIGTERM" : "SIGINT") << "; "
              << journal.records() << " finished tasks are kept in " << journal.path().string()
              << "\nresume with: " << resume_command << "\n";
    return 128 + (signal == 0 ? SIGINT : signal);
  } catch (const std::system_error&) {
    // A full disk or a failing device: what is journaled survives for --resume.
    progress.finish();
    if (journal.records() > 0) {
      results_set.keep_journal(true);
      std::cerr << "calbench: " << journal.records() << " finished tasks are kept in "
                << journal.path().string() << ": --resume continues, --restart discards them\n";
    }
    throw;
  }
  progress.finish();
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    if (options.shard) {
      write_shard(config_file, config, *options.shard, run_identity(config), journal, results_set);
    } else {
      write_results(scenario, *results, config.resolved, info, results_set.staging(),
                    options.quiet ? nullptr : &std::cout);
      journal.flush();
    }
    results_set.commit();
  } catch (const std::system_error&) {
    results_set.keep_journal(true);
    std::cerr << "calbench: the results could not be written; the " << journal.records()
              << " finished tasks are kept in " << journal.path().string()
              << ": --resume writes them once the cause is fixed, --restart discards them\n";
    throw;
  }
  if (!options.quiet) {
    if (options.shard)
      std::cout << "wrote shard " << shard_text(*options.shard) << " to " << shown_out << " ("
                << journal.records() << " tasks, " << info.seconds << " s)\n";
    else
      std::cout << "wrote " << shown_out << " (" << results->cells << " cells, " << info.seconds
                << " s, " << options.threads << " threads)\n";
  }
  if (options.shard || !options.report || reports_disabled_by_environment()) return 0;
  return write_report(config.output.directory, options.quiet);
}

int run_command(const std::string& file, const RunOptions& options) {
  std::unique_ptr<ExperimentBase> config = load_experiment(file);
  if (options.out) config->output.directory = *options.out;
  if (options.shard && !options.out) {
    std::filesystem::path dir = config->output.directory.lexically_normal();
    if (!dir.has_filename()) dir = dir.parent_path();  // "results/x/" names results/x
    dir += ".shard-" + std::to_string(options.shard->index + 1) + "-of-" +
           std::to_string(options.shard->count);
    config->output.directory = dir;
  }
  module_of(*config);
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, options.threads);
  const std::string shown_out = config->output.directory.string();

  // Before anything is created: what the run needs must fit (experiment/preflight.hpp).
  preflight(*config, options.threads, physical_memory_bytes());
  // Before any computation: the lock, a writable place for the results, the journal.
  ResultSetTransaction results_set(config->output.directory);
  const std::string identity = run_identity(*config);
  TaskJournal journal = open_journal(results_set, identity, shown_out, options);
  std::string resume = "calbench run " + file + " --out " + shown_out;
  if (options.shard) resume += " --shard " + shard_text(*options.shard);
  try {
    return execute(file, *config, shown_out, results_set, journal, options, resume + " --resume");
  } catch (const std::bad_alloc&) {
    const PreflightEstimate e = estimate_run(*config);
    const std::string estimate =
        gigabytes(e.bytes_per_thread * static_cast<double>(options.threads));
    throw NumericalError(file +
                         ": out of memory: the largest arrays are set by sample_size x "
                         "generator.classes, the estimators' bins x classes and truth.samples "
                         "(pre-flight estimate " +
                         estimate + " for the samples and bins of " +
                         std::to_string(options.threads) +
                         " workers); lower them or use fewer --threads");
  } catch (const NumericalError& e) {
    throw NumericalError(file + ": " + e.what());
  }
}

// calbench merge: the shards' journals joined and replayed by one run of their config, which
// computes nothing the shards recorded and writes the result set a single run writes.
int merge_command(const std::vector<std::string>& dirs, RunOptions options) {
  std::vector<std::filesystem::path> journals(dirs.size());
  std::string config_text;
  std::size_t count = 0;
  for (const auto& dir : dirs) {
    const std::filesystem::path info_file = std::filesystem::path(dir) / "shard.json";
    const FileBytes info_text = read_file(info_file);
    if (!info_text) throw InputError(dir + " is not a shard of a run (no shard.json)");
    nlohmann::json info;
    try {
      info = nlohmann::json::parse(info_text.bytes);
    } catch (const nlohmann::json::exception&) {
      throw InputError(info_file.string() + ": not valid JSON");
    }
    const auto shard = info.value("shard", std::size_t{0});
    const auto shards = info.value("shards", std::size_t{0});
    if (count == 0) count = shards;
    if (shards != count || shards != dirs.size() || shard < 1 || shard > shards)
      throw InputError(info_file.string() + ": shard " + std::to_string(shard) + " of " +
                       std::to_string(shards) + ", but " + std::to_string(dirs.size()) +
                       " shard directories were given: merge takes every shard of one run once");
    if (!journals[shard - 1].empty())
      throw InputError(dir + ": shard " + std::to_string(shard) + " is given twice");
    journals[shard - 1] = std::filesystem::path(dir) / "journal.bin";
    const std::filesystem::path shard_config = std::filesystem::path(dir) / "config.json";
    const FileBytes text = read_file(shard_config);
    if (!text)
      throw InputError(shard_config.string() + ": cannot read the config the shard ran (" +
                       text.error.message() + ")");
    if (config_text.empty()) config_text = text.bytes;
    if (text.bytes != config_text)
      throw InputError(dir + "/config.json differs from " + dirs.front() +
                       "/config.json: the shards are of different runs");
  }
  const std::string config_file = (std::filesystem::path(dirs.front()) / "config.json").string();
  std::unique_ptr<ExperimentBase> config = load_experiment(config_file);
  if (options.out) config->output.directory = *options.out;
  module_of(*config);
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, options.threads);
  const std::string shown_out = config->output.directory.string();
  ResultSetTransaction results_set(config->output.directory);
  if (results_set.previous_journal()) results_set.discard_previous();
  const std::string identity = run_identity(*config);
  merge_shards(journals, identity, results_set.journal_path());
  TaskJournal journal = TaskJournal::resume(results_set.journal_path(), identity);
  options.shard.reset();
  std::string command = "calbench merge";
  for (const auto& dir : dirs) command += " " + dir;
  return execute(config_file, *config, shown_out, results_set, journal, options,
                 command + " --out " + shown_out);
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
  std::string config_file, kind;
  std::size_t threads = static_cast<std::size_t>(tbb::info::default_concurrency());
  RunOptions run_options;
  run_options.threads = threads;
  bool resume = false, restart = false;
  bool no_report = false;

  auto* run = app.add_subcommand("run", "run an experiment config and write its results");
  run->add_option("CONFIG", config_file, "experiment config (JSON)")->required();
  run->add_option("--threads", run_options.threads, "worker threads (default: all cores)")
      ->check(thread_range);
  run->add_option("--out", run_options.out, "output directory (overrides output.directory)")
      ->check(CLI::Validator(
          [](const std::string& dir) {
            return dir.empty() ? std::string("must not be empty") : "";
          },
          "DIR"));
  run->add_flag("--quiet", run_options.quiet, "no progress and no summary table");
  run->add_flag(
      "--no-report", no_report,
      "do not render report/index.html (python3 -m calbench.report OUTDIR does it later)");
  auto* resume_flag =
      run->add_flag("--resume", resume,
                    "continue an interrupted run on the same output directory from its journal");
  run->add_flag("--restart", restart, "discard an interrupted run's journal and start afresh")
      ->excludes(resume_flag);
  std::string shard_spec;
  run->add_option("--shard", shard_spec,
                  "I/N: run shard I of N (1 <= I <= N), a contiguous part of every task stream, "
                  "into OUT.shard-I-of-N; `calbench merge` joins the shards")
      ->check(CLI::Validator(
          [](const std::string& text) {
            unsigned long long i = 0, n = 0;
            char extra = 0;
            return std::sscanf(text.c_str(), "%llu/%llu%c", &i, &n, &extra) == 2 && i >= 1 &&
                           i <= n && n <= 1'000'000
                       ? std::string()
                       : "must be I/N with 1 <= I <= N <= 1000000, found " + text;
          },
          "I/N"));

  std::vector<std::string> merge_dirs;
  RunOptions merge_options;
  merge_options.threads = threads;
  auto* merge = app.add_subcommand(
      "merge", "join the shards of one run (calbench run --shard I/N) into its result set");
  merge->add_option("SHARD_DIRS", merge_dirs, "every shard's directory, in any order")->required();
  merge->add_option("--out", merge_options.out, "output directory (overrides output.directory)")
      ->check(CLI::Validator(
          [](const std::string& dir) {
            return dir.empty() ? std::string("must not be empty") : "";
          },
          "DIR"));
  merge->add_option("--threads", merge_options.threads, "worker threads (default: all cores)")
      ->check(thread_range);
  merge->add_flag("--quiet", merge_options.quiet, "no progress and no summary table");

  SlurmOptions slurm_options;
  auto* slurm = app.add_subcommand(
      "slurm", "write a Slurm job array of N shards and a dependent merge job (docs/cluster.md)");
  slurm->add_option("CONFIG", slurm_options.config, "experiment config (JSON)")->required();
  slurm->add_option("--shards", slurm_options.shards, "N: the number of shards (array tasks)")
      ->required()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  slurm->add_option("--out", slurm_options.out, "the merged result set (default output.directory)")
      ->check(CLI::Validator(
          [](const std::string& dir) {
            return dir.empty() ? std::string("must not be empty") : "";
          },
          "DIR"));
  slurm->add_option("--script-dir", slurm_options.script_dir,
                    "where the scripts and logs/ go (default OUT.slurm)");
  slurm->add_option("--cpus", slurm_options.cpus, "--cpus-per-task of each job and its --threads")
      ->check(thread_range);
  slurm->add_option("--max-running", slurm_options.max_running, "at most M shards at once (%M)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  for (auto [flag, value] :
       {std::pair{"--partition", &slurm_options.partition},
        std::pair{"--time", &slurm_options.time}, std::pair{"--mem", &slurm_options.mem},
        std::pair{"--account", &slurm_options.account}, std::pair{"--qos", &slurm_options.qos}})
    slurm->add_option(flag, *value, std::string("sbatch ") + flag + " of every job");
  slurm
      ->add_option("--sbatch", slurm_options.sbatch,
                   "one more sbatch option for every job, e.g. --sbatch=--exclusive (repeatable)")
      ->allow_extra_args(false);
  slurm->add_flag("--submit", slurm_options.submit, "submit the jobs (run submit.sh)");

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
  eval->add_option("--plot", eval_options.plot,
                   "write reliability.csv and the reliability diagrams (index.html, SVG) to DIR")
      ->check(CLI::Validator(
          [](const std::string& dir) {
            return dir.empty() ? std::string("must not be empty") : "";
          },
          "DIR"));

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
  fit->add_option("--family", fit_options.family,
                  "auto (empirical when it fits) | empirical | parametric (lowest BIC, at K = 2 "
                  "lowest joint AIC) | dirichlet | dirichlet_mixture | beta_binary (default auto)")
      ->check(CLI::IsMember(
          {"auto", "empirical", "parametric", "dirichlet", "dirichlet_mixture", "beta_binary"}));
  fit->add_option("--components", fit_options.components,
                  "the most Dirichlet mixture components tried (default 4; 1: none)")
      ->check(CLI::Range(1, 16));
  fit->add_option("--seed", fit_options.seed, "seed of the fake sample compared (default 0)")
      ->check(uint64_text);
  fit->add_option("--out", fit_options.out,
                  "write an estimator_bias config on the fitted generator to this file");
  fit->add_flag("--json", fit_options.json, "print JSON instead of the tables");
  fit->add_option("--holdout", fit_options.holdout,
                  "fraction of rows held out for the verdict (default 0.2)");
  fit->add_option("--verdict-samples", fit_options.verdict_replicates,
                  "fake samples at the held-out size for the verdict (default 200)")
      ->check(CLI::Range(2, 100000));
  fit->add_option("--estimators", fit_options.estimators,
                  "estimators of the verdict and predictions: names (ece,smooth_ece) or a JSON "
                  "array like a config's, inline or a file (default: the written config's)");
  fit->add_option("--sizes", fit_options.sizes,
                  "sample sizes predicted, comma-separated (default 200,1000,n,4n)")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{2}, std::size_t{100'000'000}));
  fit->add_option("--replicates", fit_options.replicates,
                  "fake samples per predicted size (default 200)")
      ->check(CLI::Range(2, 100000));
  fit->add_option("--resamples", fit_options.resamples,
                  "bootstrap resamples per predicted size (default 200)")
      ->check(CLI::Range(2, 100000));
  fit->add_flag("--force", fit_options.force, "write --out even when the verdict is POOR");
  std::size_t fit_threads = threads;
  fit->add_option("--threads", fit_threads, "worker threads (default: all cores)")
      ->check(CLI::Range(1, 4096));

  PlanOptions plan_options;
  std::size_t plan_threads = threads;
  auto* plan = app.add_subcommand(
      "plan", "labelled samples needed for an interval width or a power (docs/plan.md)");
  plan->add_option("PLAN", plan_options.file, "plan file (JSON, docs/plan.md)")->required();
  plan->add_option("--out", plan_options.out, "write the result (JSON) to this file");
  plan->add_option("--threads", plan_threads, "worker threads (default: all cores)")
      ->check(thread_range);
  plan->add_flag("--quiet", plan_options.quiet, "no progress lines on stderr");
  CheckOptions check_options;
  auto* check = app.add_subcommand(
      "check", "compare an estimator_bias run with a baseline run: z-tests, Holm (docs/check.md)");
  check->add_option("RESULTS", check_options.results, "result directory (or its summary.json)")
      ->required();
  check->add_option("--baseline", check_options.baseline, "the baseline's summary.json")
      ->required();
  check
      ->add_option("--alpha", check_options.alpha,
                   "family-wise error rate over all tests (default 0.01)")
      ->check(CLI::Range(1e-12, 0.5));

  std::string cases_dir;
  auto* export_cases = app.add_subcommand(
      "export-cases", "write edge-case data sets with every estimator's value (docs/cases.md)");
  export_cases->add_option("DIR", cases_dir, "a new directory")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*run) {
      run_options.report = !no_report;
      run_options.mode = resume ? Continue::resume : restart ? Continue::restart : Continue::no;
      if (!shard_spec.empty()) {
        unsigned long long i = 0, n = 0;
        std::sscanf(shard_spec.c_str(), "%llu/%llu", &i, &n);
        run_options.shard =
            RunControl::Shard{static_cast<std::size_t>(i - 1), static_cast<std::size_t>(n)};
      }
      return run_command(config_file, run_options);
    }
    if (*merge) return merge_command(merge_dirs, merge_options);
    if (*slurm) return run_slurm(slurm_options, std::cout);
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
      const int status = run_eval(eval_options, std::cout);
      if (status != 0 || eval_options.plot.empty()) return status;
      return write_report(eval_options.plot, eval_options.json, {"--eval"});
    }
    if (*fit) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, fit_threads);
      return run_fit(fit_options, std::cout);
    }
    if (*plan) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, plan_threads);
      return run_plan(plan_options, std::cout);
    }
    if (*check) return run_check(check_options, std::cout);
    if (*export_cases) return run_export_cases(cases_dir, std::cout);
  } catch (const ConfigError& e) {
    for (const auto& p : e.problems()) std::cerr << "error: " << p << '\n';
    return 2;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const NumericalError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "calbench: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
