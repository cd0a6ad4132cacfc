#include "core/own_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace calbench {

int open_own_file(const std::filesystem::path& file, int flags, std::string& why) {
  const int fd = ::open(file.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) {
    const int error = errno;
    // ELOOP is what O_NOFOLLOW reports for a symbolic link in the last component.
    why = error == ELOOP ? "it is a symbolic link, which calbench does not follow"
                         : std::generic_category().message(error);
    errno = error;
    return -1;
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    why = std::generic_category().message(errno);
  } else if (!S_ISREG(status.st_mode)) {
    why = "it is not a regular file";
  } else if (status.st_nlink > 1) {
    why = "it has " + std::to_string(status.st_nlink) +
          " hard links, so writing it would change another file";
  } else {
    // Back to blocking I/O for the writes that follow.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
  }
  ::close(fd);
  errno = EPERM;  // for callers that report errno: the file is refused, whatever close said
  return -1;
}

}  // namespace calbench
