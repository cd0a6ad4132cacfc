#include "plan/gate_json.hpp"

#include <cmath>
#include <optional>
#include <utility>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "core/version.hpp"
#include "estimators/estimators_json.hpp"
#include "experiment/experiment.hpp"
#include "plan/plan_json.hpp"
#include "report/value_format.hpp"

namespace calbench {
namespace {

const std::vector<Choice<Join>> joins = {{"and", Join::all}, {"or", Join::any}};

bool finite(double x) {
  return std::isfinite(x);
}

// Replicates of 1e9 would only make the run hours long; 1e6 gives P(pass) to +-0.0005.
constexpr std::int64_t max_replicates = 1'000'000;
// Rows per sample, as plan's search.n_max.
constexpr std::int64_t max_rows = 100'000'000;

// {"estimator": {...}, "at_most": T} or {"estimator": {...}, "at_least": T}.
std::optional<GateClause> parse_clause(const Json& value, const std::string& pointer,
                                       Problems& problems, Json& resolved) {
  ObjectReader c(value, pointer, problems);
  if (!c.is_object()) {
    problems.add(pointer,
                 "expected a clause like {\"estimator\": {\"name\": \"ece\"}, "
                 "\"at_most\": 0.08}, found " +
                     describe(value));
    return std::nullopt;
  }
  c.allow_only({"estimator", "at_most", "at_least"});
  std::optional<EstimatorConfig> estimator;
  if (const Json* e = c.require("estimator", "an estimator object like {\"name\": \"ece\"}")) {
    Json parsed;
    estimator = parse_estimator(*e, c.pointer_to("estimator"), problems, parsed);
    c.set_resolved("estimator", std::move(parsed));
  }
  const bool most = c.find("at_most") != nullptr, least = c.find("at_least") != nullptr;
  std::optional<double> threshold;
  Comparison comparison = Comparison::at_most;
  if (most && least) {
    problems.add(pointer, "a clause compares with \"at_most\" or \"at_least\", not both");
  } else if (!most && !least) {
    problems.add(pointer,
                 "expected \"at_most\": T (passes when the estimate is <= T) or \"at_least\": T "
                 "(>= T, e.g. a test's p-value)");
  } else {
    comparison = most ? Comparison::at_most : Comparison::at_least;
    threshold = c.number(most ? "at_most" : "at_least", std::nullopt, finite, "finite");
  }
  resolved = c.take_resolved();
  if (!estimator || !threshold) return std::nullopt;
  return GateClause{estimator->estimator, estimator->label, comparison, *threshold};
}

std::optional<GateRule> parse_rule(ObjectReader& top) {
  const Json* value =
      top.require("rule", "{\"n\": 100, \"clauses\": [{\"estimator\": {...}, \"at_most\": 0.08}]}");
  if (value == nullptr) return std::nullopt;
  ObjectReader r(*value, top.pointer_to("rule"), top.problems());
  if (!r.is_object()) {
    top.problems().add(top.pointer_to("rule"), "expected an object, found " + describe(*value));
    return std::nullopt;
  }
  r.allow_only({"n", "join", "clauses"});
  const auto n = r.integer("n", 2);
  if (n && *n > max_rows)
    r.problems().add(r.pointer_to("n"),
                     "n = " + std::to_string(*n) + ": must be <= " + std::to_string(max_rows));
  const auto join = r.choice("join", "join", joins, Join::all);
  std::optional<std::vector<GateClause>> clauses;
  if (const Json* list = r.require("clauses", "a non-empty array of clauses")) {
    const std::string pointer = r.pointer_to("clauses");
    if (!list->is_array() || list->empty()) {
      r.problems().add(pointer,
                       "expected a non-empty array of clauses, found " +
                           (list->is_array() ? std::string("an empty array") : describe(*list)));
    } else {
      Json resolved = Json::array();
      std::vector<GateClause> parsed;
      for (std::size_t i = 0; i < list->size(); ++i) {
        Json entry;
        auto clause = parse_clause((*list)[i], pointer_join(pointer, i), r.problems(), entry);
        resolved.push_back(std::move(entry));
        if (clause) parsed.push_back(std::move(*clause));
      }
      r.set_resolved("clauses", std::move(resolved));
      if (parsed.size() == list->size()) clauses = std::move(parsed);
    }
  }
  top.set_resolved("rule", r.take_resolved());
  if (!n || *n > max_rows || !join || !clauses) return std::nullopt;
  return GateRule{std::move(*clauses), *join, static_cast<std::size_t>(*n)};
}

// A non-empty array of true errors, each > 0.
std::optional<std::vector<double>> parse_values(ObjectReader& f) {
  const Json* value = f.require("values", "a non-empty array of true errors, like [0.02, 0.08]");
  if (value == nullptr) return std::nullopt;
  const std::string pointer = f.pointer_to("values");
  if (!value->is_array() || value->empty()) {
    f.problems().add(pointer,
                     "expected a non-empty array of true errors, found " +
                         (value->is_array() ? std::string("an empty array") : describe(*value)));
    return std::nullopt;
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < value->size(); ++i)
    if (auto v = read_positive((*value)[i], pointer_join(pointer, i),
                               "values[" + std::to_string(i) + "]", f.problems()))
      out.push_back(*v);
  if (out.size() != value->size()) return std::nullopt;
  return out;
}

std::optional<GateFamily> parse_family(ObjectReader& top) {
  const Json* value =
      top.require("family", "{\"quantity\": \"ece\", \"values\": [0.02, 0.05, 0.08, 0.1]}");
  if (value == nullptr) return std::nullopt;
  ObjectReader f(*value, top.pointer_to("family"), top.problems());
  if (!f.is_object()) {
    top.problems().add(top.pointer_to("family"), "expected an object, found " + describe(*value));
    return std::nullopt;
  }
  f.allow_only({"quantity", "values", "direction"});
  const auto quantity =
      f.choice("quantity", "quantity", detectable_quantities(), Quantity::ece_top_l1);
  const auto values = parse_values(f);
  const auto direction =
      f.choice("direction", "direction", direction_choices(), Direction::overconfident);
  top.set_resolved("family", f.take_resolved());
  if (!quantity || !values || !direction) return std::nullopt;
  return GateFamily{*quantity, *values, *direction};
}

std::optional<GateRisks> parse_risks(ObjectReader& top) {
  const Json* value = top.find("risks");
  if (value == nullptr) return GateRisks{};
  ObjectReader r(*value, top.pointer_to("risks"), top.problems());
  if (!r.is_object()) {
    top.problems().add(top.pointer_to("risks"),
                       "expected an object like {\"good\": 0.02, "
                       "\"bad\": 0.1}, found " +
                           describe(*value));
    return std::nullopt;
  }
  r.allow_only({"good", "bad"});
  GateRisks out;
  bool ok = true;
  for (const char* key : {"good", "bad"}) {
    if (r.find(key) == nullptr) continue;
    const auto v = r.positive(key);
    ok = ok && v.has_value();
    (std::string_view(key) == "good" ? out.good : out.bad) = v;
  }
  if (ok && out.good && out.bad && !(*out.good < *out.bad))
    r.problems().add(r.pointer_to("bad"), "bad = " + format_double(*out.bad) +
                                              ": must be > good = " + format_double(*out.good));
  top.set_resolved("risks", r.take_resolved());
  if (!ok) return std::nullopt;
  return out;
}

bool open_unit(double x) {
  return x > 0.0 && x < 1.0;
}
bool above_one(double x) {
  return x > 1.0 && x <= 16.0;
}

// "design": {"false_reject": a, "false_accept": b, "n_min", "n_max", "ratio", "refine"}.
std::optional<std::optional<GateDesignRequest>> parse_design(ObjectReader& top) {
  const Json* value = top.find("design");
  if (value == nullptr) return std::optional<GateDesignRequest>{};
  ObjectReader d(*value, top.pointer_to("design"), top.problems());
  if (!d.is_object()) {
    top.problems().add(top.pointer_to("design"),
                       "expected an object like {\"false_reject\": 0.05, \"false_accept\": "
                       "0.05}, found " +
                           describe(*value));
    return std::nullopt;
  }
  d.allow_only({"false_reject", "false_accept", "n_min", "n_max", "ratio", "refine"});
  const GateDesignRequest defaults;
  const auto reject = d.number("false_reject", defaults.false_reject, open_unit, "> 0 and < 1");
  const auto accept = d.number("false_accept", defaults.false_accept, open_unit, "> 0 and < 1");
  const auto n_min = d.integer("n_min", 2, static_cast<std::int64_t>(defaults.n_min));
  const auto n_max = d.integer("n_max", 3, static_cast<std::int64_t>(defaults.n_max));
  const auto ratio = d.number("ratio", defaults.ratio, above_one, "> 1 and <= 16");
  const auto refine = d.integer("refine", 0, static_cast<std::int64_t>(defaults.refine));
  if (n_min && n_max && *n_max <= *n_min)
    d.problems().add(d.pointer_to("n_max"), "n_max = " + std::to_string(*n_max) +
                                                ": must be > n_min = " + std::to_string(*n_min));
  if (n_max && *n_max > max_rows)
    d.problems().add(d.pointer_to("n_max"), "n_max = " + std::to_string(*n_max) +
                                                ": must be <= " + std::to_string(max_rows));
  top.set_resolved("design", d.take_resolved());
  if (!reject || !accept || !n_min || !n_max || !ratio || !refine) return std::nullopt;
  return GateDesignRequest{*reject,
                           *accept,
                           static_cast<std::size_t>(*n_min),
                           static_cast<std::size_t>(*n_max),
                           *ratio,
                           static_cast<std::size_t>(*refine)};
}

Json truth_json(const TruthValue& v) {
  return {{"value", v.value}, {"method", std::string(to_string(v.method))}, {"error", v.error}};
}

// NaN (a clause never estimable) as null.
Value number_or_null(double x) {
  return std::isnan(x) ? Value() : Value(x);
}

}  // namespace

GateConfig parse_gate(const Json& document, const std::string& source,
                      const std::filesystem::path& file) {
  Problems problems;
  problems.base_directory = file.parent_path();
  ObjectReader top(document, "", problems);
  if (!top.is_object()) {
    problems.add("", "expected a gate object, found " + describe(document));
    throw ConfigError(problems.render(source));
  }
  top.allow_only(
      {"name", "seed", "generator", "truth", "rule", "family", "risks", "replicates", "design"});
  const auto name = top.string("name", file.stem().string());
  const auto seed = top.unsigned_integer("seed", 0, 0);
  const auto generator = parse_generator_or_file(top, file);
  const auto truth = parse_truth_section(top);
  const auto rule = parse_rule(top);
  const auto family = parse_family(top);
  const auto risks = parse_risks(top);
  const auto replicates = top.integer("replicates", 10, 1000);
  const auto design = parse_design(top);
  if (design && *design) {
    if (rule && rule->clauses.size() != 1)
      problems.add("/design",
                   "a design searches the n and threshold of a one-clause rule; this "
                   "rule has " +
                       std::to_string(rule->clauses.size()) + " clauses");
    if (risks && (!risks->good || !risks->bad))
      problems.add("/design",
                   "a design needs \"risks\": {\"good\": ..., \"bad\": ...}, the "
                   "true errors its false-reject and false-accept rates are at");
    if (replicates &&
        (**design).false_reject - gate_design_z * std::sqrt((**design).false_reject *
                                                            (1.0 - (**design).false_reject) /
                                                            static_cast<double>(*replicates)) <=
            0.0)
      problems.add("/design/false_reject",
                   "false_reject = " + format_double((**design).false_reject) +
                       " is within 1.645 standard errors of 0 at " + std::to_string(*replicates) +
                       " replicates; raise replicates");
  }
  if (replicates && *replicates > max_replicates)
    problems.add("/replicates", "replicates = " + std::to_string(*replicates) +
                                    ": must be <= " + std::to_string(max_replicates));
  std::optional<GeneratorSpec> spec;
  if (generator && truth) {
    spec = solved_generator(*generator, *truth, problems);
    if (spec) {
      try {
        const Generator g(*spec);
        (void)scaled_generator(*spec, 0.0, Direction::overconfident);
        if (rule)
          for (std::size_t i = 0; i < rule->clauses.size(); ++i)
            if (auto why = rule->clauses[i].estimator->classes_problem(g.classes()))
              problems.add("/rule/clauses/" + std::to_string(i) + "/estimator", *why);
      } catch (const DomainError& e) {
        problems.add("/generator", e.what());
      }
    }
  }
  if (!problems.empty() || !design) throw ConfigError(problems.render(source));
  GateConfig out;
  out.name = *name;
  out.spec.generator = *spec;
  out.spec.rule = *rule;
  out.spec.family = *family;
  out.spec.risks = *risks;
  out.spec.replicates = static_cast<std::size_t>(*replicates);
  out.spec.seed = *seed;
  out.spec.truth = *truth;
  out.spec.design = *design;
  out.resolved = top.take_resolved();
  return out;
}

GateConfig load_gate(const std::filesystem::path& file) {
  Problems problems;
  const Json document = read_json_file(file, problems);
  if (!problems.empty()) throw ConfigError(problems.render(file.string()));
  return parse_gate(document, file.string(), file);
}

std::vector<ColumnSpec<GatePoint>> gate_point_columns(const GateRule& rule) {
  using P = GatePoint;
  std::vector<ColumnSpec<GatePoint>> out = {
      {"value", [](const P& p) { return Value(p.value); }, show::json},
      {"true_error",
       [](const P& p) { return Value(p.member.achieved.value); },
       show::all,
       {.heading = "true error", .precision = 4}},
      {"truth_method",
       [](const P& p) { return Value(std::string(to_string(p.member.achieved.method))); },
       show::json | show::terminal,
       {.heading = "method", .align = Align::left}},
      {"truth_error",
       [](const P& p) { return Value(p.member.achieved.error); },
       show::json | show::terminal,
       {.heading = "± truth", .precision = 1, .notation = Notation::scientific}},
      {"scale", [](const P& p) { return Value(p.member.scale); }, show::all, {.precision = 4}},
      {"p_pass",
       [](const P& p) { return Value(p.pass); },
       show::all,
       {.heading = "P(pass)", .precision = 4}},
      {"se", [](const P& p) { return Value(p.pass_se); }, show::all, {.precision = 4}}};
  for (std::size_t i = 0; i < rule.clauses.size(); ++i) {
    const GateClause& c = rule.clauses[i];
    const std::string what =
        c.label + " " + std::string(to_string(c.comparison)) + " " + format_double(c.threshold);
    out.push_back({"pass " + what,
                   [i](const P& p) { return Value(p.clause_pass[i]); },
                   show::terminal,
                   {.heading = "P(" + what + ")", .precision = 4}});
    out.push_back({"mean " + c.label,
                   [i](const P& p) { return number_or_null(p.clause_mean[i]); },
                   show::terminal,
                   {.heading = "mean " + c.label, .precision = 4}});
  }
  std::vector<std::string> labels;
  for (const GateClause& c : rule.clauses) labels.push_back(c.label);
  out.push_back({"clauses",
                 [labels](const P& p) {
                   Value::Array clauses;
                   for (std::size_t i = 0; i < labels.size(); ++i)
                     clauses.push_back(
                         Value::Object{{"label", labels[i]},
                                       {"pass", p.clause_pass[i]},
                                       {"mean", number_or_null(p.clause_mean[i])},
                                       {"not_estimable", count_value(p.not_estimable[i])}});
                   return Value(std::move(clauses));
                 },
                 show::json});
  out.push_back({"generator",
                 [](const P& p) { return Value(Generator(p.member.spec).canonical_text()); },
                 show::json});
  return out;
}

std::vector<ColumnSpec<GateDesignPoint>> gate_design_columns() {
  using D = GateDesignPoint;
  return {{"n", [](const D& d) { return count_value(d.n); }, show::all, {}},
          {"threshold", [](const D& d) { return Value(d.threshold); }, show::all, {.precision = 4}},
          {"false_reject",
           [](const D& d) { return Value(d.false_reject); },
           show::all,
           {.heading = "false reject", .precision = 4}},
          {"false_accept",
           [](const D& d) { return Value(d.false_accept); },
           show::all,
           {.heading = "false accept", .precision = 4}},
          {"false_accept_se",
           [](const D& d) { return Value(d.false_accept_se); },
           show::all,
           {.heading = "se", .precision = 4}},
          {"meets", [](const D& d) { return Value(d.meets); }, show::json},
          {"meets_text",
           [](const D& d) { return Value(d.meets ? "yes" : "no"); },
           show::terminal,
           {.heading = "meets", .align = Align::left}}};
}

Json gate_result_json(const GateConfig& config, const GateResult& result) {
  Json out;
  out["meta"] = {{"schema", "calbench.gate/1"},
                 {"calbench", version},
                 {"git_revision", git_revision},
                 {"config_hash", format_hash(hash64(config.resolved.dump()))}};
  out["gate"] = config.resolved;
  out["rule"] = rule_text(config.spec.rule);
  out["generator"] = Generator(config.spec.generator).canonical_text();
  out["own_truth"] = truth_json(result.own);
  const auto columns = gate_point_columns(config.spec.rule);
  const TableView view(columns);
  Json points = Json::array();
  for (const GatePoint& p : result.points) points.push_back(to_json(view.object(p)));
  out["points"] = std::move(points);
  Json risks = Json::object();
  if (result.good) {
    Json good = to_json(view.object(*result.good));
    good["false_reject"] = false_reject(*result.good);
    risks["good"] = std::move(good);
  }
  if (result.bad) {
    Json bad = to_json(view.object(*result.bad));
    bad["false_accept"] = result.bad->pass;
    risks["bad"] = std::move(bad);
  }
  out["risks"] = std::move(risks);
  if (const auto& d = result.design) {
    const auto design_columns = gate_design_columns();
    const TableView design_view(design_columns);
    Json sizes = Json::array();
    for (const GateDesignPoint& p : d->points) sizes.push_back(to_json(design_view.object(p)));
    Json design = {{"points", std::move(sizes)}};
    design["answer"] = d->answer ? to_json(design_view.object(*d->answer)) : Json();
    if (d->answer)
      design["verified"] = {{"streams", "cell 1 (fresh)"},
                            {"false_reject", d->verified_false_reject},
                            {"false_reject_se", d->verified_false_reject_se},
                            {"false_accept", d->verified_false_accept},
                            {"false_accept_se", d->verified_false_accept_se}};
    out["design"] = std::move(design);
  }
  return out;
}

}  // namespace calbench
