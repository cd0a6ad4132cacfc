#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>

#include "core/error.hpp"
#include "core/own_file.hpp"
#include "core/temporaries.hpp"

namespace calbench {

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  namespace fs = std::filesystem;
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  // What a killed writer left here (core/temporaries.hpp): its pid is in the name.
  remove_dead_temporaries(target.has_parent_path() ? target.parent_path() : fs::path("."),
                          TemporaryKind::atomic_write);
  // A fresh name per call (pid and a counter), created with O_EXCL and never through a
  // symbolic link: a name planted beside the target cannot redirect the write, and two threads
  // writing one target do not share a temporary file.
  static std::atomic<unsigned long> counter{0};
  fs::path tmp;
  int fd = -1;
  std::string why;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmp = target;
    tmp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd = open_own_file(tmp, O_WRONLY | O_CREAT | O_EXCL, why);
    if (fd < 0 && errno != EEXIST) break;
  }
  // POSIX calls rather than a stream, so that a failure names its cause (a full disk is
  // ENOSPC) and the temporary file is removed on every path.
  const auto fail = [&](int error) {
    ::unlink(tmp.c_str());
    throw std::system_error(error, std::generic_category(), "cannot write " + target.string());
  };
  if (fd < 0)
    throw std::system_error(errno, std::generic_category(),
                            "cannot write " + target.string() + " (" + why + ")");
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

void check_writable(const std::filesystem::path& target, const std::string& shown) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(target, ec);
  if (fs::is_directory(status))
    throw InputError(shown + ": " + target.string() + " is a directory; name a file");
  // The nearest directory that exists: write_file_atomically creates the ones below it.
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  while (!fs::exists(fs::symlink_status(dir, ec)) && dir.has_parent_path() &&
         dir.parent_path() != dir)
    dir = dir.parent_path();
  if (!fs::exists(dir, ec)) dir = ".";
  if (!fs::is_directory(dir, ec))
    throw InputError(shown + ": cannot write " + target.string() + ": " + dir.string() +
                     " is not a directory");
  // access(2) reports a read-only file system (EROFS) even to root, and a missing permission.
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(shown + ": cannot write " + target.string() + " (" + dir.string() + ": " +
                     std::generic_category().message(errno) + "); nothing was written");
}

}  // namespace calbench
