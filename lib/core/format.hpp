#pragma once
// Text formatting shared by messages, cache keys, listings and result files.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace calbench {

// Shortest text that reads back as the same double ("0.7", "1e-05", "nan", "inf").
std::string format_double(double value);
// `digits` digits after the point, as printf's %.*f (tables for people).
std::string format_fixed(double value, int digits);
// 16 lower-case hex digits.
std::string format_hash(std::uint64_t hash);

std::string join(const std::vector<std::string>& parts, std::string_view separator);

}  // namespace calbench
