#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <system_error>

#include "core/error.hpp"
#include "core/temporaries.hpp"

namespace calbench {

namespace {

// The process's umask, read without changing it (umask(2) cannot only read, and setting it
// races with other threads creating files): Linux reports it in /proc/self/status.
mode_t process_umask() {
  static const mode_t mask = [] {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
      if (line.starts_with("Umask:"))
        return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
    return static_cast<mode_t>(022);
  }();
  return mask;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  write_file_atomically(target, std::span<const std::string_view>(&content, 1));
}

void write_file_atomically(const std::filesystem::path& target,
                           std::span<const std::string_view> parts) {
  namespace fs = std::filesystem;
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  // What a killed writer of this same target left (core/temporaries.hpp): its pid is in the
  // name. Nothing else in the directory is looked at.
  remove_dead_staging(target);
  // mkostemp: a name no one can predict (pid and six random characters), created with O_EXCL
  // (never through a symbolic link, never an existing file) and readable by this user only
  // while it is written; the target's usual mode (0644 less the umask) is set before the rename.
  std::string name = target.string();
  name += staging_infix;
  name += std::to_string(::getpid()) + "-XXXXXX";
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  const fs::path tmp = name;
  // POSIX calls rather than a stream, so that a failure names its cause (a full disk is
  // ENOSPC) and the temporary file is removed on every path.
  const auto fail = [&](int error) {
    ::unlink(tmp.c_str());
    throw std::system_error(error, std::generic_category(), "cannot write " + target.string());
  };
  if (fd < 0)
    throw std::system_error(errno, std::generic_category(), "cannot write " + target.string());
  for (const std::string_view content : parts) {
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
  }
  if (::fchmod(fd, 0644 & ~process_umask()) != 0) {
    const int error = errno;
    ::close(fd);
    fail(error);
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
