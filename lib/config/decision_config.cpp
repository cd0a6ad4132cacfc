#include "config/decision_config.hpp"

#include <algorithm>
#include <cmath>

#include "config/decision_registry.hpp"
#include "core/error.hpp"
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

bool finite(double x) {
  return std::isfinite(x);
}

// ---- the rows -------------------------------------------------------------------------------

std::optional<DecisionSpec> parse_cost_matrix(ObjectReader& d, std::optional<std::size_t> classes) {
  const Json* value = d.require("utility", "a K x K array: utility[action][true class]");
  std::optional<std::vector<std::vector<double>>> utility;
  if (value != nullptr) {
    const std::string pointer = d.pointer_to("utility");
    const std::string shape = classes ? std::to_string(*classes) + " x " + std::to_string(*classes)
                                      : std::string("K x K");
    if (!value->is_array() || value->empty()) {
      d.problems().add(pointer, "expected a " + shape +
                                    " array of rows utility[action][true class], found " +
                                    describe(*value));
    } else {
      const std::size_t K = classes.value_or(value->size());
      bool good = true;
      if (value->size() != K) {
        d.problems().add(pointer, "expected a " + shape +
                                      " array (one row per action = class), found " +
                                      std::to_string(value->size()) + " rows");
        good = false;
      }
      std::vector<std::vector<double>> rows;
      for (std::size_t a = 0; a < value->size(); ++a) {
        auto row =
            number_array((*value)[a], pointer_join(pointer, a),
                         "utility[" + std::to_string(a) + "]", K, finite, "finite", d.problems());
        if (row)
          rows.push_back(std::move(*row));
        else
          good = false;
      }
      if (good) utility = std::move(rows);
    }
  }
  std::optional<std::vector<double>> abstain;
  bool abstain_ok = true;
  if (const Json* a = d.find("abstain")) {
    ObjectReader ab(*a, d.pointer_to("abstain"), d.problems());
    abstain_ok = false;
    if (ab.is_object()) {
      ab.allow_only({"utility"});
      if (const Json* u = ab.require("utility", "a number, or one per true class")) {
        const std::string pointer = ab.pointer_to("utility");
        if (u->is_number()) {
          if (const auto x = read_number(*u, pointer, d.problems())) {
            abstain = std::vector<double>(classes.value_or(utility ? utility->size() : 2), *x);
            abstain_ok = true;
          }
        } else if (auto v = number_array(*u, pointer, "abstain utility", classes, finite, "finite",
                                         d.problems())) {
          abstain = std::move(*v);
          abstain_ok = true;
        }
      }
    }
    d.set_resolved("abstain", ab.take_resolved());
  }
  if (!utility || !abstain_ok) return std::nullopt;
  return CostMatrixSpec{std::move(*utility), std::move(abstain)};
}

std::optional<DecisionSpec> parse_selective(ObjectReader& d, std::optional<std::size_t> classes) {
  const auto cost = d.number(
      "cost", 0.2, [](double x) { return std::isfinite(x) && x >= 0.0; }, ">= 0 and finite");
  const auto threshold = d.number(
      "threshold", cost ? std::optional<double>(std::clamp(1.0 - *cost, 0.0, 1.0)) : std::nullopt,
      [](double x) { return x >= 0.0 && x <= 1.0; }, "in [0, 1]");
  if (!cost || !threshold) return std::nullopt;
  return SelectiveSpec{classes.value_or(2), *threshold, *cost};
}

std::optional<DecisionSpec> parse_triage(ObjectReader& d, std::optional<std::size_t> classes) {
  const auto positive = [](double x) { return std::isfinite(x) && x > 0.0; };
  const auto benefit = d.number("benefit", 1.0, positive, "> 0 and finite");
  const auto harm = d.number("harm", 1.0, positive, "> 0 and finite");
  std::optional<std::int64_t> disease;
  if (classes && *classes > 2 && d.find("disease") == nullptr) {
    d.require("disease", "the index of the disease class (required when classes > 2)");
  } else {
    disease = d.integer("disease", 0, 1);
    if (disease && classes && static_cast<std::size_t>(*disease) >= *classes) {
      d.problems().add(d.pointer_to("disease"), "disease = " + std::to_string(*disease) +
                                                    ": must be a class index < " +
                                                    std::to_string(*classes));
      disease.reset();
    }
  }
  if (!benefit || !harm || !disease) return std::nullopt;
  return TriageSpec{classes.value_or(2), static_cast<std::size_t>(*disease), *benefit, *harm};
}

