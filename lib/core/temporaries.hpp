#pragma once
// Temporaries named with the pid of the process that made them, so that what a killed process
// left behind (SIGKILL runs no destructor) is found and removed by the next calbench that
// writes there (docs/durability.md, "Temporaries after kill -9"):
//   - an atomic write's temporary file, TARGET.tmp-calbench-PID-XXXXXX beside TARGET
//     (core/atomic_file.hpp; XXXXXX is mkstemp's random suffix);
//   - an external command's directory, $TMPDIR/calbench-WORD-PID-XXXXXX (WORD "external" or
//     "cell"; estimators/external.hpp).
// An atomic write's temporaries are looked for only under the name of the file being written:
// a user's `notes.tmp-2023-12` is nobody's temporary, whatever calbench writes beside it.
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
  temporary_directory  // calbench-WORD-PID-XXXXXX, a directory in $TMPDIR
};

inline constexpr std::string_view temporary_directory_prefix = "calbench-";
// What follows TARGET in the name of an atomic write's temporary, before PID-XXXXXX.
inline constexpr std::string_view staging_infix = ".tmp-calbench-";

// The pid in a temporary directory's name (calbench-WORD-PID-XXXXXX), or nullopt when the name
// is not of that kind.
std::optional<pid_t> temporary_owner(std::string_view name, TemporaryKind kind);
// The pid in the name of an atomic write's temporary of the file named `target_name`
// (TARGET.tmp-calbench-PID-XXXXXX, exactly six letters or digits), or nullopt.
std::optional<pid_t> staging_owner(std::string_view name, std::string_view target_name);
// True when no process has this pid (kill(pid, 0) fails with ESRCH).
bool process_is_gone(pid_t pid);
// Removes from `directory` the temporary directories that dead processes of this user left.
// Scans each directory at most once per process; never throws (a temporary that cannot be
// removed stays). Returns how many it removed.
std::size_t remove_dead_temporaries(const std::filesystem::path& directory, TemporaryKind kind);
// Removes beside `target` the temporaries of atomic writes of `target` that dead processes of
// this user left; nothing else. At most once per target per process; never throws.
std::size_t remove_dead_staging(const std::filesystem::path& target);

}  // namespace calbench
