// calbench._core: the library's verbs for Python (docs/python.md, "The compiled verbs").
//
// A thin front end beside runners/main.cpp: components arrive as the JSON text of the same
// objects a config holds (python/calbench/core.py turns the dicts into text), and are read by
// the same registry rows with the same messages; a problem is a ConfigError whose lines name
// the argument and the JSON pointer, raised in Python as ValueError. Samples are drawn from
// the stream a run uses for (seed, cell, replicate), so they are the command line's draws.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <tbb/global_control.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "config/registry.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/stop_request.hpp"
#include "core/temporaries.hpp"
#include "core/version.hpp"
#include "data/model_outputs.hpp"
#include "estimators/convention.hpp"
#include "estimators/estimator.hpp"
#include "estimators/estimators_json.hpp"
#include "experiment/preflight.hpp"
#include "generators/generator.hpp"
#include "leaderboard/leaderboard.hpp"
#include "recalibrators/fitted_model_json.hpp"
#include "report/result_set.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/results.hpp"
#include "truth/target_solver.hpp"
#include "truth/truth_engine.hpp"

namespace py = pybind11;

namespace calbench {
namespace {

// A JSON document handed over by the Python layer, which wrote it with json.dumps.
Json parse_argument(const std::string& text, const std::string& source) {
  // parse_json_source: the command line's messages ("line 1, column 2: ..." without
  // nlohmann's "[json.exception.parse_error.101]" id) and its memory check (issue #38, D18).
  Problems problems;
  Json out = parse_json_source(text, source, problems);
  if (!problems.empty()) throw ConfigError(problems.render(source));
  return out;
}

// {"generator": ..., "truth": ...} read by the config's own section parsers; a generator given
// by a target is solved as a run would solve it.
struct GeneratorArgument {
  GeneratorSpec spec;
  TruthSettings truth;
  std::optional<TargetSolution> solution;
};

GeneratorArgument read_generator_uncached(const std::string& text, const std::string& source) {
  const Json document = parse_argument(text, source);
  Problems problems;
  ObjectReader top(document, "", problems);
  auto generator = parse_generator_section(top);
  const auto truth = parse_truth_section(top);
  if (!problems.empty() || !generator || !truth) throw ConfigError(problems.render(source));
  GeneratorArgument out{std::move(generator->spec), *truth, std::nullopt};
  if (generator->target) {
    TargetSolver solver;
    try {
      out.solution = solver.solve(*generator->target, *truth);
    } catch (const TargetError& error) {
      throw ConfigError(
          {source + ": " + pointer_join("/generator/target", error.field()) + ": " + error.what()});
    }
    out.spec = out.solution->spec;
  }
  return out;
}

// Solving a target takes seconds; a loop of sample() calls on one target generator solves it
// once. The key is the argument's JSON text (generator and truth settings); a small cache.
GeneratorArgument read_generator(const std::string& text, const std::string& source) {
  static std::mutex mutex;
  static std::map<std::string, GeneratorArgument> solved;
  {
    const std::lock_guard lock(mutex);
    if (const auto it = solved.find(text); it != solved.end()) return it->second;
  }
  GeneratorArgument argument = read_generator_uncached(text, source);
  if (argument.solution) {
    const std::lock_guard lock(mutex);
    if (solved.size() >= 64) solved.clear();
    solved.emplace(text, argument);
  }
  return argument;
}

// How interruptible work ended: with the exception of Python's signal handler
// (KeyboardInterrupt), with the work's own exception, or with neither.
struct Interruption {
  std::optional<py::error_already_set> signalled;
  std::exception_ptr failure;
  // Raises what ended the work, the signal first; call with the GIL held.
  void raise() const {
    if (signalled) throw *signalled;
    if (failure) std::rethrow_exception(failure);
  }
};

// Runs work() on a thread of its own while this one, Python's, checks for signals every 0.1 s:
// Python runs its handlers only on its main thread between bytecodes, so without this a
// KeyboardInterrupt would wait for the whole work. The caller has released the GIL. A
// handler's exception is kept in `outcome`, on_signal() is called (a scenario run sets its stop
// flag) and the process-wide stop request is set (core/stop_request.hpp), which the truth
// engine's Monte Carlo polls every 1,024 draws, so Ctrl-C ends a truth() of minutes within a
// second. The work is always waited for.
//
// on_poll(), when given, is called with the GIL held at each of these checks (a run reports
// its progress through it); a KeyboardInterrupt raised while it runs Python code is a signal
// as above, and any other exception of it is dropped: progress never ends the work.
template <typename Work, typename OnSignal, typename OnPoll>
void work_interruptibly(Interruption& outcome, Work&& work, OnSignal&& on_signal,
                        OnPoll&& on_poll) {
  clear_stop();
  std::promise<void> finished;
  std::future<void> done = finished.get_future();
  std::thread worker([&] {
    try {
      work();
    } catch (...) {
      outcome.failure = std::current_exception();
    }
    finished.set_value();
  });
  while (done.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (outcome.signalled) continue;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      outcome.signalled.emplace();  // takes the handler's exception out of Python's indicator
      on_signal();
      request_stop(SIGINT);
      continue;
    }
    try {
      on_poll();
    } catch (py::error_already_set& error) {
      if (error.matches(PyExc_KeyboardInterrupt)) {
        outcome.signalled.emplace(std::move(error));
        on_signal();
        request_stop(SIGINT);
      }
    }
  }
  worker.join();
  clear_stop();
}

template <typename Work, typename OnSignal>
void work_interruptibly(Interruption& outcome, Work&& work, OnSignal&& on_signal) {
  work_interruptibly(outcome, std::forward<Work>(work), std::forward<OnSignal>(on_signal), [] {});
}

// work() with the GIL released, interruptible as above; raises what ended it.
template <typename Work>
void run_interruptibly(Work&& work) {
  Interruption outcome;
  {
    py::gil_scoped_release release;
    work_interruptibly(outcome, work, [] {});
  }
  outcome.raise();
}

// (p, y, c): p (n, K) float64, y (n,) int64, c (n, K) float64 or None.
py::tuple sample(const std::string& generator_text, std::size_t n, std::uint64_t seed,
                 std::uint64_t cell, std::uint64_t replicate, bool keep_truth) {
  const GeneratorArgument argument = read_generator(generator_text, "calbench.sample");
  if (n == 0) throw ConfigError({"calbench.sample: n = 0: must be >= 1"});
  // p, y and c of n rows, and the sampler's copies: refused before drawing when they cannot fit
  // (sample(G, 3e8) drew for 29 s before a MemoryError; 2**62 gave a raw vector error).
  {
    const double K = static_cast<double>(Generator(argument.spec).classes());
    const double bytes = static_cast<double>(n) * (K * 4.0 * sizeof(double) + 16.0);
    if (bytes > available_memory_bytes())
      throw ConfigError({"calbench.sample: n = " + std::to_string(n) + ": the sample needs about " +
                         gigabytes(bytes) + " of memory (n x classes " +
                         std::to_string(static_cast<std::size_t>(K)) +
                         " x 4 doubles) but the machine has " +
                         gigabytes(available_memory_bytes()) + " available"});
  }
  Sample out;
  // Interruptible: the generators poll the stop request every few thousand rows.
  run_interruptibly([&] {
    const Generator generator(argument.spec);
    GeneratorScratch scratch;
    // The stream of run task (cell, replicate): scenarios/estimator_bias/run.cpp.
    Engine engine = make_engine({seed, cell, replicate, Purpose::sample});
    generator.sample(engine, n, out, scratch, keep_truth);
  });
  const std::size_t K = out.classes;
  py::array_t<double> p({n, K});
  std::copy(out.p.begin(), out.p.end(), p.mutable_data());
  py::array_t<std::int64_t> y(static_cast<py::ssize_t>(n));
  std::copy(out.label.begin(), out.label.end(), y.mutable_data());
  py::object c = py::none();
  if (keep_truth) {
    py::array_t<double> truth({n, K});
    std::copy(out.truth.begin(), out.truth.end(), truth.mutable_data());
    c = truth;
  }
  return py::make_tuple(p, y, c);
}

// [(quantity, value, method, error)] in the contract's order.
std::vector<std::tuple<std::string, double, std::string, double>> truth(
    const std::string& generator_text, std::uint64_t stream) {
  GeneratorArgument argument = read_generator(generator_text, "calbench.truth");
  argument.truth.stream = stream;  // an independent Monte Carlo replica (TruthSettings::stream)
  GroundTruth values;
  run_interruptibly([&] {
    if (argument.solution && argument.solution->truth) {
      values = *argument.solution->truth;
    } else {
      const Generator generator(argument.spec);
      values = compute_truth(generator, argument.truth);
    }
  });
  std::vector<std::tuple<std::string, double, std::string, double>> out;
  for (const Quantity q : all_quantities) {
    const TruthValue& v = values[q];
    out.emplace_back(std::string(to_string(q)), v.value, std::string(to_string(v.method)), v.error);
  }
  return out;
}

// (n, K) probabilities and labels from Python checked like a data file's rows (`p_name` and
// `y_name` name them in messages); labels are int64 (calbench/core.py converts whole floats).
Sample checked_arrays(const py::array_t<double, py::array::c_style | py::array::forcecast>& p,
                      const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& y,
                      bool renormalize, const std::string& p_name, const std::string& y_name) {
  if (p.ndim() != 2)
    throw InputError(p_name + ": expected a 2-D array (n, K), found " + std::to_string(p.ndim()) +
                     " dimension(s)");
  const auto n = static_cast<std::size_t>(p.shape(0)), K = static_cast<std::size_t>(p.shape(1));
  if (n == 0) throw InputError(p_name + ": the array has no rows");
  if (K < 2) throw InputError(p_name + ": K = " + std::to_string(K) + ": must be >= 2");
  if (y.ndim() != 1 || static_cast<std::size_t>(y.shape(0)) != n)
    throw InputError(y_name + ": expected a 1-D array of " + std::to_string(n) +
                     " labels (one per row of " + p_name + ")");
  std::vector<double> values(p.data(), p.data() + n * K);
  return checked_outputs(p_name, y_name, K, std::move(values), {y.data(), n},
                         {.kind = ValueKind::probabilities, .renormalize = renormalize});
}

// One estimator's value on (p, y).
double estimate(const std::string& estimator_text,
                const py::array_t<double, py::array::c_style | py::array::forcecast>& p,
                const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& y,
                bool renormalize) {
  const std::string source = "calbench.estimate";
  const Json entry = parse_argument(estimator_text, source);
  Problems problems;
  Json resolved;
  const auto config = parse_estimator(entry, "/estimator", problems, resolved);
  if (!problems.empty() || !config) throw ConfigError(problems.render(source));
  const Sample sample = checked_arrays(p, y, renormalize, "p", "y");
  // A label probability of exactly 0 (rounded input) makes an NLL +inf: not estimable, so NaN
  // with a RuntimeWarning saying why rather than the floored value (docs/python.md).
  if (config->logs_label_probability) {
    const ZeroCount zeros = count_zeros(sample);
    if (zeros.true_label_zeros > 0) {
      const std::string warning = "calbench.estimate: " + config->label +
                                  " is not estimable: " + describe_label_zeros(zeros, sample.size) +
                                  " and -log 0 is infinite; " + full_precision_advice;
      if (PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0)
        throw py::error_already_set();
      return std::numeric_limits<double>::quiet_NaN();
    }
  }
  // Interruptible: kde_canonical's O(n^2 K) pass polls the stop request between rows, so
  // Ctrl-C ends an estimate of minutes within a second (issue #28).
  double value = 0.0;
  run_interruptibly([&] {
    EstimatorWorkspace workspace;
    value = config->estimator->estimate(sample, workspace);
  });
  return value;
}

// A fitted recalibration model (recalibrators/fitted_model_json.hpp) behind calbench.Recalibrator:
// fitted by the registry method's own fit, saved and loaded as the file `calbench recalibrate fit`
// writes.
class PyFittedModel {
 public:
  static PyFittedModel fit(
      const std::string& method_text,
      const py::array_t<double, py::array::c_style | py::array::forcecast>& p,
      const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& y,
      bool renormalize) {
    const std::string source = "calbench.Recalibrator";
    const Json method = parse_argument(method_text, source);
    const Sample sample = checked_arrays(p, y, renormalize, "p", "y");
    // Interruptible: kernel calibration's O(n^2) bandwidth search polls the stop request.
    std::shared_ptr<FittedModel> fitted;
    run_interruptibly(
        [&] { fitted = std::make_shared<FittedModel>(fit_model(method, source, sample)); });
    return PyFittedModel(std::move(fitted));
  }
  static PyFittedModel from_json(const std::string& text, const std::string& source) {
    return PyFittedModel(
        std::make_shared<FittedModel>(read_fitted_model(parse_argument(text, source), source)));
  }
  std::string to_json() const { return fitted_model_json(*fitted_).dump(2) + "\n"; }
  py::array_t<double> apply(const py::array_t<double, py::array::c_style | py::array::forcecast>& p,
                            bool renormalize) const {
    // Labels are not needed to apply a model; zeros pass the checks of the rows.
    const std::vector<std::int64_t> none(p.ndim() == 2 ? static_cast<std::size_t>(p.shape(0)) : 0);
    const py::array_t<std::int64_t> y(static_cast<py::ssize_t>(none.size()), none.data());
    const Sample sample = checked_arrays(p, y, renormalize, "p", "y");
    std::vector<double> q;
    run_interruptibly([&] { q = apply_fitted_model(*fitted_, sample.p, sample.classes, "p"); });
    py::array_t<double> out({sample.size, sample.classes});
    std::copy(q.begin(), q.end(), out.mutable_data());
    return out;
  }
  std::string label() const { return fitted_->label; }
  std::size_t classes() const { return fitted_->classes; }
  std::vector<std::pair<std::string, double>> parameters() const {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& v : fitted_->model->parameters()) out.emplace_back(v.name, v.value);
    return out;
  }

