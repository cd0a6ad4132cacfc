#pragma once
// Files written whole or not at all: the content goes to a temporary file in the same
// directory, is flushed, and is renamed over the target (rename is atomic on POSIX).
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace calbench {
// The temporary is TARGET.tmp-calbench-PID-XXXXXX (mkstemp's random suffix, mode 0600 until the
// rename); one that a killed process left is removed by the next write of the same target
// (core/temporaries.hpp).
void write_file_atomically(const std::filesystem::path& target, std::string_view content);
// The same for content in consecutive parts, written one after the other (an NPY header and
// its data, without a copy of the data joined to it).
void write_file_atomically(const std::filesystem::path& target,
                           std::span<const std::string_view> parts);
// Throws InputError (exit 2) naming `shown` (e.g. "--out out/cfg.json") when `target` could not
// be written: it is a directory, or the nearest existing directory above it is read-only, not
// writable by this user, or not a directory. Writes nothing: called before long work, so that
// a command given an unwritable --out fails at once.
void check_writable(const std::filesystem::path& target, const std::string& shown);
}  // namespace calbench
