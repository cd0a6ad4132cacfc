#include "plan/plan_json.hpp"

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "core/version.hpp"
#include "estimators/estimators_json.hpp"
#include "experiment/experiment.hpp"
#include "generators/generators_json.hpp"
#include "report/value_format.hpp"
#include "truth/target_solver.hpp"

namespace calbench {
namespace {

// A width question's "interval": "normal" (2 z sd), or any name `calbench eval --interval`
// takes (interval_choices(): "default", the estimator's own, and every method).
struct WidthChoice {
  bool normal = false;
  IntervalChoice method;  // nullopt: the estimator's default
  bool operator==(const WidthChoice&) const = default;
};

const std::vector<Choice<WidthChoice>>& width_intervals() {
  static const std::vector<Choice<WidthChoice>> choices = [] {
    std::vector<Choice<WidthChoice>> out = {{"normal", {true, std::nullopt}}};
    for (const auto& c : interval_choices()) out.push_back({c.name, {false, c.value}});
    return out;
  }();
  return choices;
}

bool open_unit(double x) {
  return x > 0.0 && x < 1.0;
}
bool above_one(double x) {
  return x > 1.0 && x <= 16.0;
}

// Counts of simulated work: replicates, resamples and jackknife groups of 1e9 made arrays
// of that size and ended in std::bad_alloc (exit 1); 1e5 of each is far beyond any plan's
// precision needs (docs/plan.md) and within memory.
constexpr std::int64_t max_count = 100'000;

std::optional<std::size_t> count(ObjectReader& o, std::string_view key, std::int64_t min,
                                 std::int64_t fallback) {
  const auto v = o.integer(key, min, fallback);
  if (!v) return std::nullopt;
  if (*v > max_count) {
    o.problems().add(o.pointer_to(key), std::string(key) + " = " + std::to_string(*v) +
                                            ": must be <= " + std::to_string(max_count));
    return std::nullopt;
  }
  return static_cast<std::size_t>(*v);
}

// "detect": {"ece": 0.05} (one quantity and its value), optionally "direction".
std::optional<PowerQuestion> parse_detect(ObjectReader& q, PowerQuestion out) {
  const Json* value = q.require("detect", "an object like {\"ece\": 0.05}");
  if (value == nullptr) return std::nullopt;
  ObjectReader d(*value, q.pointer_to("detect"), q.problems());
  if (!d.is_object()) return std::nullopt;
  std::vector<std::string> allowed = {"direction"};
  std::optional<std::string> quantity_key;
  for (const auto& c : detectable_quantities()) {
    allowed.emplace_back(c.name);
    if (d.find(c.name) != nullptr) {
      if (quantity_key) {
        q.problems().add(d.pointer_to(c.name), "detect names one quantity, found " +
                                                   quote(*quantity_key) + " and " + quote(c.name));
        return std::nullopt;
      }
      quantity_key = std::string(c.name);
      out.quantity = c.value;
    }
  }
  d.allow_only(allowed);
  if (!quantity_key) {
    q.problems().add(d.pointer(),
                     "expected one quantity and the value to detect, like {\"ece\": 0.05}; "
                     "quantities: ece (= ece_top_l1), ece_top_l2, classwise_ece_l1, "
                     "canonical_l1, canonical_l2");
    return std::nullopt;
  }
  const auto detect = d.number(*quantity_key, std::nullopt, open_unit, "> 0 and < 1");
  const auto direction =
      d.choice("direction", "direction", direction_choices(), Direction::overconfident);
  q.set_resolved("detect", d.take_resolved());
  if (!detect || !direction) return std::nullopt;
  out.detect = *detect;
  out.direction = *direction;
  return out;
}

// The width question; `estimator` (when it parsed) resolves "default" as eval does.
std::optional<WidthQuestion> parse_width(ObjectReader& q,
                                         const std::optional<EstimatorConfig>& estimator,
                                         std::optional<std::size_t> classes) {
  q.allow_only({"width", "level", "interval", "resamples", "jackknife_groups"});
  const auto width = q.positive("width");
  const auto level = q.number("level", 0.9, open_unit, "> 0 and < 1");
  const auto choice = q.choice("interval", "interval", width_intervals(), WidthChoice{});
  if (!width || !level || !choice) return std::nullopt;
  WidthQuestion out{*width, *level, std::nullopt};
  if (!choice->normal && !choice->method && !estimator)
    return std::nullopt;  // the estimator's problems are reported
  if (!choice->normal)
    out.interval = choice->method.value_or(estimator ? estimator->interval : IntervalMethod{});
  if (out.interval && estimator && classes)
    if (auto why = interval_inapplicable(*out.interval, *estimator->estimator))
      q.problems().add(q.pointer_to("interval"),
                       *why + (choice->method ? "" : " (the estimator's default interval)"));
  // The normal width 2 z sd and the analytic interval resample nothing.
  if (!out.interval || *out.interval == IntervalMethod::analytic) {
    for (const char* key : {"resamples", "jackknife_groups"})
      if (q.find(key) != nullptr)
        q.problems().add(q.pointer_to(key), std::string(key) +
                                                " belongs to a resampling interval; the " +
                                                interval_name(out) + " interval resamples nothing");
    return out;
  }
  const IntervalMethod method = *out.interval;
  const auto resamples = count(q, "resamples", 2, static_cast<std::int64_t>(out.resamples));
  std::optional<std::size_t> groups = out.jackknife_groups;
  if (method == IntervalMethod::bca)
    groups = count(q, "jackknife_groups", 2, static_cast<std::int64_t>(out.jackknife_groups));
  else if (q.find("jackknife_groups") != nullptr)
    q.problems().add(q.pointer_to("jackknife_groups"),
                     "jackknife_groups belongs to the bca interval (its acceleration); the "
                     "interval here is " +
                         std::string(to_string(method)));
  if (!resamples || !groups) return std::nullopt;
  out.resamples = *resamples;
  out.jackknife_groups = *groups;
  return out;
}

std::optional<PlanQuestion> parse_question(ObjectReader& top,
                                           const std::optional<EstimatorConfig>& estimator,
                                           std::optional<std::size_t> classes) {
  const Json* value = top.require(
      "question", "{\"width\": W, \"level\": L} or {\"power\": P, \"detect\": {\"ece\": E}}");
  if (value == nullptr) return std::nullopt;
  ObjectReader q(*value, top.pointer_to("question"), top.problems());
  if (!q.is_object()) return std::nullopt;
  std::optional<PlanQuestion> out;
  if (q.find("width") != nullptr && q.find("power") != nullptr) {
    q.problems().add(q.pointer(), "a question asks for a width or for a power, not both");
  } else if (q.find("width") != nullptr) {
    if (auto width = parse_width(q, estimator, classes)) out = *width;
  } else if (q.find("power") != nullptr) {
    q.allow_only({"power", "alpha", "detect", "resamples"});
    const auto power = q.number("power", std::nullopt, open_unit, "> 0 and < 1");
    const auto alpha = q.number("alpha", 0.05, open_unit, "> 0 and < 1");
    const auto resamples = count(q, "resamples", 1, 199);
    std::optional<PowerQuestion> question;
    if (power && alpha && resamples) {
      if (static_cast<double>(*resamples) + 1.0 < 1.0 / *alpha)
        q.problems().add(q.pointer_to("resamples"),
                         "resamples = " + std::to_string(*resamples) +
                             ": the test can never reject at alpha = " + format_double(*alpha) +
                             "; needs resamples + 1 >= 1 / alpha");
      PowerQuestion p;
      p.power = *power;
      p.alpha = *alpha;
      p.resamples = *resamples;
      question = parse_detect(q, p);
    } else {
      (void)parse_detect(q, PowerQuestion{});
    }
    if (question) out = *question;
  } else {
    q.problems().add(q.pointer(),
                     "expected \"width\" (with \"level\") or \"power\" (with \"detect\" and "
                     "\"alpha\")");
  }
  top.set_resolved("question", q.take_resolved());
  return out;
}

std::optional<PlanSearch> parse_search(ObjectReader& top) {
  static const Json empty = Json::object();
  const Json* value = top.find("search");
  ObjectReader s(value != nullptr ? *value : empty, top.pointer_to("search"), top.problems());
  s.allow_only({"n_min", "n_max", "ratio", "refine", "guide"});
  const PlanSearch defaults;
  const auto n_min = count(s, "n_min", 2, static_cast<std::int64_t>(defaults.n_min));
  const auto n_max = count(s, "n_max", 3, static_cast<std::int64_t>(defaults.n_max));
  const auto ratio = s.number("ratio", defaults.ratio, above_one, "> 1 and <= 16");
  const auto refine = count(s, "refine", 0, static_cast<std::int64_t>(defaults.refine));
  const auto guide = s.boolean("guide", defaults.guide);
  if (n_min && n_max && *n_max <= *n_min)
    s.problems().add(s.pointer_to("n_max"), "n_max = " + std::to_string(*n_max) +
                                                ": must be > n_min = " + std::to_string(*n_min));
  if (n_max && *n_max > 100'000'000)
    s.problems().add(s.pointer_to("n_max"),
                     "n_max = " + std::to_string(*n_max) + ": must be <= 100000000");
  top.set_resolved("search", s.take_resolved());
  if (!n_min || !n_max || !ratio || !refine || !guide) return std::nullopt;
  return PlanSearch{*n_min, *n_max, *ratio, *refine, *guide};
}

Json truth_json(const TruthValue& v) {
  return {{"value", v.value}, {"method", std::string(to_string(v.method))}, {"error", v.error}};
}

std::string_view kind_name(AnswerKind kind) {
  switch (kind) {
    case AnswerKind::found:
      return "found";
    case AnswerKind::below_range:
      return "at_most_n_min";
    case AnswerKind::above_range:
      return "above_n_max";
  }
  return "";
}

}  // namespace

const std::vector<Choice<Quantity>>& detectable_quantities() {
  // Those that are 0 exactly when the generator is calibrated (overconfidence is signed,
  // accuracy, brier and nll are not errors).
  static const std::vector<Choice<Quantity>> choices = {
      {"ece", Quantity::ece_top_l1},
      {"ece_top_l1", Quantity::ece_top_l1},
      {"ece_top_l2", Quantity::ece_top_l2},
      {"classwise_ece_l1", Quantity::classwise_ece_l1},
      {"canonical_l1", Quantity::canonical_l1},
      {"canonical_l2", Quantity::canonical_l2}};
  return choices;
}

const std::vector<Choice<Direction>>& direction_choices() {
  static const std::vector<Choice<Direction>> choices = {
      {"overconfident", Direction::overconfident}, {"underconfident", Direction::underconfident}};
  return choices;
}

// The generator object of the plan, or of the file a string names (relative to the plan's
// folder): `calbench fit --out` writes a config whose "generator" is the fitted one.
std::optional<ParsedGenerator> parse_generator_or_file(ObjectReader& top,
                                                       const std::filesystem::path& file) {
  const Json* value = top.require("generator", "a generator object or a config file's name");
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) return parse_generator_section(top);
  const std::filesystem::path other = file.parent_path() / value->get<std::string>();
  const std::string from = file.string() + ": /generator: the generator is read from " +
                           other.string() + ", which has problems:";
  Problems problems;
  problems.base_directory = other.parent_path();
  Json document;
  try {
    document = read_json_file(other, problems);
  } catch (const ConfigError& error) {
    std::vector<std::string> found = error.problems();
    found.insert(found.begin(), from);
    throw ConfigError(std::move(found));
  }
  ObjectReader doc(document, "", problems);
  std::optional<ParsedGenerator> out;
  if (doc.is_object()) {
    if (doc.require("generator", "a generator object (the file is a config)") != nullptr) {
      Json resolved;
      out = parse_generator(*doc.find("generator"), "/generator", problems, resolved);
      top.set_resolved("generator", std::move(resolved));
    }
  }
  if (!problems.empty()) {
    std::vector<std::string> found = problems.render(other.string());
    found.insert(found.begin(), from);
    throw ConfigError(std::move(found));
  }
  return out;
}

