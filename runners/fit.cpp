#include "runners/fit.hpp"

#include <tbb/global_control.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>
#include <variant>
#include <vector>

#include "config/finite_json.hpp"
#include "config/json_support.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/sha256.hpp"
#include "data/model_outputs.hpp"
#include "data/npy.hpp"
#include "fit/fake_classifier_fit.hpp"
#include "fit/fit_predictions.hpp"
#include "fit/fit_verdict.hpp"
#include "fit/held_out_split.hpp"
#include "report/columns.hpp"
#include "report/reporter.hpp"
#include "report/text_report.hpp"
#include "runners/command.hpp"
#include "runners/estimator_list.hpp"
#include "runners/progress.hpp"

namespace calbench {
namespace {

std::optional<FittedMap> parse_map(const std::string& name) {
  if (name == "auto") return std::nullopt;
  for (FittedMap m : {FittedMap::identity, FittedMap::temperature, FittedMap::power})
    if (to_string(m) == name) return m;
  throw InputError("--map " + name + ": expected auto, identity, temperature or power");
}

std::optional<FittedFamily> parse_family(const std::string& name) {
  if (name == "auto" || name == "parametric") return std::nullopt;
  for (FittedFamily f : {FittedFamily::dirichlet, FittedFamily::beta_binary,
                         FittedFamily::dirichlet_mixture, FittedFamily::empirical})
    if (to_string(f) == name) return f;
  throw InputError("--family " + name +
                   ": expected auto, empirical, parametric, dirichlet, dirichlet_mixture or "
                   "beta_binary");
}

// The empirical family's rows file beside the config `out`: cfg.json -> cfg.rows.npy.
std::filesystem::path rows_file_for(const std::string& out) {
  std::filesystem::path rows(out);
  rows.replace_extension(".rows.npy");
  return rows;
}

// The classwise map (generators/classwise_map.hpp) as the config reads it: the per-class
// matrices as K rows.
nlohmann::ordered_json classwise_json(const ClasswiseMap& m) {
  const auto rows = [&](const std::vector<double>& flat) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    const std::size_t width = flat.size() / m.classes;
    for (std::size_t k = 0; k < m.classes; ++k)
      out.push_back(
          std::vector<double>(flat.begin() + static_cast<std::ptrdiff_t>(k * width),
                              flat.begin() + static_cast<std::ptrdiff_t>((k + 1) * width)));
    return out;
  };
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (has_top_deviations(m)) {
    out["top_knots"] = m.top_knots;
    out["top"] = rows(m.top);
  }
  if (has_other_splines(m)) {
    out["other_knots"] = m.other_knots;
    if (!m.other_shared.empty()) out["other_shared"] = m.other_shared;
    if (!m.other.empty()) out["other"] = rows(m.other);
  }
  return out;
}

// The classwise map's choices (fit/classwise_fit.hpp): every candidate's cross-validated
// log-likelihood and the one chosen, for the top deviations and for the other classes.
nlohmann::ordered_json classwise_choice_json(const ClasswiseFit& c) {
  const auto scores = [](const std::vector<ClasswiseScore>& list) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& s : list)
      out.push_back({{"candidate", s.candidate}, {"cv_log_likelihood", s.cv_log_likelihood}});
    return out;
  };
  return {{"top", c.top_choice},
          {"other", c.other_choice},
          {"wrong_rows", c.wrong_rows},
          {"top_scores", scores(c.top_scores)},
          {"other_scores", scores(c.other_scores)}};
}

// The empirical block: the rows by file name (relative to the config's folder) with its
// SHA-256, or inline when no config is written.
nlohmann::ordered_json empirical_json(const EmpiricalSpec& s) {
  nlohmann::ordered_json out = {{"family", family_name_of<EmpiricalSpec>}, {"classes", s.classes}};
  if (!s.rows_file.empty()) {
    out["rows"] = s.rows_file;
    out["sha256"] = s.rows_sha256;
  } else {
    out["rows"] = std::to_string(s.rows->size() / s.classes) + " rows (written with --out)";
  }
  out["bandwidth"] = s.bandwidth;
  out["calibration"] = nlohmann::ordered_json::object();
  if (!is_identity(s.calibration))
    out["calibration"] = {{"knots", s.calibration.knots},
                          {"coefficients", s.calibration.coefficients}};
  if (!is_identity(s.classwise)) out["classwise"] = classwise_json(s.classwise);
  return out;
}

// The beta_binary block: {"curve": NAME, its parameters} as docs/generators.md names them.
nlohmann::ordered_json curve_json(const CalibrationCurve& curve) {
  nlohmann::ordered_json out = {{"curve", curve_name(curve)}};
  if (const auto* c = std::get_if<PolynomialCurve>(&curve)) out["d"] = c->d;
  if (const auto* c = std::get_if<LogisticCurve>(&curve)) out.update({{"a", c->a}, {"b", c->b}});
  if (const auto* c = std::get_if<LogitLogitCurve>(&curve)) out.update({{"a", c->a}, {"b", c->b}});
  return out;
}

// The curve's parameters as a list (for the table and --json).
std::vector<double> curve_parameters(const CalibrationCurve& curve) {
  if (const auto* c = std::get_if<PolynomialCurve>(&curve)) return {c->d};
  if (const auto* c = std::get_if<LogisticCurve>(&curve)) return {c->a, c->b};
  if (const auto* c = std::get_if<LogitLogitCurve>(&curve)) return {c->a, c->b};
  return {};
}

