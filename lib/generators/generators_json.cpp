// Registry rows of the miscalibration maps and generator families: parameters,
// documentation and construction of a GeneratorSpec from a `generator` object.
#include "generators/generators_json.hpp"

#include <cmath>
#include <cstdio>

#include "config/registry.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/sha256.hpp"
#include "data/npy.hpp"

namespace calbench {
namespace {

// Beyond this K the per-row vectors stop fitting a sensible memory budget; catching it here
// turns an allocation failure deep in a run into a config error.
constexpr std::int64_t max_classes = 1'000'000;

// ---- bounds -----------------------------------------------------------------------------------
// Where the mathematics or double precision stops carrying a parameter (docs/generators.md,
// "Parameter bounds"). Each bound was found by sweeping the parameter with `calbench run` and
// comparing the truth with the sampled accuracy and Brier score (z within 3) at K = 2, 3, 10.
struct Bounds {
  double lo, hi;
};

// Dirichlet concentrations (alpha, concentration, correct_class, class_conditional's matrix).
// Above 1e3 Boost's regularised incomplete gamma P(a, x), which the exact accuracy integral
// and class_conditional's truth evaluate, overflows tgamma<long double> (a > 1755) or stops
// converging (the run died with "Result of tgamma is too large" at alpha 2000); at alpha
// 1e3 c is within 1/sqrt(K alpha) of uniform anyway. Below 1e-4 a draw's non-top components
// underflow to exactly 0 with probability 1 - exp(-709 alpha) > 0.93 (u^(1/alpha) < 1e-308):
// p is a vertex of the simplex in double precision and the log-loss truths grow like 1/alpha
// (label_noise NLL 1.3e299 at alpha 1e-300).
constexpr Bounds concentration_bounds{concentration_min, concentration_max};
// temperature: p_k proportional to c_k^(1/T) = softmax(log c / T). Above 1e6 the differences
// (log c_i - log c_j) / T fall below the spacing of doubles near 1 for a fraction ~T 1e-16 of
// draws, so p has exact ties the truth (argmax kept) does not have: at T = 1e17 every sample
// was a tie and the truth said accuracy 0.70. Below 1e-4 p is one-hot in double precision for
// every gap of log c above 0.07 and NLL grows like 1/T.
constexpr Bounds temperature_bounds{1e-4, 1e6};
// top_label gamma: g(m) - 1/K = (1 - 1/K) u^gamma. Above 100, u^gamma is below the double
// spacing of 1/K for u < 2^(-53/gamma) = 0.69, so the top component ties its runner-up (K = 2)
// and the argmax the samples use is not the truth's (K = 2, gamma 1000: z = -10.7 on
// accuracy). Below 1e-4 as the temperature.
constexpr Bounds gamma_bounds{1e-4, 100};
// power exponents t_k: a temperature per class, the same reasoning (as 1/T); above 100 the
// run did not finish in 60 s at K = 3.
constexpr Bounds exponent_bounds{1e-4, 100};
// affine_logit weights: W acts on log c as 1/T does, so |W_ij| <= 1/1e-4.
constexpr Bounds weight_bounds{-1e4, 1e4};
// affine_logit bias: a gap of 745 between two softmax arguments already makes a p_k exactly
// 0 (e^-745 is below the smallest double); beyond |b_k| = 700 the map is degenerate, and at
// 1e308 the arguments overflow (the truths were NaN, written as null).
constexpr Bounds bias_bounds{-700, 700};
// beta_binary a, b: Beta(1e-4, 1) and Beta(1e4, 1) gave a Brier truth off by z = -590 and
// -73,528 (the quadrature misses mass within 1e-300 of 0 or 1); [1e-2, 1e3] checked.
constexpr Bounds beta_shape_bounds{beta_shape_min, beta_shape_max};

bool in_beta_shape_bounds(double x) {
  return x >= beta_shape_bounds.lo && x <= beta_shape_bounds.hi;
}

// ">= 0.0001 and <= 1000": %g, the shortest way to write a round bound.
std::string bounds_rule(Bounds b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, ">= %g and <= %g", b.lo, b.hi);
  return buf;
}

// x within b, else "NAME = X: must be >= LO and <= HI" at `pointer`.
bool check_bounds(double x, Bounds b, std::string_view name, const std::string& pointer,
                  Problems& problems) {
  if (x >= b.lo && x <= b.hi) return true;
  problems.add(pointer,
               std::string(name) + " = " + format_double(x) + ": must be " + bounds_rule(b));
  return false;
}

std::string count_text(std::optional<std::size_t> length) {
  return length ? std::to_string(*length) + " " : std::string();
}

// An array of `length` (when known) numbers; positive ones when `positive`. Elements are
// named "NAME[i]" in messages and have pointer POINTER/i.
std::optional<std::vector<double>> read_vector(const Json& value, const std::string& pointer,
                                               std::string_view name, bool positive,
                                               std::optional<std::size_t> length,
                                               Problems& problems,
                                               std::optional<Bounds> bounds = std::nullopt) {
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
    const std::string element = std::string(name) + "[" + std::to_string(i) + "]";
    const auto x = positive ? read_positive(value[i], at, element, problems)
                            : read_number(value[i], at, problems);
    if (x && (!bounds || check_bounds(*x, *bounds, element, at, problems)))
      out.push_back(*x);
    else
      ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

// alpha: a number (symmetric; kept a number in the resolved config) or one per class.
std::optional<std::vector<double>> parse_alpha(ObjectReader& g, std::optional<std::size_t> classes,
                                               double fallback) {
  const Json* value = g.find("alpha");
  if (value == nullptr) {
    g.add_default("alpha", fallback);
    return std::vector<double>{fallback};
  }
  const std::string pointer = g.pointer_to("alpha");
  if (value->is_array())
    return read_vector(*value, pointer, "alpha", true, classes, g.problems(), concentration_bounds);
  if (!value->is_number()) {
    g.problems().add(pointer, "expected a number > 0 or an array of " + count_text(classes) +
                                  "numbers > 0 (one per class), found " + describe(*value));
    return std::nullopt;
  }
  const auto a = read_positive(*value, pointer, "alpha", g.problems());
  if (!a || !check_bounds(*a, concentration_bounds, "alpha", pointer, g.problems()))
    return std::nullopt;
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

// A number in [0, 1): masses.
bool unit_half_open(double x) {
  return x >= 0.0 && x < 1.0;
}

// A number in [0, 1]: label_noise's weight.
bool unit_closed(double x) {
  return x >= 0.0 && x <= 1.0;
}

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
                             R"( (or give alpha and the parameter instead of a target))");
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

// `prior`: K numbers > 0 summing to 1; absent: uniform (filled in by the generator).
bool read_prior(Args& args) {
  ObjectReader& g = args.reader();
  const auto classes = args.classes();
  const Json* value = g.find("prior");
  if (value == nullptr) {
    if (classes)
      g.add_default("prior", std::vector<double>(*classes, 1.0 / static_cast<double>(*classes)));
    args.set("prior", std::vector<double>{});
    return true;
  }
  auto prior = read_distribution(*value, g.pointer_to("prior"), "prior", classes, g.problems());
  if (!prior) return false;
  for (std::size_t k = 0; k < prior->size(); ++k)
    if (!((*prior)[k] > 0.0)) {
      g.problems().add(pointer_join(g.pointer_to("prior"), k),
                       "prior[" + std::to_string(k) + "] = 0: every class needs prior > 0");
      return false;
    }
  args.set("prior", std::move(*prior));
  return true;
}

// `alpha` of class_conditional, read with `concentration` and `correct_class`: alpha^(k),
// row-major, from a K x K matrix or from the pair.
bool read_class_alphas(Args& args) {
  ObjectReader& g = args.reader();
  const auto classes = args.classes();
  std::optional<std::vector<double>> alpha;
  const bool by_matrix = g.find("alpha") != nullptr;
  const bool by_pair = g.find("concentration") != nullptr || g.find("correct_class") != nullptr;
  if (by_matrix && by_pair) {
    g.problems().add(
        g.pointer(),
        R"(give either "alpha" (a K x K matrix) or "concentration" and "correct_class", not both)");
  } else if (by_matrix) {
    const Json& value = *g.find("alpha");
    const std::string pointer = g.pointer_to("alpha");
    const std::string expected =
        "expected a " +
        (classes ? std::to_string(*classes) + " x " + std::to_string(*classes)
                 : std::string("K x K")) +
        R"( matrix of numbers > 0 (row k: alpha^(k), the Dirichlet of p given y = k))";
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
                        true, classes, g.problems(), concentration_bounds);
        if (row)
          matrix.insert(matrix.end(), row->begin(), row->end());
        else
          ok = false;
      }
      if (ok) alpha = std::move(matrix);
    }
  } else {
    auto bounded = [&g](std::string_view key) -> std::optional<double> {
      const auto x = g.positive(key);
      if (x && !check_bounds(*x, concentration_bounds, key, g.pointer_to(key), g.problems()))
        return std::nullopt;
      return x;
    };
    const auto a = bounded("concentration");
    const auto b = bounded("correct_class");
    if (a && b && classes) alpha = class_conditional_alpha(*classes, *a, *b);
  }
  if (alpha) args.set("alpha", std::move(*alpha));
  return alpha.has_value();
}

