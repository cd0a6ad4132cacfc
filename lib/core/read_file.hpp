#pragma once
// A whole file read into memory, its bytes as they are (the counterpart of atomic_file.hpp),
// or what stopped the reading. It throws nothing for a file it cannot read: each caller names
// the file's role in its own message (a config, a baseline, the copy a shard keeps).
//
// Only regular files are read: a FIFO blocked calbench forever and /dev/zero was read to 2 GB,
// so a FIFO, a device, a socket or a directory is refused at once (the open does not block:
// O_NONBLOCK). A file larger than `max_bytes` is refused before it is read (docs/config.md,
// "File sizes").
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

namespace calbench {

// Configs, baselines and other JSON files: 64 MiB, a thousand times the largest shipped config
// (parsing takes about 25 times the text in memory).
inline constexpr std::uint64_t kMaxJsonFileBytes = std::uint64_t{64} << 20;
// Model outputs (NPY, CSV): 16 GiB, 200 million rows of 10 classes in float64.
inline constexpr std::uint64_t kMaxDataFileBytes = std::uint64_t{16} << 30;

struct FileBytes {
  enum class Failure { none, open, read, not_regular, too_large };
  std::string bytes;  // empty unless the whole file was read
  Failure failure = Failure::none;
  std::error_code error;  // the cause for open and read (is_a_directory for a directory)
  std::string kind;       // not_regular: "a FIFO", "a character device", ...
  std::uint64_t size = 0, limit = 0;  // too_large: the file's size and the limit
  explicit operator bool() const noexcept { return failure == Failure::none; }
  // What went wrong, for "FILE: cannot read the file (...)"-style messages: "it is a FIFO, not a
  // regular file", "No such file or directory", "it has 70000000 bytes, more than calbench's
  // limit of 67108864".
  std::string reason() const;
};

// A directory is a failure to open, with errc::is_a_directory.
FileBytes read_file(const std::filesystem::path& file, std::uint64_t max_bytes = kMaxJsonFileBytes);

// The kind of a file that is not regular ("a FIFO"), "" for a regular file or one that does
// not exist; for readers that open files themselves (CSV through a stream).
std::string special_file_kind(const std::filesystem::path& file);

}  // namespace calbench
