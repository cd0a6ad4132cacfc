// Registry rows of the decision tasks: parameters, documentation and construction of a
// DecisionSpec from a `decision` object {"task": ..., PARAMS...}.
#include "decisions/decision_tasks_json.hpp"

#include <algorithm>
#include <limits>

#include "config/registry.hpp"
#include "core/format.hpp"

namespace calbench {
namespace {

// An array of numbers, each satisfying `ok`; of `length` entries when known.
template <typename Ok>
std::optional<std::vector<double>> number_array(const Json& value, const std::string& pointer,
                                                std::string_view name,
                                                std::optional<std::size_t> length, Ok ok,
                                                std::string_view rule, Problems& problems) {
  const std::string expected = "expected an array of " +
                               (length ? std::to_string(*length) + " " : std::string()) +
                               "numbers, each " + std::string(rule) + " (one per class)";
  if (!value.is_array()) {
    problems.add(pointer, expected + ", found " + describe(value));
    return std::nullopt;
  }
  bool good = true;
  if (length && value.size() != *length) {
    problems.add(pointer, expected + ", found an array of " + std::to_string(value.size()));
    good = false;
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string at = pointer_join(pointer, i);
    const auto x = read_number(value[i], at, problems);
    if (!x) {
      good = false;
      continue;
    }
    if (!ok(*x)) {
      problems.add(at, std::string(name) + "[" + std::to_string(i) + "] = " + format_double(*x) +
                           ": must be " + std::string(rule));
      good = false;
      continue;
    }
    out.push_back(*x);
  }
  if (!good) return std::nullopt;
  return out;
}

// Every utility and cost of a task is bounded by 1e6 in absolute value: the exact decision
// value integrates differences and sums of utilities times probabilities, and utilities of
// 1e308 overflowed it (cost_matrix and triage: a bare Boost "evaluated your function at a
// singular point and returned inf"; selective cost 1e308: every utility NaN, written as null).
// A task's value is invariant to the scale of its utilities, so 1e6 loses nothing (triage:
// every threshold in (1e-6, 1 - 1e-6) stays reachable with the other at 1).
constexpr double max_utility = 1e6;
bool utility_in_range(double x) {
  return x > 0.0 && x <= max_utility;
}
bool bounded_utility(double x) {
  return x >= -max_utility && x <= max_utility;
}
constexpr const char* bounded_utility_rule = "in [-1e6, 1e6]";

// Decimal odds o > 1; the Kelly stake (q o - 1)/(o - 1) divides the rounding error of q o
// (about 1e-16) by o - 1, so odds within 1e-6 of 1 would leave the stake with fewer than ten
// correct digits (o = 1 + 2^-52 gave a stake error of order 1). No upper bound is needed: the
// log-growth is at most log(o) <= 710 (odds 1e308 measured finite).
constexpr double min_odds = 1.0 + 1e-6;

// ---- cost_matrix ----------------------------------------------------------------------------

bool read_utility(Args& a) {
  ObjectReader& d = a.reader();
  const auto classes = a.classes();
  const Json* value = d.require("utility", "a K x K array: utility[action][true class]");
  if (value == nullptr) return false;
  const std::string pointer = d.pointer_to("utility");
  const std::string shape =
      classes ? std::to_string(*classes) + " x " + std::to_string(*classes) : std::string("K x K");
  if (!value->is_array() || value->empty()) {
    d.problems().add(pointer, "expected a " + shape +
                                  " array of rows utility[action][true class], found " +
                                  describe(*value));
    return false;
  }
  const std::size_t K = classes.value_or(value->size());
  bool good = true;
  if (value->size() != K) {
    d.problems().add(pointer, "expected a " + shape +
                                  " array (one row per action = class), found " +
                                  std::to_string(value->size()) + " rows");
    good = false;
  }
  std::vector<std::vector<double>> rows;
  for (std::size_t r = 0; r < value->size(); ++r) {
    auto row =
        number_array((*value)[r], pointer_join(pointer, r), "utility[" + std::to_string(r) + "]", K,
                     bounded_utility, bounded_utility_rule, d.problems());
    if (row)
      rows.push_back(std::move(*row));
    else
      good = false;
  }
  if (good) a.set("utility", std::move(rows));
  return good;
}

// `abstain` {"utility": u or [u_1..u_K]}: optional, no default.
bool read_abstain(Args& a) {
  ObjectReader& d = a.reader();
  const Json* value = d.find("abstain");
  if (value == nullptr) return true;
  const auto classes = a.classes();
  ObjectReader ab(*value, d.pointer_to("abstain"), d.problems());
  bool ok = false;
  if (ab.is_object()) {
    ab.allow_only({"utility"});
    if (const Json* u = ab.require("utility", "a number, or one per true class")) {
      const std::string pointer = ab.pointer_to("utility");
      if (u->is_number()) {
        if (const auto x = read_number(*u, pointer, d.problems()); x && !bounded_utility(*x)) {
          d.problems().add(pointer, "abstain utility = " + format_double(*x) + ": must be " +
                                        bounded_utility_rule);
        } else if (x) {
          const std::size_t actions =
              a.has("utility") ? a.get<std::vector<std::vector<double>>>("utility").size() : 2;
          a.set("abstain", std::vector<double>(classes.value_or(actions), *x));
          ok = true;
        }
      } else if (auto v = number_array(*u, pointer, "abstain utility", classes, bounded_utility,
                                       bounded_utility_rule, d.problems())) {
        a.set("abstain", std::move(*v));
        ok = true;
      }
    }
  }
  d.set_resolved("abstain", ab.take_resolved());
  return ok;
}

std::optional<DecisionSpec> build_cost_matrix(Args& a) {
  std::optional<std::vector<double>> abstain;
  if (a.has("abstain")) abstain = a.get<std::vector<double>>("abstain");
  return CostMatrixSpec{a.get<std::vector<std::vector<double>>>("utility"), std::move(abstain)};
}

// ---- selective, triage, betting -------------------------------------------------------------

std::optional<DecisionSpec> build_selective(Args& a) {
  return SelectiveSpec{a.classes().value_or(2), a.get<double>("threshold"), a.get<double>("cost")};
}

// `disease`: a class index, 1 by default when K = 2, required when K > 2.
constexpr std::int64_t default_disease = 1;

bool read_disease(Args& a) {
  ObjectReader& d = a.reader();
  const auto classes = a.classes();
  if (classes && *classes > 2 && d.find("disease") == nullptr) {
    d.require("disease", "the index of the disease class (required when classes > 2)");
    return false;
  }
  const auto disease = d.integer("disease", 0, default_disease);
  if (!disease) return false;
  if (classes && static_cast<std::size_t>(*disease) >= *classes) {
    d.problems().add(d.pointer_to("disease"), "disease = " + std::to_string(*disease) +
                                                  ": must be a class index < " +
                                                  std::to_string(*classes));
    return false;
  }
  a.set("disease", static_cast<std::size_t>(*disease));
  return true;
}

std::optional<DecisionSpec> build_triage(Args& a) {
  return TriageSpec{a.classes().value_or(2), a.get<std::size_t>("disease"),
                    a.get<double>("benefit"), a.get<double>("harm")};
}

bool read_odds(Args& a) {
  ObjectReader& d = a.reader();
  const Json* value = d.require("odds", "an array of decimal odds > 1, one per class");
  if (value == nullptr) return false;
  auto odds = number_array(
      *value, d.pointer_to("odds"), "odds", a.classes(),
      [](double x) { return x >= min_odds && x <= std::numeric_limits<double>::max(); },
      ">= 1.000001 (decimal odds)", d.problems());
  if (odds) a.set("odds", std::move(*odds));
  return odds.has_value();
}

std::optional<DecisionSpec> build_betting(Args& a) {
  return BettingSpec{a.get<std::vector<double>>("odds"), a.get<double>("fraction")};
}

}  // namespace

DecisionEntry cost_matrix_task() {
  return {
      .summary =
          R"(one action per class with utility[action][true class], optionally an abstain action;
policy: the action of highest expected utility under p (ties: the lowest index, so a
class action beats abstaining))",
      .params = {param::custom(
                     "utility", "K x K array of numbers", "required", "each in [-1e6, 1e6]",
                     "utility[a][k]: value of action a when the true class is k", read_utility,
                     {Json(true), Json::array({Json::array({1, "x"}), Json::array({0, 1})}),
                      Json::array({Json::array({1, 2e6}), Json::array({0, 1})})}),
                 param::custom("abstain", "object", "none",
                               "{\"utility\": number or one per class, in [-1e6, 1e6]}",
                               "an extra action with its own utility", read_abstain,
                               {Json(1.5), Json{{"utility", "x"}}, Json{{"utility", -2e6}}})},
      .example = R"({"utility": [[1, -2], [-1, 3]], "abstain": {"utility": -0.2}})",
      .notes = {{"figures", "abstention_rate (with abstain)"}},
      .build = build_cost_matrix};
}