// ---- label_noise ------------------------------------------------------------------------------

constexpr std::int64_t default_beta_class = 0;

// `beta`: a class index j (beta = e_j, the unit vector of Widmann et al.'s simulation) or a
// class distribution; absent: class 0.
bool read_beta(Args& args) {
  ObjectReader& g = args.reader();
  const auto classes = args.classes();
  const Json* value = g.find("beta");
  std::optional<std::vector<double>> beta;
  std::optional<std::int64_t> j;
  if (value == nullptr) {
    g.add_default("beta", default_beta_class);
    j = default_beta_class;
  } else if (value->is_array()) {
    beta = read_distribution(*value, g.pointer_to("beta"), "beta", classes, g.problems());
  } else {
    j = read_integer(*value, g.pointer_to("beta"), 0, g.problems());
    if (j && classes && static_cast<std::size_t>(*j) >= *classes) {
      g.problems().add(g.pointer_to("beta"),
                       "beta = " + std::to_string(*j) +
                           ": a class index must be < classes = " + std::to_string(*classes));
      return false;
    }
  }
  if (j && classes) {
    beta = std::vector<double>(*classes, 0.0);
    (*beta)[static_cast<std::size_t>(*j)] = 1.0;
  }
  if (!beta) return false;
  args.set("beta", std::move(*beta));
  return true;
}

// ---- beta_binary ------------------------------------------------------------------------------

// `classes` of beta_binary: 2, the only value.
constexpr std::int64_t binary_classes = 2;

bool read_two_classes(Args& args) {
  ObjectReader& g = args.reader();
  const auto classes = g.integer("classes", binary_classes, binary_classes);
  if (!classes) return false;
  if (*classes != binary_classes) {
    g.problems().add(g.pointer_to("classes"), "classes = " + std::to_string(*classes) +
                                                  ": beta_binary has K = 2 (omit it or give 2)");
    return false;
  }
  return true;
}