// The generator block of a config, exactly as `calbench run` reads it (DESIGN.md §3).
nlohmann::ordered_json generator_json(const FakeClassifierFit& fit) {
  if (const auto* e = std::get_if<EmpiricalSpec>(&fit.generator)) return empirical_json(*e);
  if (fit.family == FittedFamily::beta_binary) {
    const BetaBinarySpec& s = fit.beta_binary->spec;
    return {{"family", family_name_of<BetaBinarySpec>},
            {"a", s.a},
            {"b", s.b},
            {"point_mass", s.point_mass},
            {"calibration", curve_json(s.curve)}};
  }
  nlohmann::ordered_json map = {{"map", std::string(to_string(fit.chosen.map))}};
  if (fit.chosen.map == FittedMap::temperature) map["temperature"] = fit.chosen.parameters[0];
  if (fit.chosen.map == FittedMap::power) map["exponents"] = fit.chosen.parameters;
  if (fit.family == FittedFamily::dirichlet_mixture) {
    nlohmann::ordered_json components = nlohmann::ordered_json::array();
    for (const MixtureComponent& m : fit.components)
      components.push_back({{"weight", m.weight}, {"alpha", m.alpha}});
    return {{"family", family_name_of<DirichletMixtureSpec>},
            {"classes", fit.spec.classes},
            {"components", components},
            {"miscalibration", map}};
  }
  return {{"family", family_name_of<DirichletSpec>},
          {"classes", fit.spec.classes},
          {"alpha", fit.dirichlet.alpha},
          {"miscalibration", map}};
}

// A config name from the data file's stem: the characters a name may hold, others as '_'.
std::string config_name(const std::string& data) {
  std::string out = std::filesystem::path(data).stem().string();
  for (char& ch : out)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-')) ch = '_';
  return (out.empty() ? std::string("model") : out) + "_fake";
}

// estimator_bias on the fitted generator at the data's size: the question `fit` exists for.
nlohmann::ordered_json runnable_config(const FitOptions& o, const FakeClassifierFit& fit) {
  const std::string name = config_name(o.data);
  return {{"name", name},
          {"scenario", "estimator_bias"},
          {"seed", o.seed},
          {"replicates", 500},
          {"sample_size", fit.fit.rows},
          {"generator", generator_json(fit)},
          {"estimators",
           {{{"name", "ece"}, {"bins", 15}},
            {{"name", "ece"}, {"bins", 15}, {"binning", "equal_mass"}},
            {{"name", "ece_debiased"}},
            {{"name", "smooth_ece"}},
            {{"name", "classwise_ece"}},
            {{"name", "ace"}},
            {{"name", "accuracy"}}}},
          {"output", {{"directory", "results/" + name}}}};
}

// The estimators of the verdict, the predictions and the written config unless --estimators
// says otherwise: the 15-bin ECE with equal-width and equal-mass bins, the debiased ECE, smooth
// ECE, and the classwise ones a user of a deep network measures (issue #35): the 15-bin
// classwise ECE (Kull et al. 2019; Nixon et al.'s SCE) and ACE with Nixon et al.'s defaults.
constexpr const char* default_estimators =
    R"([{"name": "ece", "bins": 15}, {"name": "ece", "bins": 15, "binning": "equal_mass"},
        {"name": "ece_debiased"}, {"name": "smooth_ece"}, {"name": "classwise_ece"},
        {"name": "ace"}])";

std::vector<LabelledEstimator> labelled(const std::vector<EstimatorConfig>& configs) {
  std::vector<LabelledEstimator> out;
  for (const auto& c : configs) out.push_back({c.label, c.estimator.get()});
  return out;
}

// 200, 1,000, the data's n and 4 n, ascending without repeats.
std::vector<std::size_t> default_sizes(std::size_t n) {
  std::vector<std::size_t> out = {200, 1000, n, 4 * n};
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Data no fake classifier can be fitted to, refused before any fit with what is wrong: too few
// rows to split; a calibration function needs labels of at least two classes, and a confidence
// distribution needs outputs that vary (a constant classifier's rows, uniform or confident, make
// every Dirichlet likelihood unbounded).
void check_fit_input(const Sample& data, const std::string& file) {
  if (data.size < 2)
    throw InputError(file + ": fit needs at least 2 rows, found " + std::to_string(data.size));
  const auto label = data.label.front();
  if (std::all_of(data.label.begin(), data.label.end(), [&](auto y) { return y == label; }))
    throw InputError(file + ": every one of the " + std::to_string(data.size) +
                     " labels is class " + std::to_string(label) +
                     ": fit needs labels of at least two classes to fit a calibration function");
  const std::size_t K = data.classes;
  bool constant = true;
  for (std::size_t i = 1; i < data.size && constant; ++i)
    constant = std::equal(data.p.begin(), data.p.begin() + static_cast<std::ptrdiff_t>(K),
                          data.p.begin() + static_cast<std::ptrdiff_t>(i * K));
  if (constant) {
    std::string row;
    for (std::size_t k = 0; k < K && k < 4; ++k)
      row.append(k == 0 ? "" : ", ").append(format_double(data.p[k]));
    throw InputError(file + ": all " + std::to_string(data.size) +
                     " rows have the same probabilities (" + row + (K > 4 ? ", ..." : "") +
                     "): a constant classifier has no confidence distribution to fit; "
                     "`calbench eval` measures its calibration");
  }
}

// The fit, with a failure on these data (a domain error, or a numerical library's exception on
// degenerate rows) reported as bad input naming the file and the rows fitted.
FakeClassifierFit fit_or_explain(const Sample& rows, const FakeFitOptions& options,
                                 const std::string& file, const std::string& which) {
  try {
    return fit_fake_classifier(rows, options);
  } catch (const DomainError& error) {
    throw InputError(file + ": " + error.what());
  } catch (const std::exception& error) {
    throw InputError(file + ": no fake classifier could be fitted to " + which + ": " +
                     error.what());
  }
}

nlohmann::ordered_json verdict_json(const FitVerdict& v) {
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const VerdictCheck& c : v.checks)
    checks.push_back(
        {{"check", c.name},
         {"kind", std::string(to_string(c.kind))},
         {"held_out", c.held_out},
         {"fake", c.fake},
         {"fake_sd", c.fake_sd},
         {"se", c.se},
         {"z", std::isfinite(c.z) ? nlohmann::ordered_json(c.z) : nlohmann::ordered_json(nullptr)},
         {"p", c.p},
         {"p_holm", c.p_adjusted},
         {"floor", c.floor},
         {"fails", c.fails}});
  return {{"verdict", verdict_word(v)},
          {"folds", v.folds},
          {"fit_rows", v.fit_rows},
          {"held_out_rows", v.held_out_rows},
          {"fake_samples", v.replicates},
          {"family_alpha", v.family_alpha},
          {"reasons", v.reasons},
          {"absent_classes", v.absent_classes},
          {"checks", checks}};
}

