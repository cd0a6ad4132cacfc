#include "runners/command.hpp"

#include <tbb/info.h>

#include <charconv>
#include <cstdint>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <system_error>

#include "config/finite_json.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "experiment/experiment.hpp"

namespace calbench {
namespace {

// Memory kept back for the unwinding after an allocation fails (issue #38, D5): nlohmann::json's
// destructor allocates a work stack to free a large document, and a destructor is noexcept, so a
// second bad_alloc there ended the process with std::terminate (exit 134) instead of a message.
// The first failed allocation frees the reserve and throws bad_alloc; the destructors then have
// room. Untouched, the reserve costs address space, not memory.
char* memory_reserve = nullptr;

void release_reserve_and_throw() {
  delete[] memory_reserve;
  memory_reserve = nullptr;
  std::set_new_handler(nullptr);
  throw std::bad_alloc();
}

}  // namespace

int run_chosen(const std::vector<Command>& commands) {
  memory_reserve = new (std::nothrow) char[std::size_t{64} << 20];
  if (memory_reserve != nullptr) std::set_new_handler(release_reserve_and_throw);
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
  } catch (const std::bad_alloc&) {
    std::cerr << "calbench: not enough memory (an allocation failed: a limit such as ulimit -v, "
                 "or the machine's memory)\n";
    return 1;
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

void write_result_json(const std::string& path, const Json& doc) {
  require_finite_json(doc, path);
  try {
    write_file_atomically(path, doc.dump(2) + "\n");
  } catch (const std::system_error& e) {
    throw InputError("--out " + path + ": " + e.what());
  }
}

std::string wrote(const std::string& path, const std::string& detail) {
  return "wrote " + path + (detail.empty() ? "" : " (" + detail + ")") + "\n";
}

void warn(std::string_view who, const std::string& text) {
  std::cerr << who << ": warning: " << text << '\n';
}

ReportHeader document_header(const Json& document) {
  ReportHeader out;
  for (const auto& [key, value] : document.items()) out.blocks.emplace_back(key, to_value(value));
  return out;
}

}  // namespace calbench