// `calibration` {"curve": NAME, PARAMS}; absent: the identity.
const Json& default_calibration() {
  static const Json identity = {{"curve", "identity"}};
  return identity;
}

bool read_calibration(Args& args) {
  ObjectReader& g = args.reader();
  const Json* value = g.find("calibration");
  ObjectReader c(value != nullptr ? *value : default_calibration(), g.pointer_to("calibration"),
                 g.problems());
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
  if (curve) args.set("calibration", *curve);
  return curve.has_value();
}

// A K x K matrix as an array of K rows, returned row-major.
std::optional<std::vector<double>> read_matrix(const Json& value, const std::string& pointer,
                                               std::optional<std::size_t> classes,
                                               Problems& problems) {
  const std::string shape =
      classes ? std::to_string(*classes) + " x " + std::to_string(*classes) : std::string("K x K");
  const std::string expected = "expected a " + shape + " matrix (an array of " +
                               count_text(classes) + "rows, one per class)";
  if (!value.is_array()) {
    problems.add(pointer, expected + ", found " + describe(value));
    return std::nullopt;
  }
  bool ok = true;
  if (classes && value.size() != *classes) {
    problems.add(pointer, expected + ", found an array of " + std::to_string(value.size()));
    ok = false;
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto row = read_vector(value[i], pointer_join(pointer, i), "weights", false, classes,
                                 problems, weight_bounds);
    if (row)
      out.insert(out.end(), row->begin(), row->end());
    else
      ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

// ---- parameters shared by the rows ------------------------------------------------------------

constexpr double default_alpha = 1.0;

Param classes_param() {
  return param::custom("classes", "integer", "required", ">= 2", "the number of classes K",
                       [](Args& args) {
                         const auto classes = parse_classes(args.reader());
                         if (classes) {
                           args.set("classes", *classes);
                           args.set_classes(*classes);
                         }
                         return classes.has_value();
                       },
                       {Json(true), Json(1)});
}

// `alpha`, a number or one per class; not read when the dirichlet family is given a target
// (parse_dirichlet_target reports an alpha given with it).
Param alpha_param(std::string doc) {
  return param::custom("alpha", "number or array", format_double(default_alpha),
                       std::string("in ") + concentration_range + ", or one per class",
                       std::move(doc),
                       [](Args& args) {
                         if (args.reader().find("target") != nullptr) return true;
                         auto alpha = parse_alpha(args.reader(), args.classes(), default_alpha);
                         if (alpha) args.set("alpha", std::move(*alpha));
                         return alpha.has_value();
                       },
                       {Json(true), Json(0.0), Json::array({1.0, -1.0}),
                        Json(concentration_bounds.lo / 10.0), Json(concentration_bounds.hi * 10.0),
                        Json::array({1.0, 1.0, concentration_bounds.hi * 10.0})});
}

std::vector<double> expand(const std::vector<double>& alpha, std::size_t classes) {
  return alpha.size() == 1 ? std::vector<double>(classes, alpha.front()) : alpha;
}

// A parameter another one's reader reads with it; `excludes`: the keys it cannot be given with.
Param read_with_another(std::string key, std::string type, std::string fallback, std::string rule,
                        std::string doc, std::vector<Json> bad, std::vector<std::string> excludes) {
  Param p = param::custom(std::move(key), std::move(type), std::move(fallback), std::move(rule),
                          std::move(doc), nullptr, std::move(bad));
  p.excludes = std::move(excludes);
  return p;
}

// `alpha` reads the pair too (read_with_another above), so that it is read with them.
Param class_alphas_param() {
  Param p = param::custom("alpha", "array of arrays", "none",
                          std::string("K x K, in ") + concentration_range + ", instead of the pair",
                          "row k is alpha^(k)", read_class_alphas,
                          {Json(true), Json::array({Json::array({1, 1, 1})}),
                           Json::array({Json::array({1, 1, 1}), Json::array({1, 1, 1}),
                                        Json::array({1, 1, concentration_bounds.hi * 10.0})})});
  p.excludes = {"concentration", "correct_class"};
  return p;
}

// ---- maps -------------------------------------------------------------------------------------

std::optional<MiscalibrationMap> build_identity(Args&) {
  return IdentityMap{};
}
std::optional<MiscalibrationMap> build_temperature(Args& a) {
  return TemperatureMap{a.get<double>("temperature")};
}
std::optional<MiscalibrationMap> build_top_label(Args& a) {
  return TopLabelMap{a.get<double>("gamma")};
}
std::optional<MiscalibrationMap> build_power(Args& a) {
  return PowerMap{a.get<std::vector<double>>("exponents")};
}
std::optional<MiscalibrationMap> build_quantize(Args& a) {
  return QuantizeMap{static_cast<std::size_t>(a.get<std::int64_t>("levels"))};
}
std::optional<MiscalibrationMap> build_affine_logit(Args& a) {
  // Without K the default bias is unknown; the family has reported why K is unknown.
  if (!a.has("bias")) return std::nullopt;
  return AffineLogitMap{a.get<std::vector<double>>("weights"), a.get<std::vector<double>>("bias")};
}

bool read_exponents(Args& a) {
  ObjectReader& m = a.reader();
  const Json* value = m.require("exponents", "an array of numbers > 0, one per class");
  if (value == nullptr) return false;
  auto exponents = read_vector(*value, m.pointer_to("exponents"), "exponents", true, a.classes(),
                               m.problems(), exponent_bounds);
  if (exponents) a.set("exponents", std::move(*exponents));
  return exponents.has_value();
}

bool read_weights(Args& a) {
  ObjectReader& m = a.reader();
  const Json* value = m.require("weights", "a K x K matrix, one row per class");
  if (value == nullptr) return false;
  auto weights = read_matrix(*value, m.pointer_to("weights"), a.classes(), m.problems());
  if (weights) a.set("weights", std::move(*weights));
  return weights.has_value();
}

bool read_bias(Args& a) {
  ObjectReader& m = a.reader();
  std::optional<std::vector<double>> bias;
  if (const Json* value = m.find("bias")) {
    bias = read_vector(*value, m.pointer_to("bias"), "bias", false, a.classes(), m.problems(),
                       bias_bounds);
    if (!bias) return false;
  } else if (a.classes()) {
    bias = std::vector<double>(*a.classes(), 0.0);
    m.add_default("bias", *bias);
  }
  if (bias) a.set("bias", std::move(*bias));
  return true;
}

// ---- families ---------------------------------------------------------------------------------

bool read_miscalibration(Args& a) {
  if (a.reader().find("target") != nullptr) return true;
  auto map = parse_miscalibration(a.reader(), a.classes());
  if (map) a.set("miscalibration", std::move(*map));
  return map.has_value();
}

bool read_target(Args& a) {
  if (a.reader().find("target") == nullptr) return true;
  auto parsed = parse_dirichlet_target(a.reader(), a.classes());
  if (parsed) a.set("target", std::move(*parsed));
  return parsed.has_value();
}

std::optional<ParsedGenerator> build_dirichlet(Args& a) {
  if (a.has("target")) return a.get<ParsedGenerator>("target");
  DirichletSpec spec;
  spec.classes = a.get<std::size_t>("classes");
  spec.alpha = expand(a.get<std::vector<double>>("alpha"), spec.classes);
  spec.map = a.get<MiscalibrationMap>("miscalibration");
  return ParsedGenerator{std::move(spec), {}};
}

std::optional<ParsedGenerator> build_class_conditional(Args& a) {
  return ParsedGenerator{
      ClassConditionalSpec{a.get<std::size_t>("classes"), a.get<std::vector<double>>("prior"),
                           a.get<std::vector<double>>("alpha")},
      {}};
}

std::optional<ParsedGenerator> build_label_noise(Args& a) {
  LabelNoiseSpec spec;
  spec.classes = a.get<std::size_t>("classes");
  spec.alpha = expand(a.get<std::vector<double>>("alpha"), spec.classes);
  spec.weight = a.get<double>("weight");
  spec.beta = a.get<std::vector<double>>("beta");
  return ParsedGenerator{std::move(spec), {}};
}

std::optional<ParsedGenerator> build_beta_binary(Args& a) {
  return ParsedGenerator{
      BetaBinarySpec{a.get<double>("a"), a.get<double>("b"), a.get<double>("point_mass"),
                     a.get<CalibrationCurve>("calibration")},
      {}};
}

// ---- dirichlet_mixture ------------------------------------------------------------------------

// `components`: 1 to 16 objects {weight > 0, alpha (a number or one per class)}, weights summing
// to 1 within 1e-9.
bool read_components(Args& args) {
  ObjectReader& g = args.reader();
  const Json* value = g.require("components", "an array of {weight, alpha} objects");
  if (value == nullptr) return false;
  const std::string pointer = g.pointer_to("components");
  if (!value->is_array() || value->empty() || value->size() > max_mixture_components) {
    g.problems().add(pointer, "expected an array of 1 to " +
                                  std::to_string(max_mixture_components) +
                                  " {weight, alpha} objects, found " + describe(*value));
    return false;
  }
  std::vector<MixtureComponent> out;
  bool ok = true;
  double total = 0.0;
  for (std::size_t j = 0; j < value->size(); ++j) {
    ObjectReader c((*value)[j], pointer_join(pointer, j), g.problems());
    if (!c.is_object()) {
      ok = false;
      continue;
    }
    c.allow_only({"weight", "alpha"});
    const auto weight = c.positive("weight");
    std::optional<std::vector<double>> alpha;
    if (c.require("alpha", "a number > 0 or one per class") != nullptr)
      alpha = parse_alpha(c, args.classes(), default_alpha);
    if (!weight || !alpha || !args.classes()) {
      ok = false;
      continue;
    }
    total += *weight;
    out.push_back({*weight, expand(*alpha, *args.classes())});
  }
  if (ok && std::abs(total - 1.0) > 1e-9) {
    g.problems().add(
        pointer, "the weights sum to " + format_double(total) + ": must sum to 1 (within 1e-9)");
    ok = false;
  }
  if (ok) args.set("components", std::move(out));
  return ok;
}

// The map of a mixture: the dirichlet family's, restricted to those with r(p) = h^-1(p).
bool read_mixture_map(Args& a) {
  auto map = parse_miscalibration(a.reader(), a.classes());
  if (!map) return false;
  if (!mixture_accepts_map(*map)) {
    a.reader().problems().add(
        a.reader().pointer_to("miscalibration"),
        "map " + canonical_text(*map) +
            R"(: dirichlet_mixture accepts identity, temperature or power (injective maps, so r(p) = h^-1(p) whatever the component))");
    return false;
  }
  a.set("miscalibration", std::move(*map));
  return true;
}

std::optional<ParsedGenerator> build_dirichlet_mixture(Args& a) {
  return ParsedGenerator{DirichletMixtureSpec{a.get<std::size_t>("classes"),
                                              a.get<std::vector<MixtureComponent>>("components"),
                                              a.get<MiscalibrationMap>("miscalibration")},
                         {}};
}

// ---- empirical ---------------------------------------------------------------------------------

// `rows`: the model's confidence vectors, inline as an array of K-arrays, or the name of an NPY
// file (n, K) of float64, relative to the config's folder, whose SHA-256 `sha256` must match
// (a changed file is an error, not a silently different generator).
bool read_empirical_rows(Args& args) {
  ObjectReader& g = args.reader();
  Problems& problems = g.problems();
  const std::string pointer = g.pointer_to("rows");
  const Json* value = g.require("rows", "an array of confidence vectors or an NPY file's name");
  const Json* checksum = g.find("sha256");
  if (value == nullptr || !args.classes()) return false;
  const std::size_t K = *args.classes();
  auto rows = std::make_shared<std::vector<double>>();
  std::string file, sha;
  if (value->is_string()) {
    file = value->get<std::string>();
    if (checksum == nullptr || !checksum->is_string()) {
      problems.add(g.pointer_to("sha256"),
                   checksum == nullptr
                       ? "required key is missing with a rows file; expected the file's SHA-256"
                       : "expected the rows file's SHA-256 (64 hexadecimal digits), found " +
                             describe(*checksum));
      return false;
    }
    sha = checksum->get<std::string>();
    const std::filesystem::path path = std::filesystem::path(file).is_absolute()
                                           ? std::filesystem::path(file)
                                           : problems.base_directory / file;
    std::string actual;
    try {
      actual = sha256_file(path);
    } catch (const std::exception& error) {
      problems.add(pointer, std::string("rows file: ") + error.what());
      return false;
    }
    if (actual != sha) {
      // The file's own digest is not shown: a config must not be a way to learn the SHA-256 of
      // any file the user can read. `sha256sum FILE` shows it to whoever may see it.
      problems.add(g.pointer_to("sha256"),
                   "the rows file " + path.string() + " does not have the config's SHA-256 " + sha +
                       ": the file changed after the config was written, or the config names "
                       "another file (sha256sum shows a file's digest)");
      return false;
    }
    NpyArray array;
    try {
      array = read_npy(path);
    } catch (const std::exception& error) {
      problems.add(pointer, std::string("rows file: ") + error.what());
      return false;
    }
    if (!array.is_float() || array.shape.size() != 2 || array.shape[1] != K ||
        array.shape[0] == 0) {
      std::string shape;
      for (std::size_t d : array.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      problems.add(pointer, "rows file " + path.string() +
                                ": expected a float array of shape (n, " + std::to_string(K) +
                                ") with n >= 1, found " + array.descr + " (" + shape + ")");
      return false;
    }
    *rows = std::move(array.floats);
  } else {
    if (checksum != nullptr) {
      problems.add(g.pointer_to("sha256"), "sha256 belongs to a rows file; these rows are inline");
      return false;
    }
    if (!value->is_array() || value->empty()) {
      problems.add(pointer, "expected an array of confidence vectors (" + std::to_string(K) +
                                " probabilities each) or an NPY file's name, found " +
                                describe(*value));
      return false;
    }
    for (std::size_t i = 0; i < value->size(); ++i) {
      const Json& row = (*value)[i];
      const std::string at = pointer_join(pointer, i);
      if (!row.is_array() || row.size() != K) {
        problems.add(at, "expected an array of " + std::to_string(K) + " probabilities, found " +
                             describe(row));
        return false;
      }
      for (std::size_t k = 0; k < K; ++k) {
        const auto x = read_number(row[k], pointer_join(at, k), problems);
        if (!x) return false;
        rows->push_back(*x);
      }
    }
  }
  // The generator's own check of each row (>= 0, sums to 1), reported at the row.
  for (std::size_t i = 0; i * K < rows->size(); ++i) {
    double sum = 0.0;
    bool negative = false;
    for (std::size_t k = 0; k < K; ++k) {
      const double v = (*rows)[i * K + k];
      negative = negative || !(std::isfinite(v) && v >= 0.0);
      sum += v;
    }
    if (negative || std::abs(sum - 1.0) > 1e-6) {
      problems.add(
          file.empty() ? pointer_join(pointer, i) : pointer,
          (file.empty() ? "" : "rows file " + file + ": ") + "row " + std::to_string(i) +
              (negative ? " has a value that is not a probability >= 0"
                        : " sums to " + format_double(sum) + ": must sum to 1 (within 1e-6)"));
      return false;
    }
  }
  args.set("rows", std::shared_ptr<const std::vector<double>>(std::move(rows)));
  args.set("rows_file", file);
  args.set("sha256", sha);
  return true;
}

// An optional array of numbers at `key` of `c` into `out` (left as is when absent); false, with
// the problem recorded, when it is not one.
bool read_optional_numbers(ObjectReader& c, const char* key, std::vector<double>& out) {
  const Json* v = c.find(key);
  if (v == nullptr) return true;
  const auto values = read_vector(*v, c.pointer_to(key), key, false, std::nullopt, c.problems());
  if (values) out = *values;
  return values.has_value();
}

// `calibration`: {"knots": [...], "coefficients": [...]} of the curve s(t) = t + f(t)
// (generators/logit_spline.hpp); absent or {}: the identity.
bool read_empirical_calibration(Args& args) {
  ObjectReader& g = args.reader();
  const Json* value = g.find("calibration");
  static const Json identity = Json::object();
  ObjectReader c(value != nullptr ? *value : identity, g.pointer_to("calibration"), g.problems());
  if (!c.is_object()) return false;
  c.allow_only({"knots", "coefficients"});
  LogitSpline spline;
  bool ok = true;
  const auto read = [&](const char* key, std::vector<double>& out) {
    ok = read_optional_numbers(c, key, out) && ok;
  };
  read("knots", spline.knots);
  read("coefficients", spline.coefficients);
  if (!ok) return false;
  try {
    validate(spline);
  } catch (const DomainError& error) {
    g.problems().add(c.pointer(), error.what());
    return false;
  }
  if (value == nullptr) g.add_default("calibration", identity);
  args.set("calibration", std::move(spline));
  return true;
}

// `classwise` (K >= 3): {"top_knots": [...], "top": [[...] per class], "other_knots": [...],
// "other_shared": [...], "other": [[...] per class]} (generators/classwise_map.hpp); absent or
// {}: none. The matrices are K rows of knots + 2 coefficients.
bool read_empirical_classwise(Args& args) {
  ObjectReader& g = args.reader();
  const Json* value = g.find("classwise");
  static const Json none = Json::object();
  ObjectReader c(value != nullptr ? *value : none, g.pointer_to("classwise"), g.problems());
  if (!c.is_object() || !args.classes()) return false;
  c.allow_only({"top_knots", "top", "other_knots", "other_shared", "other"});
  const std::size_t K = *args.classes();
  ClasswiseMap map;
  bool ok = true;
  const auto read = [&](const char* key, std::vector<double>& out) {
    ok = read_optional_numbers(c, key, out) && ok;
  };
  const auto read_rows = [&](const char* key, std::vector<double>& out) {
    const Json* v = c.find(key);
    if (v == nullptr) return;
    if (!v->is_array() || v->size() != K) {
      g.problems().add(c.pointer_to(key), "expected an array of " + std::to_string(K) +
                                              " arrays of coefficients (one per class), found " +
                                              describe(*v));
      ok = false;
      return;
    }
    for (std::size_t k = 0; k < K; ++k) {
      const auto row = read_vector((*v)[k], pointer_join(c.pointer_to(key), k), key, false,
                                   std::nullopt, g.problems());
      if (row)
        out.insert(out.end(), row->begin(), row->end());
      else
        ok = false;
    }
  };
  read("top_knots", map.top_knots);
  read_rows("top", map.top);
  read("other_knots", map.other_knots);
  read("other_shared", map.other_shared);
  read_rows("other", map.other);
  if (!ok) return false;
  if (!map.top_knots.empty() || !map.other_knots.empty()) map.classes = K;
  try {
    validate(map, K);
  } catch (const DomainError& error) {
    g.problems().add(c.pointer(), error.what());
    return false;
  }
  if (value == nullptr) g.add_default("classwise", none);
  args.set("classwise", std::move(map));
  return true;
}

bool bandwidth_in_range(double h) {
  return h >= 0.0 && h <= empirical_bandwidth_max;
}

std::optional<ParsedGenerator> build_empirical(Args& a) {
  return ParsedGenerator{
      EmpiricalSpec{a.get<std::size_t>("classes"),
                    a.get<std::shared_ptr<const std::vector<double>>>("rows"),
                    a.get<double>("bandwidth"), a.get<LogitSpline>("calibration"),
                    a.get<ClasswiseMap>("classwise"), a.get<std::string>("rows_file"),
                    a.get<std::string>("sha256")},
      {}};
}
}  // namespace

MapEntry identity_map() {
  return {.summary = "p = c: perfectly calibrated", .example = "{}", .build = build_identity};
}

MapEntry temperature_map() {
  return {
      .summary =
          "p_k proportional to c_k^(1/T): T < 1 overconfident, T > 1 underconfident; keeps argmax",
      .params = {param::number(
          "temperature", std::nullopt,
          [](double t) { return t >= temperature_bounds.lo && t <= temperature_bounds.hi; },
          bounds_rule(temperature_bounds), "the temperature T")},
      .example = R"({"temperature": 0.7})",
      .build = build_temperature};
}

MapEntry power_map() {
  return {.summary = "p_k proportional to c_k^(t_k): class-dependent miscalibration",
          .params = {param::custom("exponents", "array of numbers", "required",
                                   "one per class, each in [1e-4, 100]", "the exponents t_1..t_K",
                                   read_exponents,
                                   {Json(true), Json::array({1.0, 1.0, 0.0}), Json::array({1.0}),
                                    Json::array({1.0, 1.0, exponent_bounds.hi * 10.0})})},
          .example = R"({"exponents": [0.5, 1, 2]})",
          .build = build_power};
}

MapEntry top_label_map() {
  return {
      .summary = R"(kyle's max-component map: m = max c, u = (m - 1/K)/(1 - 1/K); the top component
becomes g(m) = 1/K + (1 - 1/K) u^gamma, the others scale by (1 - g(m))/(1 - m).
gamma < 1 overconfident; for gamma > 1 and K >= 3 the argmax can change)",
      .params = {param::number(
          "gamma", std::nullopt,
          [](double g) { return g >= gamma_bounds.lo && g <= gamma_bounds.hi; },
          bounds_rule(gamma_bounds), "the exponent gamma")},
      .example = R"({"gamma": 0.5})",
      .build = build_top_label};
}

MapEntry affine_logit_map() {
  return {.summary = "p = softmax(W log c + b), the map Dirichlet calibration inverts",
          .params = {param::custom("weights", "array of arrays of numbers", "required",
                                   "K x K, in [-1e4, 1e4]", "W, one row per class", read_weights,
                                   {Json(true), Json::array({Json::array({1, 0, 0})}),
                                    Json::array({Json::array({weight_bounds.hi * 10.0, 0, 0}),
                                                 Json::array({0, 1, 0}), Json::array({0, 0, 1})})}),
                     param::custom("bias", "array of numbers", "all 0",
                                   "one per class, in [-700, 700]", "b", read_bias,
                                   {Json(true), Json::array({0.0}),
                                    Json::array({bias_bounds.hi * 10.0, 0.0, 0.0}),
                                    Json::array({bias_bounds.lo * 10.0, 0.0, 0.0})})},
          .example = R"({"weights": [[2, 0, 0], [0, 1, 0], [0, 0, 0.5]], "bias": [0.1, 0, -0.1]})",
          .build = build_affine_logit};
}

MapEntry quantize_map() {
  const QuantizeMap defaults;
  Param levels = param::at_most(
      param::integer("levels", static_cast<std::int64_t>(quantize_min_levels),
                     static_cast<std::int64_t>(defaults.levels),
                     "L: the grid (i + 1/2)/L, i = 0..L-1 (10: 5 %, 15 %, ..., 95 %)"),
      static_cast<std::int64_t>(quantize_max_levels));
  return {
      .summary = R"(verbalised confidence (an LLM's "I am 85 % sure"): the top component m = max c
becomes the grid level nearest to m among those >= m or > 1/2 (so the argmax is kept), the
others scale by (1 - level)/(1 - m); exact top-label truth (docs/generators.md))",
      .params = {std::move(levels)},
      .example = R"({"levels": 10})",
      .build = build_quantize};
}

