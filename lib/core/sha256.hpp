#pragma once
// SHA-256 (FIPS 180-4) of bytes or of a file, as 64 lowercase hexadecimal digits: the checksum
// a config keeps of a data file it names (the `empirical` family's rows), so that a changed
// file is an error instead of a silently different generator. OpenSSL's implementation
// (Debian's libssl-dev), not a hand-written one.
#include <filesystem>
#include <span>
#include <string>

namespace calbench {

std::string sha256_hex(std::span<const unsigned char> bytes);
// Throws InputError naming the file when it cannot be read.
std::string sha256_file(const std::filesystem::path& file);

}  // namespace calbench
