// The registry row of the external estimator (estimators/external.hpp, docs/external.md).
#include <memory>
#include <string>
#include <vector>

#include "config/registry.hpp"
#include "estimators/estimators_json.hpp"
#include "estimators/external.hpp"

namespace calbench {
namespace {

// `command`: a non-empty array of non-empty strings, the program first (looked up on PATH).
bool read_command(Args& args) {
  ObjectReader& reader = args.reader();
  const std::string pointer = reader.pointer_to("command");
  const Json* value = reader.require("command", "an array of strings, the program first");
  if (value == nullptr) return false;
  if (!value->is_array() || value->empty()) {
    reader.problems().add(
        pointer,
        R"(expected a non-empty array of strings (the program and its arguments), found )" +
            (value->is_array() ? std::string("an empty array") : describe(*value)));
    return false;
  }
  std::vector<std::string> command;
  bool ok = true;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const auto arg = read_string((*value)[i], pointer_join(pointer, i), reader.problems());
    ok = ok && arg.has_value();
    if (arg) command.push_back(*arg);
  }
  if (!ok) return false;
  // Results show it as a shell would (the resolved config keeps the array).
  args.set("command", command, Value(join(command, " ")));
  return true;
}

// `target`: the quantity whose truth the command's numbers are compared with (required: calbench
// cannot compute the population value of a program it only runs on samples).
bool read_target(Args& args) {
  ObjectReader& reader = args.reader();
  std::vector<std::string> names;
  for (const Quantity q : all_quantities) names.emplace_back(to_string(q));
  const Json* value = reader.require("target", "one of: " + join(names, ", "));
  if (value == nullptr) return false;
  const auto name = read_string(*value, reader.pointer_to("target"), reader.problems());
  if (!name) return false;
  const auto quantity = quantity_from_string(*name);
  if (!quantity) {
    reader.problems().add(reader.pointer_to("target"), unknown_name("target", *name, names));
    return false;
  }
  args.set("target", *quantity, Value(*name));
  return true;
}

std::optional<EstimatorConfig> build(Args& a) {
  EstimatorConfig out;
  out.label = "external";
  out.params = a.shown();
  out.estimator = std::make_shared<ExternalEstimator>(
      a.get<std::vector<std::string>>("command"), a.get<Quantity>("target"),
      a.get<double>("timeout"), static_cast<std::size_t>(a.get<std::int64_t>("max_output")));
  return out;
}

}  // namespace

EstimatorEntry external_estimator() {
  return {
      .summary =
          R"(a metric computed by another program: calbench writes each cell's replicates as NPY files into a directory, runs the command once with that directory as its last argument and reads one number per replicate from its standard output (docs/external.md))",
      .params =
          {param::custom(
               "command", "array of strings", "required", "non-empty, program first",
               R"(the program (looked up on PATH, relative paths from calbench's working directory) and its arguments)",
               read_command, {Json("python3 my_ece.py"), Json::array()}),
           param::custom(
               "target", "string", "required", "a quantity name",
               R"(the quantity the numbers estimate: bias, RMSE and coverage are measured against its truth)",
               read_target, {Json(1), Json("no_such_quantity")}),
           // The deadline is now + timeout on the steady clock: 1e300 s overflowed it to an
           // infinite time (never killed) and 1e-300 s killed every start at once. A millisecond
           // to a year spans every real use.
           param::number(
               "timeout", 600.0, [](double x) { return x >= 1e-3 && x <= 3.2e7; },
               "in [1e-3, 3.2e7]", "seconds one start of the command may take before it is killed"),
           // Output is read through pipes as it comes and kept in memory (stdout whole, to parse
           // it): a command printing without end drove calbench to 16.8 GB. 64 MiB is 2.7
           // million numbers of 24 characters, room for any cell; 1 GiB bounds one command's
           // memory.
           param::at_most(
               param::integer(
                   "max_output", 1024,
                   static_cast<std::int64_t>(ExternalEstimator::kDefaultMaxOutput),
                   R"(bytes the command may write to its standard output, and to its standard error, before it is killed)"),
               std::int64_t{1} << 30)},
      .example =  // Chance accuracy 1/K for every replicate: the protocol in one line of plain
                  // Python.
      R"js({"command": ["python3", "-c", "import json, sys; m = json.load(open(sys.argv[1] + '/manifest.json')); print(*[1 / m['classes']] * m['replicates'])"], "target": "accuracy"})js",
      .notes =
          {{"target", "the `target` given (required)"},
           {"convention",
            R"(whatever the command computes; calbench checks only that it prints one finite number per replicate and exits with status 0 in time)"}},
      .build = build,
      .extra = {.cost = Cost::external, .interval = IntervalMethod::basic}};
}

}  // namespace calbench