std::optional<GeneratorSpec> solved_generator(const ParsedGenerator& generator,
                                              const TruthSettings& truth, Problems& problems) {
  if (!generator.target) return generator.spec;
  try {
    TargetSolver solver;
    return solver.solve(*generator.target, truth).spec;
  } catch (const TargetError& e) {
    problems.add("/generator/target/" + e.field(), e.what());
    return std::nullopt;
  }
}

PlanConfig load_plan(const std::filesystem::path& file) {
  const std::string source = file.string();
  Problems problems;
  problems.base_directory = file.parent_path();
  const Json document = read_json_file(file, problems);
  ObjectReader top(document, "", problems);
  top.allow_only(
      {"name", "seed", "generator", "truth", "estimator", "question", "replicates", "search"});
  PlanConfig out;
  const auto name = top.string("name", file.stem().string());
  const auto seed = top.unsigned_integer("seed", 0, 0);
  const auto generator = parse_generator_or_file(top, file);
  const auto truth = parse_truth_section(top);
  std::optional<EstimatorConfig> estimator;
  if (const Json* e = top.require("estimator", "an estimator object like {\"name\": \"ece\"}")) {
    Json resolved;
    estimator = parse_estimator(*e, "/estimator", problems, resolved);
    top.set_resolved("estimator", std::move(resolved));
  }
  // The generator's classes, for the interval's applicability (a target's K is its own).
  std::optional<std::size_t> classes;
  if (generator && !generator->target) try {
      classes = Generator(generator->spec).classes();
    } catch (const DomainError&) {
      // reported below
    }
  const auto question = parse_question(top, estimator, classes);
  const auto replicates = count(top, "replicates", 10, 500);
  const auto search = parse_search(top);
  std::optional<GeneratorSpec> spec;
  if (generator && truth) {
    spec = solved_generator(*generator, *truth, problems);
    if (spec) {
      try {
        (void)Generator(*spec);
        if (question && std::holds_alternative<PowerQuestion>(*question))
          (void)scaled_generator(*spec, 0.0, Direction::overconfident);
      } catch (const DomainError& e) {
        problems.add("/generator", e.what());
      }
    }
  }
  if (!problems.empty()) throw ConfigError(problems.render(source));
  out.name = *name;
  out.spec.generator = *spec;
  out.spec.estimator = estimator->estimator;
  out.estimator_label = estimator->label;
  out.spec.question = *question;
  out.spec.search = *search;
  out.spec.replicates = *replicates;
  out.spec.seed = *seed;
  out.spec.truth = *truth;
  out.resolved = top.take_resolved();
  return out;
}