DecisionEntry selective_task() {
  return {.summary =
              R"(predict argmax p when max p >= threshold, else defer at `cost`; a wrong prediction
costs 1, a correct one 0 (utility = -cost))",
          .params = {param::number(
                         "cost", 0.2, [](double x) { return x >= 0.0 && x <= max_utility; },
                         ">= 0 and <= 1e6", "the cost of deferring"),
                     param::number_after(
                         "threshold", "cost",
                         [](const Args& a) {
                           return std::optional<double>(
                               std::clamp(1.0 - a.get<double>("cost"), 0.0, 1.0));
                         },
                         "1 - cost", [](double x) { return x >= 0.0 && x <= 1.0; }, "in [0, 1]",
                         "confidence needed to predict (the default is Chow's optimal rule)")},
          .example = R"({"cost": 0.1})",
          .notes = {{"figures", "coverage, selective_accuracy, expected_cost"}},
          .build = build_selective};
}

DecisionEntry triage_task() {
  return {
      .summary =
          R"(treat when P(disease) > t* = harm / (benefit + harm); treating a diseased patient is
worth `benefit`, a healthy one costs `harm`, not treating is worth 0)",
      .params = {param::number("benefit", 1.0, utility_in_range, "> 0 and <= 1e6",
                               "value of treating a diseased patient"),
                 param::number("harm", 1.0, utility_in_range, "> 0 and <= 1e6",
                               "cost of treating a healthy patient"),
                 param::custom("disease", "integer", std::to_string(default_disease) + " (K = 2)",
                               "a class index; required when K > 2", "the disease class",
                               read_disease, {Json(true), Json(-1), Json(5)})},
      .example = R"({"benefit": 1, "harm": 0.25})",
      .notes = {{"figures", "treated, helped, harmed, missed (fractions of patients)"}},
      .build = build_triage};
}

