#include "config/generator_config.hpp"

#include <cmath>

#include "core/format.hpp"

namespace calbench {
namespace {

// Beyond this K the per-row vectors stop fitting a sensible memory budget; catching it here
// turns an allocation failure deep in a run into a config error.
constexpr std::int64_t max_classes = 1'000'000;

}  // namespace

std::string count_text(std::optional<std::size_t> length) {
  return length ? std::to_string(*length) + " " : std::string();
}

// An array of `length` (when known) numbers; positive ones when `positive`. Elements are
// named "NAME[i]" in messages and have pointer POINTER/i.
std::optional<std::vector<double>> read_vector(const Json& value, const std::string& pointer,
                                               std::string_view name, bool positive,
                                               std::optional<std::size_t> length,
                                               Problems& problems) {
  const std::string expected = "expected an array of " + count_text(length) + "numbers" +
                               (positive ? " > 0" : "") + " (one per class)";
  if (!value.is_array()) {
    problems.add(pointer, expected + ", found " + describe(value));
    return std::nullopt;
  }
  bool ok = true;
  if (length && value.size() != *length) {
    problems.add(pointer, expected + ", found an array of " + std::to_string(value.size()));
    ok = false;
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string at = pointer_join(pointer, i);
    const auto x = positive
                       ? read_positive(value[i], at,
                                       std::string(name) + "[" + std::to_string(i) + "]", problems)
                       : read_number(value[i], at, problems);
    if (x)
      out.push_back(*x);
    else
      ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

// alpha: a number (symmetric; kept a number in the resolved config) or one per class.
std::optional<std::vector<double>> parse_alpha(ObjectReader& g,
                                               std::optional<std::size_t> classes) {
  const Json* value = g.find("alpha");
  if (value == nullptr) {
    g.add_default("alpha", 1.0);
    return std::vector<double>{1.0};
  }
  const std::string pointer = g.pointer_to("alpha");
  if (value->is_array()) return read_vector(*value, pointer, "alpha", true, classes, g.problems());
  if (!value->is_number()) {
    g.problems().add(pointer, "expected a number > 0 or an array of " + count_text(classes) +
                                  "numbers > 0 (one per class), found " + describe(*value));
    return std::nullopt;
  }
  const auto a = read_positive(*value, pointer, "alpha", g.problems());
  if (!a) return std::nullopt;
  return std::vector<double>{*a};
}

std::optional<std::size_t> parse_classes(ObjectReader& g) {
  const auto classes = g.integer("classes", 2);
  if (!classes) return std::nullopt;
  if (*classes > max_classes) {
    g.problems().add(g.pointer_to("classes"), "classes = " + std::to_string(*classes) +
                                                  ": must be <= " + std::to_string(max_classes));
    return std::nullopt;
  }
  return static_cast<std::size_t>(*classes);
}

namespace {

// A number in [0, 1): weights and masses.
constexpr auto unit_half_open = [](double x) { return x >= 0.0 && x < 1.0; };

// A finite number, required.
std::optional<double> read_finite(ObjectReader& g, std::string_view key) {
  const Json* value = g.require(key, "a finite number");
  if (value == nullptr) return std::nullopt;
  return read_number(*value, g.pointer_to(key), g.problems());
}

// A class distribution: K numbers >= 0 summing to 1 (within 1e-9).
std::optional<std::vector<double>> read_distribution(const Json& value, const std::string& pointer,
                                                     std::string_view name,
                                                     std::optional<std::size_t> classes,
                                                     Problems& problems) {
  auto v = read_vector(value, pointer, name, false, classes, problems);
  if (!v) return std::nullopt;
  double total = 0.0;
  bool ok = true;
  for (std::size_t k = 0; k < v->size(); ++k) {
    if ((*v)[k] < 0.0) {
      problems.add(pointer_join(pointer, k), std::string(name) + "[" + std::to_string(k) + "] = " +
                                                 format_double((*v)[k]) + ": must be >= 0");
      ok = false;
    }
    total += (*v)[k];
  }
  if (ok && std::abs(total - 1.0) > 1e-9) {
    problems.add(pointer, std::string(name) + " sums to " + format_double(total) +
                              ": must sum to 1 (within 1e-9)");
    ok = false;
  }
  if (!ok) return std::nullopt;
  return v;
}

}  // namespace

// ---- dirichlet with a target ------------------------------------------------------------------

std::optional<ParsedGenerator> parse_dirichlet_target(ObjectReader& g,
                                                      std::optional<std::size_t> classes) {
  bool ok = true;
  if (g.find("alpha") != nullptr) {
    g.problems().add(g.pointer_to("alpha"),
                     "alpha is solved from \"target\"; give either alpha or target, not both");
    ok = false;
  }
  ObjectReader t(*g.find("target"), g.pointer_to("target"), g.problems());
  DirichletTarget target;
  if (t.is_object()) {
    t.allow_only({"accuracy", "ece_top_l1", "direction"});
    const Json* acc = t.require("accuracy", "a number between 1/K and 1");
    const Json* ece = t.require("ece_top_l1", "a number >= 0");
    double a = 0.0, e = 0.0;
    bool have_a = false, have_e = false;
    if (acc != nullptr)
      if (const auto x = read_number(*acc, t.pointer_to("accuracy"), t.problems())) {
        a = *x;
        have_a = true;
      }
    if (ece != nullptr)
      if (const auto x = read_number(*ece, t.pointer_to("ece_top_l1"), t.problems())) {
        e = *x;
        have_e = e >= 0.0;
        if (!have_e)
          t.problems().add(t.pointer_to("ece_top_l1"),
                           "ece_top_l1 = " + format_double(e) + ": must be >= 0");
      }
    static const std::vector<Choice<TargetDirection>> directions = {
        {"overconfident", TargetDirection::overconfident},
        {"underconfident", TargetDirection::underconfident}};
    const auto direction =
        t.choice("direction", "direction", directions, TargetDirection::overconfident);
    if (have_a && have_e && direction.has_value()) {
      target.accuracy = a;
      target.ece_top_l1 = e;
      target.direction = *direction;
    } else {
      ok = false;
    }
  } else {
    ok = false;
  }
  g.set_resolved("target", t.take_resolved());

  // miscalibration: {"map": "temperature" | "top_label"}, the parameter solved.
  const std::string map_pointer = g.pointer_to("miscalibration");
  const Json* value =
      g.require("miscalibration", "{\"map\": \"temperature\"} or {\"map\": \"top_label\"}");
  if (value != nullptr) {
    ObjectReader m(*value, map_pointer, g.problems());
    if (m.is_object()) {
      static const std::vector<Choice<TargetMap>> maps = {{"temperature", TargetMap::temperature},
                                                          {"top_label", TargetMap::top_label}};
      const Json* name = m.require("map", "temperature or top_label (the maps a target can solve)");
      for (const auto& item : value->items()) {
        if (item.key() == "map") continue;
        m.problems().add(m.pointer_to(item.key()),
                         "the map's parameter is solved from \"target\"; remove " +
                             quote(item.key()) +
                             " (or give alpha and the parameter instead of "
                             "a target)");
        ok = false;
      }
      std::optional<TargetMap> map;
      if (name != nullptr)
        map = read_choice(*name, m.pointer_to("map"), "target map", maps, m.problems());
      if (map)
        target.map = *map;
      else
        ok = false;
    } else {
      ok = false;
    }
    g.set_resolved("miscalibration", m.take_resolved());
  } else {
    ok = false;
  }
  if (!ok || !classes) return std::nullopt;
  target.classes = *classes;
  // The placeholder is the target's own solution for ece 0 at alpha 1.
  return ParsedGenerator{target_spec(target, 1.0, 1.0), target};
}

// ---- class_conditional ------------------------------------------------------------------------

std::optional<ParsedGenerator> parse_class_conditional(ObjectReader& g) {
  const auto classes = parse_classes(g);
  std::optional<std::vector<double>> prior;
  if (const Json* value = g.find("prior")) {
    prior = read_distribution(*value, g.pointer_to("prior"), "prior", classes, g.problems());
    if (prior)
      for (std::size_t k = 0; k < prior->size(); ++k)
        if (!((*prior)[k] > 0.0)) {
          g.problems().add(pointer_join(g.pointer_to("prior"), k),
                           "prior[" + std::to_string(k) + "] = 0: every class needs prior > 0");
          prior.reset();
          break;
        }
  } else {
    prior = std::vector<double>{};  // uniform, filled in by the generator
    if (classes)
      g.add_default("prior", std::vector<double>(*classes, 1.0 / static_cast<double>(*classes)));
  }
  std::optional<std::vector<double>> alpha;
  const bool by_matrix = g.find("alpha") != nullptr;
  const bool by_pair = g.find("concentration") != nullptr || g.find("correct_class") != nullptr;
  if (by_matrix && by_pair) {
    g.problems().add(g.pointer(),
                     "give either \"alpha\" (a K x K matrix) or \"concentration\" "
                     "and \"correct_class\", not both");
  } else if (by_matrix) {
    const Json& value = *g.find("alpha");
    const std::string pointer = g.pointer_to("alpha");
    const std::string expected =
        "expected a " +
        (classes ? std::to_string(*classes) + " x " + std::to_string(*classes)
                 : std::string("K x K")) +
        " matrix of numbers > 0 (row k: alpha^(k), the Dirichlet of p "
        "given y = k)";
    if (!value.is_array() || (classes && value.size() != *classes)) {
      g.problems().add(
          pointer,
          expected + ", found " +
              (value.is_array() ? "an array of " + std::to_string(value.size()) : describe(value)));
    } else {
      std::vector<double> matrix;
      bool ok = true;
      for (std::size_t i = 0; i < value.size(); ++i) {
        const auto row =
            read_vector(value[i], pointer_join(pointer, i), "alpha[" + std::to_string(i) + "]",
                        true, classes, g.problems());
        if (row)
          matrix.insert(matrix.end(), row->begin(), row->end());
        else
          ok = false;
      }
      if (ok) alpha = std::move(matrix);
    }
  } else {
    const auto a = g.positive("concentration");
    const auto b = g.positive("correct_class");
    if (a && b && classes) alpha = class_conditional_alpha(*classes, *a, *b);
  }
  if (!classes || !prior || !alpha) return std::nullopt;
  return ParsedGenerator{ClassConditionalSpec{*classes, std::move(*prior), std::move(*alpha)}, {}};
}

// ---- label_noise ------------------------------------------------------------------------------

std::optional<ParsedGenerator> parse_label_noise(ObjectReader& g) {
  const auto classes = parse_classes(g);
  const auto alpha = parse_alpha(g, classes);
  const auto weight = g.number("weight", std::nullopt, unit_half_open, ">= 0 and < 1");
  std::optional<std::vector<double>> beta;
  const Json* value = g.find("beta");
  if (value == nullptr) {
    g.add_default("beta", 0);
    if (classes) {
      beta = std::vector<double>(*classes, 0.0);
      (*beta)[0] = 1.0;
    }
  } else if (value->is_array()) {
    beta = read_distribution(*value, g.pointer_to("beta"), "beta", classes, g.problems());
  } else {
    // A class index j: beta = e_j, the unit vector of Widmann et al.'s simulation.
    const auto j = read_integer(*value, g.pointer_to("beta"), 0, g.problems());
    if (j && classes && static_cast<std::size_t>(*j) >= *classes) {
      g.problems().add(g.pointer_to("beta"),
                       "beta = " + std::to_string(*j) +
                           ": a class index must be < classes = " + std::to_string(*classes));
    } else if (j && classes) {
      beta = std::vector<double>(*classes, 0.0);
      (*beta)[static_cast<std::size_t>(*j)] = 1.0;
    }
  }
  if (!classes || !alpha || !weight || !beta) return std::nullopt;
  LabelNoiseSpec spec;
  spec.classes = *classes;
  spec.alpha = alpha->size() == 1 ? std::vector<double>(*classes, alpha->front()) : *alpha;
  spec.weight = *weight;
  spec.beta = std::move(*beta);
  return ParsedGenerator{std::move(spec), {}};
}

// ---- beta_binary ------------------------------------------------------------------------------

std::optional<ParsedGenerator> parse_beta_binary(ObjectReader& g) {
  bool ok = true;
  if (const auto classes = g.integer("classes", 2, 2); !classes) {
    ok = false;
  } else if (*classes != 2) {
    g.problems().add(g.pointer_to("classes"), "classes = " + std::to_string(*classes) +
                                                  ": beta_binary has K = 2 (omit it or give 2)");
    ok = false;
  }
  const auto a = g.positive("a");
  const auto b = g.positive("b");
  const auto mass = g.number("point_mass", 0.0, unit_half_open, ">= 0 and < 1");
  static const Json identity = {{"curve", "identity"}};
  const Json* value = g.find("calibration");
  ObjectReader c(value != nullptr ? *value : identity, g.pointer_to("calibration"), g.problems());
  std::optional<CalibrationCurve> curve;
  if (c.is_object()) {
    static const std::vector<Choice<int>> names = {
        {"identity", 0}, {"polynomial", 1}, {"logistic", 2}, {"logit_logit", 3}};
    const Json* name = c.require("curve", "one of: identity, polynomial, logistic, logit_logit");
    std::optional<int> which;
    if (name != nullptr)
      which = read_choice(*name, c.pointer_to("curve"), "calibration curve", names, c.problems());
    if (which) {
      switch (*which) {
        case 0:
          c.allow_only({"curve"});
          curve = IdentityCurve{};
          break;
        case 1: {
          c.allow_only({"curve", "d"});
          if (const auto d = c.positive("d")) curve = PolynomialCurve{*d};
          break;
        }
        default: {
          c.allow_only({"curve", "a", "b"});
          const auto ca = read_finite(c, "a");
          const auto cb = read_finite(c, "b");
          if (ca && cb) {
            if (*which == 2)
              curve = LogisticCurve{*ca, *cb};
            else
              curve = LogitLogitCurve{*ca, *cb};
          }
        }
      }
    }
  }
  g.set_resolved("calibration", c.take_resolved());
  if (!ok || !a || !b || !mass || !curve) return std::nullopt;
  return ParsedGenerator{BetaBinarySpec{*a, *b, *mass, *curve}, {}};
}

// ---- reporting a solved target ----------------------------------------------------------------

Json target_json(const DirichletTarget& target, const TargetSolution& solution) {
  auto truth = [](const TruthValue& v) {
    return Json{
        {"value", v.value}, {"method", std::string(to_string(v.method))}, {"error", v.error}};
  };
  Json solved = Json::object();
  solved["alpha"] = solution.alpha;
  solved[target.map == TargetMap::temperature ? "temperature" : "gamma"] = solution.parameter;
  return Json{
      {"accuracy", target.accuracy},
      {"ece_top_l1", target.ece_top_l1},
      {"direction", std::string(to_string(target.direction))},
      {"map", std::string(to_string(target.map))},
      {"solved", solved},
      {"achieved",
       {{"accuracy", truth(solution.accuracy)}, {"ece_top_l1", truth(solution.ece_top_l1)}}}};
}

}  // namespace calbench