std::vector<ColumnSpec<PlanPoint>> plan_point_columns(bool power) {
  using P = PlanPoint;
  // The terminal's table: left-aligned, 2 spaces apart, the figures to 4 digits, coverage to 3.
  auto column = [](std::string name, std::function<Value(const P&)> value, int precision,
                   Shown shown = show::json | show::terminal, std::string heading = {}) {
    return ColumnSpec<P>{
        std::move(name),
        std::move(value),
        shown,
        {.heading = std::move(heading), .align = Align::left, .precision = precision, .null = ""}};
  };
  // A power question's points measure no coverage: its columns are JSON ones, shown when set.
  const Shown coverage = power ? show::json_set : show::json_set | show::terminal;
  return {column(
              "n", [](const P& p) { return count_value(p.n); }, 0),
          column(
              power ? "power" : "width", [](const P& p) { return Value(p.figure); }, 4),
          column(
              "se", [](const P& p) { return Value(p.figure_se); }, 4),
          column(
              "mean", [](const P& p) { return Value(p.mean); }, 4),
          column(
              "sd", [](const P& p) { return Value(p.sd); }, 4),
          column(
              "coverage", [](const P& p) { return field_value(p.coverage); }, 3, coverage),
          column(
              "coverage_se", [](const P& p) { return p.coverage ? Value(p.coverage_se) : Value(); },
              3, coverage, "se")};
}

