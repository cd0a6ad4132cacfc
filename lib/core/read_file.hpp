#pragma once
// A whole file read into memory, its bytes as they are (the counterpart of atomic_file.hpp),
// or what stopped the reading. It throws nothing for a file it cannot read: each caller names
// the file's role in its own message (a config, a baseline, the copy a shard keeps).
#include <filesystem>
#include <string>
#include <system_error>

namespace calbench {

struct FileBytes {
  enum class Failure { none, open, read };
  std::string bytes;  // empty unless the whole file was read
  Failure failure = Failure::none;
  std::error_code error;  // the cause when failure is not none (is_a_directory for a directory)
  explicit operator bool() const noexcept { return failure == Failure::none; }
};

// A directory is a failure to open, with errc::is_a_directory.
FileBytes read_file(const std::filesystem::path& file);

}  // namespace calbench
