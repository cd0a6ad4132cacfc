#pragma once
// Temporaries named with the pid of the process that made them, so that what a killed process
// left behind (SIGKILL runs no destructor) is found and removed by the next calbench that
// writes there (docs/durability.md, "Temporaries after kill -9"):
//   - an atomic write's temporary file, TARGET.tmp-PID-N beside TARGET (core/atomic_file.hpp);
//   - an external command's directory, $TMPDIR/calbench-WORD-PID-XXXXXX (WORD "external" or
//     "cell"; estimators/external.hpp).
// One is removed only when it is owned by this user, is what its name says (a regular file; a
// directory, never through a symbolic link) and its process is gone: kill(PID, 0) fails with
// ESRCH. A pid reused by a live process keeps its temporaries until that process ends too.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace calbench {

enum class TemporaryKind {
  atomic_write,        // NAME.tmp-PID-N, a regular file
  temporary_directory  // calbench-WORD-PID-XXXXXX, a directory in $TMPDIR
};

inline constexpr std::string_view temporary_directory_prefix = "calbench-";

// The pid in a temporary's file name, or nullopt when the name is not of that kind.
std::optional<pid_t> temporary_owner(std::string_view name, TemporaryKind kind);
// True when no process has this pid (kill(pid, 0) fails with ESRCH).
bool process_is_gone(pid_t pid);
// Removes from `directory` the temporaries of `kind` that dead processes of this user left.
// Scans each (directory, kind) at most once per process; never throws (a temporary that
// cannot be removed stays). Returns how many it removed.
std::size_t remove_dead_temporaries(const std::filesystem::path& directory, TemporaryKind kind);

}  // namespace calbench
