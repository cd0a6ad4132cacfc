#pragma once
// Files written whole or not at all: the content goes to a temporary file in the same
// directory, is flushed, and is renamed over the target (rename is atomic on POSIX).
#include <filesystem>
#include <string_view>

namespace calbench {
void write_file_atomically(const std::filesystem::path& target, std::string_view content);
}