FamilyEntry dirichlet_family() {
  return {
      .summary = "the kyle model: c ~ Dirichlet(alpha), y ~ Categorical(c), p = h(c) for a map h",
      .params =
          {classes_param(), alpha_param("concentration: small alpha, confident and accurate"),
           param::custom("miscalibration", "object", default_miscalibration().dump(),
                         "see `calbench list maps`", "the miscalibration map h",
                         read_miscalibration, {Json(1.5), Json{{"map", "no_such_map"}}}),
           param::custom(
               "target", "object", "none", "{accuracy, ece_top_l1, direction}; no alpha",
               R"(solved: symmetric alpha and the temperature or top_label parameter (docs/generators.md))",
               read_target, {Json(1.5), Json{{"accuracy", "high"}, {"ece_top_l1", 0.1}}})},
      .example =
          R"({"classes": 3, "alpha": 0.5, "miscalibration": {"map": "temperature", "temperature": 0.8}})",
      .build = build_dirichlet};
}

FamilyEntry class_conditional_family() {
  return {
      .summary =
          "y ~ Categorical(prior), p | y = k ~ Dirichlet(alpha^(k)); c = r(p) in closed form",
      .params = {classes_param(),
                 param::custom("prior", "array of numbers", "uniform", "K numbers > 0 summing to 1",
                               "pi", read_prior, {Json(true), Json::array({0.5, 0.6, -0.1})}),
                 read_with_another(
                     "concentration", "number", "none",
                     std::string("in ") + concentration_range + ", with correct_class",
                     "a: alpha^(k) = a 1 + (b - a) e_k",
                     {Json(true), Json(0.0), Json(concentration_bounds.hi * 10.0)}, {"alpha"}),
                 read_with_another(
                     "correct_class", "number", "none",
                     std::string("in ") + concentration_range + ", with concentration",
                     "b: the concentration on the true class",
                     {Json(true), Json(-1.0), Json(concentration_bounds.lo / 10.0)}, {"alpha"}),
                 class_alphas_param()},
      .example =
          R"({"classes": 3, "prior": [0.5, 0.3, 0.2], "concentration": 1, "correct_class": 4})",
      .build = build_class_conditional};
}