nlohmann::ordered_json spread_json(const Spread& s) {
  return {{"mean", s.mean}, {"sd", s.sd}, {"bias", s.bias}, {"bias_se", s.bias_se}};
}

nlohmann::ordered_json predictions_json(const FitPredictions& p,
                                        const std::vector<EstimatorConfig>& estimators) {
  nlohmann::ordered_json refs = nlohmann::ordered_json::object();
  for (std::size_t e = 0; e < estimators.size(); ++e)
    refs[estimators[e].label] = {
        {"bias_against", p.references[e].own_population ? "own population value" : "target truth"},
        {"value", p.references[e].value},
        {"error", p.references[e].error},
        {"estimate_on_data", p.data_estimates[e]}};
  nlohmann::ordered_json cells = nlohmann::ordered_json::array();
  for (const Prediction& c : p.cells)
    cells.push_back(
        {{"estimator", estimators[c.estimator].label},
         {"n", c.n},
         {"fake", spread_json(c.fake)},
         {"bootstrap", c.bootstrap ? spread_json(*c.bootstrap) : nlohmann::ordered_json(nullptr)},
         {"sd_disagrees", c.sd_disagrees},
         {"bias_disagrees", c.bias_disagrees}});
  return {{"fake_samples", p.replicates},
          {"bootstrap_resamples", p.resamples},
          {"references", refs},
          {"cells", cells}};
}

std::string truth_text(const TruthValue& v) {
  return format_fixed(v.value, 4) + " (" + std::string(to_string(v.method)) + ")";
}

// Progress lines on stderr (STYLE.md: any phase longer than about 2 s shows it): nothing for a
// phase done within 2 s, then a line every 5 s (a redrawn bar on a terminal), also while one
// long step runs (the heartbeat: one fold's fit at K = 3,000 took over a minute, silent).
ProgressStyle fit_progress_style(std::string unit) {
  return {.unit = std::move(unit),
          .first_after = std::chrono::milliseconds(2000),
          .plain_every = std::chrono::milliseconds(5000),
          .heartbeat = true};
}

// The verdict (lib/fit/fit_verdict.hpp) on fakes fitted without the rows they are judged on:
// one per fold (cross-fitted), or one split when --holdout is given. The fake reported,
// predicted with and written is then fitted on all rows, as cross-validation judges a
// procedure.
FitVerdict judge(const Sample& data, const FakeFitOptions& options,
                 const std::vector<LabelledEstimator>& estimators, const FitOptions& o) {
  const std::vector<HeldOutSplit> splits = [&] {
    try {
      if (o.holdout > 0.0) return std::vector<HeldOutSplit>{split_rows(data, o.holdout, o.seed)};
      return fold_rows(data, o.folds, o.seed);
    } catch (const DomainError& error) {
      throw InputError(o.data + ": " + (o.holdout > 0.0 ? "--holdout: " : "--folds: ") +
                       error.what());
    }
  }();
  FakeFitOptions judged_options = options;
  judged_options.compute_truth = false;  // judged by sampling only
  std::vector<Generator> fakes;
  Progress fitting("fit: fakes of the verdict's folds", true, fit_progress_style("fits"));
  for (std::size_t f = 0; f < splits.size(); ++f) {
    fitting.update(f, splits.size());
    fakes.emplace_back(fit_or_explain(splits[f].fit, judged_options, o.data,
                                      splits.size() == 1
                                          ? std::string("the fit rows")
                                          : "the rows outside fold " + std::to_string(f + 1))
                           .generator);
  }
  fitting.update(splits.size(), splits.size());
  fitting.finish();
  std::vector<VerdictFold> folds;
  for (std::size_t f = 0; f < splits.size(); ++f)
    folds.push_back(
        {.fake = &fakes[f], .held_out = &splits[f].held_out, .fit_rows = splits[f].fit.size});
  VerdictSettings settings;
  settings.replicates = o.verdict_replicates;
  settings.seed = o.seed;
  Progress judging("fit: the verdict's fake samples", true, fit_progress_style("samples"));
  FitVerdict verdict =
      judge_fit(folds, estimators, settings,
                [&](std::size_t done, std::size_t total) { judging.update(done, total); });
  judging.finish();
  judge_absent_classes(verdict, data);
  return verdict;
}

// Everything `fit` computed; the report and the config written come from it.
struct FitRun {
  Sample data;
  FakeFitOptions options;
  std::vector<EstimatorConfig> asked;
  FitVerdict verdict;
  FakeClassifierFit fit;
  std::string rows_npy;  // the rows file's bytes, written beside --out
  FitPredictions predictions;
};

