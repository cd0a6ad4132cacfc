#include "config/experiment.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "config/generator_config.hpp"
#include "config/json_support.hpp"
#include "config/registry.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

// How a config file becomes an ExperimentConfig:
// 1. The document is read section by section (one small function each); every problem is
//    collected with its JSON pointer and the resolved copy gets every default.
// 2. Each sweep key is checked against the resolved copy (a swept path must exist there).
// 3. Each cell is the document with the swept paths replaced by the cell's values, read again
//    by the same functions. A problem at a swept path is reported at the value's place in
//    `sweep` (/sweep/KEY/i); any other problem a cell adds says which cells have it.
// 4. Problems are deduplicated and thrown together as one ConfigError.

namespace calbench {
namespace {

// More cells than this is surely a typo in a sweep, and would take forever to run.
constexpr std::size_t max_cells = 100'000;

// Every scenario's keys; a key of another scenario than the config's is reported by
// reject_foreign_sections (decision) and reject_foreign_recalibration_keys (recalibration).
const std::vector<std::string> top_level_keys = {
    "name",        "scenario", "seed",      "replicates",    "sample_size", "generator",
    "estimators",  "truth",    "sweep",     "output",        "intervals",   "decision",
    "requirement", "fit_size", "test_size", "truth_samples", "methods",     "recalibrator"};

// Fixed for a whole experiment: they name it, seed it or say where it goes.
const std::vector<std::string> unsweepable_keys = {"sweep",  "name",      "scenario",   "seed",
                                                   "output", "intervals", "requirement"};

// An absent optional section reads as this empty object (static: readers keep a pointer).
const Json& empty_object() {
  static const Json empty = Json::object();
  return empty;
}

// ---- the header: name, scenario, seed, output ---------------------------------------------

bool name_character(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '-' || ch == '.';
}

// The name becomes a directory (results/<name>), so it is kept to a portable file name.
bool valid_name(std::string_view name) {
  return !name.empty() && name.front() != '.' &&
         std::all_of(name.begin(), name.end(), name_character);
}

// The stem of the file, made a valid name; "experiment" when nothing of it is usable.
std::string name_from_stem(std::string stem) {
  std::replace_if(
      stem.begin(), stem.end(), [](char ch) { return !name_character(ch); }, '_');
  return valid_name(stem) ? stem : "experiment";
}

void parse_name(ObjectReader& top, const std::string& fallback, ExperimentConfig& out) {
  const auto name = top.string("name", fallback);
  if (!name) return;
  if (!valid_name(*name)) {
    top.problems().add(top.pointer_to("name"),
                       "expected a name of letters, digits, '_', '-' and '.' not starting with "
                       "'.' (it names the output directory), found " +
                           quote(*name));
    return;
  }
  out.name = *name;
}

void parse_scenario(ObjectReader& top, ExperimentConfig& out) {
  const Json* value = top.require("scenario", "one of: " + join(scenario_names(), ", "));
  if (value == nullptr) return;
  const auto name = read_string(*value, top.pointer_to("scenario"), top.problems());
  if (!name) return;
  const auto valid = scenario_names();
  if (std::find(valid.begin(), valid.end(), *name) == valid.end()) {
    top.problems().add(top.pointer_to("scenario"), unknown_name("scenario", *name, valid));
    return;
  }
  out.scenario = *name;
}

void parse_output(ObjectReader& top, const std::string& name, const std::string& scenario,
                  OutputSettings& out) {
  const Json* value = top.find("output");
  ObjectReader o(value != nullptr ? *value : empty_object(), top.pointer_to("output"),
                 top.problems());
  const bool recalibration = scenario == "recalibration";
  if (recalibration)
    o.allow_only({"directory", "timings"});
  else
    o.allow_only({"directory", "replicate_values"});
  const auto directory = o.string("directory", "results/" + name);
  if (directory) out.directory = *directory;
  if (recalibration) {
    if (const auto timings = o.boolean("timings", false)) out.timings = *timings;
  } else if (const auto replicate_values = o.boolean("replicate_values", false)) {
    out.replicate_values = *replicate_values;
  }
  top.set_resolved("output", o.take_resolved());
}

// A probability strictly between 0 and 1.
constexpr auto unit_open = [](double x) { return x > 0.0 && x < 1.0; };

// Most resamples per replicate: more is a typo, and the streams' key holds 32 bits of index.
constexpr std::int64_t max_resamples = 1'000'000;

// `intervals`: only when present (absent keeps every output as it was).
void parse_intervals(ObjectReader& top, ExperimentConfig& out) {
  const Json* value = top.find("intervals");
  if (value == nullptr) return;
  ObjectReader o(*value, top.pointer_to("intervals"), top.problems());
  if (!o.is_object()) return;
  o.allow_only({"resamples", "level", "test_level"});
  const IntervalSettings defaults;
  const auto resamples = o.integer("resamples", 1, static_cast<std::int64_t>(defaults.resamples));
  if (resamples && *resamples > max_resamples)
    top.problems().add(o.pointer_to("resamples"),
                       "resamples = " + std::to_string(*resamples) +
                           ": must be <= " + std::to_string(max_resamples));
  const auto level = o.number("level", defaults.level, unit_open, "> 0 and < 1");
  const auto test_level = o.number("test_level", defaults.test_level, unit_open, "> 0 and < 1");
  top.set_resolved("intervals", o.take_resolved());
  if (!resamples || *resamples > max_resamples || !level || !test_level) return;
  out.intervals = IntervalSettings{static_cast<std::size_t>(*resamples), *level, *test_level};
}

// ---- the cell sections: replicates, sample_size, generator, estimators, truth -------------

std::optional<std::size_t> parse_count(ObjectReader& top, std::string_view key) {
  const auto n = top.integer(key, 1);
  if (!n) return std::nullopt;
  return static_cast<std::size_t>(*n);
}

std::optional<ParsedGenerator> parse_generator_section(ObjectReader& top) {
  const Json* value = top.require("generator", "an object {\"family\": ..., ...}");
  if (value == nullptr) return std::nullopt;
  Json resolved;
  auto spec = parse_generator(*value, top.pointer_to("generator"), top.problems(), resolved);
  top.set_resolved("generator", std::move(resolved));
  return spec;
}

// Labels name result rows, so two estimators may not share one.
std::optional<std::vector<EstimatorConfig>> parse_estimators(ObjectReader& top) {
  return parse_labelled_array<EstimatorConfig>(top, "estimators", "estimators", parse_estimator);
}

std::optional<TruthSettings> parse_truth(ObjectReader& top) {
  const Json* value = top.find("truth");
  ObjectReader t(value != nullptr ? *value : empty_object(), top.pointer_to("truth"),
                 top.problems());
  t.allow_only({"samples", "tolerance", "population_samples"});
  const auto samples = t.unsigned_integer("samples", 1000, TruthSettings{}.samples);
  const auto tolerance = t.positive("tolerance", TruthSettings{}.tolerance);
  const auto population =
      t.unsigned_integer("population_samples", 8000, TruthSettings{}.population_samples);
  top.set_resolved("truth", t.take_resolved());
  if (!samples || !tolerance || !population) return std::nullopt;
  TruthSettings settings;
  settings.samples = *samples;
  settings.tolerance = *tolerance;
  settings.population_samples = *population;
  return settings;
}

// Everything a sweep may vary. Reads each section even after a failure so that every problem
// is found. Scenario decision has a `decision` where the others have `estimators`.
std::optional<CellConfig> parse_cell(ObjectReader& top, const std::string& scenario) {
  CellConfig cell;
  const bool recalibration = scenario == "recalibration";
  const auto replicates = parse_count(top, "replicates");
  const auto sample_size =
      recalibration ? std::optional<std::size_t>(0) : parse_count(top, "sample_size");
  auto generator = parse_generator_section(top);
  std::optional<std::vector<EstimatorConfig>> estimators;
  bool recalibrator_ok = true;
  if (scenario == "decision") {
    cell.decision = parse_decision_section(
        top, generator ? std::optional<std::size_t>(spec_classes(generator->spec)) : std::nullopt);
    if (cell.decision) estimators.emplace();
    cell.recalibrator = parse_recalibrator_section(top, recalibrator_ok);
  } else {
    estimators = parse_estimators(top);
  }
  const auto truth = parse_truth(top);
  std::optional<RecalibrationSettings> settings;
  if (recalibration) settings = parse_recalibration_section(top);
  if (!replicates || !sample_size || !generator || !estimators || !truth) return std::nullopt;
  if ((recalibration && !settings) || !recalibrator_ok) return std::nullopt;
  cell.recalibration = std::move(settings);
  cell.replicates = *replicates;
  cell.sample_size = *sample_size;
  cell.generator = std::move(generator->spec);
  cell.target = generator->target;
  cell.estimators = std::move(*estimators);
  cell.truth = *truth;
  return cell;
}

// Solves the cell's target (if any) into its generator. A target that cannot be reached is a
// problem at the target key at fault (/generator/target/accuracy, .../ece_top_l1, ...).
bool solve_target(CellConfig& cell, TargetSolver& solver, Problems& problems) {
  if (!cell.target) return true;
  try {
    TargetSolution solution = solver.solve(*cell.target, cell.truth);
    cell.generator = solution.spec;
    cell.solution = std::move(solution);
    return true;
  } catch (const TargetError& error) {
    problems.add(pointer_join("/generator/target", error.field()), error.what());
    return false;
  }
}

// ---- the sweep ----------------------------------------------------------------------------

struct SweepAxis {
  std::string key;                // the dotted path as written
  std::vector<std::string> path;  // its segments
  std::string config_pointer;     // where it points in the config
  std::string sweep_pointer;      // where its values are: /sweep/KEY
  std::vector<Json> values;
};

std::vector<std::string> split_path(const std::string& key) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    out.push_back(key.substr(start, dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

// An array index as JSON pointers spell it: digits, no leading zero.
std::optional<std::size_t> array_index(const std::string& segment) {
  if (segment.empty() || segment.size() > 9 || (segment.size() > 1 && segment[0] == '0') ||
      !std::all_of(segment.begin(), segment.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return std::nullopt;
  return static_cast<std::size_t>(std::stoul(segment));
}

// The value at a dotted path: an object's key, or an array's index for a numeric segment.
const Json* find_path(const Json& root, const std::vector<std::string>& path) {
  const Json* node = &root;
  for (const auto& segment : path) {
    if (node->is_object()) {
      const auto it = node->find(segment);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array()) {
      const auto index = array_index(segment);
      if (!index || *index >= node->size()) return nullptr;
      node = &(*node)[*index];
    } else {
      return nullptr;
    }
  }
  return node;
}

// Sets the value at `path` in `document`. The path exists in `resolved` (the document with its
// defaults), so where the document lacks a container on the way the default one is copied in.
void substitute(Json& document, const Json& resolved, const std::vector<std::string>& path,
                const Json& value) {
  Json* node = &document;
  const Json* filled = &resolved;
  for (const auto& segment : path) {
    const bool same_shape = filled->is_object()
                                ? node->is_object()
                                : node->is_array() && node->size() == filled->size();
    if (!same_shape) *node = *filled;
    if (filled->is_object()) {
      filled = &filled->at(segment);
      if (!node->contains(segment)) (*node)[segment] = *filled;
      node = &(*node)[segment];
    } else {
      const std::size_t index = *array_index(segment);
      filled = &(*filled)[index];
      node = &(*node)[index];
    }
  }
  *node = value;
}

bool is_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// Reads one sweep key and its values; nullopt after reporting a problem.
std::optional<SweepAxis> parse_axis(const std::string& key, const Json& values,
                                    const Json& resolved, const std::vector<SweepAxis>& earlier,
                                    Problems& problems) {
  SweepAxis axis;
  axis.key = key;
  axis.path = split_path(key);
  axis.sweep_pointer = pointer_join("/sweep", key);
  const auto& fixed = unsweepable_keys;
  if (std::find(fixed.begin(), fixed.end(), axis.path.front()) != fixed.end()) {
    problems.add(axis.sweep_pointer, "cannot sweep " + quote(axis.path.front()) +
                                         ": name, scenario, seed, output and sweep are fixed "
                                         "for the whole experiment");
    return std::nullopt;
  }
  if (find_path(resolved, axis.path) == nullptr) {
    problems.add(axis.sweep_pointer, "sweep path " + quote(key) +
                                         " does not exist in the config (after defaults are "
                                         "filled in)");
    return std::nullopt;
  }
  for (const auto& other : earlier) {
    if (is_prefix(other.path, axis.path) || is_prefix(axis.path, other.path)) {
      problems.add(axis.sweep_pointer, "sweep path " + quote(key) + " overlaps " +
                                           quote(other.key) + "; sweep one of them");
      return std::nullopt;
    }
  }
  if (!values.is_array() || values.empty()) {
    problems.add(axis.sweep_pointer,
                 "expected a non-empty array of values, found " +
                     (values.is_array() ? std::string("an empty array") : describe(values)));
    return std::nullopt;
  }
  for (const auto& segment : axis.path)
    axis.config_pointer = pointer_join(axis.config_pointer, segment);
  axis.values.assign(values.begin(), values.end());
  return axis;
}

// The sweep's axes, in the order the keys appear; nullopt when any key is unusable.
std::optional<std::vector<SweepAxis>> parse_sweep(ObjectReader& top) {
  const Json* value = top.find("sweep");
  if (value == nullptr) return std::vector<SweepAxis>{};
  const std::string pointer = top.pointer_to("sweep");
  if (!value->is_object()) {
    top.problems().add(
        pointer, "expected an object {\"dotted.path\": [values...]}, found " + describe(*value));
    return std::nullopt;
  }
  std::vector<SweepAxis> axes;
  bool ok = true;
  for (const auto& item : value->items()) {
    auto axis = parse_axis(item.key(), item.value(), top.resolved(), axes, top.problems());
    if (axis)
      axes.push_back(std::move(*axis));
    else
      ok = false;
  }
  std::size_t cells = 1;
  for (const auto& axis : axes) {
    if (cells > max_cells / axis.values.size()) {
      top.problems().add(pointer, "the sweep has more than " + std::to_string(max_cells) +
                                      " cells; split the experiment");
      return std::nullopt;
    }
    cells *= axis.values.size();
  }
  if (!ok) return std::nullopt;
  return axes;
}

// The value index of each axis in cell `index`: the last axis varies fastest.
std::vector<std::size_t> cell_digits(std::size_t index, const std::vector<SweepAxis>& axes) {
  std::vector<std::size_t> digits(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    digits[a] = index % axes[a].values.size();
    index /= axes[a].values.size();
  }
  return digits;
}

bool under(const std::string& pointer, const std::string& prefix) {
  return pointer == prefix ||
         (pointer.size() > prefix.size() && pointer.compare(0, prefix.size(), prefix) == 0 &&
          pointer[prefix.size()] == '/');
}

// A problem a cell has that the base document does not, with the cells that have it.
struct CellProblem {
  Problem problem;
  std::vector<std::size_t> cells;
  std::string first_cell_values;  // "generator.classes=3" for the first cell
};

std::string cell_values(const std::vector<SweepAxis>& axes,
                        const std::vector<std::size_t>& digits) {
  std::vector<std::string> parts;
  for (std::size_t a = 0; a < axes.size(); ++a)
    parts.push_back(axes[a].key + "=" + axes[a].values[digits[a]].dump());
  return join(parts, ", ");
}

std::string with_cells(const CellProblem& p) {
  constexpr std::size_t shown = 8;
  if (p.cells.size() == 1)
    return p.problem.message + " (in sweep cell " + std::to_string(p.cells.front()) + ": " +
           p.first_cell_values + ")";
  std::vector<std::string> list;
  for (std::size_t i = 0; i < std::min(shown, p.cells.size()); ++i)
    list.push_back(std::to_string(p.cells[i]));
  if (p.cells.size() > shown) list.push_back("...");
  return p.problem.message + " (in sweep cells " + join(list, ", ") + "; cell " +
         std::to_string(p.cells.front()) + ": " + p.first_cell_values + ")";
}

// Where a cell's problem goes: one at a swept value to its place in `sweep`; one the base
// document has too nowhere (it is reported already); any other to `unexplained`, with the cell.
void route_cell_problem(Problem problem, std::size_t index, const std::vector<std::size_t>& digits,
                        const std::vector<SweepAxis>& axes, const std::vector<Problem>& base,
                        Problems& problems, std::vector<CellProblem>& unexplained) {
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (under(problem.pointer, axes[a].config_pointer)) {
      problem.pointer = pointer_join(axes[a].sweep_pointer, digits[a]) +
                        problem.pointer.substr(axes[a].config_pointer.size());
      problems.add_unique(problem);
      return;
    }
  }
  const auto same = [&](const Problem& p) {
    return p.pointer == problem.pointer && p.message == problem.message;
  };
  if (std::any_of(base.begin(), base.end(), same)) return;
  const auto it = std::find_if(unexplained.begin(), unexplained.end(),
                               [&](const CellProblem& p) { return same(p.problem); });
  if (it == unexplained.end())
    unexplained.push_back({std::move(problem), {index}, cell_values(axes, digits)});
  else
    it->cells.push_back(index);
}

// Reads every cell: the document with each swept path set to the cell's value, read by the
// same functions as the base document.
std::vector<CellConfig> expand_cells(const Json& document, const Json& resolved,
                                     const std::vector<SweepAxis>& axes, TargetSolver& solver,
                                     const std::string& scenario, Problems& problems) {
  std::size_t count = 1;
  for (const auto& axis : axes) count *= axis.values.size();
  std::vector<CellConfig> cells;
  std::vector<CellProblem> unexplained;
  const std::vector<Problem> base = problems.items();
  for (std::size_t index = 0; index < count; ++index) {
    const auto digits = cell_digits(index, axes);
    Json cell_document = document;
    for (std::size_t a = 0; a < axes.size(); ++a)
      substitute(cell_document, resolved, axes[a].path, axes[a].values[digits[a]]);
    Problems found;
    ObjectReader top(cell_document, "", found);
    auto cell = parse_cell(top, scenario);
    const bool solved = cell && solve_target(*cell, solver, found);
    for (const auto& problem : found.items())
      route_cell_problem(problem, index, digits, axes, base, problems, unexplained);
    if (!cell || !solved) continue;
    cell->index = index;
    // A swept number as the cell read it (1e4 -> 10000); objects and arrays as written, not
    // with the defaults the cell filled into them.
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const Json& value = axes[a].values[digits[a]];
      const Json* read = find_path(top.resolved(), axes[a].path);
      cell->swept.emplace_back(axes[a].key, value.is_structured() || !read ? value : *read);
    }
    cells.push_back(std::move(*cell));
  }
  for (const auto& p : unexplained) problems.add(p.problem.pointer, with_cells(p));
  return cells;
}

// The base document's problems, less those at swept paths: a swept path's value in the
// document is a placeholder that no cell uses.
Problems without_swept(const Problems& problems, const std::vector<SweepAxis>& axes) {
  Problems out;
  for (const auto& p : problems.items()) {
    const bool swept = std::any_of(axes.begin(), axes.end(), [&](const SweepAxis& a) {
      return under(p.pointer, a.config_pointer);
    });
    if (!swept) out.add(p.pointer, p.message);
  }
  return out;
}

std::string read_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw ConfigError({name + ": cannot open the file (it is a directory)"});
  std::FILE* handle = std::fopen(name.c_str(), "rb");
  if (handle == nullptr)
    throw ConfigError({name + ": cannot open the file (" + std::strerror(errno) + ")"});
  std::string text;
  char buffer[65536];
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, handle)) > 0) text.append(buffer, got);
  const bool failed = std::ferror(handle) != 0;
  const int error = errno;
  std::fclose(handle);
  if (failed) throw ConfigError({name + ": cannot read the file (" + std::strerror(error) + ")"});
  return text;
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; the id helps nobody.
std::string without_exception_id(const std::string& what) {
  if (what.rfind("[json.exception.", 0) == 0) {
    const auto end = what.find("] ");
    if (end != std::string::npos) return what.substr(end + 2);
  }
  return what;
}

// `requirement` (scenario decision): its metric may be one of the task's figures, known from
// the base document's task when that reads cleanly.
void parse_requirement(ObjectReader& top, const std::optional<std::vector<SweepAxis>>& axes,
                       const std::optional<CellConfig>& base_cell, ExperimentConfig& config) {
  std::vector<std::string> keys;
  if (axes)
    for (const auto& axis : *axes) keys.push_back(axis.key);
  std::vector<std::string> figures;
  if (base_cell && base_cell->decision) figures = base_cell->decision->figures;
  config.requirement = parse_requirement_section(top, keys, figures);
}

// A requirement on a task figure needs that figure in every cell (the task may be swept).
void check_requirement_metric(const RequirementConfig& requirement,
                              const std::vector<CellConfig>& cells, Problems& problems) {
  const std::string& metric = requirement.requirement.metric;
  const auto& common = common_decision_metrics();
  if (std::find(common.begin(), common.end(), metric) != common.end()) return;
  for (const auto& cell : cells) {
    if (!cell.decision) continue;
    const auto& f = cell.decision->figures;
    if (std::find(f.begin(), f.end(), metric) == f.end()) {
      problems.add("/requirement/metric", "metric " + quote(metric) + " is not a figure of task " +
                                              quote(cell.decision->task) + " (sweep cell " +
                                              std::to_string(cell.index) + ")");
      return;
    }
  }
}

// The whole document; `fallback_name` is the name when the document gives none.
ExperimentConfig parse_document(const Json& document, const std::string& source,
                                const std::string& fallback_name) {
  ExperimentConfig config;
  config.source = source;
  Problems problems;
  ObjectReader top(document, "", problems);
  top.allow_only(top_level_keys);
  parse_name(top, fallback_name, config);
  parse_scenario(top, config);
  if (const auto seed = top.unsigned_integer("seed", 0, 0)) config.seed = *seed;
  if (!config.scenario.empty()) {
    reject_foreign_sections(top, config.scenario);
    reject_foreign_recalibration_keys(top, config.scenario);
  }
  auto base_cell = parse_cell(top, config.scenario);
  parse_output(top, config.name.empty() ? "experiment" : config.name, config.scenario,
               config.output);
  if (config.scenario != "decision" && config.scenario != "recalibration")
    parse_intervals(top, config);
  const auto axes = parse_sweep(top);
  if (config.scenario == "decision") parse_requirement(top, axes, base_cell, config);
  config.resolved = top.take_resolved();
  TargetSolver solver;
  if (axes && !axes->empty() && top.is_object()) {
    problems = without_swept(problems, *axes);
    config.cells =
        expand_cells(document, config.resolved, *axes, solver, config.scenario, problems);
    for (const auto& axis : *axes) config.sweep_keys.push_back(axis.key);
  } else if (base_cell && solve_target(*base_cell, solver, problems)) {
    config.cells.push_back(std::move(*base_cell));
  }
  if (config.requirement) check_requirement_metric(*config.requirement, config.cells, problems);
  // Solved targets, one entry per cell that has one (after the config's own keys).
  Json targets = Json::array();
  for (const auto& cell : config.cells)
    if (cell.target && cell.solution) {
      Json entry = {{"cell", cell.index}};
      entry.update(target_json(*cell.target, *cell.solution));
      targets.push_back(std::move(entry));
    }
  if (!targets.empty()) config.resolved["solved_targets"] = std::move(targets);
  if (!problems.empty()) throw ConfigError(problems.render(source));
  return config;
}

}  // namespace