FamilyEntry label_noise_family() {
  return {
      .summary = "p ~ Dirichlet(alpha), labels from c = (1 - w) p + w beta (Widmann et al. 2019)",
      .params = {classes_param(), alpha_param("the Dirichlet of p"),
                 param::number("weight", std::nullopt, unit_closed, ">= 0 and <= 1", "w"),
                 param::custom("beta", "integer or array", std::to_string(default_beta_class),
                               "a class index j (beta = e_j), or K numbers >= 0 summing to 1",
                               "the noise distribution", read_beta,
                               {Json(true), Json(7), Json::array({0.5, 0.6, -0.1})})},
      .example = R"({"classes": 3, "alpha": 1, "weight": 0.2, "beta": [0.2, 0.3, 0.5]})",
      .build = build_label_noise};
}

FamilyEntry beta_binary_family() {
  return {
      .summary =
          R"(K = 2, f = p_1 ~ Beta(a, b) (+ a point mass at 1), P(y = 1 | f) = phi(f) (Roelofs et al. 2022))",
      .params = {param::custom("classes", "integer", std::to_string(binary_classes),
                               std::to_string(binary_classes), "always 2", read_two_classes,
                               {Json(true), Json(3)}),
                 param::number("a", std::nullopt, in_beta_shape_bounds,
                               bounds_rule(beta_shape_bounds), "Beta(a, b) of the score f"),
                 param::number("b", std::nullopt, in_beta_shape_bounds,
                               bounds_rule(beta_shape_bounds), ""),
                 param::number("point_mass", 0.0, unit_half_open, ">= 0 and < 1",
                               "P(f = 1); needs phi(1) = 1"),
                 param::custom(
                     "calibration", "object", default_calibration().dump(),
                     "curve: identity | polynomial {d > 0} | logistic {a, b} | logit_logit {a, b}",
                     "phi(f) = f, f^d, 1/(1 + exp(-(a + b f))), or logit phi = a + b logit f",
                     read_calibration, {Json(1.5), Json{{"curve", "polynomial"}, {"d", 0}}})},
      .example = R"({"a": 2, "b": 1, "calibration": {"curve": "polynomial", "d": 2}})",
      .build = build_beta_binary};
}