FakeFitOptions fit_options(const FitOptions& o, const std::optional<FittedMap>& map) {
  FakeFitOptions options;
  options.map = map;
  options.family = parse_family(o.family);
  // A map (--map) belongs to the parametric families: asking for one asks for them.
  options.empirical = o.family != "parametric" && o.map == "auto";
  options.max_components = o.components;
  options.seed = o.seed;
  if (!o.penalties.empty()) {  // the plain choice: the rule's steps 2 and 3 off
    options.empirical_options.penalties = o.penalties;
    options.empirical_options.sharper_penalty = 0.0;
    options.empirical_options.fallback_penalties.clear();
  }
  options.empirical_options.classwise.enabled = o.classwise;
  return options;
}

// The fake on all rows; with --out and the empirical family, its rows file's bytes and name.
void fit_all_rows(const FitOptions& o, FitRun& run) {
  Progress fitting("fit: the fake on all rows and its truth", true, fit_progress_style("fits"));
  fitting.update(0, 1);
  run.fit = fit_or_explain(run.data, run.options, o.data, "all rows");
  fitting.update(1, 1);
  fitting.finish();
  if (auto* e = std::get_if<EmpiricalSpec>(&run.fit.generator); e != nullptr && !o.out.empty()) {
    const std::filesystem::path rows = rows_file_for(o.out);
    run.rows_npy = npy_bytes({e->rows->size() / e->classes, e->classes}, *e->rows);
    e->rows_file = rows.filename().string();
    e->rows_sha256 = sha256_hex(
        {reinterpret_cast<const unsigned char*>(run.rows_npy.data()), run.rows_npy.size()});
  }
}

FitPredictions predict(const FitOptions& o, const FitRun& run,
                       const std::vector<LabelledEstimator>& estimators) {
  PredictionSettings settings;
  settings.sizes = o.sizes.empty() ? default_sizes(run.data.size) : o.sizes;
  settings.replicates = o.replicates;
  settings.resamples = o.resamples;
  settings.seed = o.seed;
  try {
    Progress predicting("fit: predictions", true, fit_progress_style("samples"));
    FitPredictions computed = predict_estimators(
        Generator(run.fit.generator), run.fit.truth, run.data, estimators, settings,
        [&](std::size_t done, std::size_t total) { predicting.update(done, total); });
    predicting.finish();
    return computed;
  } catch (const DomainError& error) {
    throw InputError(o.data + ": " + error.what());
  }
}

FitRun compute(const FitOptions& o) {
  const std::optional<FittedMap> map = parse_map(o.map);
  FitRun run;
  run.data = read_model_outputs(o.data, o.labels,
                                {.kind = o.logits ? ValueKind::logits : ValueKind::probabilities,
                                 .renormalize = o.renormalize});
  check_fit_input(run.data, o.data);
  // An unwritable --out fails now (exit 2), not after the fit and its verdict (issue #28).
  if (!o.out.empty()) check_writable(o.out, "--out " + o.out);
  run.options = fit_options(o, map);
  run.asked =
      requested_estimators(o.estimators.empty() ? std::string(default_estimators) : o.estimators);
  const std::vector<LabelledEstimator> estimators = labelled(run.asked);
  run.verdict = judge(run.data, run.options, estimators, o);
  fit_all_rows(o, run);
  run.predictions = predict(o, run, estimators);
  return run;
}

// ---- the report: --json, or the text's prose and tables --------------------------------------

