#include "runners/command.hpp"

#include <tbb/info.h>

#include <charconv>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <system_error>

#include "core/error.hpp"

namespace calbench {

int run_chosen(const std::vector<Command>& commands) {
  try {
    for (const Command& command : commands)
      if (command.app->parsed()) return command.body();
  } catch (const ConfigError& e) {
    for (const auto& p : e.problems()) std::cerr << "error: " << p << '\n';
    return 2;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const NumericalError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "calbench: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

std::size_t default_threads() {
  return static_cast<std::size_t>(tbb::info::default_concurrency());
}

CLI::Validator thread_range() {
  return CLI::Range(std::size_t{1}, std::size_t{4096});
}

CLI::Validator uint64_text() {
  return CLI::Validator(
      [](const std::string& text) {
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        return error != std::errc() || end != text.data() + text.size()
                   ? "must be an integer in [0, 2^64 - 1], found " + text
                   : std::string();
      },
      "UINT64");
}

CLI::Validator directory_text() {
  return CLI::Validator(
      [](const std::string& dir) { return dir.empty() ? std::string("must not be empty") : ""; },
      "DIR");
}

}  // namespace calbench