FamilyEntry dirichlet_mixture_family() {
  return {
      .summary =
          R"(kyle's multi-Dirichlet: component j with probability w_j, c ~ Dirichlet(alpha_j), y ~ c,
p = h(c) with one injective map h (identity, temperature, power))",
      .params = {classes_param(),
                 param::custom("components", "array of objects", "required",
                               std::string("1 to 16 {weight > 0, alpha in ") + concentration_range +
                                   " or one per class}, weights summing to 1",
                               "the components: w_j and alpha_j", read_components,
                               {Json(true), Json::array(),
                                Json::array({Json{{"weight", 0.5}, {"alpha", 1.0}}}),
                                Json::array({Json{{"weight", 1.0}, {"alpha", -1.0}}})}),
                 param::custom("miscalibration", "object", default_miscalibration().dump(),
                               "identity, temperature or power (see `calbench list maps`)",
                               "the miscalibration map h of every component", read_mixture_map,
                               {Json(1.5), Json{{"map", "top_label"}, {"gamma", 0.5}}})},
      .example =
          R"({"classes": 3, "components": [{"weight": 0.7, "alpha": 0.3}, {"weight": 0.3, "alpha": [2, 1, 1]}], "miscalibration": {"map": "temperature", "temperature": 0.8}})",
      .build = build_dirichlet_mixture};
}