 private:
  explicit PyFittedModel(std::shared_ptr<const FittedModel> fitted) : fitted_(std::move(fitted)) {}
  std::shared_ptr<const FittedModel> fitted_;
};

// A whole run into `directory` through the command line's result-set transaction
// (report/result_set.hpp): the directory is locked, the files are staged beside it and swapped
// in by one rename when every one is written, so a failure or an exception leaves `directory`
// as it was; a finished result set there is replaced only with `overwrite` (the command line's
// --overwrite). No journal: a Python run cannot be resumed, and one that finds an interrupted
// command-line run's journal refuses rather than touch it. `source` names the config in
// messages (a file's path, or "calbench.run" for a dict).
//
// The run is interruptible (work_interruptibly): Ctrl-C stops it as the command line's SIGINT
// does (no task starts, the running ones finish), commits nothing and raises KeyboardInterrupt.
// Returns the results' warnings (a method whose fits failed), which calbench.run warns with.
// `progress`, when not None, is called as progress(done, total) with the tasks of the stage
// running (python/calbench/_progress.py prints the lines), from Python's thread every 0.1 s.
std::vector<std::string> run(const std::string& config_text, const std::string& source,
                             const std::string& directory, std::size_t threads, bool overwrite,
                             bool long_run, const py::object& progress) {
  const nlohmann::ordered_json document = parse_argument(config_text, source);
  std::unique_ptr<ExperimentBase> config = parse_experiment(document, source);
  config->output.directory = directory;
  const ScenarioModule& scenario = module_of(*config);
  // The command line's pre-flight (experiment/preflight.hpp): what cannot fit is refused before
  // the directory is touched, with the same message (a ValueError).
  const std::vector<CellDemand> demands = cell_demands(*config);
  preflight(*config, demands, threads, available_memory_bytes());
  check_run_time(*config, demands, estimated_seconds(estimate_run(*config, demands), threads),
                 threads, long_run);
  std::vector<std::string> warnings;
  Interruption outcome;
  {
    py::gil_scoped_release release;
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    ResultSetTransaction results_set(config->output.directory,
                                     overwrite ? Overwrite::yes : Overwrite::no);
    if (const auto previous = results_set.previous_journal())
      throw OutputError(directory + " has the journal of an interrupted run (" +
                        previous->string() + "): `calbench run CONFIG --out " + directory +
                        " --resume` continues it, --restart discards it");
    std::atomic<bool> stop{false};
    RunControl control;
    control.stop = &stop;
    // The workers count their tasks; Python's thread reads the counts at each poll.
    std::atomic<std::size_t> tasks_done{0}, tasks_total{0};
    if (!progress.is_none())
      control.progress = [&](std::size_t done, std::size_t total) {
        tasks_total.store(total, std::memory_order_relaxed);
        tasks_done.store(done, std::memory_order_relaxed);
      };
    const auto start = std::chrono::steady_clock::now();
    RunInfo info = start_run_info(threads);
    std::unique_ptr<ScenarioResults> results;
    work_interruptibly(
        outcome,
        [&] {
          scenario.prepare(*config, {});
          results = scenario.run(*config, control);
        },
        [&] { stop = true; },
        [&] {
          if (const std::size_t total = tasks_total.load(std::memory_order_relaxed);
              total > 0 && !progress.is_none())
            progress(tasks_done.load(std::memory_order_relaxed), total);
        });
    if (!outcome.signalled && !outcome.failure) {
      info.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      write_results(scenario, *results, config->resolved, info, results_set.staging());
      results_set.commit();
      warnings = results->warnings;
    }
  }
  outcome.raise();
  return warnings;
}