// --json: the fit, every candidate, the model beside the fake, the verdict and the predictions.
nlohmann::ordered_json fit_document(const FitRun& run) {
  const FakeClassifierFit& fit = run.fit;
  const GoodnessOfFit& g = fit.fit;
  // A candidate (map, curve or family) that cannot model the data (the Dirichlet when some scores
  // are exactly 1) has an infinite likelihood and AIC: written as null (docs/fit.md), so every
  // other number stays under the non-finite guard.
  const auto finite_or_null = [](double x) {
    return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json maps = nlohmann::ordered_json::array();
  for (const auto& c : fit.candidates)
    maps.push_back({{"map", std::string(to_string(c.map))},
                    {"parameters", c.parameters},
                    {"negative_log_likelihood", finite_or_null(c.negative_log_likelihood)},
                    {"aic", finite_or_null(c.aic)}});
  nlohmann::ordered_json families = nlohmann::ordered_json::array();
  for (const auto& f : fit.families)
    families.push_back({{"family", std::string(to_string(f.family))},
                        {"log_likelihood", finite_or_null(f.log_likelihood)},
                        {"parameters", f.free_parameters},
                        {"aic", finite_or_null(f.aic)}});
  nlohmann::ordered_json mixtures = nlohmann::ordered_json::array();
  for (const auto& m : fit.mixtures)
    mixtures.push_back({{"components", m.components.size()},
                        {"log_likelihood", m.log_likelihood},
                        {"parameters", m.free_parameters},
                        {"bic", m.bic}});
  nlohmann::ordered_json curves = nlohmann::ordered_json::array();
  if (fit.beta_binary)
    for (const auto& c : fit.beta_binary->candidates)
      curves.push_back({{"curve", curve_name(c.curve)},
                        {"parameters", curve_parameters(c.curve)},
                        {"negative_log_likelihood", finite_or_null(c.negative_log_likelihood)},
                        {"aic", finite_or_null(c.aic)}});
  // The empirical curve's penalty rule (docs/fit.md): every score computed, the choice and why
  // (a penalty of null is the identity).
  nlohmann::ordered_json penalty_rule = nullptr;
  if (fit.empirical) {
    nlohmann::ordered_json scores = nlohmann::ordered_json::array();
    for (const auto& p : fit.empirical->penalties)
      scores.push_back(
          {{"penalty", finite_or_null(p.penalty)}, {"cv_log_likelihood", p.cv_log_likelihood}});
    penalty_rule = {{"penalty", finite_or_null(fit.empirical->penalty)},
                    {"reason", fit.empirical->penalty_reason},
                    {"scores", scores}};
  }
  nlohmann::ordered_json classwise_rule = nullptr;
  if (fit.empirical && run.data.classes >= 3)
    classwise_rule = classwise_choice_json(fit.empirical->classwise);
  const auto truth = [&](Quantity q) {
    const TruthValue& v = fit.truth[q];
    return nlohmann::ordered_json{
        {"value", v.value}, {"method", to_string(v.method)}, {"error", v.error}};
  };
  return {
      {"n", run.data.size},
      {"classes", run.data.classes},
      {"family", std::string(to_string(fit.family))},
      {"generator", generator_json(fit)},
      {"families", families},
      {"rejected_families", fit.rejected_families},
      {"maps", maps},
      {"rejected", fit.rejected},
      {"mixtures", mixtures},
      {"rejected_mixtures", fit.rejected_mixtures},
      {"curves", curves},
      {"rejected_curves", fit.beta_binary ? fit.beta_binary->rejected : std::vector<std::string>{}},
      {"penalty_rule", penalty_rule},
      {"classwise", classwise_rule},
      {"model",
       {{"accuracy", g.model_accuracy},
        {"accuracy_se", g.model_accuracy_se},
        {"mean_confidence", g.model_confidence},
        {"ece_ew15", g.model_ece},
        {"gap_se", g.model_gap_se},
        {"confidence_histogram", g.model_histogram}}},
      {"fake",
       {{"accuracy", truth(Quantity::accuracy)},
        {"ece_top_l1", truth(Quantity::ece_top_l1)},
        {"classwise_ece_l1", truth(Quantity::classwise_ece_l1)},
        {"ece_ew15_sample", g.fake_ece_sample},
        {"confidence_histogram", g.fake_histogram}}},
      {"total_variation", g.total_variation},
      {"verdict", verdict_json(run.verdict)},
      {"predictions", predictions_json(run.predictions, run.asked)}};
}

// The text's tables: left-aligned columns, doubles with `precision` digits after the point,
// the chosen candidate marked in a last column.
template <typename R>
ColumnSpec<R> text(std::string name, std::function<Value(const R&)> value, int precision = 5) {
  return {std::move(name),
          std::move(value),
          show::terminal,
          {.align = Align::left, .precision = precision}};
}
template <typename R>
ColumnSpec<R> chosen(std::function<bool(const R&)> is_chosen) {
  return text<R>("", [is_chosen](const R& r) { return Value(is_chosen(r) ? "<- chosen" : ""); });
}

std::string not_fitted(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += "  not fitted: " + r + '\n';
  return out;
}

std::string infinite_or(double x) {
  return std::isfinite(x) ? format_double(x) : "inf";
}

// K = 2: the families on the joint likelihood; the dirichlet family's maps and mixtures.
void parametric_text(const FakeClassifierFit& fit, TextReport& report) {
  if (!fit.families.empty())
    report.table<FamilyCandidate>(
        "family, on the joint likelihood of p_1 and the labels (lowest AIC chosen):\n", "families",
        {text<FamilyCandidate>(
             "family", [](const auto& f) { return Value(std::string(to_string(f.family))); }),
         text<FamilyCandidate>("parameters", field(&FamilyCandidate::free_parameters)),
         text<FamilyCandidate>("log L", field(&FamilyCandidate::log_likelihood), 2),
         text<FamilyCandidate>("AIC", field(&FamilyCandidate::aic), 2),
         chosen<FamilyCandidate>([&](const auto& f) { return f.family == fit.family; })},
        fit.families, not_fitted(fit.rejected_families) + "\n");
  if (fit.candidates.empty()) return;
  report.table<MapFit>(
      "dirichlet: calibration map, fitted on the labels given p (lowest AIC chosen):\n", "maps",
      {text<MapFit>("map", [](const auto& c) { return Value(std::string(to_string(c.map))); }),
       text<MapFit>("parameters", field(&MapFit::free_parameters)),
       text<MapFit>("-log L", field(&MapFit::negative_log_likelihood), 2),
       text<MapFit>("AIC", field(&MapFit::aic), 2),
       chosen<MapFit>([&](const auto& c) { return c.map == fit.chosen.map; })},
      fit.candidates, not_fitted(fit.rejected));
  report.table<MixtureFit>(
      "\ndirichlet: confidence model of c = r(p), mixtures by EM (lowest BIC chosen):\n",
      "mixtures",
      {text<MixtureFit>("components",
                        [](const auto& m) { return count_value(m.components.size()); }),
       text<MixtureFit>("parameters", field(&MixtureFit::free_parameters)),
       text<MixtureFit>("log L", field(&MixtureFit::log_likelihood), 2),
       text<MixtureFit>("BIC", field(&MixtureFit::bic), 2), chosen<MixtureFit>([&](const auto& m) {
         return m.components.size() == fit.components.size();
       })},
      fit.mixtures, not_fitted(fit.rejected_mixtures));
}

// A candidate of the classwise map's choice: its part (top or other) and its score.
struct ClasswiseRow {
  std::string part;
  ClasswiseScore score;
  bool chosen = false;
};

void empirical_text(const FitRun& run, TextReport& report) {
  const EmpiricalFit& e = *run.fit.empirical;
  const EmpiricalFitOptions& options = run.options.empirical_options;
  report.table<BandwidthScore>(
      "empirical: bandwidth h, the largest at most the kernel density's leave-one-out optimum "
      "that moves the mean confidence by at most " +
          format_double(options.max_confidence_shift) + " standard errors:\n",
      "bandwidths",
      {text<BandwidthScore>("h", [](const auto& b) { return Value(format_double(b.bandwidth)); }),
       text<BandwidthScore>("mean LOO log L", field(&BandwidthScore::loo_log_likelihood), 4),
       text<BandwidthScore>("confidence shift (SE)", field(&BandwidthScore::confidence_shift), 3),
       chosen<BandwidthScore>([&](const auto& b) { return b.bandwidth == e.spec.bandwidth; })},
      e.bandwidths);
  std::string note =
      "empirical: penalty " + infinite_or(e.penalty) + ": " + e.penalty_reason + '\n';
  if (std::isfinite(e.penalty) && options.noise_resamples > 0)
    note += "empirical: noise correction: the curve's mean distance from the diagonal " +
            format_fixed(e.distance, 4) + ", its " + std::to_string(options.noise_resamples) +
            " bootstrap refits' " + format_fixed(e.distance_bootstrap, 4) +
            "; coefficients scaled by " + format_fixed(e.shrinkage, 3) + '\n';
  report.table<PenaltyScore>(
      "\nempirical: calibration curve penalty by " + std::to_string(options.folds) +
          "-fold cross-validated log-likelihood of " +
          (run.data.classes == 2 ? "y = 1 given p_1" : "y = argmax p given max p") +
          " (inf: the identity):\n",
      "penalties",
      {text<PenaltyScore>("penalty", [](const auto& p) { return Value(infinite_or(p.penalty)); }),
       text<PenaltyScore>("CV log L", field(&PenaltyScore::cv_log_likelihood), 2),
       chosen<PenaltyScore>([&](const auto& p) { return p.penalty == e.penalty; })},
      e.penalties, note);
  if (run.data.classes >= 3) {
    const ClasswiseFit& c = e.classwise;
    std::vector<ClasswiseRow> rows;
    for (const auto& s : c.top_scores) rows.push_back({"top", s, s.candidate == c.top_choice});
    for (const auto& s : c.other_scores)
      rows.push_back({"other", s, s.candidate == c.other_choice});
    report.table<ClasswiseRow>(
        "\nempirical: classwise map by " + std::to_string(options.folds) +
            "-fold cross-validated log-likelihood (per-class top deviations; the label's class "
            "among the other classes on the " +
            std::to_string(c.wrong_rows) + " rows whose top label is wrong):\n",
        "classwise",
        {text<ClasswiseRow>("part", [](const auto& r) { return Value(r.part); }),
         text<ClasswiseRow>("candidate", [](const auto& r) { return Value(r.score.candidate); }),
         text<ClasswiseRow>(
             "CV log L", [](const auto& r) { return Value(r.score.cv_log_likelihood); }, 2),
         chosen<ClasswiseRow>([](const auto& r) { return r.chosen; })},
        rows);
  }
  report.prose(not_fitted(run.fit.rejected_families));
}

void beta_binary_text(const FakeClassifierFit& fit, TextReport& report) {
  const BetaBinaryFit& b = *fit.beta_binary;
  report.table<CurveFit>(
      std::string(fit.candidates.empty() ? "" : "\n") + "beta_binary: p_1 ~ Beta(" +
          format_fixed(b.scores.a, 4) + ", " + format_fixed(b.scores.b, 4) + "), point mass at 1 " +
          format_fixed(b.scores.point_mass, 4) +
          "; calibration curve, fitted on the labels given p_1 (lowest AIC chosen):\n",
      "curves",
      {text<CurveFit>("curve", [](const auto& c) { return Value(curve_name(c.curve)); }),
       text<CurveFit>("parameters", field(&CurveFit::free_parameters)),
       text<CurveFit>("-log L", field(&CurveFit::negative_log_likelihood), 2),
       text<CurveFit>("AIC", field(&CurveFit::aic), 2),
       chosen<CurveFit>([&](const auto& c) { return c.curve.index() == b.chosen.curve.index(); })},
      b.candidates, not_fitted(b.rejected));
}

struct ComparisonRow {
  std::string quantity, model, fake;
};
struct HistogramRow {
  std::string bin;
  double model = 0.0, fake = 0.0;
};

// The fitted generator, the model beside the fake, their confidence histograms.
void comparison_text(const FakeClassifierFit& fit, TextReport& report) {
  const GoodnessOfFit& g = fit.fit;
  const TruthValue& accuracy = fit.truth[Quantity::accuracy];
  const TruthValue& ece = fit.truth[Quantity::ece_top_l1];
  const std::vector<ComparisonRow> rows = {
      {"accuracy", format_fixed(g.model_accuracy, 4) + " ± " + format_fixed(g.model_accuracy_se, 4),
       truth_text(accuracy)},
      {"ECE, top label", format_fixed(g.model_ece, 4) + " (15 bins)",
       truth_text(ece) + "; 15 bins on n rows: " + format_fixed(g.fake_ece_sample, 4)},
      {"ECE, classwise", "-", truth_text(fit.truth[Quantity::classwise_ece_l1])},
      {"mean confidence", format_fixed(g.model_confidence, 4),
       format_fixed(accuracy.value + fit.truth[Quantity::overconfidence].value, 4)}};
  report.table<ComparisonRow>(
      "\nfitted generator (a config's \"generator\"):\n  " + generator_json(fit).dump() + "\n\n",
      "comparison",
      {text<ComparisonRow>("", [](const auto& r) { return Value(r.quantity); }),
       text<ComparisonRow>("model (data)", [](const auto& r) { return Value(r.model); }),
       text<ComparisonRow>("fake classifier", [](const auto& r) { return Value(r.fake); })},
      rows);
  std::vector<HistogramRow> bins;
  const double width = 1.0 / static_cast<double>(g.model_histogram.size());
  for (std::size_t b = 0; b < g.model_histogram.size(); ++b) {
    std::string bin = "(";  // appended, not "(" + ...: GCC 12 warns (-Wrestrict) on that form
    bin.append(format_fixed(width * static_cast<double>(b), 1)).append(", ");
    bin.append(format_fixed(width * static_cast<double>(b + 1), 1)).append("]");
    bins.push_back({bin, g.model_histogram[b], g.fake_histogram[b]});
  }
  report.table<HistogramRow>(
      "\nconfidence histogram (max p, " + std::to_string(g.model_histogram.size()) +
          " equal-width bins; fractions):\n",
      "histogram",
      {text<HistogramRow>("bin", [](const auto& r) { return Value(r.bin); }),
       text<HistogramRow>("model", field(&HistogramRow::model), 4),
       text<HistogramRow>("fake", field(&HistogramRow::fake), 4)},
      bins, "total variation distance: " + format_fixed(g.total_variation, 4) + '\n');
}

// A p-value for people: two significant digits ("0.0029", "3.1e-12").
std::string format_p(double p) {
  std::ostringstream out;
  out << std::setprecision(2) << p;
  return out.str();
}

void verdict_text(const FitVerdict& v, TextReport& report) {
  std::ostringstream caption;
  if (v.folds == 1)
    caption << "\nverdict on " << v.held_out_rows << " held-out rows (the fake fitted on the other "
            << v.fit_rows << "; " << v.replicates << " fake samples of " << v.held_out_rows
            << " rows; Holm at " << format_double(v.family_alpha) << " beyond the floors):\n";
  else
    caption << "\nverdict, cross-fitted: each of " << v.folds << " folds of the " << v.held_out_rows
            << " rows judged against a fake fitted on the other rows (" << v.replicates
            << " fake samples per fold; pooled over the folds; Holm at "
            << format_double(v.family_alpha) << " beyond the floors):\n";
  std::string note = std::string("verdict: ") + verdict_word(v) + '\n';
  for (const auto& r : v.reasons) note += "  " + r + '\n';
  using C = VerdictCheck;
  report.table<C>(
      caption.str(), "checks",
      {text<C>("check",
               [](const C& c) {
                 return Value(c.name + (c.kind == CheckKind::distance ? " (distance)" : ""));
               }),
       text<C>("held-out", field(&C::held_out), 4), text<C>("fake", field(&C::fake), 4),
       text<C>("SE", field(&C::se), 4), text<C>("z", field(&C::z), 1),
       text<C>("Holm p", [](const C& c) { return Value(format_p(c.p_adjusted)); }),
       text<C>("floor", field(&C::floor), 3),
       text<C>("", [](const C& c) { return Value(c.fails ? "FAILS" : ""); })},
      v.checks, note);
}

void predictions_text(const FitPredictions& p, const std::vector<EstimatorConfig>& estimators,
                      std::size_t n, TextReport& report) {
  // The bootstrap's spread, absent ("-") when n exceeds the rows.
  const auto boot = [](double Spread::*part) {
    return
        [part](const Prediction& c) { return c.bootstrap ? Value(*c.bootstrap.*part) : Value(); };
  };
  const auto flags = [](const Prediction& c) {
    if (!c.bootstrap) return Value("n > rows: only the fake answers");
    std::string flag = c.sd_disagrees ? "sd differs" : "";
    if (c.bias_disagrees) flag += std::string(flag.empty() ? "" : ", ") + "bias differs";
    return Value(flag);
  };
  using P = Prediction;
  report.table<P>(
      "\npredictions: the fake (" + std::to_string(p.replicates) +
          " samples per n; bias against its truth) beside a bootstrap of the " + std::to_string(n) +
          " rows (" + std::to_string(p.resamples) +
          " resamples of n rows; bias against the estimate on all rows):\n",
      "predictions",
      {text<P>("estimator", [&](const P& c) { return Value(estimators[c.estimator].label); }),
       text<P>("n", field(&P::n)),
       text<P>(
           "fake mean", [](const P& c) { return Value(c.fake.mean); }, 4),
       text<P>(
           "fake sd", [](const P& c) { return Value(c.fake.sd); }, 4),
       text<P>(
           "fake bias", [](const P& c) { return Value(c.fake.bias); }, 4),
       text<P>("boot mean", boot(&Spread::mean), 4), text<P>("boot sd", boot(&Spread::sd), 4),
       text<P>("boot bias", boot(&Spread::bias), 4), text<P>("", flags)},
      p.cells, "differs: beyond 3 Monte Carlo standard errors of the two (docs/fit.md)\n");
}

// The run's report through `reporter`: the JSON reporter (--json) or the terminal's.
void report_fit(const FitOptions& o, const FitRun& run, Reporter& reporter) {
  if (o.json) {
    const nlohmann::ordered_json doc = fit_document(run);
    require_finite_json(doc, o.data);
    emit(reporter, document_header(doc), {});
    return;
  }
  TextReport report;
  report.prose(o.data + ": n = " + std::to_string(run.data.size) +
               ", K = " + std::to_string(run.data.classes) + "\n\n");
  parametric_text(run.fit, report);
  if (run.fit.empirical) empirical_text(run, report);
  if (run.fit.beta_binary) beta_binary_text(run.fit, report);
  comparison_text(run.fit, report);
  verdict_text(run.verdict, report);
  predictions_text(run.predictions, run.asked, run.data.size, report);
  report.emit(reporter);
}

// The config (--out) and, for the empirical family, its rows file beside it.
void write_config(const FitOptions& o, const FitRun& run) {
  auto config = runnable_config(o, run.fit);
  config["provenance"] = {{"command", "calbench fit"},  {"data", o.data},
                          {"rows", run.data.size},      {"seed", o.seed},
                          {"folds", run.verdict.folds}, {"verdict", verdict_json(run.verdict)}};
  if (o.holdout > 0.0) config["provenance"]["holdout"] = o.holdout;
  require_finite_json(config, o.out);
  // The pair is written rows first (the config names the rows' hash); a config that cannot
  // be written takes the rows file just written with it.
  const std::string& rows_npy = run.rows_npy;
  try {
    if (!rows_npy.empty()) write_file_atomically(rows_file_for(o.out), rows_npy);
    try {
      write_file_atomically(o.out, config.dump(2) + "\n");
    } catch (...) {
      std::error_code ignored;
      if (!rows_npy.empty()) std::filesystem::remove(rows_file_for(o.out), ignored);
      throw;
    }
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::no_space_on_device) throw;  // exit 1, as a run's full disk
    throw InputError("--out " + o.out + ": " + e.what());
  }
}

}  // namespace

