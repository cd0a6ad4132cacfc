#include "runners/plan.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <variant>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "plan/plan_json.hpp"
#include "report/reporter.hpp"
#include "report/text_report.hpp"
#include "runners/command.hpp"
#include "runners/progress.hpp"

namespace calbench {
namespace {

std::string question_text(const PlanSpec& spec, const std::string& estimator) {
  if (const auto* w = std::get_if<WidthQuestion>(&spec.question))
    return "the n at which " + format_fixed(100.0 * w->level, 0) + " % intervals of " + estimator +
           " (" +
           (!w->interval ? std::string("normal: 2 z sd")
            : *w->interval == IntervalMethod::analytic
                ? interval_name(*w)
                : interval_name(*w) + ", " + std::to_string(w->resamples) + " resamples") +
           ") are at most " + format_double(w->width) + " wide on average";
  const auto& p = std::get<PowerQuestion>(spec.question);
  return "the n at which the consistency test on " + estimator + " (alpha " +
         format_double(p.alpha) + ", " + std::to_string(p.resamples) +
         " resamples) rejects with probability " + format_double(p.power) + " when " +
         std::string(to_string(p.quantity)) + " = " + format_double(p.detect);
}

// "95 s", "4.2 min", "1.3 h".
std::string duration_text(double seconds) {
  if (seconds < 120.0) return format_fixed(seconds, seconds < 10.0 ? 1 : 0) + " s";
  if (seconds < 7200.0) return format_fixed(seconds / 60.0, 1) + " min";
  return format_fixed(seconds / 3600.0, 1) + " h";
}

// The work up front, before the search starts: what one replicate does, how many there are,
// and the time to reach each size of the search's grid, from a short timed run (two
// replicates at n = 1000, or the nearest size of the search) scaled linearly in n: every
// per-replicate step (sample, estimate, resamples) is O(n) or O(n log n). The search stops at
// the first grid size that meets the question, then bisects `refine` times below it.
void announce_work(const PlanSpec& spec) {
  const PlanSearch& search = spec.search;
  std::string per_replicate = "a sample and its estimate";
  if (const auto* w = std::get_if<WidthQuestion>(&spec.question)) {
    if (w->interval)
      per_replicate += ", its " + interval_name(*w) + " interval (" + std::to_string(w->resamples) +
                       " resamples)";
  } else {
    per_replicate += ", the consistency test (" +
                     std::to_string(std::get<PowerQuestion>(spec.question).resamples) +
                     " label redraws)";
  }
  std::vector<std::size_t> sizes;
  for (double n = static_cast<double>(search.n_min);; n *= search.ratio) {
    sizes.push_back(std::min(search.n_max, static_cast<std::size_t>(std::llround(n))));
    if (sizes.back() >= search.n_max) break;
  }
  const std::size_t n_calibrate = std::clamp<std::size_t>(1000, search.n_min, search.n_max);
  constexpr std::size_t calibration_replicates = 2;
  const double per_n = replicate_seconds(spec, n_calibrate, calibration_replicates) /
                       static_cast<double>(calibration_replicates * n_calibrate);
  const auto threads = std::min<std::size_t>(
      tbb::this_task_arena::max_concurrency(),
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  const double scale = per_n * static_cast<double>(spec.replicates) /
                       static_cast<double>(std::max<std::size_t>(1, threads));
  const auto* width = std::get_if<WidthQuestion>(&spec.question);
  if (width && width->interval && search.guide) {
    // The interval's points are placed by the normal width's grid search (estimates only,
    // seconds), a few of them near the answer (sample_size_plan.hpp).
    std::cerr << "calbench plan: " << spec.replicates << " replicates per n, each " << per_replicate
              << "; first the normal width 2 z sd (estimates only) on n from " << search.n_min
              << " to " << search.n_max << " (ratio " << format_double(search.ratio) << ", then "
              << search.refine
              << " bisections), then the interval at the few n near its answer that bracket "
                 "the width, and at the answer's n\n";
    std::cerr << "calbench plan: estimated time per interval point (" << threads
              << " threads, from " << calibration_replicates
              << " timed replicates at n = " << n_calibrate
              << "): " << duration_text(scale * 1000.0) << " per 1000 of n\n";
    return;
  }
  std::cerr << "calbench plan: " << spec.replicates << " replicates per n, each " << per_replicate
            << "; n from " << search.n_min << " to " << search.n_max << " (ratio "
            << format_double(search.ratio) << ", then " << search.refine
            << " bisections and the answer's n)\n";
  std::cerr << "calbench plan: estimated time to reach n (" << threads << " threads, from "
            << calibration_replicates << " timed replicates at n = " << n_calibrate << "):";
  double total = 0.0;
  for (std::size_t n : sizes) {
    total += scale * static_cast<double>(n);
    std::cerr << ' ' << n << ": " << duration_text(total) << (n == sizes.back() ? "\n" : ",");
  }
}

// The question, the generator, the alternative or the coverage's reference, and the replicates:
// the lines above the table.
std::string question_caption(const PlanConfig& config, const PlanResult& result) {
  const PlanSpec& spec = config.spec;
  std::string out = config.name + ": " + question_text(spec, config.estimator_label) + "\n";
  out += "generator: " + Generator(spec.generator).canonical_text() + "\n";
  if (const auto& alt = result.alternative)
    out += "alternative (miscalibration scaled by " + format_fixed(alt->scale, 4) +
           "): " + Generator(alt->spec).canonical_text() + "\n  " +
           std::string(to_string(std::get<PowerQuestion>(spec.question).quantity)) + " = " +
           format_fixed(alt->achieved.value, 5) + " (" +
           std::string(to_string(alt->achieved.method)) + ", error " +
           format_double(alt->achieved.error) + ")\n";
  if (const auto& r = result.reference)
    out += "coverage against " +
           (r->target ? std::string(to_string(*r->target))
                      : std::string("the estimator's own population value")) +
           " = " + format_fixed(r->value, 5) + " (" + r->method + ", error " +
           format_double(r->error) + ")\n";
  return out + std::to_string(spec.replicates) +
         " replicates per n; Monte Carlo standard errors\n\n";
}

// The answer (or what it would be, when refused) and a width question's coverage at it: the
// lines below the table.
std::string answer_note(const PlanSpec& spec, const PlanAnswer& a) {
  const std::string figure =
      std::holds_alternative<PowerQuestion>(spec.question) ? "power" : "width";
  const std::string there =
      figure + " " + format_fixed(a.figure, 4) + " ± " + format_fixed(a.figure_se, 4);
  std::string out = a.refused.empty() ? "\nanswer: " : "\nwould be: ";
  switch (a.kind) {
    case AnswerKind::found:
      out += "n = " + std::to_string(a.n) + " (95 % Monte Carlo interval " +
             std::to_string(std::llround(a.n_low)) + " to " +
             std::to_string(std::llround(a.n_high)) + "); " + figure + " there " +
             format_fixed(a.figure, 4) + " ± " + format_fixed(a.figure_se, 4) + "\n";
      break;
    case AnswerKind::below_range:
      out += "n <= " + std::to_string(a.n) + " (search.n_min already meets the question: " + there +
             ")\n";
      break;
    case AnswerKind::above_range:
      out += "n > " + std::to_string(a.n) + " (search.n_max does not meet the question: " + there +
             ")\n";
      break;
  }
  if (!a.refused.empty()) out += "answer refused: " + a.refused + "\n";
  if (const auto& at = a.at_n)
    out += "coverage at n = " + std::to_string(at->n) + ": " + format_fixed(*at->coverage, 3) +
           " ± " + format_fixed(at->coverage_se, 3) + " (nominal " +
           format_double(std::get<WidthQuestion>(spec.question).level) + "; mean width there " +
           format_fixed(at->figure, 4) + " ± " + format_fixed(at->figure_se, 4) + ")\n";
  return out;
}

// A progress line within each n once it has run for 2 s.
class PlanProgress {
 public:
  void update(std::size_t n, std::size_t done, std::size_t total) {
    std::lock_guard lock(mutex_);
    if (!bar_ || n_ != n) {
      if (bar_) bar_->finish();
      n_ = n;
      bar_ =
          std::make_unique<Progress>("calbench plan: n = " + std::to_string(n), true,
                                     ProgressStyle{.unit = "replicates",
                                                   .first_after = std::chrono::milliseconds(2000),
                                                   .plain_every = std::chrono::milliseconds(5000)});
    }
    bar_->update(done, total);
  }
  void finish() {
    std::lock_guard lock(mutex_);
    if (bar_) bar_->finish();
    bar_.reset();
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<Progress> bar_;
  std::size_t n_ = 0;
};

}  // namespace

int run_plan(const PlanOptions& o, std::ostream& out) {
  const PlanConfig config = load_plan(o.file);
  // An unwritable --out fails now (exit 2), not after the simulations (issue #28).
  if (!o.out.empty()) check_writable(o.out, "--out " + o.out);
  const PlanSpec& spec = config.spec;
  const bool power = std::holds_alternative<PowerQuestion>(spec.question);
  const char* figure = power ? "power" : "width";
  PlanResult result;
  PlanProgress progress;
  try {
    if (!o.quiet) announce_work(spec);
    result = plan_sample_size(
        spec,
        [&](const PlanPoint& p) {
          if (o.quiet) return;
          progress.finish();
          std::cerr << "calbench plan: n = " << p.n << ": " << figure << " "
                    << format_fixed(p.figure, 4) << " ± " << format_fixed(p.figure_se, 4) << '\n';
        },
        [&](std::size_t n, std::size_t done, std::size_t total) {
          if (!o.quiet) progress.update(n, done, total);
        });
  } catch (const DomainError& e) {
    // What the parser cannot see: a detect value out of the generator's reach.
    throw InputError(o.file + ": /question: " + e.what());
  } catch (const std::bad_alloc&) {
    throw InputError(o.file +
                     ": out of memory: the arrays are set by replicates x search.n_max x "
                     "generator.classes and the truth's samples; lower them");
  }

  // The simulated n's as one table of the terminal reporter: the question above them, the
  // answer below.
  TextReport report;
  report.table(question_caption(config, result), "points", plan_point_columns(power), result.points,
               answer_note(spec, result.answer));
  if (!o.out.empty()) {
    write_result_json(o.out, plan_result_json(config, result));
    report.prose(wrote(o.out));
  }
  TerminalReporter terminal(out);
  report.emit(terminal);
  return 0;
}

Command add_plan_command(CLI::App& app) {
  struct Arguments {
    PlanOptions options;
    std::size_t threads = default_threads();
  };
  auto a = std::make_shared<Arguments>();
  auto* plan = app.add_subcommand(
      "plan", "labelled samples needed for an interval width or a power (docs/plan.md)");
  plan->add_option("PLAN", a->options.file, "plan file (JSON, docs/plan.md)")->required();
  plan->add_option("--out", a->options.out, "write the result (JSON) to this file");
  plan->add_option("--threads", a->threads, "worker threads (default: all cores)")
      ->check(thread_range());
  plan->add_flag("--quiet", a->options.quiet, "no progress lines on stderr");
  return {plan, [a] {
            tbb::global_control limit(tbb::global_control::max_allowed_parallelism, a->threads);
            return run_plan(a->options, std::cout);
          }};
}

}  // namespace calbench
