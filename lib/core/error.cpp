#include "core/error.hpp"

namespace calbench {
namespace {
std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    // append(count, char) rather than += '\n': GCC 12 warns falsely (-Wrestrict, bug 105329)
    // about the latter at -O3.
    if (i > 0) out.append(1, '\n');
    out.append(lines[i]);
  }
  return out;
}
}  // namespace

ConfigError::ConfigError(std::vector<std::string> problems)
    : std::runtime_error(join_lines(problems)), problems_(std::move(problems)) {}

}  // namespace calbench