FamilyEntry empirical_family() {
  return {
      {},
      "a real model's outputs: p = softmax(log p_i + h eps) for a random row i, and\n"
      "P(y = top | p) = sigmoid(s(logit z)) with s(t) = t + f(t), f a cubic spline (K = 2: of\n"
      "p_1); written by `calbench fit` (docs/fit.md)",
      {classes_param(),
       param::custom("rows", "array or string", "required",
                     "n >= 1 rows of K probabilities, or an NPY file (n, K) beside the config",
                     "the model's confidence vectors", read_empirical_rows,
                     {Json(true), Json::array(), Json::array({Json::array({0.5, 0.6, 0.1})})}),
       param::custom("sha256", "string", "none", "64 hexadecimal digits; with a rows file only",
                     "the rows file's SHA-256", nullptr, {Json(true)}),
       param::number("bandwidth", 0.0, bandwidth_in_range, ">= 0 and <= 10",
                     "h, the noise's standard deviation on log p"),
       param::custom(
           "calibration", "object", "{}", "{knots: increasing, coefficients: knots + 2}",
           "the spline f of s(t) = t + f(t); {} is the identity", read_empirical_calibration,
           {Json(1.5),
            Json{{"knots", Json::array({1.0, 0.0})}, {"coefficients", Json::array({0, 0, 0, 0})}}}),
       param::custom("classwise", "object", "{}",
                     "{top_knots, top: K rows, other_knots, other_shared, other: K rows}; K >= 3",
                     "the classwise map (docs/generators.md): per-class deviations of the "
                     "top-label curve and splines moving the other classes' shares; {} is none",
                     read_empirical_classwise,
                     {Json(1.5), Json{{"top_knots", Json::array({0.0, 1.0})},
                                      {"top", Json::array({0, 0, 0, 0})}}})},
      R"({"classes": 3, "rows": [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], "bandwidth": 0.2, "calibration": {"knots": [0, 1, 2], "coefficients": [0.1, -0.2, 0, 0.3, 0.1]}})",
      {},
      build_empirical};
}

