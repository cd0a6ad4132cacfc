#include "experiment/experiment.hpp"

#include <algorithm>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "generators/generators_json.hpp"

// How a config file becomes a scenario's config:
// 1. The header is read (name, scenario, seed); the scenario's row of the scenario table gives
//    its keys and its section reader (ScenarioSections). Every problem is collected with its
//    JSON pointer and the resolved copy gets every default.
// 2. The base document's cell is read (the common sections and the scenario's), then output,
//    the scenario's fixed sections and the sweep; each sweep key is checked against the
//    resolved copy (a swept path must exist there).
// 3. Each cell is the document with the swept paths replaced by the cell's values, read again
//    by the same functions. A problem at a swept path is reported at the value's place in
//    `sweep` (/sweep/KEY/i); any other problem a cell adds says which cells have it.
// 4. Problems are deduplicated and thrown together as one ConfigError.
// Targets are not solved here: that is a step of the run (scenarios/common.hpp).

namespace calbench {
namespace {

// More cells than this is surely a typo in a sweep, and would take forever to run.
constexpr std::size_t max_cells = 100'000;

// The keys of every scenario; the scenarios' own keys come from their rows.
// "provenance" is free-form (an object) and never read: where the config came from, e.g. the
// data and verdict of the `calbench fit` that wrote it (docs/fit.md); it stays in
// config.resolved.json.
const std::vector<std::string> common_keys = {"name",       "scenario",  "seed",
                                              "replicates", "generator", "truth",
                                              "sweep",      "output",    "provenance"};

// Fixed for a whole experiment: they name it, seed it or say where it goes.
const std::vector<std::string> common_fixed_keys = {"sweep", "name",   "scenario",
                                                    "seed",  "output", "provenance"};

std::vector<std::string> all_keys(const std::vector<ScenarioSyntax>& scenarios,
                                  std::vector<std::string> ScenarioSyntax::*member,
                                  std::vector<std::string> out) {
  for (const auto& s : scenarios)
    for (const auto& key : s.*member)
      if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(key);
  return out;
}

// An absent optional section reads as this empty object (static: readers keep a pointer).
const Json& empty_object() {
  static const Json empty = Json::object();
  return empty;
}

bool contains(const std::vector<std::string>& list, const std::string& key) {
  return std::find(list.begin(), list.end(), key) != list.end();
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

void parse_name(ObjectReader& top, const std::string& fallback, ExperimentBase& out) {
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

const ScenarioSyntax* parse_scenario(ObjectReader& top,
                                     const std::vector<ScenarioSyntax>& scenarios,
                                     ExperimentBase& out) {
  std::vector<std::string> valid;
  for (const auto& s : scenarios) valid.emplace_back(s.name);
  const Json* value = top.require("scenario", "one of: " + join(valid, ", "));
  if (value == nullptr) return nullptr;
  const auto name = read_string(*value, top.pointer_to("scenario"), top.problems());
  if (!name) return nullptr;
  const auto it = std::find_if(scenarios.begin(), scenarios.end(),
                               [&](const ScenarioSyntax& s) { return s.name == *name; });
  if (it == scenarios.end()) {
    top.problems().add(top.pointer_to("scenario"), unknown_name("scenario", *name, valid));
    return nullptr;
  }
  out.scenario = *name;
  return &*it;
}

// A key of other scenarios: it "belongs to" the one scenario that reads it, else "is not used".
void reject_foreign_keys(const ObjectReader& top, const ScenarioSyntax& own,
                         const std::vector<ScenarioSyntax>& scenarios) {
  for (const auto& key : all_keys(scenarios, &ScenarioSyntax::keys, {})) {
    if (contains(own.keys, key) || top.find(key) == nullptr) continue;
    std::vector<std::string_view> readers;
    for (const auto& s : scenarios)
      if (contains(s.keys, key)) readers.push_back(s.name);
    top.problems().add(top.pointer_to(key),
                       readers.size() == 1 ? "key " + quote(key) + " belongs to scenario " +
                                                 quote(readers[0]) + ", not " + quote(own.name)
                                           : "key " + quote(key) + " is not used by scenario " +
                                                 quote(own.name) + own.unused_note);
  }
}

void parse_output(ObjectReader& top, const std::string& name, const ScenarioSyntax& syntax,
                  ScenarioSections& sections, OutputSettings& out) {
  const Json* value = top.find("output");
  ObjectReader o(value != nullptr ? *value : empty_object(), top.pointer_to("output"),
                 top.problems());
  std::vector<std::string> allowed = {"directory"};
  allowed.insert(allowed.end(), syntax.output_keys.begin(), syntax.output_keys.end());
  o.allow_only(allowed);
  const auto directory = o.string("directory", "results/" + name);
  if (directory) out.directory = *directory;
  sections.parse_output(o);
  top.set_resolved("output", o.take_resolved());
}

}  // namespace

// ---- the common cell sections -----------------------------------------------------------------

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

std::optional<TruthSettings> parse_truth_section(ObjectReader& top) {
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

void set_cell_base(CellBase& cell, std::size_t replicates, ParsedGenerator generator,
                   const TruthSettings& truth) {
  cell.replicates = replicates;
  cell.generator = std::move(generator.spec);
  cell.target = generator.target;
  cell.truth = truth;
}

Value to_value(const Json& json) {
  switch (json.type()) {
    case Json::value_t::boolean:
      return Value(json.get<bool>());
    case Json::value_t::number_integer:
      return Value(json.get<std::int64_t>());
    case Json::value_t::number_unsigned:
      return Value(json.get<std::uint64_t>());
    case Json::value_t::number_float:
      return Value(json.get<double>());
    case Json::value_t::string:
      return Value(json.get<std::string>());
    case Json::value_t::array: {
      Value::Array out;
      for (const auto& item : json) out.push_back(to_value(item));
      return Value(std::move(out));
    }
    case Json::value_t::object: {
      Value::Object out;
      for (const auto& item : json.items()) out.emplace_back(item.key(), to_value(item.value()));
      return Value(std::move(out));
    }
    default:
      return Value();
  }
}

namespace {

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
                                    const std::vector<std::string>& fixed, Problems& problems) {
  SweepAxis axis;
  axis.key = key;
  axis.path = split_path(key);
  axis.sweep_pointer = pointer_join("/sweep", key);
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
std::optional<std::vector<SweepAxis>> parse_sweep(ObjectReader& top,
                                                  const std::vector<std::string>& fixed) {
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
    auto axis = parse_axis(item.key(), item.value(), top.resolved(), axes, fixed, top.problems());
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

using SweepPointers = std::vector<std::pair<std::string, std::string>>;

// Where `pointer`, when under a swept path, is in `sweep`: at the cell's value of that path
// (/sweep/KEY/i...), given the cell's position on each axis; nullopt when under none.
std::optional<std::string> sweep_place(const std::string& pointer, const SweepPointers& pointers,
                                       const std::vector<std::size_t>& position) {
  for (std::size_t a = 0; a < pointers.size() && a < position.size(); ++a) {
    const auto& [config_pointer, sweep_pointer] = pointers[a];
    if (under(pointer, config_pointer))
      return pointer_join(sweep_pointer, position[a]) + pointer.substr(config_pointer.size());
  }
  return std::nullopt;
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
                        const std::vector<SweepAxis>& axes, const SweepPointers& pointers,
                        const std::vector<Problem>& base, Problems& problems,
                        std::vector<CellProblem>& unexplained) {
  if (auto place = sweep_place(problem.pointer, pointers, digits)) {
    problems.add_unique({std::move(*place), std::move(problem.message)});
    return;
  }
  if (std::find(base.begin(), base.end(), problem) != base.end()) return;
  const auto it = std::find_if(unexplained.begin(), unexplained.end(),
                               [&](const CellProblem& p) { return p.problem == problem; });
  if (it == unexplained.end())
    unexplained.push_back({std::move(problem), {index}, cell_values(axes, digits)});
  else
    it->cells.push_back(index);
}

// Reads every cell: the document with each swept path set to the cell's value, read by the
// same functions as the base document.
std::vector<std::unique_ptr<CellBase>> expand_cells(const Json& document, const Json& resolved,
                                                    const std::vector<SweepAxis>& axes,
                                                    const SweepPointers& pointers,
                                                    ScenarioSections& sections,
                                                    Problems& problems) {
  std::size_t count = 1;
  for (const auto& axis : axes) count *= axis.values.size();
  std::vector<std::unique_ptr<CellBase>> cells;
  std::vector<CellProblem> unexplained;
  const std::vector<Problem> base = problems.items();
  for (std::size_t index = 0; index < count; ++index) {
    const auto digits = cell_digits(index, axes);
    Json cell_document = document;
    for (std::size_t a = 0; a < axes.size(); ++a)
      substitute(cell_document, resolved, axes[a].path, axes[a].values[digits[a]]);
    Problems found;
    found.base_directory = problems.base_directory;  // a swept rows file is relative to it too
    ObjectReader top(cell_document, "", found);
    auto cell = sections.parse_cell(top);
    for (const auto& problem : found.items())
      route_cell_problem(problem, index, digits, axes, pointers, base, problems, unexplained);
    if (!cell) continue;
    cell->index = index;
    cell->sweep_position = digits;
    // A swept number as the cell read it (1e4 -> 10000); objects and arrays as written, not
    // with the defaults the cell filled into them.
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const Json& value = axes[a].values[digits[a]];
      const Json* read = find_path(top.resolved(), axes[a].path);
      cell->swept.push_back(
          {axes[a].key, to_value(value.is_structured() || !read ? value : *read)});
    }
    cells.push_back(std::move(cell));
  }
  for (const auto& p : unexplained) problems.add(p.problem.pointer, with_cells(p));
  return cells;
}

// The base document's problems, less those at swept paths: a swept path's value in the
// document is a placeholder that no cell uses.
Problems without_swept(const Problems& problems, const SweepPointers& pointers) {
  Problems out;
  out.base_directory = problems.base_directory;
  const std::vector<std::size_t> any_position(pointers.size(), 0);
  for (const auto& p : problems.items())
    if (!sweep_place(p.pointer, pointers, any_position)) out.add(p.pointer, p.message);
  return out;
}

// The whole document; `fallback_name` is the name when the document gives none.
std::unique_ptr<ExperimentBase> parse_document(const Json& document, const std::string& source,
                                               const std::string& fallback_name,
                                               const std::vector<ScenarioSyntax>& scenarios) {
  ExperimentBase header;
  header.source = source;
  Problems problems;
  problems.base_directory = std::filesystem::path(source).parent_path();
  ObjectReader top(document, "", problems);
  top.allow_only(all_keys(scenarios, &ScenarioSyntax::keys, common_keys));
  parse_name(top, fallback_name, header);
  const ScenarioSyntax* syntax = parse_scenario(top, scenarios, header);
  if (const auto seed = top.unsigned_integer("seed", 0, 0)) header.seed = *seed;
  if (const Json* provenance = top.find("provenance"); provenance && !provenance->is_object())
    problems.add(top.pointer_to("provenance"),
                 "expected an object, found " + describe(*provenance));
  if (syntax != nullptr) reject_foreign_keys(top, *syntax, scenarios);
  // With no valid scenario the rest is still read, as the table's first scenario, so that every
  // other problem is reported too.
  const ScenarioSyntax* reader = syntax != nullptr ? syntax : &scenarios.front();
  std::unique_ptr<ScenarioSections> sections = reader->sections();
  std::unique_ptr<CellBase> base_cell = sections->parse_cell(top);
  parse_output(top, header.name.empty() ? "experiment" : header.name, *reader, *sections,
               header.output);
  const auto axes =
      parse_sweep(top, all_keys(scenarios, &ScenarioSyntax::fixed, common_fixed_keys));
  if (axes)
    for (const auto& axis : *axes) {
      header.sweep_keys.push_back(axis.key);
      header.sweep_pointers.emplace_back(axis.config_pointer, axis.sweep_pointer);
    }
  sections->parse_after_sweep(top, header.sweep_keys, base_cell.get());
  header.resolved = top.take_resolved();
  std::vector<std::unique_ptr<CellBase>> cells;
  if (axes && !axes->empty() && top.is_object()) {
    problems = without_swept(problems, header.sweep_pointers);
    cells =
        expand_cells(document, header.resolved, *axes, header.sweep_pointers, *sections, problems);
  } else if (base_cell) {
    cells.push_back(std::move(base_cell));
  }
  sections->check(cells, problems);
  if (!problems.empty()) throw ConfigError(problems.render(source));
  return sections->finish(std::move(header), std::move(cells));
}

}  // namespace

std::string cell_pointer(const ExperimentBase& experiment, const CellBase& cell,
                         const std::string& pointer) {
  return sweep_place(pointer, experiment.sweep_pointers, cell.sweep_position).value_or(pointer);
}

std::unique_ptr<ExperimentBase> load_experiment(const std::filesystem::path& file,
                                                const std::vector<ScenarioSyntax>& scenarios) {
  const std::string source = file.string();
  Problems problems;
  const Json document = read_json_file(file, problems);
  // Duplicate keys are reported together with whatever else is wrong in the file.
  std::vector<std::string> found = problems.render(source);
  try {
    auto config = parse_document(document, source, name_from_stem(file.stem().string()), scenarios);
    if (found.empty()) return config;
  } catch (const ConfigError& error) {
    found.insert(found.end(), error.problems().begin(), error.problems().end());
  }
  throw ConfigError(std::move(found));
}

std::unique_ptr<ExperimentBase> parse_experiment(const nlohmann::ordered_json& document,
                                                 const std::string& source,
                                                 const std::vector<ScenarioSyntax>& scenarios) {
  const std::filesystem::path path(source);
  return parse_document(document, source,
                        path.extension() == ".json" ? name_from_stem(path.stem().string())
                                                    : std::string("experiment"),
                        scenarios);
}

}  // namespace calbench
