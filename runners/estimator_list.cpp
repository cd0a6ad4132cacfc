#include "runners/estimator_list.hpp"

#include <cctype>
#include <filesystem>
#include <map>
#include <optional>

#include "config/json_support.hpp"
#include "core/error.hpp"

namespace calbench {
namespace {

// "ece,smooth_ece" -> [{"name": "ece"}, {"name": "smooth_ece"}] when the value is only names
// (letters, digits, '_') and commas; empty otherwise.
std::optional<Json> name_list(const std::string& value) {
  if (value.empty() || std::filesystem::exists(value)) return std::nullopt;
  Json out = Json::array();
  std::string name;
  for (std::size_t i = 0; i <= value.size(); ++i) {
    const char ch = i < value.size() ? value[i] : ',';
    if (ch == ',') {
      if (name.empty()) return std::nullopt;
      out.push_back(Json{{"name", name}});
      name.clear();
    } else if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
      name.push_back(ch);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace

std::vector<EstimatorConfig> requested_estimators(const std::string& value) {
  const auto first = value.find_first_not_of(" \t\r\n");
  const bool inline_json = first != std::string::npos && value[first] == '[';
  const std::optional<Json> names = inline_json ? std::nullopt : name_list(value);
  const std::string source = inline_json || names ? std::string("--estimators") : value;
  Problems problems;
  const Json document = names         ? *names
                        : inline_json ? parse_json_source(value, source, problems)
                                      : read_json_file(value, problems);
  if (!document.is_array() || document.empty())
    problems.add("",
                 "expected a non-empty array of estimators like a config's \"estimators\", "
                 "found " +
                     describe(document));
  std::vector<EstimatorConfig> out;
  std::map<std::string, std::size_t> seen;
  if (document.is_array())
    for (std::size_t i = 0; i < document.size(); ++i) {
      Json resolved;
      const std::string pointer = pointer_join("", i);
      auto config = parse_estimator(document[i], pointer, problems, resolved);
      if (!config) continue;
      if (const auto [it, fresh] = seen.emplace(config->label, i); !fresh)
        problems.add(pointer, "duplicate label " + quote(config->label) + ", also the label of " +
                                  pointer_join("", it->second) +
                                  "; give one of them a distinct \"label\"");
      out.push_back(std::move(*config));
    }
  if (!problems.empty()) throw ConfigError(problems.render(source));
  return out;
}

}  // namespace calbench