Json plan_result_json(const PlanConfig& config, const PlanResult& result) {
  Json out;
  out["meta"] = {{"schema", "calbench.plan/1"},
                 {"calbench", version},
                 {"git_revision", git_revision},
                 {"config_hash", format_hash(hash64(config.resolved.dump()))}};
  out["plan"] = config.resolved;
  const bool power = std::holds_alternative<PowerQuestion>(config.spec.question);
  if (result.alternative) {
    const Generator g(result.alternative->spec);
    out["alternative"] = {{"generator", g.canonical_text()},
                          {"scale", result.alternative->scale},
                          {"truth", truth_json(result.alternative->achieved)}};
  }
  if (power)
    out["test"] = config.spec.estimator->capabilities().analytic_test ? "analytic" : "consistency";
  if (!power) {
    out["interval"] = interval_name(std::get<WidthQuestion>(config.spec.question));
    if (const auto& r = result.reference)
      out["reference"] = {
          {"target", r->target ? Json(std::string(to_string(*r->target))) : Json("own")},
          {"value", r->value},
          {"method", r->method},
          {"error", r->error}};
  }
  const auto columns = plan_point_columns(power);
  const TableView view(columns);
  Json points = Json::array();
  for (const auto& p : result.points) points.push_back(to_json(view.object(p)));
  out["points"] = std::move(points);
  const PlanAnswer& a = result.answer;
  out["answer"] = {{"status", std::string(kind_name(a.kind))},
                   {"n", a.n},
                   {"n_low_95", a.n_low},
                   {"n_high_95", a.n_high},
                   {power ? "power" : "width", a.figure},
                   {"se", a.figure_se}};
  if (a.at_n) out["answer"]["at_n"] = to_json(view.object(*a.at_n));
  // A refused answer has no n: the figures stay, under n_refused, for the reader who asks why.
  if (!a.refused.empty()) {
    auto& answer = out["answer"];
    answer["status"] = "refused";
    answer["reason"] = a.refused;
    answer["n_refused"] = a.n;
    answer["n"] = Json();
  }
  return out;
}

}  // namespace calbench
