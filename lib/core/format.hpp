#pragma once
// Number formatting shared by messages, cache keys and result files.
#include <string>

namespace calbench {
// Shortest text that reads back as the same double ("0.7", "1e-05", "nan", "inf").
std::string format_double(double value);
// `digits` digits after the point, as printf's %.*f (tables for people).
std::string format_fixed(double value, int digits);
}  // namespace calbench

#include <cstdint>
namespace calbench {
// 16 lower-case hex digits.
std::string format_hash(std::uint64_t hash);
}  // namespace calbench
