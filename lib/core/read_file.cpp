#include "core/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace calbench {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

}  // namespace

std::string FileBytes::reason() const {
  switch (failure) {
    case Failure::none:
      return "";
    case Failure::open:
      return error == std::errc::is_a_directory ? "it is a directory" : error.message();
    case Failure::read:
      return error.message();
    case Failure::not_regular:
      return "it is " + kind + ", not a regular file";
    case Failure::too_large:
      return "it has " + std::to_string(size) + " bytes, more than calbench's limit of " +
             std::to_string(limit);
  }
  return "";
}

std::string special_file_kind(const std::filesystem::path& file) {
  struct stat status {};
  if (::stat(file.c_str(), &status) != 0) return "";
  return kind_of(status.st_mode);
}

FileBytes read_file(const std::filesystem::path& file, std::uint64_t max_bytes) {
  // POSIX calls rather than a stream, as in atomic_file.cpp: a stream's reading through its
  // buffer sets no state on an I/O error, and a directory opens as an empty file.
  FileBytes out;
  const auto failed = [&out](FileBytes::Failure failure, int error) {
    out.bytes.clear();
    out.failure = failure;
    out.error = std::error_code(error, std::generic_category());
    return out;
  };
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return failed(FileBytes::Failure::open, errno);
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    const int error = errno;
    ::close(fd);
    return failed(FileBytes::Failure::open, error);
  }
  if (S_ISDIR(status.st_mode)) {
    ::close(fd);
    return failed(FileBytes::Failure::open, EISDIR);
  }
  if (!S_ISREG(status.st_mode)) {
    ::close(fd);
    out.kind = kind_of(status.st_mode);
    return failed(FileBytes::Failure::not_regular, EINVAL);
  }
  const auto too_large = [&](std::uint64_t size) {
    ::close(fd);
    out.size = size;
    out.limit = max_bytes;
    return failed(FileBytes::Failure::too_large, EFBIG);
  };
  const auto size = static_cast<std::uint64_t>(status.st_size);
  if (size > max_bytes) return too_large(size);
  out.bytes.reserve(static_cast<std::size_t>(size));
  std::array<char, 1 << 16> buffer{};
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got == 0) break;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      return failed(FileBytes::Failure::read, error);
    }
    out.bytes.append(buffer.data(), static_cast<std::size_t>(got));
    // A file that grows while it is read is held to the same limit.
    if (out.bytes.size() > max_bytes) return too_large(out.bytes.size());
  }
  ::close(fd);
  return out;
}

}  // namespace calbench