std::optional<DecisionSpec> parse_betting(ObjectReader& d, std::optional<std::size_t> classes) {
  const Json* value = d.require("odds", "an array of decimal odds > 1, one per class");
  std::optional<std::vector<double>> odds;
  if (value != nullptr)
    odds = number_array(
        *value, d.pointer_to("odds"), "odds", classes,
        [](double x) { return std::isfinite(x) && x > 1.0; }, "> 1 (decimal odds)", d.problems());
  const auto fraction = d.number(
      "fraction", 1.0, [](double x) { return x > 0.0 && x <= 1.0; }, "> 0 and <= 1");
  if (!odds || !fraction) return std::nullopt;
  return BettingSpec{std::move(*odds), *fraction};
}

std::vector<DecisionEntry> make_rows() {
  return {
      {"cost_matrix",
       "one action per class with utility[action][true class], optionally an abstain action;\n"
       "policy: the action of highest expected utility under p (ties: the lowest index, so a\n"
       "class action beats abstaining)",
       {{"utility", "K x K array of numbers", "required", "finite",
         "utility[a][k]: value of action a when the true class is k"},
        {"abstain", "object", "none", "{\"utility\": number or one per class}",
         "an extra action with its own utility"}},
       "abstention_rate (with abstain)",
       R"({"task": "cost_matrix", "utility": [[1, -2], [-1, 3]], "abstain": {"utility": -0.2}})",
       parse_cost_matrix},
      {"selective",
       "predict argmax p when max p >= threshold, else defer at `cost`; a wrong prediction\n"
       "costs 1, a correct one 0 (utility = -cost)",
       {{"cost", "number", "0.2", ">= 0", "the cost of deferring"},
        {"threshold", "number", "1 - cost", "in [0, 1]",
         "confidence needed to predict (the default is Chow's optimal rule)"}},
       "coverage, selective_accuracy, expected_cost",
       R"({"task": "selective", "cost": 0.1})",
       parse_selective},
      {"triage",
       "treat when P(disease) > t* = harm / (benefit + harm); treating a diseased patient is\n"
       "worth `benefit`, a healthy one costs `harm`, not treating is worth 0",
       {{"benefit", "number", "1", "> 0", "value of treating a diseased patient"},
        {"harm", "number", "1", "> 0", "cost of treating a healthy patient"},
        {"disease", "integer", "1 (K = 2)", "a class index; required when K > 2",
         "the disease class"}},
       "treated, helped, harmed, missed (fractions of patients)",
       R"({"task": "triage", "benefit": 1, "harm": 0.25})",
       parse_triage},
      {"betting",
       "Kelly betting against decimal odds: stake fraction * the Kelly fraction\n"
       "(q_k o_k - 1)/(o_k - 1) on the outcome of highest expected log-growth under p, no bet\n"
       "without an edge; utility = realised log-growth of the bankroll per bet",
       {{"odds", "array of numbers", "required", "one per class, each > 1", "decimal odds o_k"},
        {"fraction", "number", "1", "in (0, 1]", "fractional Kelly multiplier (1: full Kelly)"}},
       "bet_rate, mean_stake, win_rate",
       R"({"task": "betting", "odds": [1.9, 1.9], "fraction": 0.5})",
       parse_betting},
  };
}

}  // namespace

const std::vector<DecisionEntry>& decision_registry() {
  static const std::vector<DecisionEntry> rows = make_rows();
  return rows;
}

std::vector<std::string> decision_names() {
  return names_of(decision_registry());
}

std::string format_decisions() {
  std::string out =
      "DECISION TASKS  (scenario decision: \"decision\": {\"task\": NAME, PARAMS...})\n";
  for (const auto& row : decision_registry()) {
    out.append(1, '\n');
    std::string summary = row.summary;
    std::string indented;
    for (char ch : summary) {
      indented.push_back(ch);
      if (ch == '\n') indented.append(row.name.size() + 4, ' ');
    }
    out += "  " + row.name + "  " + indented + "\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : row.params)
      rows.push_back({p.key, p.type,
                      p.fallback == "required" ? std::string("required") : "default " + p.fallback,
                      p.rule, p.doc});
    out += "    parameters:\n" + aligned_columns(rows, "      ");
    out += "    figures:  " + row.figures + "\n";
    out += "    example:  " + row.example + "\n";
  }
  out +=
      "\n  every task also reports expected_utility, oracle_expected_utility and\n"
      "  miscalibration_cost (= oracle - policy); any of them can be a requirement's metric\n";
  return out;
}

const std::vector<std::string>& common_decision_metrics() {
  static const std::vector<std::string> names = {"expected_utility", "oracle_expected_utility",
                                                 "miscalibration_cost"};
  return names;
}

}  // namespace calbench
