#include "core/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace calbench {

FileBytes read_file(const std::filesystem::path& file) {
  // POSIX calls rather than a stream, as in atomic_file.cpp: a stream's reading through its
  // buffer sets no state on an I/O error, and a directory opens as an empty file.
  FileBytes out;
  const auto failed = [&out](FileBytes::Failure failure, int error) {
    out.bytes.clear();
    out.failure = failure;
    out.error = std::error_code(error, std::generic_category());
    return out;
  };
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failed(FileBytes::Failure::open, errno);
  struct stat status {};
  if (::fstat(fd, &status) == 0 && S_ISDIR(status.st_mode)) {
    ::close(fd);
    return failed(FileBytes::Failure::open, EISDIR);
  }
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
  }
  ::close(fd);
  return out;
}

}  // namespace calbench
