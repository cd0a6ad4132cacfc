#include "runners/fit.hpp"

#include <cctype>
#include <filesystem>
#include <sstream>
#include <vector>

#include "config/finite_json.hpp"
#include "config/json_support.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "data/model_outputs.hpp"
#include "fit/fake_classifier_fit.hpp"

namespace calbench {
namespace {

std::optional<FittedMap> parse_map(const std::string& name) {
  if (name == "auto") return std::nullopt;
  for (FittedMap m : {FittedMap::identity, FittedMap::temperature, FittedMap::power})
    if (to_string(m) == name) return m;
  throw InputError("--map " + name + ": expected auto, identity, temperature or power");
}

// The generator block of a config, exactly as `calbench run` reads it (DESIGN.md §3).
nlohmann::ordered_json generator_json(const FakeClassifierFit& fit) {
  nlohmann::ordered_json map = {{"map", std::string(to_string(fit.chosen.map))}};
  if (fit.chosen.map == FittedMap::temperature) map["temperature"] = fit.chosen.parameters[0];
  if (fit.chosen.map == FittedMap::power) map["exponents"] = fit.chosen.parameters;
  return {{"family", "dirichlet"},
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
            {{"name", "accuracy"}}}},
          {"output", {{"directory", "results/" + name}}}};
}

std::string truth_text(const TruthValue& v) {
  return format_fixed(v.value, 4) + " (" + std::string(to_string(v.method)) + ")";
}

}  // namespace

int run_fit(const FitOptions& o, std::ostream& out) {
  const std::optional<FittedMap> map = parse_map(o.map);
  const Sample data =
      read_model_outputs(o.data, o.labels, o.logits ? ValueKind::logits : ValueKind::probabilities);
  FakeFitOptions options;
  options.map = map;
  options.seed = o.seed;
  FakeClassifierFit fit;
  try {
    fit = fit_fake_classifier(data, options);
  } catch (const DomainError& error) {
    throw InputError(o.data + ": " + error.what());
  }
  const GoodnessOfFit& g = fit.fit;
  const TruthValue& accuracy = fit.truth[Quantity::accuracy];
  const TruthValue& ece = fit.truth[Quantity::ece_top_l1];

  std::ostringstream text;
  if (o.json) {
    nlohmann::ordered_json maps = nlohmann::ordered_json::array();
    for (const auto& c : fit.candidates)
      maps.push_back({{"map", std::string(to_string(c.map))},
                      {"parameters", c.parameters},
                      {"negative_log_likelihood", c.negative_log_likelihood},
                      {"aic", c.aic}});
    nlohmann::ordered_json doc = {
        {"n", data.size},
        {"classes", data.classes},
        {"generator", generator_json(fit)},
        {"maps", maps},
        {"rejected", fit.rejected},
        {"model",
         {{"accuracy", g.model_accuracy},
          {"accuracy_se", g.model_accuracy_se},
          {"mean_confidence", g.model_confidence},
          {"ece_ew15", g.model_ece},
          {"gap_se", g.model_gap_se},
          {"confidence_histogram", g.model_histogram}}},
        {"fake",
         {{"accuracy",
           {{"value", accuracy.value},
            {"method", to_string(accuracy.method)},
            {"error", accuracy.error}}},
          {"ece_top_l1",
           {{"value", ece.value}, {"method", to_string(ece.method)}, {"error", ece.error}}},
          {"ece_ew15_sample", g.fake_ece_sample},
          {"confidence_histogram", g.fake_histogram}}},
        {"total_variation", g.total_variation}};
    require_finite_json(doc, o.data);
    text << doc.dump(2) << '\n';
  } else {
    text << o.data << ": n = " << data.size << ", K = " << data.classes << "\n\n";
    text << "calibration map, fitted on the labels given p (lowest AIC chosen):\n";
    std::vector<std::vector<std::string>> rows = {{"map", "parameters", "-log L", "AIC", ""}};
    for (const auto& c : fit.candidates)
      rows.push_back({std::string(to_string(c.map)), std::to_string(c.free_parameters),
                      format_fixed(c.negative_log_likelihood, 2), format_fixed(c.aic, 2),
                      c.map == fit.chosen.map ? "<- chosen" : ""});
    text << aligned_columns(rows, "  ");
    for (const auto& r : fit.rejected) text << "  not fitted: " << r << '\n';
    text << "\nfitted generator (a config's \"generator\"):\n  " << generator_json(fit).dump()
         << "\n\n";
    rows = {{"", "model (data)", "fake classifier"},
            {"accuracy",
             format_fixed(g.model_accuracy, 4) + " ± " + format_fixed(g.model_accuracy_se, 4),
             truth_text(accuracy)},
            {"ECE, top label", format_fixed(g.model_ece, 4) + " (15 bins)",
             truth_text(ece) + "; 15 bins on n rows: " + format_fixed(g.fake_ece_sample, 4)},
            {"mean confidence", format_fixed(g.model_confidence, 4),
             format_fixed(accuracy.value + fit.truth[Quantity::overconfidence].value, 4)}};
    text << aligned_columns(rows, "  ");
    text << "\nconfidence histogram (max p, " << g.model_histogram.size()
         << " equal-width bins; fractions):\n";
    rows = {{"bin", "model", "fake"}};
    const double width = 1.0 / static_cast<double>(g.model_histogram.size());
    for (std::size_t b = 0; b < g.model_histogram.size(); ++b) {
      std::string bin = "(";  // appended, not "(" + ...: GCC 12 warns (-Wrestrict) on that form
      bin.append(format_fixed(width * static_cast<double>(b), 1)).append(", ");
      bin.append(format_fixed(width * static_cast<double>(b + 1), 1)).append("]");
      rows.push_back(
          {bin, format_fixed(g.model_histogram[b], 4), format_fixed(g.fake_histogram[b], 4)});
    }
    text << aligned_columns(rows, "  ");
    text << "total variation distance: " << format_fixed(g.total_variation, 4) << '\n';
  }
  if (!o.out.empty()) {
    const auto config = runnable_config(o, fit);
    require_finite_json(config, o.out);
    write_file_atomically(o.out, config.dump(2) + "\n");
    if (!o.json) text << "wrote " << o.out << " (estimator_bias on the fitted generator)\n";
  }
  out << text.str();
  return 0;
}

}  // namespace calbench