JudgedFake fit_judged_fake(const Sample& data, const FitOptions& o) {
  check_fit_input(data, o.data);
  FitRun run;
  run.data = data;
  run.options = fit_options(o, parse_map(o.map));
  run.asked = requested_estimators(default_estimators);
  run.verdict = judge(data, run.options, labelled(run.asked), o);
  fit_all_rows(o, run);
  return {std::move(run.fit), std::move(run.verdict)};
}

int run_fit(const FitOptions& o, std::ostream& out) {
  const FitRun run = compute(o);
  // The report is complete before anything is printed: an error prints nothing.
  std::ostringstream text;
  if (o.json) {
    JsonReporter json(text);
    report_fit(o, run, json);
  } else {
    TerminalReporter terminal(text);
    report_fit(o, run, terminal);
  }
  if (!o.out.empty() && !run.verdict.good && !o.force) {
    out << text.str();
    std::cerr << "error: the verdict is POOR: " << o.out
              << " not written (--force writes it anyway; docs/fit.md says what to do)\n";
    return fit_refused_status;
  }
  if (!o.out.empty()) {
    write_config(o, run);
    if (!o.json) text << wrote(o.out, "estimator_bias on the fitted generator");
  }
  out << text.str();
  return 0;
}

Command add_fit_command(CLI::App& app) {
  struct Arguments {
    FitOptions options;
    std::size_t threads = default_threads();
  };
  auto a = std::make_shared<Arguments>();
  FitOptions* o = &a->options;
  auto* fit = app.add_subcommand("fit", "fit a fake classifier to a model's outputs (docs/fit.md)");
  fit->add_option("DATA", o->data,
                  "CSV (label, K probabilities per line) or NPY (n x K) with --labels")
      ->required();
  fit->add_option("--labels", o->labels, "NPY array of integer labels (NPY data)");
  fit->add_flag("--logits", o->logits, "the values are logits (softmax applied)");
  fit->add_flag("--renormalize", o->renormalize,
                "divide each probability row by its sum (rows rounded to >= 3 decimals)");
  fit->add_option("--map", o->map,
                  "auto (lowest AIC) | identity | temperature | power (default auto)")
      ->check(CLI::IsMember({"auto", "identity", "temperature", "power"}));
  fit->add_option("--family", o->family,
                  "auto (empirical when it fits) | empirical | parametric (lowest BIC, at K = 2 "
                  "lowest joint AIC) | dirichlet | dirichlet_mixture | beta_binary (default auto)")
      ->check(CLI::IsMember(
          {"auto", "empirical", "parametric", "dirichlet", "dirichlet_mixture", "beta_binary"}));
  fit->add_option("--components", o->components,
                  "the most Dirichlet mixture components tried (default 4; 1: none)")
      ->check(CLI::Range(1, 16));
  fit->add_option("--seed", o->seed, "seed of the fake sample compared (default 0)")
      ->check(uint64_text());
  fit->add_option("--out", o->out,
                  "write an estimator_bias config on the fitted generator to this file");
  fit->add_flag("--json", o->json, "print JSON instead of the tables");
  fit->add_option("--folds", o->folds,
                  "folds of the cross-fitted verdict: each row held out once (default 5)")
      ->check(CLI::Range(2, 100));
  fit->add_option("--holdout", o->holdout,
                  "judge on one split holding out this fraction of rows instead of folds")
      ->check(CLI::Validator(
          [](const std::string& text) {
            double v = 0.0;
            return CLI::detail::lexical_cast(text, v) && v > 0.0 && v < 1.0
                       ? std::string()
                       : "must be a fraction > 0 and < 1, found " + text;
          },
          "FRACTION"));
  fit->add_option("--verdict-samples", o->verdict_replicates,
                  "fake samples per fold for the verdict (default 200)")
      ->check(CLI::Range(2, 100000));
  fit->add_option("--estimators", o->estimators,
                  "estimators of the verdict and predictions: names (ece,smooth_ece) or a JSON "
                  "array like a config's, inline or a file (default: the written config's)");
  fit->add_option("--penalties", o->penalties,
                  "the empirical curve's finite penalties, comma-separated: the cross-validated "
                  "likelihood's plain choice between them and the identity (default: the "
                  "penalty rule of docs/fit.md, 0.1 with two guards)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  fit->add_option("--sizes", o->sizes,
                  "sample sizes predicted, comma-separated (default 200,1000,n,4n)")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{2}, std::size_t{100'000'000}));
  fit->add_option("--replicates", o->replicates, "fake samples per predicted size (default 200)")
      ->check(CLI::Range(2, 100000));
  fit->add_option("--resamples", o->resamples,
                  "bootstrap resamples per predicted size (default 200)")
      ->check(CLI::Range(2, 100000));
  fit->add_flag(
      "--no-classwise", [o](std::int64_t) { o->classwise = false; },
      "the empirical family without its classwise map (the top-label curve alone)");
  fit->add_flag("--force", o->force, "write --out even when the verdict is POOR");
  fit->add_option("--threads", a->threads, "worker threads (default: all cores)")
      ->check(CLI::Range(1, 4096));
  return {fit, [a] {
            tbb::global_control limit(tbb::global_control::max_allowed_parallelism, a->threads);
            return run_fit(a->options, std::cout);
          }};
}

}  // namespace calbench
