#include "runners/run.hpp"

#include <tbb/global_control.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <system_error>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/read_file.hpp"
#include "core/rng.hpp"
#include "core/stop_request.hpp"
#include "core/version.hpp"
#include "experiment/preflight.hpp"
#include "runners/command.hpp"
#include "runners/progress.hpp"
#include "runners/report.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/results.hpp"

namespace calbench {
namespace {

// SIGINT and SIGTERM ask the run to stop (core/stop_request.hpp): no task starts, the running
// ones finish and are journaled, and the run exits 128 + the signal with the command that
// resumes it. A second signal ends the process at once, after killing the external commands
// still running (the journal survives that too: a torn last record is dropped on resume).
std::atomic<bool>& stop_requested = stop_flag();

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
  const nlohmann::ordered_json info = {
      {"shard", shard.index + 1},
      {"shards", shard.count},
      {"identity", identity},
      {"records", journal.records()},
      // where the config was: `merge` reads its relative paths
      // (an empirical generator's rows) from there
      {"config_file", std::filesystem::absolute(config_file).string()}};
  write_file_atomically(staged / "shard.json", info.dump(2) + "\n");
  journal.flush(true);
  std::filesystem::rename(journal.path(), staged / "journal.bin");
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
  const std::vector<CellDemand> demands = cell_demands(*config);
  preflight(*config, demands, options.threads, available_memory_bytes());
  // A shard computes its part of every task stream, and the truths as the whole run does.
  PreflightEstimate work = estimate_run(*config, demands);
  if (options.shard) {
    work.component_draws /= static_cast<double>(options.shard->count);
    work.resampled_components /= static_cast<double>(options.shard->count);
  }
  const double seconds = estimated_seconds(work, options.threads);
  check_run_time(*config, demands, seconds, options.threads, options.long_run);
  if (seconds > time_warning_seconds && !options.quiet)
    std::cerr << "calbench: pre-flight: this run may take up to about " << duration_text(seconds)
              << " on " << options.threads << " threads (a rough upper estimate; docs/config.md)\n";
  // Before any computation: the lock, a writable place for the results, the journal.
  ResultSetTransaction results_set(config->output.directory, options.overwrite);
  const std::string identity = run_identity(*config);
  TaskJournal journal = open_journal(results_set, identity, shown_out, options);
  std::string resume = "calbench run " + file + " --out " + shown_out;
  if (options.overwrite == Overwrite::yes) resume += " --overwrite";
  if (options.long_run) resume += " --long";
  if (options.shard) resume += " --shard " + shard_text(*options.shard);
  try {
    return execute(file, *config, shown_out, results_set, journal, options, resume + " --resume");
  } catch (const std::bad_alloc&) {
    const PreflightEstimate e = estimate_run(*config, demands);
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

}  // namespace

std::string run_identity(const ExperimentBase& config) {
  return "config " + format_hash(hash64(config.resolved.dump())) + ", calbench " + version + " (" +
         git_revision + ")";
}

int execute(const std::string& config_file, ExperimentBase& config, const std::string& shown_out,
            ResultSetTransaction& results_set, TaskJournal& journal, const RunOptions& options,
            const std::string& resume_command) {
  const ScenarioModule& scenario = module_of(config);
  install_stop_signal_handlers();
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
    {
      Progress solving(config.name + ": solving the generators' targets", !options.quiet,
                       target_progress_style());
      scenario.prepare(config,
                       [&](std::size_t done, std::size_t total) { solving.update(done, total); });
      solving.finish();
    }
    results = scenario.run(config, control);
  } catch (const Interrupted&) {
    progress.finish();
    results_set.keep_journal(true);
    const int signal = stop_signal_number();
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
    std::ostringstream detail;  // the seconds as a stream writes a double
    if (options.shard) {
      detail << journal.records() << " tasks, " << info.seconds << " s";
      std::cout << wrote("shard " + shard_text(*options.shard) + " to " + shown_out, detail.str());
    } else {
      detail << results->cells << " cells, " << info.seconds << " s, " << options.threads
             << " threads";
      std::cout << wrote(shown_out, detail.str());
    }
  }
  // Loud, also with --quiet: a result the run could not produce (docs/recalibration.md).
  if (results)
    for (const std::string& warning : results->warnings) warn("calbench", warning);
  const int status = results && results->incomplete ? 1 : 0;
  if (options.shard || !options.report || reports_disabled_by_environment()) return status;
  return std::max(status, write_report(config.output.directory, options.quiet));
}

Command add_run_command(CLI::App& app) {
  struct Arguments {
    std::string config_file;
    RunOptions options;
    bool resume = false, restart = false, no_report = false, overwrite = false;
    std::string shard;
  };
  auto a = std::make_shared<Arguments>();
  a->options.threads = default_threads();
  auto* run = app.add_subcommand("run", "run an experiment config and write its results");
  run->add_option("CONFIG", a->config_file, "experiment config (JSON)")->required();
  run->add_option("--threads", a->options.threads, "worker threads (default: all cores)")
      ->check(thread_range());
  run->add_option("--out", a->options.out, "output directory (overrides output.directory)")
      ->check(directory_text());
  run->add_flag("--quiet", a->options.quiet, "no progress and no summary table");
  run->add_flag("--long", a->options.long_run,
                "start a run whose pre-flight estimate is above a day (refused without it, "
                "exit 2; docs/config.md, \"Pre-flight\")");
  run->add_flag(
      "--no-report", a->no_report,
      "do not render report/index.html (python3 -m calbench.report OUTDIR does it later)");
  auto* resume_flag =
      run->add_flag("--resume", a->resume,
                    "continue an interrupted run on the same output directory from its journal");
  run->add_flag("--restart", a->restart, "discard an interrupted run's journal and start afresh")
      ->excludes(resume_flag);
  run->add_flag("--overwrite", a->overwrite,
                "replace the finished result set already in the output directory (without it "
                "a rerun into a finished set is refused, exit 2)");
  run->add_option("--shard", a->shard,
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
  return {
      run, [a] {
        RunOptions options = a->options;
        options.report = !a->no_report;
        options.overwrite = a->overwrite ? Overwrite::yes : Overwrite::no;
        options.mode = a->resume ? Continue::resume : a->restart ? Continue::restart : Continue::no;
        if (!a->shard.empty()) {
          unsigned long long i = 0, n = 0;
          std::sscanf(a->shard.c_str(), "%llu/%llu", &i, &n);
          options.shard =
              RunControl::Shard{static_cast<std::size_t>(i - 1), static_cast<std::size_t>(n)};
        }
        return run_command(a->config_file, options);
      }};
}

}  // namespace calbench