DecisionEntry betting_task() {
  return {.summary = R"(Kelly betting against decimal odds: stake fraction * the Kelly fraction
(q_k o_k - 1)/(o_k - 1) on the outcome of highest expected log-growth under p, no bet
without an edge; utility = realised log-growth of the bankroll per bet)",
          .params = {param::custom("odds", "array of numbers", "required",
                                   "one per class, each >= 1.000001", "decimal odds o_k", read_odds,
                                   {Json(true), Json::array({0.5, 2.0}), Json::array({2.0}),
                                    Json::array({1.0000001, 2.0})}),
                     param::number(
                         "fraction", 1.0, [](double x) { return x > 0.0 && x <= 1.0; },
                         "> 0 and <= 1", "fractional Kelly multiplier (1: full Kelly)")},
          .example = R"({"odds": [1.9, 1.9], "fraction": 0.5})",
          .notes = {{"figures", "bet_rate, mean_stake, win_rate"}},
          .build = build_betting};
}

// ---- the table ------------------------------------------------------------------------------

// The tasks a config can name, in listing order: a new task is its row and a line here.
const std::vector<DecisionEntry>& decision_registry() {
  static const std::vector<DecisionEntry> rows = {
      named("cost_matrix", cost_matrix_task()),
      named("selective", selective_task()),
      named("triage", triage_task()),
      named("betting", betting_task()),
  };
  return rows;
}

}  // namespace calbench