// Every estimator row: (name, its documented example object as JSON text, its parameter keys).
std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> estimator_rows() {
  std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> out;
  for (const auto& row : estimator_registry()) {
    std::vector<std::string> keys;
    for (const auto& p : row.params) keys.push_back(p.key);
    out.emplace_back(row.name, example_object("name", row.name, row.example), std::move(keys));
  }
  return out;
}

// The names of the binning conventions (the `convention` parameter's values).
std::vector<std::string> convention_names() {
  std::vector<std::string> out;
  for (const auto& c : conventions()) out.emplace_back(c.name);
  return out;
}

// The leaderboards of calbench.leaderboard (python/calbench/leaderboard.py), computed by the
// library the recalibration scenario uses (leaderboard/leaderboard.hpp). keys: (name, higher is
// better, values (cases, methods)); compare: (key, reference) index pairs. Returns
// {"cases", "blocks", "standings": [(key, method, mean, win_rate, lower, upper, elo, lower,
// upper, rank)], "agreements": [(key, reference, tau_b, lower, upper, case_tau_b, lower, upper,
// tau_cases, winner_agreement, lower, upper)], "contrasts": [(key, other, reference, then value,
// lower, upper of the tau_b, case_tau_b and winner_agreement differences)]}. failed: empty, or a
// (cases, methods) mask of the methods that failed (lost) each case (LeaderboardTable::failed).
// The bootstrap draws from leaderboard_stream(seed, 0): the stream of cell 0's board in a run
// with that seed.
py::dict leaderboard(const std::vector<std::string>& methods,
                     const std::vector<std::size_t>& blocks,
                     const std::vector<std::tuple<std::string, bool, py::array_t<double>>>& keys,
                     const std::vector<std::pair<std::size_t, std::size_t>>& compare,
                     std::size_t resamples, std::size_t elo_resamples, double level,
                     std::uint64_t seed, const py::array_t<bool>& failed) {
  LeaderboardTable table;
  table.methods = methods;
  table.clusters = blocks;
  if (failed.size() > 0) {
    const auto f = failed.unchecked<2>();
    if (static_cast<std::size_t>(f.shape(0)) != blocks.size() ||
        static_cast<std::size_t>(f.shape(1)) != methods.size())
      throw DomainError("leaderboard: failed: expected a mask of shape (cases, methods)");
    for (py::ssize_t c = 0; c < f.shape(0); ++c)
      for (py::ssize_t m = 0; m < f.shape(1); ++m) table.failed.push_back(f(c, m));
  }
  for (const auto& [name, higher, values] : keys) {
    const auto v = values.unchecked<2>();
    if (static_cast<std::size_t>(v.shape(0)) != blocks.size() ||
        static_cast<std::size_t>(v.shape(1)) != methods.size())
      throw DomainError("leaderboard: key " + name + ": expected values of shape (cases, methods)");
    RankingKey key{.name = name, .better = higher ? Better::higher : Better::lower, .values = {}};
    for (py::ssize_t c = 0; c < v.shape(0); ++c)
      for (py::ssize_t m = 0; m < v.shape(1); ++m) key.values.push_back(v(c, m));
    table.keys.push_back(std::move(key));
  }
  const LeaderboardSettings settings{
      .resamples = resamples, .elo_resamples = elo_resamples, .level = level};
  Leaderboards out;
  // Interruptible: the bootstrap polls the stop request per resample.
  run_interruptibly(
      [&] { out = compute_leaderboards(table, compare, settings, leaderboard_stream(seed, 0)); });
  py::list standings, agreements;
  for (const Board& board : out.boards)
    for (std::size_t m = 0; m < board.standings.size(); ++m) {
      const Standing& s = board.standings[m];
      standings.append(py::make_tuple(board.key, m, s.mean, s.win_rate.value, s.win_rate.lower,
                                      s.win_rate.upper, s.elo.value, s.elo.lower, s.elo.upper,
                                      s.rank, s.failed));
    }
  for (const RankAgreement& a : out.agreements)
    agreements.append(py::make_tuple(a.key, a.reference, a.tau_b.value, a.tau_b.lower,
                                     a.tau_b.upper, a.case_tau_b.value, a.case_tau_b.lower,
                                     a.case_tau_b.upper, a.tau_cases, a.winner_agreement.value,
                                     a.winner_agreement.lower, a.winner_agreement.upper));
  py::list contrasts;
  for (const RankContrast& x : out.contrasts)
    contrasts.append(py::make_tuple(x.key, x.other, x.reference, x.tau_b.value, x.tau_b.lower,
                                    x.tau_b.upper, x.case_tau_b.value, x.case_tau_b.lower,
                                    x.case_tau_b.upper, x.winner_agreement.value,
                                    x.winner_agreement.lower, x.winner_agreement.upper));
  py::dict result;
  result["contrasts"] = contrasts;
  result["cases"] = out.cases;
  result["blocks"] = out.clusters;
  result["standings"] = standings;
  result["agreements"] = agreements;
  return result;
}

}  // namespace
}  // namespace calbench