// ---- the tables -----------------------------------------------------------------------------

// The maps and families a config can name, in listing order: a new one is its row and a line
// here.
const std::vector<MapEntry>& map_registry() {
  static const std::vector<MapEntry> rows = {
      named("identity", identity_map()),
      named("temperature", temperature_map()),
      named("power", power_map()),
      named("top_label", top_label_map()),
      named("affine_logit", affine_logit_map()),
      named("quantize", quantize_map()),
  };
  return rows;
}

const std::vector<FamilyEntry>& family_registry() {
  static const std::vector<FamilyEntry> rows = {
      named(std::string(family_name_of<DirichletSpec>), dirichlet_family()),
      named(std::string(family_name_of<ClassConditionalSpec>), class_conditional_family()),
      named(std::string(family_name_of<LabelNoiseSpec>), label_noise_family()),
      named(std::string(family_name_of<BetaBinarySpec>), beta_binary_family()),
      named(std::string(family_name_of<DirichletMixtureSpec>), dirichlet_mixture_family()),
      named(std::string(family_name_of<EmpiricalSpec>), empirical_family()),
  };
  return rows;
}

// ---- the section parser ------------------------------------------------------------------

const Json& default_miscalibration() {
  static const Json identity = {{"map", "identity"}};
  return identity;
}

std::optional<MiscalibrationMap> parse_miscalibration(ObjectReader& family,
                                                      std::optional<std::size_t> classes) {
  const Json* value = family.find("miscalibration");
  ObjectReader m(value != nullptr ? *value : default_miscalibration(),
                 family.pointer_to("miscalibration"), family.problems());
  auto map = parse_object(m, "map", "miscalibration map", map_registry(), classes);
  family.set_resolved("miscalibration", m.take_resolved());
  return map;
}

std::optional<ParsedGenerator> parse_generator(const Json& generator, const std::string& pointer,
                                               Problems& problems, Json& resolved) {
  ObjectReader g(generator, pointer, problems);
  const std::size_t before = problems.size();
  auto parsed = parse_object(g, "family", "family", family_registry());
  resolved = g.take_resolved();
  if (problems.size() != before || !parsed) return std::nullopt;
  // The generator's own checks are the authority; ours above only give precise pointers.
  try {
    Generator check(parsed->spec);
  } catch (const DomainError& error) {
    problems.add(pointer, error.what());
    return std::nullopt;
  }
  return parsed;
}

}  // namespace calbench
