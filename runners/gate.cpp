#include "runners/gate.hpp"

#include <tbb/global_control.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "plan/gate_json.hpp"
#include "report/reporter.hpp"
#include "report/text_report.hpp"
#include "runners/command.hpp"

namespace calbench {
namespace {

// Where each option of the one-clause form lands in the gate document: its problems are
// reported under the option's name.
const std::vector<std::pair<std::string, std::string>> option_pointers = {
    {"/generator", "--generator"},       {"/rule/clauses/0/estimator", "--estimator"},
    {"/rule/clauses/0/at_most", "--le"}, {"/rule/clauses/0/at_least", "--ge"},
    {"/rule/clauses/0", "--le or --ge"}, {"/rule/n", "--n"},
    {"/family/values", "--values"},      {"/family/quantity", "--quantity"},
    {"/risks/good", "--good"},           {"/risks/bad", "--bad"},
    {"/replicates", "--replicates"},     {"/seed", "--seed"}};

constexpr const char* options_source = "calbench gate";

// The gate document the options stand for (docs/gates.md, "One clause on the command line").
Json options_document(const GateClauseOptions& o) {
  Json doc = Json::object();
  doc["name"] = "gate";
  if (o.seed) doc["seed"] = *o.seed;
  doc["generator"] = o.generator;
  Json estimator;
  if (!o.estimator.empty() && o.estimator.front() == '{') {
    try {
      estimator = Json::parse(o.estimator);
    } catch (const Json::exception& e) {
      throw InputError(std::string("--estimator: not valid JSON: ") + e.what());
    }
  } else {
    estimator = {{"name", o.estimator}};
  }
  Json clause = {{"estimator", estimator}};
  if (o.at_most) clause["at_most"] = *o.at_most;
  if (o.at_least) clause["at_least"] = *o.at_least;
  Json rule = Json::object();
  if (o.n) rule["n"] = *o.n;
  rule["clauses"] = Json::array({clause});
  doc["rule"] = rule;
  Json family = Json::object();
  if (!o.quantity.empty()) family["quantity"] = o.quantity;
  family["values"] = o.values;
  doc["family"] = family;
  if (o.good || o.bad) {
    Json risks = Json::object();
    if (o.good) risks["good"] = *o.good;
    if (o.bad) risks["bad"] = *o.bad;
    doc["risks"] = risks;
  }
  if (o.replicates) doc["replicates"] = *o.replicates;
  return doc;
}

// parse_gate on the options' document, each problem named by its option.
GateConfig options_gate(const GateClauseOptions& o) {
  if (o.generator.empty() || o.estimator.empty() || o.values.empty() || !o.n)
    throw InputError(
        "calbench gate: give a gate file, or --generator, --estimator, --le or --ge, --n and "
        "--values (docs/gates.md)");
  try {
    // A generator named relative to the working directory, as every option's path is.
    return parse_gate(options_document(o), options_source,
                      std::filesystem::current_path() / "gate");
  } catch (const ConfigError& e) {
    std::vector<std::string> problems;
    const std::string prefix = std::string(options_source) + ": ";
    for (std::string p : e.problems()) {
      for (const auto& [pointer, option] : option_pointers)
        if (p.starts_with(prefix + pointer + ":") || p.starts_with(prefix + pointer + "/")) {
          p = prefix + option + p.substr(prefix.size() + pointer.size());
          break;
        }
      problems.push_back(std::move(p));
    }
    throw ConfigError(std::move(problems));
  }
}

// A truth's error to two significant digits ("2.5e-05").
std::string two_digits(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", x);
  return text;
}

std::string truth_text(const TruthValue& v) {
  return format_fixed(v.value, 5) + " (" + std::string(to_string(v.method)) + ", ± " +
         two_digits(v.error) + ")";
}

std::string member_text(const GatePoint& p) {
  return "true error " + truth_text(p.member.achieved) + ", miscalibration scaled by " +
         format_fixed(p.member.scale, 4);
}

// The generator's canonical text, or for a long one (a fitted fake's rows and spline) its
// family and K: the text is in --out.
std::string generator_text(const Generator& g) {
  const std::string text = g.canonical_text();
  if (text.size() <= 160) return text;
  return std::string(g.family()) + ", K = " + std::to_string(g.classes()) +
         " (its canonical text is in --out)";
}

// The risks below the table: each simulated at the member whose truth is the value asked for.
std::string risks_text(const GateResult& result) {
  std::string out;
  if (result.good)
    out += "false reject at good " + format_double(result.good->value) + ": " +
           format_fixed(false_reject(*result.good), 4) + " ± " +
           format_fixed(result.good->pass_se, 4) + "  (" + member_text(*result.good) + ")\n";
  if (result.bad)
    out += "false accept at bad " + format_double(result.bad->value) + ": " +
           format_fixed(result.bad->pass, 4) + " ± " + format_fixed(result.bad->pass_se, 4) +
           "  (" + member_text(*result.bad) + ")\n";
  if (!out.empty())
    out = "\n" + out +
          "(each simulated at the member whose true error is the value given, not interpolated)\n";
  return out;
}

// A P(pass) of 0 or 1 has a binomial standard error of 0; what R replicates do bound is the
// rule of three: 0 passes of R put P(pass) below 3/R at 95 % (Hanley & Lippman-Hand 1983).
std::string extremes_text(const GateResult& result, std::size_t replicates) {
  bool extreme = false;
  for (const GatePoint& p : result.points) extreme = extreme || p.pass == 0.0 || p.pass == 1.0;
  if (!extreme) return "";
  return "\nP(pass) 0 (or 1): no sample passed (or failed), se 0; the 95 % bound is 3/R = " +
         format_fixed(3.0 / static_cast<double>(replicates), 4) + " (the rule of three)\n";
}

// The design search's sizes, its answer and the answer's risks on fresh streams.
void design_text(const GateSpec& spec, const GateDesign& d, TextReport& report) {
  const GateDesignRequest& r = *spec.design;
  const GateClause& clause = spec.rule.clauses.front();
  const std::string caption =
      "\ndesign: the smallest n, and the threshold, with false reject <= " +
      format_double(r.false_reject) + " at " + format_double(*spec.risks.good) +
      " and false accept <= " + format_double(r.false_accept) + " at " +
      format_double(*spec.risks.bad) +
      ", each at its one-sided 95 % upper bound (threshold: the good member's estimates "
      "allow at most " +
      format_double(r.false_reject) + " - 1.645 se failures)\n\n";
  std::string note = "\nno n up to " + std::to_string(r.n_max) + " meets the request\n";
  if (d.answer)
    note =
        "\ndesign: n = " + std::to_string(d.answer->n) + ", pass when " + clause.label + " " +
        std::string(to_string(clause.comparison)) + " " + format_fixed(d.answer->threshold, 4) +
        (d.answer->n == r.n_min ? " (n_min already meets the request: a smaller n may too)" : "") +
        "\n" + "on fresh streams: false reject " + format_fixed(d.verified_false_reject, 4) +
        " ± " + format_fixed(d.verified_false_reject_se, 4) +
        " (asked <= " + format_double(r.false_reject) + "), false accept " +
        format_fixed(d.verified_false_accept, 4) + " ± " +
        format_fixed(d.verified_false_accept_se, 4) +
        " (asked <= " + format_double(r.false_accept) + ")\n";
  report.table(caption, "design", gate_design_columns(), d.points, note);
}

}  // namespace

int run_gate(const GateOptions& o, std::ostream& out) {
  const GateConfig config = o.file.empty() ? options_gate(o.clause) : load_gate(o.file);
  const std::string source = o.file.empty() ? std::string(options_source) : o.file;
  // An unwritable --out fails now (exit 2), not after the simulations.
  if (!o.out.empty()) check_writable(o.out, "--out " + o.out);
  const GateSpec& spec = config.spec;
  GateResult result;
  try {
    result = evaluate_gate(spec, [&](const GatePoint& p) {
      if (o.quiet) return;
      std::cerr << "calbench gate: " << member_text(p) << ": P(pass) " << format_fixed(p.pass, 4)
                << " ± " << format_fixed(p.pass_se, 4) << '\n';
    });
  } catch (const DomainError& e) {
    // What the parser cannot see: a true error out of the family's reach.
    throw InputError(source + ": /family: " + e.what());
  } catch (const std::bad_alloc&) {
    throw InputError(source +
                     ": out of memory: the arrays are set by rule.n x the generator's "
                     "classes and the truth's samples; lower them");
  }

  const std::string caption =
      config.name + ": pass when " + rule_text(spec.rule) + "\n" +
      "generator: " + generator_text(Generator(spec.generator)) + "\n" + "its own " +
      std::string(to_string(spec.family.quantity)) + " = " + truth_text(result.own) +
      "; the family scales its miscalibration by s\n" + std::to_string(spec.replicates) +
      " replicates per member; se: binomial standard error of P(pass)\n\n";
  TextReport report;
  report.table(caption, "points", gate_point_columns(spec.rule), result.points,
               extremes_text(result, spec.replicates) + risks_text(result));
  if (const auto& d = result.design) design_text(spec, *d, report);
  if (!o.out.empty()) {
    write_result_json(o.out, gate_result_json(config, result));
    report.prose(wrote(o.out));
  }
  TerminalReporter terminal(out);
  report.emit(terminal);
  return 0;
}

Command add_gate_command(CLI::App& app) {
  struct Arguments {
    GateOptions options;
    std::size_t threads = default_threads();
  };
  auto a = std::make_shared<Arguments>();
  GateClauseOptions& c = a->options.clause;
  auto* gate = app.add_subcommand(
      "gate", "what an acceptance gate (e.g. ECE <= 0.08 on n = 100) risks (docs/gates.md)");
  gate->add_option("GATE", a->options.file, "gate file (JSON, docs/gates.md)");
  gate->add_option("--generator", c.generator,
                   "one-clause form: a generator config, e.g. `calbench fit --out`'s");
  gate->add_option("--estimator", c.estimator,
                   "one-clause form: an estimator name (ece) or object as JSON text");
  gate->add_option("--le", c.at_most, "one-clause form: pass when the estimate is <= this");
  gate->add_option("--ge", c.at_least, "one-clause form: pass when the estimate is >= this");
  gate->add_option("--n", c.n, "one-clause form: labelled rows the gate is evaluated on");
  gate->add_option("--values", c.values, "one-clause form: the true errors of the OC curve")
      ->delimiter(',');
  gate->add_option("--quantity", c.quantity, "one-clause form: the true error (default ece)");
  gate->add_option("--good", c.good, "one-clause form: true error to report false rejects at");
  gate->add_option("--bad", c.bad, "one-clause form: true error to report false accepts at");
  gate->add_option("--replicates", c.replicates, "one-clause form: samples per member");
  gate->add_option("--seed", c.seed, "one-clause form: the simulation's streams")
      ->check(uint64_text());
  gate->add_option("--out", a->options.out, "write the result (JSON) to this file");
  gate->add_option("--threads", a->threads, "worker threads (default: all cores)")
      ->check(thread_range());
  gate->add_flag("--quiet", a->options.quiet, "no progress lines on stderr");
  return {gate, [a] {
            if (!a->options.file.empty() &&
                (!a->options.clause.generator.empty() || !a->options.clause.estimator.empty()))
              throw InputError("calbench gate: a gate file or the one-clause options, not both");
            tbb::global_control limit(tbb::global_control::max_allowed_parallelism, a->threads);
            return run_gate(a->options, std::cout);
          }};
}

}  // namespace calbench