PYBIND11_MODULE(_core, m) {
  using namespace calbench;
  m.doc() = "calbench's C++ library: sample, truth, estimate, run (docs/python.md)";
  m.attr("version") = std::string(version);
  m.attr("git_revision") = std::string(git_revision);
  // Every bad argument is a ValueError: config problems one per line, bad data naming the row.
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const OutputError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const ConfigError& e) {
      std::string text;
      for (const auto& line : e.problems()) text += (text.empty() ? "" : "\n") + line;
      PyErr_SetString(PyExc_ValueError, text.c_str());
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const DomainError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("sample", &sample, py::arg("generator"), py::arg("n"), py::arg("seed"), py::arg("cell"),
        py::arg("replicate"), py::arg("keep_truth"));
  m.def("truth", &truth, py::arg("generator"), py::arg("stream") = 0);
  m.def("estimate", &estimate, py::arg("estimator"), py::arg("p"), py::arg("y"),
        py::arg("renormalize") = false);
  m.def("run", &run, py::arg("config"), py::arg("source"), py::arg("directory"), py::arg("threads"),
        py::arg("overwrite"), py::arg("long_run") = false, py::arg("progress") = py::none());
  // calbench.run's temporary result directory is calbench-run-PID-XXXXXXXX: what a killed
  // Python left is removed like the command line's temporaries (core/temporaries.hpp).
  m.def("remove_dead_temporaries", [](const std::string& directory) {
    return remove_dead_temporaries(directory, TemporaryKind::temporary_directory);
  });
  py::class_<PyFittedModel>(m, "FittedModel")
      .def_static("fit", &PyFittedModel::fit, py::arg("method"), py::arg("p"), py::arg("y"),
                  py::arg("renormalize"))
      .def_static("from_json", &PyFittedModel::from_json, py::arg("text"), py::arg("source"))
      .def("to_json", &PyFittedModel::to_json)
      .def("apply", &PyFittedModel::apply, py::arg("p"), py::arg("renormalize"))
      .def_property_readonly("label", &PyFittedModel::label)
      .def_property_readonly("classes", &PyFittedModel::classes)
      .def("parameters", &PyFittedModel::parameters);
  m.def("estimator_rows", &estimator_rows);
  m.def("conventions", &convention_names);
  m.def("leaderboard", &leaderboard, py::arg("methods"), py::arg("blocks"), py::arg("keys"),
        py::arg("compare"), py::arg("resamples"), py::arg("elo_resamples"), py::arg("level"),
        py::arg("seed"), py::arg("failed") = py::array_t<bool>());
}
