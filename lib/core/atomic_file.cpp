#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace calbench {

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  namespace fs = std::filesystem;
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  fs::path tmp = target;
  tmp += ".tmp-" + std::to_string(::getpid());
  // POSIX calls rather than a stream, so that a failure names its cause (a full disk is
  // ENOSPC) and the temporary file is removed on every path.
  const auto fail = [&](int error) {
    ::unlink(tmp.c_str());
    throw std::system_error(error, std::generic_category(), "cannot write " + target.string());
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::system_error(errno, std::generic_category(), "cannot write " + target.string());
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      const int error = errno;
      ::close(fd);
      fail(error);
    }
    done += static_cast<std::size_t>(w);
  }
  if (::close(fd) != 0) fail(errno);
  if (::rename(tmp.c_str(), target.c_str()) != 0) fail(errno);
}

}  // namespace calbench