ExperimentConfig load_experiment(const std::filesystem::path& file) {
  const std::string text = read_file(file);
  const std::string source = file.string();
  Problems problems;
  Json document;
  try {
    document = parse_json_text(text, problems);
  } catch (const Json::exception& error) {
    throw ConfigError({source + ": not valid JSON: " + without_exception_id(error.what())});
  }
  // Duplicate keys are reported together with whatever else is wrong in the file.
  std::vector<std::string> found = problems.render(source);
  try {
    auto config = parse_document(document, source, name_from_stem(file.stem().string()));
    if (found.empty()) return config;
  } catch (const ConfigError& error) {
    found.insert(found.end(), error.problems().begin(), error.problems().end());
  }
  throw ConfigError(std::move(found));
}

ExperimentConfig parse_experiment(const nlohmann::ordered_json& document,
                                  const std::string& source) {
  const std::filesystem::path path(source);
  return parse_document(document, source,
                        path.extension() == ".json" ? name_from_stem(path.stem().string())
                                                    : std::string("experiment"));
}

ExperimentConfig parse_experiment(const nlohmann::json& document, const std::string& source) {
  return parse_experiment(nlohmann::ordered_json(document), source);
}

std::string describe_cells(const ExperimentConfig& config) {
  // Labels built from swept parameters differ between cells; those are shown per cell.
  const auto labels_of = [](const CellConfig& cell) {
    if (cell.decision)
      return cell.decision->task + " " + cell.decision->params.dump() +
             (cell.recalibrator ? "; recalibrator: " + cell.recalibrator->method.label +
                                      " fit_size=" + std::to_string(cell.recalibrator->fit_size)
                                : std::string());
    std::vector<std::string> labels;
    for (const auto& e : cell.estimators) labels.push_back(e.label);
    if (cell.recalibration) {
      std::vector<std::string> methods;
      for (const auto& m : cell.recalibration->methods) methods.push_back(m.label);
      return join(labels, ", ") + "; methods: " + join(methods, ", ");
    }
    return join(labels, ", ");
  };
  const std::string labels = config.cells.empty() ? "" : labels_of(config.cells.front());
  std::string out =
      aligned_columns({{"experiment:", config.name},
                       {"scenario:", config.scenario},
                       {"seed:", std::to_string(config.seed)},
                       {"cells:", std::to_string(config.cells.size())},
                       {config.scenario == "decision" ? "decision:" : "estimators:", labels},
                       {"output:", config.output.directory.string()}},
                      "");
  std::vector<std::vector<std::string>> rows;
  for (const auto& cell : config.cells) {
    std::vector<std::string> row = {"cell " + std::to_string(cell.index)};
    if (cell.recalibration) {
      row.push_back("fit_size=" + std::to_string(cell.recalibration->fit_size));
      row.push_back("test_size=" + std::to_string(cell.recalibration->test_size));
    } else {
      row.push_back("sample_size=" + std::to_string(cell.sample_size));
    }
    row.push_back("replicates=" + std::to_string(cell.replicates));
    for (const auto& [key, value] : cell.swept)
      if (key != "sample_size" && key != "replicates" && key != "fit_size" && key != "test_size")
        row.push_back(key + "=" + value.dump());
    if (labels_of(cell) != labels)
      row.push_back((cell.decision ? "decision: " : "estimators: ") + labels_of(cell));
    if (cell.target && cell.solution) {
      const auto& t = *cell.solution;
      row.push_back("solved: alpha=" + format_double(t.alpha) +
                    (cell.target->map == TargetMap::temperature ? " temperature=" : " gamma=") +
                    format_double(t.parameter) + " (accuracy " + format_double(t.accuracy.value) +
                    ", ece_top_l1 " + format_double(t.ece_top_l1.value) + ")");
    }
    rows.push_back(std::move(row));
  }
  return out + "\n" + aligned_columns(rows, "  ");
}

}  // namespace calbench
