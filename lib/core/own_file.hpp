#pragma once
// Files calbench creates beside the user's data (a run's lock and journal, the temporary file
// of an atomic write): opened so that a name someone else placed there cannot redirect the
// write. O_NOFOLLOW refuses a symbolic link (`ln -s victim .OUT.lock` would otherwise have the
// victim truncated); a file that is not a regular file, or that has another name elsewhere (a
// hard link: st_nlink > 1), is refused too, since truncating it would change that other file.
#include <filesystem>
#include <string>

namespace calbench {

// Opens `file` with `flags` | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK (a FIFO must not block the
// open) and checks it is a regular file with one link. Returns the descriptor, or -1 with
// `why` set to a sentence fragment ("it is a symbolic link", the errno text) and errno to the
// open's error (EPERM for a file refused after opening).
int open_own_file(const std::filesystem::path& file, int flags, std::string& why);

}  // namespace calbench
